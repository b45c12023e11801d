"""Selecting by a secret 2-bit digit with the dealer's one-hot correlation (over Z_2^32).

For an XOR-shared digit d in {0, 1, 2, 3} (per element), the dealer's random
r = r0 XOR r1 comes with additive shares of e_1..e_3 of its one-hot vector e,
Beaver masks b_1..b_3 and shares of sum_u e_u b_u (protocols.runtime.dealer).  The
parties open c = d XOR r, which is uniform and hides d.  Then

* the one-hot vector of d is f_v = e[c XOR v], with e_0 = 1 - e_1 - e_2 - e_3:
  a public rearrangement of the shared e, so local;
* for shared values y_0..y_3 per element, with a_u = y_{u XOR c} (public
  rearrangement) and sum_u e_u = 1,
      y_d = sum_u e_u a_u = a_0 + sum_{u>=1} e_u (a_u - a_0);
  with delta_u = a_u - a_0 - b_u opened (uniform, b_u unknown to the parties),
      y_d = a_0 + sum_{u>=1} e_u delta_u + sum_{u>=1} e_u b_u:
  linear in the shares, since delta is public.

Everything here is mod 2^32: the selected values are positions below M < 2^31,
needed modulo 2^w only, w = circuits.correlations.position_bits(M).  Per
element: the dealer sends one party four w-bit words (P0 for three
correlations in eight, P1 for five: :func:`onehot_receiver`), the parties exchange two bits for c and three
w-bit words for delta, each vector packed tight (circuits.correlations.narrow).  ``digit_destinations`` uses it for
the stable partition by a digit, the step of the radix sort (circuits.radix).
"""
import numpy as np

from .correlations import (RING, from_words, low_bits, narrow, narrow_rows_into, packed_size, position_bits, row_blocks,
                           widen, widen_rows)
from .streams import DIGIT_MASK, ONEHOT_SHARE, PRODUCT_MASK, PRODUCT_SHARE


class DigitSelector:
    """One party's end of one one-hot correlation, for a vector of M digits.

    Shares are laid out by slot, (4, n) per block of elements: each slot a contiguous vector, so the public
    rearrangement by c is four masked swaps of whole vectors.  Whole vectors are only the opened c (a byte per
    element) and the receiver's packed one-hot words; the rest is made block by block
    (circuits.correlations.row_blocks), and the vectors of a job of one block are kept between its passes.
    """

    def __init__(self, shuffler, digit: np.ndarray):
        self.shuffler = shuffler
        self.m = m = len(digit)
        self.index = shuffler.onehot_count
        shuffler.onehot_count += 1
        self.blocks = row_blocks(m, whole=shuffler.view is not None)
        self._kept = {}  # block start -> its one-hot vectors f (4, n) and shares of sum_u e_u b_u (n,), until picked
        self._keep = m <= KEEP_ROWS  # else each pass expands the correlation again
        answer, self._received = None, None
        if shuffler.rank == 0:  # P0 asks for every correlation; its answer is empty when P1 receives it
            function, args = shuffler.select_request(m, self.index)
            answer = shuffler.request(function, *args)
        if shuffler.rank == onehot_receiver(self.index):
            size = packed_size(m, (position_bits(m),) * 4)
            if answer is None:
                comm = shuffler.comm
                self._received = comm.recv_array((size,), np.uint8, comm.get_ttp_rank(), comm.ttp_group)
            else:
                self._received = from_words(answer, np.uint8, (size,))
            if shuffler.view is not None:  # the audits': the receiver's words must be uniform to it
                shuffler.view.append(("one-hot part", self._slots(self._received, 4, 0, m).T.copy()))
        own = np.empty(m, dtype=np.uint8)
        for start, stop in self.blocks:
            mask = shuffler.stream.words(DIGIT_MASK, self.index, (stop - start,), RING, first=start)
            own[start:stop] = (digit[start:stop].astype(RING) ^ mask) & 3
        self.c = self._open_xor(own)

    def correlation(self, start: int, stop: int) -> tuple:
        """This party's shares of e_0..e_3, the one-hot vector of r, (4, n) and of sum_u e_u b_u (n,) for elements
        [start, stop)."""
        n, e = stop - start, np.empty((4, stop - start), dtype=RING)
        if self._received is not None:
            words = self._slots(self._received, 4, start, stop)
            e[1:], picked_mask = words[:3], words[3].copy()  # a copy: a view would keep all four slots until picked
        else:
            stream = self.shuffler.stream
            e[1:] = stream.slots(ONEHOT_SHARE, self.index, (3, self.m), start, stop, RING)
            picked_mask = stream.words(PRODUCT_SHARE, self.index, (n,), RING, first=start)
        e[0] = (1 if self.shuffler.rank == 0 else 0) - e[1:].sum(axis=0, dtype=RING)  # e_0 = 1 - e_1 - ...
        return e, picked_mask

    def arrange(self, values: np.ndarray, start: int) -> np.ndarray:
        """out[u] = values[u XOR c] per element (values: (4, n), elements from ``start``): swap slots 0-1 and 2-3
        where bit 0 of c is set, then 0-2 and 1-3 where bit 1 is."""
        c = self.c[start:start + values.shape[1]]
        out = values.copy()
        for bit, pairs in ((0, ((0, 1), (2, 3))), (1, ((0, 2), (1, 3)))):
            swap = -((c >> bit) & 1).astype(RING)  # all ones where bit b of c is set
            for a, b in pairs:
                flip = (out[a] ^ out[b]) & swap
                out[a] ^= flip
                out[b] ^= flip
        return out

    def onehot(self, start: int, stop: int) -> np.ndarray:
        """Shares (4, n) of the one-hot vector of each digit of elements [start, stop): f_v = e[v XOR c], kept until
        :meth:`pick`.  Up to KEEP_ROWS elements every block's are kept (20 bytes an element: the correlation
        expanded once, not per pass); beyond, only the last block's, and the correlation is expanded again where
        a pass needs it (memory that does not grow with M, for more work)."""
        if start not in self._kept:
            e, picked_mask = self.correlation(start, stop)
            if not self._keep:
                self._kept.clear()
            self._kept[start] = self.arrange(e, start), picked_mask
        return self._kept[start][0]

    def pick(self, values) -> np.ndarray:
        """Shares of values[d_i, i] mod 2^32, where values(start, stop) gives shares (4, n) of the values of
        elements [start, stop) (asked once per block); once per correlation, after :meth:`onehot` of every
        block."""
        m, width = self.m, position_bits(self.m)
        message, out = np.empty(packed_size(m, (width,) * 3), dtype=np.uint8), np.empty(m, dtype=RING)
        for start, stop in self.blocks:  # delta_u = a_u - a_0 - b_u for u >= 1, with a_u = values[u ^ c]
            arranged = self.arrange(values(start, stop), start)
            masked = arranged[1:] - arranged[0] - self.shuffler.stream.slots(PRODUCT_MASK, self.index, (3, m), start,
                                                                            stop, RING)
            narrow_rows_into(message, masked.T, (width,) * 3, m, start)
            out[start:stop] = arranged[0]
        other = self.shuffler.exchange(message, "masked product")
        for start, stop in self.blocks:
            delta = low_bits(self._slots(message, 3, start, stop) + self._slots(other, 3, start, stop), width)
            if self.shuffler.view is not None:
                self.shuffler.view.append(("masked product", delta.copy()))
            if start in self._kept:
                f, picked_mask = self._kept.pop(start)
                e = self.arrange(f, start)  # arranging twice is the identity: e from f
            else:
                e, picked_mask = self.correlation(start, stop)
            out[start:stop] += (e[1:] * delta).sum(axis=0, dtype=RING) + picked_mask
        return out

    def _slots(self, packed: np.ndarray, count: int, start: int, stop: int) -> np.ndarray:
        """Elements [start, stop) of each of the ``count`` slots of packed position words (a column each), as
        (count, n) words mod 2^32."""
        width = (position_bits(self.m),)
        size = packed_size(self.m, width)  # each slot its own column: read one at a time, each written whole
        return np.stack([widen_rows(packed[u * size:(u + 1) * size], width, RING, self.m, start, stop)[:, 0]
                         for u in range(count)])

    def _open_xor(self, own: np.ndarray) -> np.ndarray:
        """d XOR r from this party's 2-bit shares, four to a byte on the wire."""
        packed = narrow(own[:, None], (2,))
        c = widen(packed ^ self.shuffler.exchange(packed, "digit"), (2,), np.uint8, len(own))[:, 0]
        if self.shuffler.view is not None:
            self.shuffler.view.append(("digit", c.copy()))
        return c


