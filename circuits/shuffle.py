"""Oblivious shuffle of secret-shared columns, and moving columns by a shared permutation.

A shuffle applies pi = pi0 then pi1 (pi0 known to P0 only, pi1 to P1 only,
both fresh per shuffle) to every column of a (c, M) sharing: x -> x[pi].
Neither party knows pi, so a vector opened after a shuffle shows its values
in uniformly random order.  The protocol of one step is in protocols.runtime.dealer;
it costs one message of c*M words from the masking party to the permuting
party, and the dealer sends each party c*M correction words.

On top of it, a shared destination vector sigma (sigma[i] = new position of
element i, a permutation) moves columns without revealing sigma
(Chida et al. 2019, ApplyPerm / its inverse): shuffle (sigma, columns) by a
fresh pi, open s = sigma[pi] -- a uniform permutation whatever sigma is --
and scatter locally; the inverse gathers at s and unshuffles.

Destination vectors are shared mod 2^32 (int32 shares; positions are below
M < 2^31), everything else mod 2^64 as CrypTen shares it.  A shuffle runs on
32-bit words when all its columns are 32-bit (the radix sort's inner steps:
half the bytes of 64-bit words) and on 64-bit words otherwise, a destination
column then sign-extended; either way each party opens only the low bytes
of its share of sigma[pi] that hold a position (circuits.correlations.
position_bits: ceil(log2 M)), which are uniform.  A column needed only
modulo 2^w (positions, a 2-bit digit) travels as its w low bits, packed
tight, in every message of a shuffle, the dealer's corrections included
(circuits.correlations.narrow): the masked words are uniform modulo that
too, and the receiver's share is then right modulo 2^w, which is all that
is ever opened or moved of it.
"""
from collections import deque

import numpy as np
import torch

from .crypten_compat import crypten
from .correlations import (RING, from_words, low_bits, mask, narrow, narrow_rows_into, packed_size, position_bits,
                           row_blocks, step_plan, unmask, widen, widen_rows)
from .dealer_line import dealer_line
from .shares import exchange
from .streams import MASK_IN, MASK_OUT, KeyStream, move_columns, permute


