"""Oblivious radix sort: stable bit partitions composed through shuffle-and-open.

The sorting permutation is built least significant bit first (Hamada et al.
2014; Chida et al. 2019, GenBitPerm / ApplyPerm / composition).  sigma is
kept as a shared destination vector: sigma[i] is the sorted position of
input element i.

* Stable partition of a shared bit column b (0s first, input order kept):
      rho = s0 + b (s1 - s0),  s0 = cumsum(1 - b) - 1,  s1 = Z + cumsum(b) - 1,
  with Z = sum(1 - b); prefix sums are local, one multiplication per element.
  Digits of two bits sort the same way by four one-hot indicators
  (digit_partition), which halves the number of shuffles.
* Round i (digit i): shuffle (sigma, digit bits) together by a fresh joint
  permutation pi, open s = sigma[pi] and place the bits in their current
  order, b'[s[t]] = b[pi][t]; rho = partition(b'); the new destination
  sigma'[j] = rho[sigma[j]] is unshuffled from rho[s] (= sigma'[pi]).
* Moving columns to sorted order and back: Shuffler.apply / unapply.

What is opened: only vectors sigma[pi] for a permutation sigma and a fresh
uniform pi, hence a uniform random permutation whatever the input, ties
included (ties are broken by input position inside the shared sigma, which
is never opened).  docs/protocols/oblivious-ranking.md gives the argument.
Cost per 2-bit digit: about 20 rounds and 27 words per element per party.
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


def digit_partition(low, high):
    """Shared destinations of a stable sort by the 2-bit digit 2*high + low.

    One-hot indicators f_v of the four digit values (f_11 = low*high, one
    multiplication) and, for each value, its start Z_v plus the running count
    cumsum(f_v) - 1; rho = S_00 + sum_{v != 00} f_v (S_v - S_00), one batched
    multiplication of 3M elements.
    """
    both = low * high
    ones = [low - both, high - both, both]  # digit values 01, 10, 11
    zeros = 1 - low - high + both  # digit value 00
    start = zeros.sum()
    s00 = zeros.cumsum(0) - 1
    lifts = []
    for f in ones:
        lifts.append(f.cumsum(0) + start - 1 - s00)
        start = start + f.sum()
    return s00 + (crypten.stack(ones) * crypten.stack(lifts)).sum(0)


def digits(keys, offset: int, bits: int):
    """Yield the key's radix digits, least significant first: lists of 2 shared bits (1 for an odd last bit)."""
    columns = key_bit_columns(keys, offset, bits)
    for start in range(0, bits, 2):
        yield [next(columns) for _ in range(min(2, bits - start))]


def partition(digit):
    return stable_partition(digit[0]) if len(digit) == 1 else digit_partition(*digit)


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
        done = 0
        for digit in digits(keys, self.offset, self.bits):
            if sigma is None:
                sigma = partition(digit)
            else:
                s, pi, moved = self.shuffler.open_shuffled(sigma, digit)
                current = np.empty_like(moved)
                current[:, s] = moved
                rho = share_of(partition([from_share(row) for row in current]))
                sigma = from_share(self.shuffler.gather_back(s, pi, rho[None])[0])
            done += len(digit)
            if self.progress is not None:
                self.progress(done, self.bits)
        return sigma
