"""Exact tie-aware rank-sum AUC and mid-ranks on an obliviously sorted, secret-shared sample.

fedauc eq. (1) / App. H.2 with mid-ranks: AUC = (sum_i R_i y_i - P(P-1)/2) / (P N),
R_i the 0-based mid-rank; equivalently U = sum over tie groups g of
p_g (NB_g + n_g / 2), with p_g, n_g the group's positives and negatives and
NB_g the negatives below it.  This equals ``sklearn.metrics.roc_auc_score``.

Tie groups by compaction instead of scans.  On sorted keys, e_j = 1 where a
group starts (j = 0, or k_j != k_{j-1}: from XOR-shared keys the NOT of
[all bits of NOT (k_j XOR k_{j-1}) are set], circuits.comparators.all_set, six
AND rounds and a bit conversion; from additive keys one CrypTen comparison).
First every element that starts no group trades its position and its
positives below for the totals (M, P): e_j (j - M) + M is local (the
position j is public), e_j (Pex_j - P) + P one round of products.  A
stable partition by e (Shuffler.apply_shares) then lists the group starts
first, in order: compacted slot t < G holds the start a_t
of group t and the exclusive prefix count Pex there (Nex = a - Pex), and
every slot from G on holds (M, P), which is exactly the "next group" of the
last group (where it ends: a_{t+1} - 1 = M - 1).  So

    2U = sum_t (Pex_{t+1} - Pex_t) (Nex_t + Nex_{t+1})   (slots past G add 0),
    twice the mid-rank of group t = a_t + a_{t+1} - 1,

with the next slot's values a shift.  Mid-ranks reach every member by a
difference vector d_t = f_t (2R_t - 2R_{t-1}), f_t = [t < G], moved back to
the group starts (Shuffler.unapply_shares) and a prefix sum.  Cost: the
group starts, one digit partition, two rounds of products (M + 1 and M;
circuits.gates, on triples the dealer makes ahead) and one or two shuffles
of M elements (two columns besides the destinations; three with mid-ranks), in a
constant number of rounds.  Everything here works on this party's int64
shares (mod 2^64) as numpy arrays; a public constant c enters as (c, 0).
"""
import numpy as np

from .comparators import all_set, flip
from .select import digit_destinations
from .shares import public_share, share_of
from .crypten_compat import crypten



def _next(x: np.ndarray, fill) -> np.ndarray:
    """x[t + 1] along the vector; ``fill`` at the end."""
    return np.append(x[1:], np.int64(fill))


def _with_first(rank: int, rest: np.ndarray) -> np.ndarray:
    """[1, rest...]: position 0 always starts a group."""
    return np.concatenate([np.array([public_share(1, rank)], dtype=np.int64), rest.astype(np.int64, copy=False)])


def group_starts_from_keys(sorted_keys) -> np.ndarray:
    """e_j from additively shared sorted keys (MPC tensor): [k_j > k_{j-1}] (they never decrease)."""

    rank = crypten.communicator.get().get_rank()
    if sorted_keys.size(0) == 1:
        return _with_first(rank, np.zeros(0, dtype=np.int64))
    return _with_first(rank, share_of(sorted_keys[1:] > sorted_keys[:-1]))


def group_starts_from_xor_keys(gates, sorted_xor: np.ndarray, bits: int) -> np.ndarray:
    """e_j from this party's XOR shares of the sorted ``bits``-bit keys: NOT [k_j XOR k_{j-1} is all zero]."""
    rest = np.zeros(0, dtype=np.int64)
    if len(sorted_xor) > 1:
        same = all_set(gates, flip(sorted_xor[1:] ^ sorted_xor[:-1], gates.rank), bits)
        rest = gates.to_additive(flip(same, gates.rank)[None], len(sorted_xor) - 1)[0]
    return _with_first(gates.rank, rest)


def auc_fraction(shuffler, gates, starts: np.ndarray, sorted_labels: np.ndarray, mid_ranks: bool = False):
    """Shares (2U, 2PN) -- the AUC is their ratio -- and, if asked, of 2 x the 0-based mid-rank per sorted
    position (else None); int64 shares, (1,), (1,) and (M,).

    starts: shares of the group-start bits e in sorted order (group_starts_from_*).  Every element that
    starts no group first trades its position (locally: positions are public) and positives below (one
    product) for the totals (M, P); after the compaction every slot from G on then holds (M, P), which is
    also what "the next group" of the last group is, so the next slot's values are a shift and the slots
    past G add nothing: two rounds of products in all (mid-ranks add M products to the second: their
    differences need f_t).
    """
    rank, y = gates.rank, np.asarray(sorted_labels, dtype=np.int64)
    m = len(y)
    pos_below = np.cumsum(y) - y
    positives = y.sum(keepdims=True)  # shares wrap mod 2^64: one-element arrays, not numpy scalars (which warn)
    negatives = public_share(m, rank) - positives
    later = public_share(1, rank) - starts  # partition key: group starts (0) first
    moving = 3 if mid_ranks else 2  # columns the compaction moves besides rho
    gates.reserve("mul", 2 * m + 1 + (m if mid_ranks else 0))  # the products below
    perm, masks, onehot = shuffler.schedule()
    if rank == 0 and shuffler.PREFETCH:  # the dealer makes the partition's correlations after the triples
        shuffler.post([shuffler.select_request(m, onehot),
                       shuffler.shuffle_request((m, moving + 1), perm, masks, False, moving + 1, np.int64, False)])
    total_m = public_share(m, rank)
    a_off = starts * (np.arange(m, dtype=np.int64) - m)  # e_j (j - M): the positions are public
    pex_off, pn = gates.multiply((starts, pos_below - positives), (positives, negatives))
    # an additively shared bit's XOR shares are the low bits of its shares
    rho = digit_destinations(shuffler, later & 1)
    moved = shuffler.apply_shares(rho, np.stack(([later] if mid_ranks else []) + [a_off + total_m,
                                                                                  pex_off + positives]))
    a, pex = moved[-2], moved[-1]  # slot t < G: group t's start and positives below it; from G on: M and P
    a_next, pex_next = _next(a, total_m), _next(pex, positives[0])
    nex, nex_next = a - pex, a_next - pex_next  # negatives below = position - positives below
    pairs = [(pex_next - pex, nex + nex_next)]  # 2U = sum_t (Pex_{t+1} - Pex_t)(Nex_t + Nex_{t+1})
    if mid_ranks:
        twice_rank = a + a_next - public_share(1, rank)  # a_t + a_{t+1} - 1 on slots t < G
        f = public_share(1, rank) - moved[0]
        pairs.append((f, twice_rank - np.concatenate([[0], twice_rank[:-1]])))
    terms, *step = gates.multiply(*pairs)
    twice_u, twice_pn = terms.sum(keepdims=True), 2 * pn
    if not mid_ranks:
        return twice_u, twice_pn, None
    return twice_u, twice_pn, np.cumsum(shuffler.unapply_shares(rho, step[0][None])[0])
