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


def rank_sums(ranking, key_digits: np.ndarray, labels: np.ndarray):
    """([W], [n1], [2 R]): W and n1 wide authenticated scalars (1 + keys,) for the keys' authenticated 2-bit digits
    ``key_digits`` (D, 2, M), least significant first, and the wide authenticated labels (1 + keys, M) in {0, 1};
    2 R (2, M) each element's twice 0-based mid-rank, in input order.  The authenticator's k must hold 2M - 1
    (module docstring: both sorts run as one)."""
    auth = ranking.auth
    m = labels.shape[-1]
    if (2 * m - 1).bit_length() > auth.k:
        raise ValueError(f"the rank sums of {m} rows sort 2M = {2 * m} elements: k = {auth.k} bits is too few")
    back = slice(None, None, -1)
    ties = np.concatenate([labels[:2], auth.add_public(-labels[:2], 1)[..., back]], axis=-1)
    halves = auth.public(np.repeat(np.arange(2, dtype=np.int64), m), (2 * m,))
    sigma = ranking.permutation(np.concatenate([ties[None], np.concatenate([key_digits, key_digits[..., back]],
                                                                            axis=-1), halves[None]]))
    moved = ranking.apply(sigma, np.concatenate([labels, labels[..., back]], axis=-1)[None])[0]
    total = moved @ (np.arange(2 * m, dtype=np.int64) % m)  # each half's own positions; wraps mod 2^64
    twice_ranks = auth.add_public(sigma[..., :m] + sigma[..., m:][..., back], -m)
    return total, labels.sum(axis=1), twice_ranks


def auc_from_sums(w: int, n1: int, m: int) -> tuple:
    """(numerator, denominator) of the AUC, (W - n1 (n1 - 1), 2 n1 n0), from the opened W and n1."""
    return w - n1 * (n1 - 1), 2 * n1 * (m - n1)


def wide_bits(m: int) -> int:
    """Bits of W at most (2 n1 M <= 2 M^2)."""
    return (2 * m * m).bit_length()
