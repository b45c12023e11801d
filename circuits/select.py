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
needed modulo 2^(8 w) only, w = circuits.correlations.position_bytes(M).  Per
element: the dealer sends one party four w-byte words (P0 for three
correlations in eight, P1 for five: :func:`onehot_receiver`), the parties exchange two bits for c and three
w-byte words for delta.  ``digit_destinations`` uses it for
the stable partition by a digit, the step of the radix sort (circuits.radix).
"""
import numpy as np

from .correlations import RING, from_words, packed_size, position_bytes, widen
from .streams import DIGIT_MASK, ONEHOT_SHARE, PRODUCT_MASK, PRODUCT_SHARE

class DigitSelector:
    """One party's end of one one-hot correlation, for a vector of M digits.

    Shares are laid out by slot, (4, M): each slot a contiguous vector, so the
    public rearrangement by c is four masked swaps of whole vectors.
    """

    def __init__(self, shuffler, digit: np.ndarray):
        self.shuffler = shuffler
        m = len(digit)
        self.index = shuffler.onehot_count
        shuffler.onehot_count += 1
        stream = shuffler.stream
        answer = None
        if shuffler.rank == 0:  # P0 asks for every correlation; its answer is empty when P1 receives it
            function, args = shuffler.select_request(m, self.index)
            answer = shuffler.request(function, *args)
        if shuffler.rank == onehot_receiver(self.index):
            width = (position_bytes(m),)
            size = packed_size(4 * m, width)
            if answer is None:
                comm = shuffler.comm
                packed = comm.recv_array((size,), np.uint8, comm.get_ttp_rank(), comm.ttp_group)
            else:
                packed = from_words(answer, np.uint8, (size,))
            correlated = widen(packed, width, RING, 4 * m).reshape(4, m)
            if shuffler.view is not None:  # the audits': the receiver's words must be uniform to it
                shuffler.view.append(("one-hot part", correlated.T.copy()))
            rest, self._picked_mask = correlated[:3], correlated[3]
        else:
            rest = stream.words(ONEHOT_SHARE, self.index, (3, m), RING)
            self._picked_mask = stream.words(PRODUCT_SHARE, self.index, (m,), RING)
        self._onehot_r = np.empty((4, m), dtype=RING)
        self._onehot_r[1:] = rest
        self._onehot_r[0] = (1 if shuffler.rank == 0 else 0) - rest.sum(axis=0, dtype=RING)  # e_0 = 1 - e_1 - ...
        own = (digit.astype(RING) ^ stream.words(DIGIT_MASK, self.index, (m,), RING)) & 3
        c = self._open_xor(own.astype(np.uint8))
        self._swap = [-(c & 1).astype(RING), -((c >> 1) & 1).astype(RING)]  # all ones where bit b of c is set

    def arrange(self, values: np.ndarray) -> np.ndarray:
        """out[u] = values[u XOR c] per element (values: (4, M)): swap slots 0-1 and 2-3 where bit 0 of c is
        set, then 0-2 and 1-3 where bit 1 is."""
        out = values.copy()
        for bit, pairs in ((0, ((0, 1), (2, 3))), (1, ((0, 2), (1, 3)))):
            for a, b in pairs:
                flip = (out[a] ^ out[b]) & self._swap[bit]
                out[a] ^= flip
                out[b] ^= flip
        return out

    def onehot(self) -> np.ndarray:
        """Shares (4, M) of the one-hot vector of each digit: f_v = e[v XOR c]."""
        return self.arrange(self._onehot_r)

    def pick(self, values: np.ndarray) -> np.ndarray:
        """Shares of values[d_i, i] for shares of values (4, M) mod 2^32; usable once per correlation."""
        arranged = self.arrange(values)  # arranged[u] = values[u ^ c]
        masks = self.shuffler.stream.words(PRODUCT_MASK, self.index, (3, len(self._picked_mask)), RING)
        delta = self.shuffler.open(arranged[1:] - arranged[0] - masks, kind="masked product",
                                   width=position_bytes(len(self._picked_mask)))
        return arranged[0] + (self._onehot_r[1:] * delta).sum(axis=0, dtype=RING) + self._picked_mask

    def _open_xor(self, own: np.ndarray) -> np.ndarray:
        """d XOR r from this party's 2-bit shares, four to a byte on the wire."""
        packed = pack_digits(own)
        c = unpack_digits(packed ^ self.shuffler.exchange(packed, "digit"), len(own))
        if self.shuffler.view is not None:
            self.shuffler.view.append(("digit", c.copy()))
        return c


_SHIFTS = np.array([0, 2, 4, 6], dtype=np.uint8)


def pack_digits(digits: np.ndarray) -> np.ndarray:
    """2-bit values four to a byte (the first in the low bits), zero-padded to whole bytes."""
    quads = np.zeros(-(-len(digits) // 4) * 4, dtype=np.uint8)
    quads[:len(digits)] = digits
    return np.bitwise_or.reduce(quads.reshape(-1, 4) << _SHIFTS, axis=1)


def unpack_digits(packed: np.ndarray, n: int) -> np.ndarray:
    """The first n 2-bit values :func:`pack_digits` packed."""
    return ((packed[:, None] >> _SHIFTS) & 3).reshape(-1)[:n]


def onehot_receiver(index: int) -> int:
    """The party the dealer sends its part of one-hot correlation ``index`` (the other expands its part from
    its stream): P0 three times in eight, P1 five, which evens their downloads per radix digit.  Without the
    one-hot words P0 receives 7w + 2.25 bytes per element and digit (P1's masked digit, s, c, three Beaver
    differences, the unshuffle's second message; the dealer's corrections of the folded shuffle step and of
    the unshuffle's), P1 6w + 2.25 (P0's shuffle message, c, the differences, the unshuffle's first message;
    two corrections, none for the revealed sigma): with 3/8 of the 4w one-hot words each receives
    8.5w + 2.25, 27.75 bytes at w = 3, where turn about left P0 with 29.25."""
    return 0 if index % ONEHOT_PERIOD in _P0_ONEHOTS else 1


ONEHOT_PERIOD, _P0_ONEHOTS = 8, (0, 3, 5)


def digit_destinations(shuffler, digit: np.ndarray) -> np.ndarray:
    """This party's share (int32, mod 2^32) of rho, the stable sort by a shared 2-bit digit (XOR shares)."""
    selector = DigitSelector(shuffler, digit)
    running = np.cumsum(selector.onehot(), axis=1, dtype=RING)  # wraps mod 2^32, like the shares
    below = np.zeros(4, dtype=RING)
    below[1:] = np.cumsum(running[:, -1], dtype=RING)[:-1]  # Z_v: elements with a smaller digit
    slots = running + below[:, None]
    if shuffler.rank == 0:
        slots -= 1  # 0-based positions (a public constant: P0's share carries it)
    return selector.pick(slots)
