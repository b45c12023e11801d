"""The tie-aware Mann-Whitney statistic on authenticated shares (circuits.macs, circuits.auth_radix).

With mid-ranks, AUC = (U_le + U_lt) / (2 n0 n1), U_le (U_lt) counting for each positive the negatives whose
score is at most (below) its own (fedauc eq. 1 with ties as halves).  Two stable sorts give both without
comparing neighbours: sorted by (key, y), the negatives of a tie group come first and positive i sits at
position N_le(i) + P_lt(i) + (its place among its group's positives); sorted by (key, 1 - y) at
N_lt(i) + the same.  Summed over the positives, the positives' own terms add to n1 (n1 - 1) / 2 in each, so

    W = sum_j j y1_j + sum_j j y2_j = U_le + U_lt + n1 (n1 - 1),

y1, y2 the labels in the two sorted orders: linear in the moved labels with public coefficients j.  The second
sort runs on the rows in reversed input order (a public rearrangement: W is the same, since the positives of a
tie group take the same places), so that an element's two positions add up to N_lt + (its place in the group)
+ N_lt + (T - 1 - its place) = twice its 0-based mid-rank, T its tie group's size: each row's mid-rank is the sum
of its two destinations, linear too.  Both sorts run as one sort of 2M elements: the rows, then the reversed
rows, with a public most significant digit h (0 for the first M, 1 for the others), so that the first M slots
hold the first sort's order and the last M the second's (positions offset by M): as many element-digits as two
sorts (2M (D + 2) against 2 M (D + 1)) in half the rounds.  Positions then need the bits of 2M - 1 (the
authenticator's k; the doubled mid-ranks, at most 2 (M - 1), fit too).  The label enters as the least
significant 2-bit digit (y in the first half, 1 - y in the second) and as the moved payload.  W needs about
2 log2 M + 1 bits, more than the sort's k: the labels are wide values (circuits.macs.wide_keys) whose MACs
under further keys travel with them, so that W and n1, released through circuits.macs.Authenticator.release
(a check before and after the opening), are right to 2^-40 at their width.
"""
import numpy as np

from .auth_compare import maximum


BACK = slice(None, None, -1)  # the second order's rows: the input rows reversed


def rank_sums(ranking, key_digits: np.ndarray, labels: np.ndarray):
    """([W], [n1], [2 R]): W and n1 wide authenticated scalars (1 + keys,) for the keys' authenticated 2-bit digits
    ``key_digits`` (D, 2, M), least significant first, and the wide authenticated labels (1 + keys, M) in {0, 1};
    2 R (2, M) each element's twice 0-based mid-rank, in input order.  The authenticator's k must hold 2M - 1
    (module docstring: both sorts run as one)."""
    return sums_of(ranking.auth, *both_orders(ranking, key_digits, labels)[:2], labels)


def both_orders(ranking, key_digits: np.ndarray, labels: np.ndarray, partners: bool = False) -> tuple:
    """([sigma] (2, 2M), [moved labels] (1 + keys, 2M), [moved partners] (2, 2M) or None): the one sort of the rows
    by (key, y) and of the reversed rows by (key, 1 - y) (module docstring), and the labels in that order; with
    ``partners`` also each element's partner's destination (the same row's in the other half: slot j of the first
    half holds the second-order destination, plus M, of the row at first-order position j), moved along."""
    auth = ranking.auth
    m = labels.shape[-1]
    if (2 * m - 1).bit_length() > auth.k:
        raise ValueError(f"the rank sums of {m} rows sort 2M = {2 * m} elements: k = {auth.k} bits is too few")
    ties = np.concatenate([labels[:2], auth.add_public(-labels[:2], 1)[..., BACK]], axis=-1)
    halves = auth.public(np.repeat(np.arange(2, dtype=np.int64), m), (2 * m,))
    sigma = ranking.permutation(np.concatenate([ties[None], np.concatenate([key_digits, key_digits[..., BACK]],
                                                                            axis=-1), halves[None]]))
    columns = [np.concatenate([labels, labels[..., BACK]], axis=-1)]
    if partners:  # element i < M is row i, element M + t row M - 1 - t: each one's partner is the other's mirror
        columns.append(np.concatenate([sigma[:, m:][..., BACK], sigma[:, :m][..., BACK]], axis=-1))
    moved = ranking.apply(sigma, np.concatenate(columns)[None])[0]
    return sigma, moved[:len(labels)], moved[len(labels):] if partners else None


