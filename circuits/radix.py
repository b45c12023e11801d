"""Oblivious radix sort: stable digit partitions composed through shuffle-and-open.

The sorting permutation is built least significant digit first (Hamada et
al. 2014; Chida et al. 2019, GenBitPerm / ApplyPerm / composition), with
2-bit digits.  sigma is kept as a shared destination vector: sigma[i] is
the sorted position of input element i.

* Digits: the clients XOR-share the non-negative keys besides their additive
  shares, so digit t of each element is (share >> 2t) & 3 on each side,
  locally (no secure bit decomposition).
* Stable partition by a shared digit (circuits.select.digit_destinations,
  one one-hot correlation from the dealer): with f_v the one-hot indicators,
      rho = S_d,   S_v = Z_v + cumsum(f_v) - 1,   Z_v = sum_{u < v} sum(f_u),
  i.e. the digit's slot picked from four locally computed candidates.
* Round t: shuffle (sigma [additive], digit t [XOR]) by a fresh joint
  permutation pi, open s = sigma[pi] and place the digits in their current
  order, d'[s[j]] = d[pi][j]; rho = partition(d'); the new destination
  sigma'[i] = rho[sigma[i]] is unshuffled from rho[s] (= sigma'[pi]).
* Moving columns to sorted order and back: Shuffler.apply_shares / unapply_shares.

What is opened: vectors sigma[pi] for a permutation sigma and a fresh
uniform pi (a uniform random permutation whatever the input, ties included:
ties are broken by input position inside the shared sigma, which is never
opened), digits masked by a fresh uniform dealer digit, and Beaver
differences masked by fresh uniform words.  docs/protocols/oblivious-ranking.md
gives the argument.  The inner steps run on 32-bit words, and positions are
needed only modulo 2^w, w = position_bits(M) = ceil(log2 M) (19 bits at
458,407 rows): so only their w low bits travel, packed tight, and the digit's
two (circuits.correlations.narrow).  Per digit and element each party sends
(6 w + 4) / 8 bytes, its part of the next digit's permutation to the dealer
included (Shuffler.announce, w bits; P0 at 458,407 rows: 14.75 bytes per 2-bit
digit), and the dealer (10 w + 2) / 8; the final apply moves the 64-bit payload
columns.
"""
import contextlib

import numpy as np

from .correlations import RING, position_bits
from .rank_auc import group_starts_from_xor_keys
from .select import digit_destinations
from .shuffle import placed

DIGIT_BITS = 2


