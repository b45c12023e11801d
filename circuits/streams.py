"""Keyed pseudo-random streams shared by the dealer and one compute party.

The dealer draws a 256-bit key per compute party with ``secrets`` and gives it
to that party alone.  Both then expand the key with AES-256 in counter mode
(via ``cryptography``; 1.7x faster here than ChaCha20 with the CPU's AES
instructions) from an agreed (purpose, index) block, so the bulk
correlated randomness of the oblivious shuffle (masks and permutations)
never crosses the network: only the dealer's corrections do.

A random permutation orders the elements by fresh random words (see
``KeyStream.permutation``), so every holder of the key derives the same
one; its distance from uniform is the chance that two elements' random
keys (160 bits where the first 32 tie) repeat, below 2^-116 for
M = 4.6 million.
"""
import struct

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from .workers import each

KEY_BYTES = 32
STREAM_LIMIT = 1 << 36  # bytes of one (purpose, index) stream: its 32-bit block counter never wraps into the index

# nonce purposes
MASK_IN = 1  # the mask a the sender subtracts before sending
MASK_OUT = 2  # the mask b that becomes the sender's new share
PERMUTATION = 3
DIGIT_MASK = 4  # a party's XOR share of the dealer's random digit r
ONEHOT_SHARE = 5  # the non-receiving party's shares of the one-hot vector of r (circuits.select.onehot_receiver)
PRODUCT_MASK = 6  # a party's shares of the Beaver masks b
PRODUCT_SHARE = 7  # the non-receiving party's share of b[r]
BIT_MASK = 8  # a party's XOR share of the dealer's packed random bits r (circuits.gates)
BIT_SHARE = 9  # P1's arithmetic shares of the bits of r
PERMUTATION_TIES = 14  # second words ordering the rare ties of a permutation's first (protocols.runtime.csprng uses 10-13)
AND_A, AND_B, AND_C = 15, 16, 17  # a party's shares of a and b of the dealer's AND triples; P1's share of c
MUL_A, MUL_B, MUL_C = 18, 19, 20  # the same for its product triples (circuits.gates)
OWN_NOISE = 21  # a party's share of joint random words, under a key of its own that it never sends (circuits.noise)
AUTH_VALUE, AUTH_MAC = 22, 23  # P1's shares of an authenticated dealer word and of its MAC (circuits.macs)
CHECK_COEFFICIENTS = 24  # a MAC check's coefficients, under the two parties' joint coin (circuits.macs)
DEALER_WORDS = 25  # the dealer's own words of an authenticated correlation, under a key only it holds
CLIENT_SHARES = 26  # P1's shares of a client's values under security with abort, from the client's seed (bundles)


def check_key(key) -> None:
    if not isinstance(key, (bytes, bytearray)) or len(key) != KEY_BYTES:
        raise ValueError(f"a stream key has {KEY_BYTES} bytes")