def sums_of(auth, sigma: np.ndarray, moved: np.ndarray, labels: np.ndarray) -> tuple:
    """:func:`rank_sums` from :func:`both_orders`' sort."""
    m = labels.shape[-1]
    total = moved @ (np.arange(2 * m, dtype=np.int64) % m)  # each half's own positions; wraps mod 2^64
    twice_ranks = auth.add_public(sigma[..., :m] + sigma[..., m:][..., BACK], -m)
    return total, labels.sum(axis=1), twice_ranks


def placement_squares(ranking, sigma: np.ndarray, moved: np.ndarray, labels: np.ndarray, n1: np.ndarray) -> tuple:
    """([Q10], [Q01]) wide scalars: Q10 = sum over positives of A^2, A = N_le + N_lt = 2 N V10, and Q01 = sum over
    negatives of B^2, B = P_ge + P_gt = 2 P V01 (DeLong1988's placement values with ties as halves, as
    circuits.rank_metrics.placement_sums), from :func:`both_orders`' sort.  In the first order (negatives first
    within a tie group) the negatives before a positive are N_le, the positives before a negative P_lt; in the
    second (positives first) N_lt and P_le; so with each slot's counts of positives and negatives before it,
    brought back to the elements (:meth:`AuthRadixRanking.gather`), A = neg_1 + neg_2 and B = 2 n1 - pos_1 - pos_2,
    linear; two rounds of products make y A^2 and (1 - y) B^2."""
    auth, m = ranking.auth, labels.shape[-1]
    positives = positives_before(moved)
    negatives = auth.add_public(-positives, np.arange(2 * m, dtype=np.int64) % m)
    counts = ranking.gather(sigma, np.stack([positives, negatives]))  # (2, 1 + keys, 2M): each element's
    first, second = counts[..., :m], counts[..., m:][..., BACK]
    a = first[1] + second[1]
    b = 2 * n1[:, None] - first[0] - second[0]
    auth.phase = "the placement products"
    squares = auth.multiply(np.stack([a, b], axis=1), np.stack([a, b], axis=1), "the placement products")
    classes = np.stack([labels, auth.add_public(-labels, 1)], axis=1)
    weighted = auth.multiply(classes, squares, "the placement products")
    return weighted[:, 0].sum(axis=-1), weighted[:, 1].sum(axis=-1)


def positives_before(moved: np.ndarray) -> np.ndarray:
    """(1 + keys, 2M): each slot's count of positives before it in its own half of :func:`both_orders`' sort (the
    moved labels), linear."""
    m = moved.shape[-1] // 2
    before = np.concatenate([np.zeros_like(moved[:, :1]), np.cumsum(moved, axis=-1)[:, :-1]], axis=-1)
    return np.concatenate([before[:, :m], before[:, m:] - before[:, m:m + 1]], axis=-1)


def ks_gap(auth, moved: np.ndarray, n1: np.ndarray) -> np.ndarray:
    """[KS P N] wide (1 + keys, 1): KS = max over thresholds |TPR - FPR| (as circuits.rank_metrics.
    secret_ks_statistic, KS P N = max_t |N Pex_t - P Nex_t| over the tie groups' starts t), from :func:`both_orders`'
    sort without finding the tie groups.  With g(j) = N pos(j) - P neg(j) = M pos(j) - n1 j for the first j slots of
    an order (pos + neg = j: linear in the moved labels), the first order (negatives first within a tie group) walks
    down then up inside a group, so its largest g over all j is the largest over the groups' starts; the second
    (positives first) walks up then down, so its smallest g is the smallest over the starts.  KS P N is the largest
    of g over the first half and -g over the second (j = 0 adds 0, as j = M would): a tournament of 2M authenticated
    comparisons (circuits.auth_compare), the gaps below M^2 / 2 in magnitude."""
    m = moved.shape[-1] // 2
    j = np.arange(2 * m, dtype=np.int64) % m
    walk = m * positives_before(moved) - n1[:, None] * j  # g(j) in each half
    candidates = np.concatenate([walk[:, :m], -walk[:, m:]], axis=-1)
    auth.phase = "the KS statistic's comparisons"
    return maximum(auth, candidates, (2 * (m * m // 4)).bit_length(), "the KS statistic's comparisons")[:, 0]


def auc_from_sums(w: int, n1: int, m: int) -> tuple:
    """(numerator, denominator) of the AUC, (W - n1 (n1 - 1), 2 n1 n0), from the opened W and n1."""
    return w - n1 * (n1 - 1), 2 * n1 * (m - n1)


def wide_bits(m: int) -> int:
    """Bits of W at most (2 n1 M <= 2 M^2)."""
    return (2 * m * m).bit_length()
