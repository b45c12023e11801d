"""Selecting by a secret 2-bit digit with the dealer's one-hot correlation.

For an XOR-shared digit d in {0, 1, 2, 3} (per element), the dealer's random
r = r0 XOR r1 comes with additive shares of its one-hot vector e and Beaver
masks b with shares of b[r] (circuits.dealer).  The parties open
c = d XOR r, which is uniform and hides d.  Then

* the one-hot vector of d is f_v = e[c XOR v]: a public rearrangement of the
  shared e, so local;
* for shared values y_0..y_3 per element, y_d = sum_u e_u y_{u XOR c}.  With
  delta_u = y_{u XOR c} - b_u opened (uniform, b_u unknown to the parties),
  y_d = sum_u e_u delta_u + b[r]: linear in the shares, since delta is public.

Per element: the dealer sends P0 4 words, the parties exchange one byte for
c and 4 words for delta.  ``digit_destinations`` uses it for the stable
partition by a digit, the step of the radix sort (circuits.radix).
"""
import numpy as np

from .streams import DIGIT_MASK, ONEHOT_SHARE, PRODUCT_MASK, PRODUCT_SHARE

SLOTS = np.arange(4)


class DigitSelector:
    """One party's end of one one-hot correlation, for a vector of M digits."""

    def __init__(self, shuffler, digit: np.ndarray):
        self.shuffler = shuffler
        m = len(digit)
        self.index = shuffler.onehot_count
        shuffler.onehot_count += 1
        stream = shuffler.stream
        if shuffler.rank == 0:
            correlated = shuffler.request("onehot_correlation", m, self.index)
            rest, self._picked_mask = correlated[:, :3], correlated[:, 3]
        else:
            rest = stream.words(ONEHOT_SHARE, self.index, (m, 3))
            self._picked_mask = stream.words(PRODUCT_SHARE, self.index, (m,))
        self._onehot_r = np.empty((m, 4), dtype=np.int64)
        self._onehot_r[:, 1:] = rest
        self._onehot_r[:, 0] = (1 if shuffler.rank == 0 else 0) - rest.sum(axis=1)
        own = (digit ^ stream.words(DIGIT_MASK, self.index, (m,))) & 3
        self._c = self._open_xor(own.astype(np.uint8))
        self._lookup = SLOTS[None, :] ^ self._c[:, None]  # slot u holds the value u XOR c

    def onehot(self) -> np.ndarray:
        """Shares (M, 4) of the one-hot vector of each digit."""
        return np.take_along_axis(self._onehot_r, self._lookup, axis=1)

    def pick(self, values: np.ndarray) -> np.ndarray:
        """Shares of values[i, d_i] for shares of values (M, 4); usable once per correlation."""
        arranged = np.take_along_axis(values, self._lookup, axis=1)  # arranged[:, u] = values[:, u ^ c]
        masks = self.shuffler.stream.words(PRODUCT_MASK, self.index, values.shape)
        delta = self.shuffler.open(arranged - masks, kind="masked product")
        return (self._onehot_r * delta).sum(axis=1) + self._picked_mask

    def _open_xor(self, own: np.ndarray) -> np.ndarray:
        """d XOR r from this party's 2-bit share (the sum of the two shares fits a byte)."""
        total = self.shuffler.open(own, kind="digit")
        return (own ^ (total - own)).astype(np.int64)


def digit_destinations(shuffler, digit: np.ndarray) -> np.ndarray:
    """This party's share of rho, the stable sort by a shared 2-bit digit (XOR shares)."""
    selector = DigitSelector(shuffler, digit)
    onehot = selector.onehot()
    running = np.cumsum(onehot, axis=0)  # wraps mod 2^64, like the shares
    below = np.concatenate([[0], np.cumsum(running[-1])[:-1]])  # Z_v: elements with a smaller digit
    slots = running + below[None, :]
    if shuffler.rank == 0:
        slots -= 1  # 0-based positions (a public constant: P0's share carries it)
    return selector.pick(slots)
