"""Oblivious radix sort: stable bit partitions composed through shuffle-and-open.

The sorting permutation is built least significant bit first (Hamada et al.
2014; Chida et al. 2019, GenBitPerm / ApplyPerm / composition).  sigma is
kept as a shared destination vector: sigma[i] is the sorted position of
input element i.

* Stable partition of a shared bit column b (0s first, input order kept):
      rho = s0 + b (s1 - s0),  s0 = cumsum(1 - b) - 1,  s1 = Z + cumsum(b) - 1,
  with Z = sum(1 - b); prefix sums are local, one multiplication per element.
* Round i (bit i): shuffle (sigma, b_i) together by a fresh joint
  permutation pi, open s = sigma[pi] and place the bits in their current
  order, b'[s[t]] = b_i[pi][t]; rho = partition(b'); the new destination
  sigma'[j] = rho[sigma[j]] is unshuffled from rho[s] (= sigma'[pi]).
* Moving columns to sorted order and back: Shuffler.apply / unapply.

What is opened: only vectors sigma[pi] for a permutation sigma and a fresh
uniform pi, hence a uniform random permutation whatever the input, ties
included (ties are broken by input position inside the shared sigma, which
is never opened).  docs/protocols/oblivious-ranking.md gives the argument.
Cost per key bit: about 19 rounds and 19 words per element per party.
"""
import numpy as np

from .crypten_compat import crypten
from .shares import from_share, share_of

converters = crypten.mpc.primitives.converters
beaver = crypten.mpc.primitives.beaver


def key_bit_columns(keys, offset: int, bits: int):
    """Yield shared arithmetic bits 0..bits-1 (least significant first) of keys + offset >= 0."""
    binary = converters._A2B((keys + offset)._tensor)
    for i in range(bits):
        bit = beaver.B2A_single_bit((binary >> i) & 1)
        yield from_share(bit.share)


def stable_partition(bit):
    """Shared destinations of a stable partition putting 0-bits first (rho above)."""
    m = bit.size(0)
    s0 = (1 - bit).cumsum(0) - 1
    s1 = bit.cumsum(0) + (m - bit.sum()) - 1
    return s0 + bit * (s1 - s0)


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
        self.sigma = self.permutation(keys)
        moved = self.shuffler.apply(self.sigma, [keys] + list(payloads))
        return moved[0], moved[1:]

    def to_input_order(self, sorted_column):
        """A column given in the sorted order of the last ``sort``, back in input order."""
        return self.shuffler.unapply(self.sigma, [sorted_column])[0]

    def permutation(self, keys):
        """Shared sigma: sigma[i] is the position of element i after a stable sort by key."""
        sigma = None
        for i, bit in enumerate(key_bit_columns(keys, self.offset, self.bits)):
            if sigma is None:
                sigma = stable_partition(bit)
            else:
                s, pi, (moved,) = self.shuffler.open_shuffled(sigma, [bit])
                current = np.empty_like(moved)
                current[s] = moved
                rho = share_of(stable_partition(from_share(current)))
                sigma = from_share(self.shuffler.gather_back(s, pi, rho[None])[0])
            if self.progress is not None:
                self.progress(i + 1, self.bits)
        return sigma