class KeyStream:
    """AES-256-CTR keystream under one key, addressed by (purpose, index)."""

    def __init__(self, key: bytes):
        check_key(key)
        self._key = bytes(key)

    def words(self, purpose: int, index: int, shape, dtype=np.int64, first: int = 0) -> np.ndarray:
        """Uniform words of ``shape`` (int64: mod 2^64; int32: mod 2^32), the same for every holder of the key.

        first: the stream's words before these, skipped (CTR mode seeks: a block of a long vector's words is
        expanded alone, circuits.correlations.row_blocks).
        """
        count, size = int(np.prod(shape, dtype=np.int64)), np.dtype(dtype).itemsize
        skipped = first * size // 16 * 16  # expanded from the whole AES block holding word ``first``
        lead = first - skipped // size  # words of that block before it, dropped
        if first * size + count * size > STREAM_LIMIT:
            raise ValueError(f"one stream holds at most {STREAM_LIMIT} bytes")
        out = np.zeros(lead + count, dtype=dtype)
        buffer = memoryview(out).cast("B")

        def expand(start: int, stop: int) -> None:  # bytes [start, stop), start a whole block: counter start / 16
            block = struct.pack(">IQI", purpose, index, (skipped + start) // 16)  # 96-bit (purpose, index), counter
            encryptor = Cipher(algorithms.AES(self._key), modes.CTR(block)).encryptor()
            encryptor.update_into(buffer[start:stop], buffer[start:stop])  # keystream XOR zeros

        each(expand, len(buffer), align=16)
        return out[lead:].reshape(shape)

    def elements(self, purpose: int, index: int, shape, start: int, stop: int, dtype=np.int64) -> np.ndarray:
        """Rows [start, stop) of an (M, c) array whose column j is the stream's words [j M, (j + 1) M), as a C-order
        (stop - start, c) array: a shuffle's masks, laid out column after column so that the dealer expands one
        column of them at a time (circuits.correlations.correction) while the parties take them by element."""
        m, c = shape
        out = np.empty((stop - start, c), dtype=dtype)
        for j in range(c):
            out[:, j] = self.words(purpose, index, (stop - start,), dtype, first=j * m + start)
        return out

    def slots(self, purpose: int, index: int, shape, start: int, stop: int, dtype=np.int64) -> np.ndarray:
        """Elements [start, stop) of every row of the words of ``shape`` (rows, M), as (rows, stop - start)."""
        rows, m = shape
        return np.stack([self.words(purpose, index, (stop - start,), dtype, first=u * m + start) for u in range(rows)])

    def permutation(self, index: int, n: int) -> np.ndarray:
        """A random permutation of range(n) as an index array (apply as ``x[perm]``).

        The elements are ordered by fresh 32-bit words: a stable sort (torch's sort of int32 keys, 2.5x
        faster than numpy's sort of 64-bit words at 458k, 1.8x at 4.6M) returns the order.  Runs of equal first words
        (about n^2 / 2^33 pairs: some 24 at 458k, 2,400 at 4.6M) are ordered again by two fresh 64-bit
        words per tied element, drawn in sorted position order from their own stream; these are
        independent of the first words, so the order is that of i.i.d. uniform (32 + 128)-bit keys:
        uniform but for a tie on all of them, of chance below n^2 / 2^161 (2^-116 for M = 4.6 million).
        """
        import torch  # lazily: the clients' bundles expand streams too, and their processes never load torch

        first = torch.from_numpy(self.words(PERMUTATION, index, (n,), np.int32))
        keys, order = torch.sort(first, stable=True)
        perm, keys = order.numpy(), keys.numpy()
        tied = keys[1:] == keys[:-1]
        if tied.any():
            at = np.flatnonzero(np.concatenate([[False], tied]) | np.concatenate([tied, [False]]))
            second = self.words(PERMUTATION_TIES, index, (len(at), 2)).view(np.uint64)
            perm[at] = perm[at][np.lexsort((second[:, 1], second[:, 0], keys[at]))]
        return perm

def permute(rows: np.ndarray, perm: np.ndarray, backwards: bool) -> np.ndarray:
    """rows[perm] (forwards; perm may also be any array of positions, such as a block of a permutation), or the y
    with y[perm] = rows (backwards, i.e. rows[perm^-1]).

    Rows are the first axis.  A record of 4 or 8 bytes (one or two 32-bit
    words, one 64-bit word) moves as one machine word, wider records column
    by column: numpy's gathers of whole 2-D rows run 5-10x slower than 1-D
    gathers of the same bytes.
    """
    rows = np.ascontiguousarray(rows)
    out = np.empty((len(perm),) + rows.shape[1:], dtype=rows.dtype)  # forwards, any index array: rows[perm]
    width = rows.shape[1] * rows.itemsize if rows.ndim == 2 else rows.itemsize
    if width in (4, 8):
        source, target = (a.view(f"i{width}").reshape(len(a)) for a in (rows, out))
        _move(source, target, perm, backwards)
        return out
    for j in range(rows.shape[1]):
        _move(rows[:, j], out[:, j], perm, backwards)
    return out


def move_columns(columns: np.ndarray, perm: np.ndarray, backwards: bool) -> np.ndarray:
    """Each row of ``columns`` (c, M) moved as :func:`permute` moves rows, as a new C-order (c, len(perm)) array:
    out[j] = columns[j][perm] forwards, out[j][perm] = columns[j] backwards.  The rows may be strided (the columns
    of element rows, transposed): each is read once in order, on the worker threads, where numpy's fancy index
    of a 2-D array on its second axis works on one thread (1.8x slower at 45.8M elements on this machine)."""
    out = np.empty((len(columns), len(perm)), dtype=columns.dtype)
    for j in range(len(columns)):
        _move(columns[j], out[j], perm, backwards)
    return out


def _move(source: np.ndarray, target: np.ndarray, perm: np.ndarray, backwards: bool) -> None:
    def part(start: int, stop: int) -> None:  # disjoint parts of target: perm is a permutation
        if backwards:
            target[perm[start:stop]] = source[start:stop]
        else:  # straight into the target: a fancy index would gather into a temporary first
            np.take(source, perm[start:stop], out=target[start:stop], mode="clip")

    each(part, len(perm))
