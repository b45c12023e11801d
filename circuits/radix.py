"""Oblivious radix sort: stable digit partitions composed through shuffle-and-open.

The sorting permutation is built least significant digit first (Hamada et
al. 2014; Chida et al. 2019, GenBitPerm / ApplyPerm / composition), with
2-bit digits.  sigma is kept as a shared destination vector: sigma[i] is
the sorted position of input element i.

* Digits: keys + offset >= 0 are turned into XOR shares once (CrypTen A2B);
  digit t of each element is then (share >> 2t) & 3 on each side, locally.
* Stable partition by a shared digit (circuits.select, one one-hot
  correlation from the dealer): with f_v the one-hot indicators,
      rho = S_d,   S_v = Z_v + cumsum(f_v) - 1,   Z_v = sum_{u < v} sum(f_u),
  i.e. the digit's slot picked from four locally computed candidates.
* Round t: shuffle (sigma [additive], digit t [XOR]) by a fresh joint
  permutation pi, open s = sigma[pi] and place the digits in their current
  order, d'[s[j]] = d[pi][j]; rho = partition(d'); the new destination
  sigma'[i] = rho[sigma[i]] is unshuffled from rho[s] (= sigma'[pi]).
* Moving columns to sorted order and back: Shuffler.apply / unapply.

What is opened: vectors sigma[pi] for a permutation sigma and a fresh
uniform pi (a uniform random permutation whatever the input, ties included:
ties are broken by input position inside the shared sigma, which is never
opened), digits masked by a fresh uniform dealer digit, and Beaver
differences masked by fresh uniform words.  docs/protocols/oblivious-ranking.md
gives the argument.  Per digit and element each party sends about 8 words,
the dealer about 10.
"""
import numpy as np

from .crypten_compat import crypten
from .select import DigitSelector
from .shares import from_share

converters = crypten.mpc.primitives.converters
DIGIT_BITS = 2


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


class RadixRanking:
    """Sort shared keys (radix sort) and move shared columns between input and sorted order.

    offset, bits: keys + offset must lie in [0, 2^bits); both are public
    (fixed by the score encoding, not by the data).
    """

    def __init__(self, shuffler, offset: int, bits: int, progress=None):
        self.shuffler, self.offset, self.bits = shuffler, offset, bits
        self.progress = progress
        self.sigma = None

    def sort(self, keys, payloads):
        """(sorted keys, [sorted payloads]); ties keep input order (never opened)."""
        self.sigma = from_share(self.permutation(keys))
        moved = self.shuffler.apply(self.sigma, [keys] + list(payloads))
        return moved[0], moved[1:]

    def to_input_order(self, sorted_column):
        """A column given in the sorted order of the last ``sort``, back in input order."""
        return self.shuffler.unapply(self.sigma, [sorted_column])[0]

    def permutation(self, keys) -> np.ndarray:
        """This party's share of sigma: sigma[i] is the position of element i after a stable sort by key."""
        binary = converters._A2B((keys + self.offset)._tensor).share.numpy()
        sigma = None
        for start in range(0, self.bits, DIGIT_BITS):
            digit = (binary >> start) & 3
            if sigma is None:
                sigma = digit_destinations(self.shuffler, digit)
            else:
                s, pi, moved = self.shuffler.open_shuffled(sigma, digit[None], xor_columns=1)
                current = np.empty_like(digit)
                current[s] = moved[0]
                rho = digit_destinations(self.shuffler, current)
                sigma = self.shuffler.gather_back(s, pi, rho[None])[0]
            if self.progress is not None:
                self.progress(min(start + DIGIT_BITS, self.bits), self.bits)
        return sigma