def onehot_receiver(index: int) -> int:
    """The party the dealer sends its part of one-hot correlation ``index`` (the other expands its part from
    its stream): P0 three times in eight, P1 five, which evens their downloads per radix digit.  Without the
    one-hot words P0 receives 7w + 6 bits per element and digit, w = position_bits(M) (P1's masked digit, s, c,
    three Beaver differences, the unshuffle's second message; the dealer's corrections of the folded shuffle
    step and of the unshuffle's), P1 6w + 6 (P0's shuffle message, c, the differences, the unshuffle's first
    message; two corrections, none for the revealed sigma): with 3/8 of the 4w one-hot words each receives
    8.5w + 6 bits, 20.9 bytes at w = 19 (458,407 rows), where turn about left P0 with 22.1."""
    return 0 if index % ONEHOT_PERIOD in _P0_ONEHOTS else 1


ONEHOT_PERIOD, _P0_ONEHOTS = 8, (0, 3, 5)
KEEP_ROWS = 1 << 22  # digits of a selection up to which its one-hot vectors are kept between its two passes


def digit_destinations(shuffler, digit: np.ndarray) -> np.ndarray:
    """This party's share (int32, mod 2^32) of rho, the stable sort by a shared 2-bit digit (XOR shares):
    rho = S_d with S_v = Z_v + cumsum(f_v) - 1, Z_v = sum_{u < v} sum(f_u) (circuits.radix), block by block: a
    first pass adds up each block's f_v, the second makes the running sums from the blocks before."""
    selector = DigitSelector(shuffler, digit)
    counts = np.stack([selector.onehot(start, stop).sum(axis=1, dtype=RING) for start, stop in selector.blocks])
    before = np.cumsum(counts, axis=0, dtype=RING) - counts  # per block: f_v summed over the blocks before it
    below = np.zeros(4, dtype=RING)
    below[1:] = np.cumsum(counts.sum(axis=0, dtype=RING), dtype=RING)[:-1]  # Z_v: elements with a smaller digit
    if shuffler.rank == 0:
        below -= 1  # 0-based positions (a public constant: P0's share carries it)
    offset = {start: before[i] + below for i, (start, _) in enumerate(selector.blocks)}  # per block's first element

    def slots(start: int, stop: int) -> np.ndarray:
        running = np.cumsum(selector.onehot(start, stop), axis=1, dtype=RING)  # wraps mod 2^32, like the shares
        return running + offset[start][:, None]

    return selector.pick(slots)
