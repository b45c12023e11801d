"""Exact tie-aware rank-sum AUC and mid-ranks on an obliviously sorted, secret-shared sample.

fedauc eq. (1) / App. H.2 with mid-ranks: AUC = (sum_i R_i y_i - P(P-1)/2) / (P N),
R_i the 0-based mid-rank; equivalently U = sum over tie groups g of
p_g (NB_g + n_g / 2), with p_g, n_g the group's positives and negatives and
NB_g the negatives below it.  This equals ``sklearn.metrics.roc_auc_score``.

Tie groups by compaction instead of scans.  On sorted keys, e_j = 1 where a
group starts (j = 0, or k_j != k_{j-1}: from XOR-shared keys the NOT of
[all bits of NOT (k_j XOR k_{j-1}) are set], circuits.compare.all_set, six
AND rounds and a bit conversion; from additive keys one CrypTen comparison).  A
stable partition by e (Shuffler.apply) lists the group starts first, in
order: compacted slot t < G holds the start a_t of group t with the
exclusive prefix counts Nex, Pex there; the next slot gives where the group
ends (a_{t+1} - 1, or M - 1 for the last group, whose "next" is the totals
(M, N, P)).  Then, with f_t = [t < G],

    2U = sum_t f_t (Pex_{t+1} - Pex_t) (Nex_t + Nex_{t+1}),
    twice the mid-rank of group t = a_t + a_{t+1} - 1.

Mid-ranks reach every member by a difference vector d_t = f_t (2R_t - 2R_{t-1})
moved back to the group starts (Shuffler.unapply) and a prefix sum.  Cost:
the group starts, one digit partition, three rounds of products
(circuits.gates, on triples the dealer makes ahead) and one or two shuffles
of M elements, in a constant number of rounds.  Everything here works on
this party's int64 shares (mod 2^64) as numpy arrays; a public constant c
enters as (c, 0).
"""
import numpy as np

from .compare import all_set, flip
from .select import digit_destinations
from .shares import share_of


def constant(rank: int, value):
    """This party's share of a public constant: P0 holds it, P1 holds 0."""
    return value if rank == 0 else 0


def _next(x: np.ndarray, fill) -> np.ndarray:
    """x[t + 1] along the vector; ``fill`` at the end."""
    return np.append(x[1:], np.int64(fill))


def _with_first(rank: int, rest: np.ndarray) -> np.ndarray:
    """[1, rest...]: position 0 always starts a group."""
    return np.concatenate([np.array([constant(rank, 1)], dtype=np.int64), rest.astype(np.int64, copy=False)])


def group_starts_from_keys(sorted_keys) -> np.ndarray:
    """e_j from additively shared sorted keys (MPC tensor): [k_j > k_{j-1}] (they never decrease)."""
    from .crypten_compat import crypten

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

    starts: shares of the group-start bits e in sorted order (group_starts_from_*).
    """
    rank, y = gates.rank, np.asarray(sorted_labels, dtype=np.int64)
    m = len(y)
    pos_below = np.cumsum(y) - y
    positives = y.sum(keepdims=True)  # shares wrap mod 2^64: one-element arrays, not numpy scalars (which warn)
    negatives = constant(rank, m) - positives
    later = constant(rank, 1) - starts  # partition key: group starts (0) first
    perm, masks, onehot = shuffler.schedule()
    if rank == 0 and shuffler.PREFETCH:  # the dealer makes the partition's correlations, then the products' triples
        shuffler.post([("onehot_correlation", (m, onehot)),
                       ("permutation_correlation", ((m, 4), perm, masks, False, 4, "int64", False))])
    gates.reserve("mul", 1 + 3 * m + (2 if mid_ranks else 1) * m + m)  # the three rounds of products below
    # an additively shared bit's XOR shares are the low bits of its shares
    rho = digit_destinations(shuffler, later & 1)
    positions = np.arange(m, dtype=np.int64) if rank == 0 else np.zeros(m, dtype=np.int64)
    f_bar, a, pex = shuffler.apply_shares(rho, np.stack([later, positions, pos_below]))
    nex = a - pex  # neg_below moves with the positions and pos_below: no column of its own
    f = constant(rank, 1) - f_bar
    # values of the next slot, or the totals (M, N, P) where no group follows: f' (x' - total) + total
    f_next = _next(f, 0)
    totals = (constant(rank, m), negatives, positives)
    *steps, pn = gates.multiply(*[(f_next, _next(x, 0) - total) for x, total in zip((a, nex, pex), totals)],
                                (positives, negatives))
    a_next, nex_next, pex_next = (step + total for step, total in zip(steps, totals))
    twice_rank = a + a_next - constant(rank, 1)
    if mid_ranks:
        previous = np.concatenate([[0], twice_rank[:-1]])
        group_positives, step = gates.multiply((f, pex_next - pex), (f, twice_rank - previous))
    else:
        (group_positives,) = gates.multiply((f, pex_next - pex))
    (terms,) = gates.multiply((group_positives, nex + nex_next))
    twice_u, twice_pn = terms.sum(keepdims=True), 2 * pn
    if not mid_ranks:
        return twice_u, twice_pn, None
    return twice_u, twice_pn, np.cumsum(shuffler.unapply_shares(rho, step[None])[0])
