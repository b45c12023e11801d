"""Exact tie-aware rank-sum AUC and mid-ranks on an obliviously sorted, secret-shared sample.

fedauc eq. (1) / App. H.2 with mid-ranks: AUC = (sum_i R_i y_i - P(P-1)/2) / (P N),
R_i the 0-based mid-rank; equivalently U = sum over tie groups g of
p_g (NB_g + n_g / 2), with p_g, n_g the group's positives and negatives and
NB_g the negatives below it.  This equals ``sklearn.metrics.roc_auc_score``.

Tie groups by compaction instead of scans.  On sorted keys, e_j = 1 where a
group starts (j = 0, or k_j != k_{j-1}: from XOR-shared keys an OR over the
bits of k_j XOR k_{j-1}, six AND rounds; from additive keys one comparison).  A
stable partition by e (Shuffler.apply) lists the group starts first, in
order: compacted slot t < G holds the start a_t of group t with the
exclusive prefix counts Nex, Pex there; the next slot gives where the group
ends (a_{t+1} - 1, or M - 1 for the last group, whose "next" is the totals
(M, N, P)).  Then, with f_t = [t < G],

    2U = sum_t f_t (Pex_{t+1} - Pex_t) (Nex_t + Nex_{t+1}),
    twice the mid-rank of group t = a_t + a_{t+1} - 1.

Mid-ranks reach every member by a difference vector d_t = f_t (2R_t - 2R_{t-1})
moved back to the group starts (Shuffler.unapply) and a prefix sum.  Cost:
the group starts, one digit partition, two or three multiplications and one
or two shuffles of M elements, in a constant number of rounds.
"""
import numpy as np
import torch

from .crypten_compat import crypten
from .select import digit_destinations
from .shares import from_share, public, share_of

BinarySharedTensor = crypten.mpc.primitives.BinarySharedTensor
beaver = crypten.mpc.primitives.beaver


def _next(x, fill):
    """x[t + 1] along the vector; ``fill`` (public 0) at the end."""
    return crypten.cat([x[1:], fill])


def _with_first(rest):
    """[1, rest...]: position 0 always starts a group."""
    one = public(torch.ones(1, dtype=torch.int64))
    return crypten.cat([one, rest]) if rest is not None else one


def group_starts_from_keys(sorted_keys):
    """e_j from additively shared sorted keys: [k_j > k_{j-1}] (they never decrease)."""
    return _with_first(sorted_keys[1:] > sorted_keys[:-1] if sorted_keys.size(0) > 1 else None)


def group_starts_from_xor_keys(sorted_xor: np.ndarray):
    """e_j from this party's XOR shares of the sorted keys: OR of the bits of k_j XOR k_{j-1}."""
    if len(sorted_xor) == 1:
        return _with_first(None)
    differ = BinarySharedTensor.from_shares(torch.from_numpy(sorted_xor[1:] ^ sorted_xor[:-1]))
    for shift in (32, 16, 8, 4, 2, 1):
        differ = differ | (differ >> shift)  # bit 0 collects the OR of all 64 bits
    return _with_first(from_share(beaver.B2A_single_bit(differ & 1).share))


def auc_fraction(shuffler, starts, sorted_labels, mid_ranks: bool = False):
    """Shared (2U, 2PN) -- the AUC is their ratio -- and, if asked, 2 x the 0-based mid-rank per sorted position.

    starts: shared group-start bits e in sorted order (group_starts_from_*).
    """
    m = sorted_labels.size(0)
    y = sorted_labels
    zero = public(torch.zeros(1, dtype=torch.int64))
    pos_below = y.cumsum(0) - y
    positives = y.sum()
    negatives = m - positives
    later = 1 - starts  # partition key: group starts (0) first
    # an additively shared bit's XOR shares are the low bits of its shares
    rho = digit_destinations(shuffler, share_of(later) & 1)
    f_bar, a, pex = shuffler.apply(rho, [later, public(torch.arange(m)), pos_below])
    nex = a - pex  # neg_below moves with the positions and pos_below: no column of its own
    f = 1 - f_bar
    # values of the next slot, or the totals (M, N, P) where no group follows
    f_next = _next(f, zero)
    # one product per column: a (3, M) product's triples and openings would peak at 3x the memory
    a_next, nex_next, pex_next = (f_next * (_next(x, zero) - total) + total
                                  for x, total in ((a, m), (nex, negatives), (pex, positives)))
    twice_rank = a + a_next - 1
    if mid_ranks:
        previous = crypten.cat([zero, twice_rank[:-1]])
        masked = f * crypten.stack([pex_next - pex, twice_rank - previous])
        group_positives, step = masked[0], masked[1]
    else:
        group_positives = f * (pex_next - pex)
    twice_u = (group_positives * (nex + nex_next)).sum()
    twice_pn = (positives * negatives) * 2
    if not mid_ranks:
        return twice_u, twice_pn, None
    (at_starts,) = shuffler.unapply(rho, [step])
    return twice_u, twice_pn, at_starts.cumsum(0)
