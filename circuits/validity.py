"""Checks of the clients' shared rows inside the MPC: each label is 0 or 1, each key lies in its encoding's range.

A client seals additive shares (a, b) of its label y = a + b mod 2^64 and of
its key k, and XOR shares of k + 2^61 (protocols.inputs.encoding).  A client
that follows the protocol for its own rows can still lie about them, but one
that leaves the domain can break everyone's result (a label of 400 makes
2U / 2PN exceed 1; a label of 10^6 gives one row the weight of 10^6 rows in
a DP statistic whose noise is calibrated to one).  The gadgets below compute
XOR shares of [row i is valid] for every row without opening anything:

* **Label** y in {0, 1}: with P0 holding a and P1 holding b, y = 0 exactly when
  -a = b and y = 1 exactly when 1 - a = b (mod 2^64).  Each is an equality of
  two privately held words, i.e. [every bit of (u XOR b) is 0], where u XOR b
  is already XOR-shared (P0 holds u, P1 holds b).  :func:`compare.all_set` on
  its complement costs about one word-AND per element and ceil(log2 64) = 6
  rounds; the two cases exclude each other, so their OR is a XOR (local).
* **Key**, radix sort (which reads only the XOR shares): the bits of k + 2^61
  at and above ``key_bits`` are all 0, the same all_set on the complement
  with the low bits forced to 1.
* **Key**, bitonic sort (which reads only the additive shares): x = k + 2^61
  lies in [0, 2^key_bits) exactly when x >= 0 and 2^key_bits - 1 - x >= 0 as
  signed words (key_bits <= 62), two sign bits (:func:`compare.sign_bits`).
* **Weight** (weighted AUC): the units u lie in [0, most] the same way,
  u >= 0 and most - u >= 0 as signed words (:func:`valid_weights`).

All label and radix-key equalities of a job share the rounds of one
all_set_groups call, the key's group only as wide as the bits the key may not
use (2 for float64 keys, 34 for float32), so the whole check of the radix path
is 7 rounds: 6 for all_set and 1 AND that joins the label and key verdicts (per CHECK_ROWS rows).
"""
import numpy as np

from .bits import LANES
from .comparators import all_set_groups, flip, nonnegative, sign_bits

KEY_OFFSET = 1 << 61  # protocols.inputs.encoding: XOR-shared keys are k + 2^61


def _equal_zero_inputs(x_shares: np.ndarray, rank: int) -> np.ndarray:
    """This party's XOR shares of NOT x, for all_set to test [x == 0], padded with x = 0 to whole words (so
    that the columns of one all_set call start on word boundaries)."""
    padded = np.zeros(-(-len(x_shares) // LANES) * LANES, dtype=np.int64)
    padded[:len(x_shares)] = x_shares
    return flip(padded, rank)


CHECK_ROWS = 1 << 21  # rows checked at once (a multiple of 64): bounds the check's temporaries, 7 rounds a chunk


def valid_rows(gates, labels: np.ndarray, key_xor: np.ndarray = None, key_bits: int = 62,
               keys: np.ndarray = None) -> np.ndarray:
    """XOR shares, packed 64 rows per word, of [label in {0, 1} and key in range] for every row.

    labels: this party's additive shares (n,).  key_xor: XOR shares of k + 2^61 (the radix path), or keys:
    additive shares of k (the bitonic path); exactly one of them.  Lanes past n hold no verdict.  Rows are
    checked CHECK_ROWS at a time (their verdict words side by side: a chunk is whole words), so the gates'
    temporaries (about 250 bytes a row) stay those of one chunk, for the rounds of one check per chunk.
    """
    if (key_xor is None) == (keys is None):
        raise ValueError("valid_rows checks the keys the sort reads: pass key_xor or keys, not both")
    column = key_xor if keys is None else keys
    return np.concatenate([_valid_chunk(gates, labels[start:start + CHECK_ROWS], column[start:start + CHECK_ROWS],
                                        key_bits, keys is None)
                           for start in range(0, max(len(labels), 1), CHECK_ROWS)])


def _valid_chunk(gates, labels: np.ndarray, column: np.ndarray, key_bits: int, radix: bool) -> np.ndarray:
    """:func:`valid_rows` of one chunk of rows; column: the XOR-shared keys (``radix``) or the additive ones."""
    rank, n = gates.rank, len(labels)
    labels = np.asarray(labels, dtype=np.int64)
    own = -labels if rank == 0 else labels  # y = 0: -a == b
    one = 1 - labels if rank == 0 else labels  # y = 1: 1 - a == b
    words = -(-n // LANES)
    groups = [(np.concatenate([_equal_zero_inputs(own, rank), _equal_zero_inputs(one, rank)]), 64)]
    if radix:  # the bits the key may not use, moved down: (k + 2^61) >> key_bits == 0
        groups.append((_equal_zero_inputs(np.asarray(column, dtype=np.int64) >> key_bits, rank), 64 - key_bits))
    verdicts = all_set_groups(gates, groups)
    labels_ok = verdicts[0].reshape(2, words)
    label_ok = labels_ok[0] ^ labels_ok[1]
    if radix:
        key_ok = verdicts[1]
    else:
        shifted = np.asarray(column, dtype=np.int64) + np.int64(KEY_OFFSET if rank == 0 else 0)
        key_ok = _within(gates, shifted, (1 << key_bits) - 1)
    (ok,) = gates.and_((label_ok, key_ok))
    return ok


def _within(gates, shares: np.ndarray, most: int) -> np.ndarray:
    """Packed XOR shares of [0 <= x <= most] for additive shares of any int64 x: the signs of x and of most - x
    (exact once x >= 0, as most - x cannot wrap then), one AND."""
    top = np.int64(most if gates.rank == 0 else 0)
    low_ok, high_ok = sign_bits(gates, np.stack([shares, top - shares]))
    (ok,) = gates.and_((low_ok, high_ok))
    return ok


def valid_weights(gates, weights: np.ndarray, most: int) -> np.ndarray:
    """XOR shares, packed as :func:`valid_rows`' verdicts, of [0 <= u <= most] for this party's additive shares
    of every row's weight units u (protocols.inputs.weights)."""
    return _within(gates, np.asarray(weights, dtype=np.int64), most)


def client_verdicts(gates, ok: np.ndarray, rows) -> np.ndarray:
    """Additive shares (K,) of [every row of client j is valid] from the packed row verdicts ``ok`` and the
    public row counts of the K clients, in input order; only these K bits are for opening."""
    n = int(sum(rows))
    valid = np.concatenate([[0], np.cumsum(gates.to_additive(ok[None], n)[0])])  # mod 2^64, as the shares
    bounds = np.concatenate([[0], np.cumsum(rows)]).astype(np.int64)
    totals = valid[bounds[1:]] - valid[bounds[:-1]]
    counts = np.asarray(rows, dtype=np.int64)
    invalid = (counts - totals) if gates.rank == 0 else -totals  # rows of client j that fail, >= 0
    return nonnegative(gates, -invalid)  # [invalid_j <= 0] = [invalid_j == 0]
