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
circuits.gates, on triples the dealer makes ahead) and one shuffle of M
elements (two columns besides the destinations; three with mid-ranks, which
add a round of M products and the shuffle back), in a constant number of
rounds.

Weighted AUC (scikit-learn's ``sample_weight``): with integer weights w_i
(protocols.inputs.weights: units of 2^-q) every count above becomes a mass:
p_g, n_g the positive and negative weight of group g, NB_g the negative
weight below it, and 2U / 2PN = sum_g p_g (2 NB_g + n_g) / (2 W+ W-), the
weighted Mann-Whitney fraction (each positive-negative pair counted with
w_i w_j, ties by a half), which is what scikit-learn's weighted ROC curve
integrates to.  The same compaction carries it: the start position j of
the unweighted case is the mass below, now secret, so a group start trades
it for the total W by a product like the positives below (one more column
of M products, plus M products for w_i y_i before).

:class:`TieGroups` keeps the compacted slots for the metrics built on
them (circuits.rank_metrics).  Everything here works on this party's int64
shares (mod 2^64) as numpy arrays; a public constant c enters as (c, 0).
"""
from dataclasses import dataclass

import numpy as np

from .correlations import position_bits
from .comparators import all_set, flip
from .select import digit_destinations
from .shares import public_share, share_of
from .crypten_compat import crypten



def next_slot(x: np.ndarray, fill) -> np.ndarray:
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


@dataclass(frozen=True)
class TieGroups:
    """The compacted tie groups (module docstring), this party's int64 shares: slot t < G holds group t's first
    sorted position ``a`` and the positives below it ``pex``; every slot from G on holds (M, P).  ``later``:
    shares of [t >= G] per slot, when kept (:func:`tie_groups` with ``flags``); ``rho``: the compaction's
    destinations, to move values back to the group starts."""
    rank: int
    a: np.ndarray
    pex: np.ndarray
    positives: np.ndarray  # (1,): P
    pn: np.ndarray  # (1,): P N
    rho: np.ndarray
    later: np.ndarray = None
    total: np.ndarray = None  # (1,): the total mass W when weighted (``a`` then holds masses); None: M rows

    @property
    def mass(self) -> np.ndarray:
        """(1,): shares of the rows' total mass, W when weighted, else the public M."""
        return self.total if self.total is not None else np.array([public_share(self.m, self.rank)], np.int64)

    @property
    def m(self) -> int:
        return len(self.a)

    @property
    def negatives(self) -> np.ndarray:
        return self.mass - self.positives

    @property
    def a_next(self) -> np.ndarray:
        return next_slot(self.a, self.mass[0])

    @property
    def pex_next(self) -> np.ndarray:
        return next_slot(self.pex, self.positives[0])

    @property
    def nex(self) -> np.ndarray:
        """Negatives below each group: its start minus the positives below it."""
        return self.a - self.pex

    @property
    def nex_next(self) -> np.ndarray:
        return self.a_next - self.pex_next

    @property
    def group_positives(self) -> np.ndarray:
        """p_t, 0 from G on."""
        return self.pex_next - self.pex

    @property
    def group_negatives(self) -> np.ndarray:
        """n_t, 0 from G on."""
        return self.nex_next - self.nex


def tie_groups(shuffler, gates, sorted_rows: list, flags: bool = False) -> TieGroups:
    """The compacted tie groups of a sorted sample: one round of products and one stable partition.

    sorted_rows: [starts, labels] or [starts, labels, weights], shares in sorted order, a list that is emptied (a
    caller that keeps no other reference has them freed as soon as they are used).  starts: the group-start bits
    e (group_starts_from_*); labels: the labels' additive shares.  Every element that
    starts no group first trades its position (locally: positions are public) and positives below (one
    product) for the totals (M, P); after the compaction every slot from G on then holds (M, P), which is
    also what "the next group" of the last group is, so the next slot's values are a shift.  ``flags``: also
    move the partition key, the shares of [t >= G] (what :func:`to_members` and the metrics that divide per
    group need).  Weights (the list's third: shares of each sorted row's integer weight): the groups hold masses
    (module docstring, "Weighted AUC"), for the AUC only.
    """
    starts, y, *weights = sorted_rows
    sorted_rows.clear()
    weights = weights[0] if weights else None
    rank, y = gates.rank, np.asarray(y, dtype=np.int64)
    m = len(y)
    gates.reserve("mul", m + 1 if weights is None else 3 * m + 1)
    if weights is not None:
        (y,) = gates.multiply((y, np.asarray(weights, dtype=np.int64)))  # w_i y_i: the positive mass per row
    later = public_share(1, rank) - starts  # partition key: group starts (0) first
    moving = 3 if flags else 2  # columns the compaction moves besides rho
    perm, masks, onehot = shuffler.schedule()
    if rank == 0 and shuffler.PREFETCH:  # the dealer makes the partition's correlations after the triples
        shuffler.post([shuffler.select_request(m, onehot),
                       shuffler.shuffle_request((m, moving + 1), perm, masks, False, moving + 1, np.int64, False,
                                                (position_bits(m),) + (64,) * moving, reveal=True)])
    # the partition first, while few vectors are held; an additively shared bit's XOR shares are its shares' low bits
    rho = digit_destinations(shuffler, (later & 1).astype(np.uint8))
    pos_below = np.cumsum(y) - y
    positives = y.sum(keepdims=True)  # shares wrap mod 2^64: one-element arrays, not numpy scalars (which warn)
    total = np.array([public_share(m, rank)], np.int64) if weights is None else weights.sum(keepdims=True)
    negatives = total - positives
    pos_below -= positives
    pairs = [(starts, pos_below), (positives, negatives)]
    if weights is None:
        a_off = np.arange(-m, 0, dtype=np.int64)
        a_off *= starts  # e_j (j - M): the positions are public
        pex_off, pn = gates.multiply(*pairs)
    else:  # e_j (mass below j - W): the masses are secret
        pex_off, pn, a_off = gates.multiply(*pairs, (starts, np.cumsum(weights) - weights - total))
    pn = pn.copy()  # a view would keep the whole product vector
    a_off += total
    pex_off += positives
    columns = ([later] if flags else []) + [a_off, pex_off]  # a list: freed once in the move's words
    del later, a_off, pex_off, starts, pos_below, pairs, y
    moved = shuffler.apply_shares(rho, columns)
    return TieGroups(rank, moved[-2], moved[-1], positives, pn, rho, moved[0] if flags else None,
                     None if weights is None else total)


def to_members(shuffler, gates, groups: TieGroups, columns, at_starts=(), settled=()) -> np.ndarray:
    """Shares (len(columns) + len(settled) + len(at_starts), M), in sorted order, of each element's own group's
    value of every column (one value per compacted slot): the differences d_t = f_t (v_t - v_{t-1}),
    f_t = [t < G] (one round of products), moved back to the group starts (Shuffler.unapply_shares) and summed up
    to each position.  ``settled`` columns, whose value on the last group's slot G - 1 is already the one every
    slot from G on holds (what the next group's start and positives below are), have d_t = 0 from G on without
    the products, so they need no flags; they come after ``columns``.  Columns ``at_starts`` (zero on the slots
    from G on) go in the same shuffle and come last: each group's value at its start's place, zero elsewhere."""
    steps, settled_steps = ([np.diff(column, prepend=0) for column in np.asarray(some, dtype=np.int64)]
                            for some in (columns, settled))
    summed = len(steps) + len(settled_steps)
    inside = public_share(1, groups.rank) - groups.later if steps else None  # (``later``: only with flags)
    gates.reserve("mul", sum(len(step) for step in steps))
    shuffler.unapply_ahead(groups.m, summed + len(at_starts))  # after the triples: made during the products
    moved = gates.multiply(*[(inside, step) for step in steps]) if steps else []
    rows = shuffler.unapply_shares(groups.rho, np.stack([*moved, *settled_steps, *at_starts]))
    np.cumsum(rows[:summed], axis=1, out=rows[:summed])
    return rows


def _adjacent_sums(x: np.ndarray, fill: np.ndarray) -> np.ndarray:
    """x_t + x_{t+1}, with ``fill`` (1,) past the end (x is consumed: the sums are written over it)."""
    last = x[-1:] + fill  # one-element arrays wrap mod 2^64 without a warning (numpy scalars warn)
    np.add(x[:-1], x[1:], out=x[:-1])  # ufuncs read overlapping operands as if copied first
    x[-1:] = last
    return x


def auc_fraction(shuffler, gates, groups: TieGroups, mid_ranks: bool = False):
    """Shares (2U, 2PN) -- the AUC is their ratio -- and, if asked, of 2 x the 0-based mid-rank per sorted
    position (else None); int64 shares, (1,), (1,) and (M,).

    2U = sum_t (Pex_{t+1} - Pex_t)(Nex_t + Nex_{t+1}): one round of M products (the slots past G add
    nothing); mid-ranks (``groups`` with flags) reach the members by :func:`to_members`.
    """
    gates.reserve("mul", groups.m)
    (terms,) = gates.multiply((groups.group_positives, _adjacent_sums(groups.nex, groups.mass - groups.positives)))
    twice_u, twice_pn = terms.sum(keepdims=True), 2 * groups.pn
    if not mid_ranks:
        return twice_u, twice_pn, None
    twice_rank = groups.a + groups.a_next - public_share(1, groups.rank)  # a_t + a_{t+1} - 1 on slots t < G
    return twice_u, twice_pn, to_members(shuffler, gates, groups, [twice_rank])[0]