class Shuffler:
    """One compute party's end of the dealer's correlation service (needs the TTP dealer).

    It runs the shuffles; circuits.select runs the one-hot digit selections
    through its ``stream``, ``request`` and ``open``.  A caller that knows
    its coming dealer requests may ``post`` them ahead (PREFETCH).
    """
    PREFETCH = True  # False in variants whose requests leave the real schedule (sims.security.view_parties)

    def __init__(self, stream_key: bytes, view=None):
        """stream_key: the key the dealer sent this party at start-up (PartyContext.stream_key)."""
        comm = crypten.communicator.get()
        if stream_key is None or not getattr(comm, "ttp_initialized", False):
            raise RuntimeError("the oblivious shuffle needs the separate dealer (provider TTP)")
        self.rank = comm.get_rank()
        self.comm = comm
        self.stream = KeyStream(stream_key)
        self._perm_count = 0
        self._mask_count = 0
        self.onehot_count = 0  # one-hot correlations used so far (circuits.select)
        self._posted = deque()  # dealer requests posted ahead and not yet collected (P0)
        self._announced = deque()  # own permutations drawn ahead and sent to the dealer, not yet used
        self.view = view  # optional list: every (kind, value) this party opens or receives masked (for audits)

    # moving shared columns by a shared permutation -----------------------
    def apply_shares(self, sigma: np.ndarray, rows, xor_columns: int = 0) -> np.ndarray:
        """Rows moved to their destinations, out[:, sigma[i]] = rows[:, i], on this party's shares: sigma int32
        (mod 2^32), rows (c, M) or a list of c rows (emptied once copied into the shuffle's words: see
        :meth:`open_shuffled`), the last ``xor_columns`` XOR-shared."""
        s, _, moved = self.open_shuffled(sigma, rows, xor_columns)
        return move_columns(moved, s, True)

    def unapply_shares(self, sigma: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The inverse of ``apply_shares``, out[:, i] = rows[:, sigma[i]], for additively shared rows (c, M)."""
        s, pi, _ = self.open_shuffled(sigma, np.empty((0, len(sigma)), dtype=RING))
        return self.gather_back(s, pi, rows)

    def open_shuffled(self, sigma: np.ndarray, columns: np.ndarray, xor_columns: int = 0, widths=None,
                      fold: int = None, checked: bool = True):
        """(s = sigma[pi] opened, pi, this party's shares of columns[:, pi]) for a fresh pi.

        sigma: this party's int32 share of a destination vector; columns: (c, M)
        shares (int32 or int64), of which the last ``xor_columns`` are XOR-shared, or a list of c such rows, which
        is emptied once they are copied into the shuffle's words (a caller that holds no other reference to
        them has them freed before the shuffle's own vectors are made).
        widths: the low bits of each column's words that matter (None: all); sigma's are its positions'.
        fold: sigma came out of the unshuffle of this mask index (P1's share is then its stream's words): see
        :meth:`shuffle`.  checked: s is checked here to be a permutation (the parties' shares agree); False for a
        caller that places values by s with :func:`placed`, which checks it as it places them.
        """
        m = len(sigma)
        if m >= 2 ** 31:
            raise ValueError("destination vectors are shared mod 2^32: at most 2^31 - 1 elements")
        pi = self.fresh(m)
        dtype = np.result_type(*columns) if len(columns) else np.dtype(RING)
        widths = (position_bits(m), *(widths or [8 * dtype.itemsize] * len(columns)))
        count = len(columns) + 1
        # the rows made in the call: the shuffle holds their only reference, and drops them once permuted
        shuffled = self._run(_element_rows(sigma, columns, dtype), pi, False, count - xor_columns, widths, fold,
                             reveal=True)
        s = self._revealed(shuffled[:, 0], widths[0])
        if checked and not is_permutation(s):
            raise RuntimeError(NOT_A_PERMUTATION)
        return s, pi, shuffled[:, 1:].T

    def gather_back(self, s, pi, rows: np.ndarray, widths=None) -> np.ndarray:
        """Shares of z with z[i] = v[sigma[i]], from shares of rows v, the opened s = sigma[pi], and pi; widths:
        as in :meth:`open_shuffled`."""
        rows = np.atleast_2d(rows)
        moved = move_columns(np.asarray(rows, dtype=_word(rows.dtype)), s, False)  # rows[:, s] = z[pi]: a new array
        return self._unshuffled(np.ascontiguousarray(moved.T), pi, len(rows), widths)

    # the shuffle itself --------------------------------------------------
    def fresh(self, n: int) -> "JointPermutation":
        """A new joint permutation of n positions, unknown to either party (this party's part announced ahead,
        or drawn now)."""
        index = self._perm_count
        self._perm_count += 1
        if not self._announced:
            return JointPermutation(index, self.stream.permutation(index, n), False)
        own = self._announced.popleft()
        if len(own) != n:
            raise RuntimeError(f"permutation {index} was announced for {len(own)} positions, used for {n}")
        return JointPermutation(index, own, True)

    def announce(self, n: int) -> None:
        """Both parties at the same point: draw this party's part of the next joint permutation not yet drawn
        (n positions) and send it to the dealer, whose request for that permutation then says so.

        The dealer derives the same permutation from this party's stream key, which it drew: it learns
        nothing new, and it receives the permutation instead of sorting it (two sorts a shuffle, the
        largest part of its work per radix digit).
        """
        if n >= 2 ** 31:
            raise ValueError("destination vectors are shared mod 2^32: at most 2^31 - 1 elements")
        own = self.stream.permutation(self._perm_count + len(self._announced), n)
        self._announced.append(own)
        self.comm.send_array(narrow(own.astype(np.int32)[:, None], (position_bits(n),)), self.comm.get_ttp_rank(),
                             self.comm.permutation_group)

    def unapply_ahead(self, m: int, rows: int) -> None:
        """Both parties, ahead of an :meth:`unapply_shares` of ``rows`` 64-bit rows of m elements with no other
        shuffle in between: :meth:`announce` this party's part of its permutation, and P0 posts the dealer's two
        requests for it (the shuffle that opens sigma[pi], the unshuffle of the rows), which the dealer then makes
        while the parties work on."""
        if not self.PREFETCH:
            return
        self.announce(m)
        if self.rank == 0:
            perm, masks, _ = self.schedule()
            self.post([self.shuffle_request((m, 1), perm, masks, False, 1, RING, True, (position_bits(m),),
                                            reveal=True),
                       self.shuffle_request((m, rows), perm, masks + 1, True, rows, np.int64, True, (64,) * rows)])

    def shuffle(self, shares: np.ndarray, pi: "JointPermutation", xor_from=None, widths=None,
                fold: int = None, reveal: bool = False) -> np.ndarray:
        """This party's share of x[pi] for its share of x (shape (c, M); rows from ``xor_from`` on are XOR-shared;
        the shares needed only mod 2^widths[j] in row j, None: in full).

        fold: the mask index of an earlier unshuffle that produced row 0, whose second step left P1 holding
        its stream's words MASK_OUT there.  The dealer knows them too, so it folds them into P0's correction
        of the first step in place of P1's mask for that row, and P1 sends nothing of row 0: P0's correction
        b_old[p0] - b_new is still uniform to it (b_new is fresh), and P1 saves a word per element.

        reveal: row 0 is opened right after (x[pi] in :meth:`open_shuffled`), so its second step needs no
        masks: P0 sends its share of x[pi0] as it is, P1 ends holding x[pi] itself (P0 zero) and takes no
        correction for it.  P1 learns x[pi0] = x[pi][pi1^-1], which the opening gives it anyway.
        """
        xor_from = len(np.atleast_2d(shares)) if xor_from is None else xor_from
        return np.ascontiguousarray(self._run(_elements(shares), pi, False, xor_from, widths, fold, reveal).T)

    def unshuffle(self, shares: np.ndarray, pi: "JointPermutation", widths=None) -> np.ndarray:
        """This party's share of y with y[pi] = x, i.e. undo ``shuffle`` (fresh masks)."""
        return self._unshuffled(_elements(shares), pi, len(np.atleast_2d(shares)), widths)

    def _unshuffled(self, elements: np.ndarray, pi: "JointPermutation", count: int, widths) -> np.ndarray:
        """The (count, M) shares of y with y[pi] = x from this party's element rows (M, count) of x, which it works
        in place (a copy the caller made: :func:`_elements`, or gathered rows)."""
        return np.ascontiguousarray(self._run(elements, pi, True, count, widths).T)

    def open(self, shares: np.ndarray, kind: str = "destinations", width: int = None) -> np.ndarray:
        """Open a sharing to both parties (one exchange); ``kind`` labels it in the recorded view.  width: only
        the value mod 2^width is needed (positions: :func:`circuits.correlations.position_bits`), so only
        that many low bits of each share travel; the result, of the shares' dtype, is that residue."""
        shares = np.ascontiguousarray(shares)
        if width is None or width >= 8 * shares.dtype.itemsize:
            opened = self.comm.all_reduce(torch.from_numpy(shares)).numpy()
        else:
            n, width = shares.size, (width,)
            other = self.exchange(narrow(shares.reshape(-1, 1), width), kind)
            total = shares.reshape(-1) + widen(other, width, shares.dtype, n)[:, 0]
            opened = low_bits(total, width[0]).reshape(shares.shape)
        if self.view is not None:
            self.view.append((kind, opened.copy()))
        return opened

    def _revealed(self, share: np.ndarray, width: int) -> np.ndarray:
        """Positions (int64: numpy gathers by 64-bit indexes, and would convert narrower ones at each use) that P1
        holds in full after a revealing shuffle (:meth:`shuffle`), P0 zero: P1 sends their w low bits to P0 (one
        message, one way)."""
        if self.rank == 1:
            self.comm.send_array(narrow(share[:, None], (width,)), 0)
            opened = low_bits(share.astype(np.int64), width)
        else:
            packed = self.comm.recv_array((packed_size(len(share), (width,)),), np.uint8, 1, operation="destinations")
            opened = widen(packed, (width,), np.int64, len(share))[:, 0]
        if self.view is not None:
            self.view.append(("destinations", opened.copy()))
        return opened

    def exchange(self, own: np.ndarray, kind: str) -> np.ndarray:
        """Send this party's array to the other compute party and return the other's (one round)."""
        return exchange(self.comm, own, kind)

    def request(self, function: str, *args) -> np.ndarray:
        """P0 only: the dealer's answer to ``function(*args)``: collected if posted ahead, else asked now."""
        if not self._posted:
            return dealer_line().request(function, *args)
        expected, ticket = self._posted.popleft()
        if expected != (function, args):
            raise RuntimeError(f"dealer request {function}{args} out of the posted order (next: {expected})")
        return dealer_line().collect(ticket)

    def post(self, requests) -> None:
        """P0 only: send the dealer the requests (function, args) that ``request`` will make next, in that
        order, so the dealer computes them while the parties work; its answers wait on the line."""
        for function, args in requests:
            self._posted.append(((function, tuple(args)), dealer_line().post(function, *args)))

    @staticmethod
    def shuffle_request(shape, perm: int, mask: int, inverse_order: bool, xor_from: int, dtype,
                        announced: bool, widths, fold: int = None, reveal: bool = False) -> tuple:
        """(function, args) of the dealer request for one shuffle's correlation: the shares' (M, c) shape,
        the permutation and mask indexes, the direction, the first XOR-shared column, the word type,
        whether the parties announced the permutation, the bits of each column's words that travel, the
        unshuffle folded into column 0 and whether column 0 is revealed to P1 (:meth:`shuffle`).  One
        definition for the request and its posts."""
        return ("permutation_correlation", (tuple(shape), perm, mask, inverse_order, xor_from,
                                            np.dtype(dtype).name, announced, tuple(int(w) for w in widths), fold,
                                            reveal))

    @staticmethod
    def select_request(m: int, index: int) -> tuple:
        """(function, args) of the dealer request for one-hot correlation ``index`` of m digits."""
        return ("onehot_correlation", (m, index))

    def schedule(self) -> tuple:
        """(next permutation, next mask, next one-hot index): where the counters stand, for planning posts."""
        return self._perm_count, self._mask_count, self.onehot_count

    def _run(self, shares, pi, inverse_order: bool, xor_from: int, widths, fold: int = None,
             reveal: bool = False) -> np.ndarray:
        """The two steps of a shuffle (protocols.runtime.dealer) on this party's shares (M, c), elements as rows
        (:func:`_elements`: worked in place), the new shares returned the same way; the element-wise work block by
        block (circuits.correlations.row_blocks): whole vectors are only the shares, their permuted copy and the
        packed messages, which are byte for byte those of whole vectors."""
        if reveal and inverse_order:
            raise ValueError("only a shuffle reveals its row 0 to P1, not an unshuffle")
        dtype = shares.dtype
        m, c = shares.shape
        widths = tuple(widths) if widths is not None else (8 * dtype.itemsize,) * c
        corrected = 1 if reveal and self.rank == 1 else 0  # a revealed column 0 takes no correction
        packed = packed_size(m, widths[corrected:])  # what travels: the low bits that matter of each word
        mask_index = self._mask_count
        self._mask_count += 1
        if self.rank == 0:
            function, args = self.shuffle_request(shares.shape, pi.index, mask_index, inverse_order, xor_from, dtype,
                                                  pi.announced, widths, fold, reveal)
            answer = from_words(self.request(function, *args), np.uint8, (packed,))
        else:
            answer = self.comm.recv_array((packed,), np.uint8, self.comm.get_ttp_rank(), self.comm.ttp_group)
        blocks = row_blocks(m, whole=self.view is not None)
        for step, (holder, other) in enumerate(step_plan(inverse_order)):
            stream_index = 2 * mask_index + step
            sent = 1 if fold is not None and step == 0 else 0  # a folded column 0 does not travel
            plain = reveal and step == 1  # column 0 travels as it is; the holder ends with its value
            if self.rank == other:
                message = np.empty(packed_size(m, widths[sent:]), dtype=np.uint8)
                for start, stop in blocks:
                    a = self.stream.elements(MASK_IN, stream_index, (m, c), start, stop, dtype)
                    if plain:
                        a[:, 0] = 0
                    narrow_rows_into(message, mask(shares[start:stop], a, xor_from)[:, sent:], widths[sent:], m,
                                     start)
                self.comm.send_array(message, holder)
                del shares, message
                shares = self.stream.elements(MASK_OUT, stream_index, (m, c), 0, m, dtype)
                if plain:
                    shares[:, 0] = 0
            else:
                message = self.comm.recv_array((packed_size(m, widths[sent:]),), np.uint8, other)
                before = shares.copy() if self.view is not None else None
                for start, stop in blocks:  # x_h + (x_o - a), in place
                    shares[start:stop] = unmask(shares[start:stop], _block(message, widths, sent, dtype, m, start,
                                                                           stop), xor_from)
                shares = permute(shares, pi.own, inverse_order)
                for start, stop in blocks:  # + delta
                    shares[start:stop] = unmask(shares[start:stop], _block(answer, widths, corrected, dtype, m,
                                                                           start, stop), xor_from)
                if self.view is not None:
                    self._record(_block(message, widths, sent, dtype, m, 0, m),
                                 widen(answer, widths[corrected:], dtype, m), before, shares, xor_from, widths[0],
                                 fold is not None and step == 0)
        return shares

    def _record(self, masked, delta, before, after, xor_from: int, width: int, folded: bool) -> None:
        """The audits' view of one step this party permuted: the masked shares and the correction it received,
        and how its share of column 0 changed (mod 2^width), which the other party's fresh mask must hide
        (both named apart in a folded step, whose place in the schedule is public)."""
        change = after[:, 0] ^ before[:, 0] if xor_from == 0 else after[:, 0] - before[:, 0]
        change = low_bits(change, width)
        named = "folded {}" if folded else "{}"
        self.view.extend([("masked shares", masked.copy()), (named.format("correction"), delta.copy()),
                          (named.format("share change"), change[:, None].copy())])


NOT_A_PERMUTATION = "opened destinations are not a permutation: the parties' shares disagree"
UNWRITTEN = 255  # a byte :func:`_placement` did not write (no value placed takes it)


def placed(s: np.ndarray, values: np.ndarray) -> np.ndarray:
    """out with out[s[j]] = values[j], as bytes, for values below 255 (a radix digit), raising unless the opened s is
    a permutation (:func:`_placement`): the check costs no scatter of its own."""
    out = _placement(s, values)
    if out is None:
        raise RuntimeError(NOT_A_PERMUTATION)
    return out


def is_permutation(s: np.ndarray) -> bool:
    """Whether s holds every position 0..len(s)-1 once (a byte per position marks it: 2.6x faster than counting
    at 4.6M positions)."""
    return _placement(s, 0) is not None


def _placement(s: np.ndarray, values) -> np.ndarray:
    """Bytes with out[s[j]] = values[j] when s is a permutation of range(len(s)), else None: every s[j] in
    range, and no byte left UNWRITTEN (len(s) positions written, none twice)."""
    if len(s) and (s.max() >= len(s) or s.min() < 0):
        return None
    out = np.full(len(s), UNWRITTEN, dtype=np.uint8)
    out[s] = values
    return None if (out == UNWRITTEN).any() else out


def _word(dtype) -> np.dtype:
    """The word a shuffle runs on for columns of ``dtype``: 32-bit for destination vectors (RING), else 64-bit."""
    return np.dtype(RING) if dtype == RING else np.dtype(np.int64)


def _elements(shares) -> np.ndarray:
    """A copy of shares (c, M) with elements as rows (M, c), in the shuffle's word (:func:`_word`)."""
    shares = np.atleast_2d(shares)
    return np.array(shares.T, dtype=_word(shares.dtype), order="C")


def _element_rows(sigma: np.ndarray, columns, dtype) -> np.ndarray:
    """(M, 1 + c) rows of sigma and the columns side by side in the shuffle's word (:func:`_word` of ``dtype``);
    a list of columns is emptied once they are copied."""
    rows = np.empty((len(sigma), len(columns) + 1), dtype=_word(dtype))
    rows[:, 0] = sigma
    for j in range(len(columns)):  # (no loop variable left holding the last column)
        rows[:, j + 1] = columns[j]
    if isinstance(columns, list):
        columns.clear()
    return rows


def _block(packed: np.ndarray, widths, skipped: int, dtype, m: int, start: int, stop: int) -> np.ndarray:
    """Rows [start, stop) of the (m, c) words a message or correction packs, whose first ``skipped`` columns do not
    travel (zero here)."""
    rows = widen_rows(packed, widths[skipped:], dtype, m, start, stop)
    if not skipped:
        return rows
    out = np.zeros((stop - start, len(widths)), dtype=dtype)
    out[:, skipped:] = rows
    return out


class JointPermutation:
    """A handle on one shuffle permutation: its index, this party's own part of it, and whether both parties
    sent their parts to the dealer (Shuffler.announce)."""

    def __init__(self, index: int, own: np.ndarray, announced: bool):
        self.index, self.own, self.announced = index, own, announced