class RadixRanking:
    """Sort XOR-shared keys (radix sort) and move shared columns between input and sorted order.

    bits: the keys lie in [0, 2^bits); public (fixed by the score encoding,
    not by the data).  After ``sort``, ``sigma`` holds this party's int32
    share of the sorting permutation, correct modulo 2^position_bits(M) (the low bits that the sort
    opens and moves; circuits.correlations.narrow).  gates: circuits.gates.Gates
    of the same dealer key (the group starts after the sort).
    """

    def __init__(self, shuffler, gates, bits: int, progress=None, steps=contextlib.nullcontext):
        """progress(done, total) after each digit; steps(): a context manager around the sort's 32-bit steps,
        which ends before its 64-bit move (the roles': protocols.runtime.memory.repeated_steps)."""
        self.shuffler, self.gates, self.bits = shuffler, gates, bits
        self.progress, self.steps = progress, steps
        self.sigma = None

    def sort(self, keys, key_xor: np.ndarray, payloads):
        """(group-start bits, [sorted payloads]) in sorted order, as this party's int64 shares; payloads are
        int64 additive shares; ties keep input order (never opened).

        keys (additive) are not needed: the radix sort reads the XOR shares.  A list of payloads is emptied once
        they are copied into the final move's words (with the XOR keys): a caller that holds no other reference
        to them (or to the keys) has them freed there (Shuffler.open_shuffled).
        """
        with self.steps():
            self.sigma = self.permutation(key_xor, len(payloads) + 1)
        columns = [*payloads, key_xor]
        if isinstance(payloads, list):
            payloads.clear()
        del key_xor
        moved = self.shuffler.apply_shares(self.sigma, columns, xor_columns=1)
        starts = group_starts_from_xor_keys(self.gates, moved[-1], self.bits)
        return starts, [row.copy() for row in moved[:-1]]  # copies: the sorted keys go with ``moved``

    def to_input_order(self, sorted_column: np.ndarray) -> np.ndarray:
        """Shares of a column (M,), or of columns (k, M) moved together, given in the sorted order of the last
        ``sort``, back in input order."""
        moved = self.shuffler.unapply_shares(self.sigma, np.atleast_2d(sorted_column))
        return moved if np.ndim(sorted_column) == 2 else moved[0]

    def permutation(self, key_xor: np.ndarray, then_moved: int) -> np.ndarray:
        """This party's share (int32, mod 2^32) of sigma: sigma[i] is the position of element i after a
        stable sort by key.  then_moved: the 64-bit rows the caller moves by sigma next (the last of them
        XOR-shared), whose shuffle the dealer prepares during the last digit."""
        sigma, fold = None, None
        m = len(key_xor)
        plan = self._dealer_plan(m, then_moved)
        for step, start in enumerate(range(0, self.bits, DIGIT_BITS)):
            if self.shuffler.PREFETCH:  # both parties: the next digit's permutation (after the last: the move's)
                self.shuffler.announce(m)
            if plan:  # the dealer works on the next digit's correlations while the parties do this one
                self.shuffler.post(plan[step + 1] if step else plan[0] + plan[1])
            digit = ((key_xor >> start) & 3).astype(RING)
            if sigma is None:
                sigma = digit_destinations(self.shuffler, digit)
            else:
                s, pi, moved = self.shuffler.open_shuffled(sigma, digit[None], xor_columns=1, widths=(DIGIT_BITS,),
                                                           fold=fold, checked=False)
                current = placed(s, moved[0] & 3)  # the digit shares in their current order (s checked on the way)
                del sigma, digit, moved  # what the selection does not read goes before it
                rho = digit_destinations(self.shuffler, current)
                del current
                fold = self.shuffler.schedule()[1]  # the unshuffle's masks: P1's sigma is its stream's words then
                sigma = self.shuffler.gather_back(s, pi, rho[None], (position_bits(m),))[0]
            if self.progress is not None:
                self.progress(min(start + DIGIT_BITS, self.bits), self.bits)
        return sigma

    def _dealer_plan(self, m: int, then_moved: int) -> list:
        """P0: per digit, the dealer requests it makes (in order), and past the last digit the shuffle of
        the move that follows (``then_moved`` rows besides sigma, on 64-bit words); [] where nothing is
        posted ahead (P1, or a shuffler that does not prefetch).  Each permutation is announced a digit
        ahead (``permutation``), so its requests say so."""
        if self.shuffler.rank != 0 or not self.shuffler.PREFETCH:
            return []
        shuffler = self.shuffler
        perm, masks, onehot = shuffler.schedule()
        digits = -(-self.bits // DIGIT_BITS)
        width = position_bits(m)
        plan = [[shuffler.select_request(m, onehot)]]
        for t in range(1, digits):  # shuffle (sigma, digit; P1's sigma folded after the first), select, unshuffle rho
            plan.append([shuffler.shuffle_request((m, 2), perm, masks, False, 1, RING, True, (width, DIGIT_BITS),
                                                  fold=masks - 1 if t > 1 else None, reveal=True),
                         shuffler.select_request(m, onehot + t),
                         shuffler.shuffle_request((m, 1), perm, masks + 1, True, 1, RING, True, (width,))])
            perm, masks = perm + 1, masks + 2
        return plan + [[shuffler.shuffle_request((m, then_moved + 1), perm, masks, False, then_moved, np.int64, True,
                                                 (width,) + (64,) * then_moved, reveal=True)]]
