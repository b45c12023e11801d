"""Exact tie-aware rank-sum AUC on an obliviously sorted, secret-shared sample.

With keys sorted ascending and labels y carried along, the Mann-Whitney
statistic with half credit for ties is

    U = sum_{i: y_i = 1} ( #neg with score < s_i  +  #neg with score <= s_i ) / 2,

which equals the mid-rank form of fedauc eq. (1) / App. H.2,
AUC = (sum_i R_i y_i - P(P-1)/2) / (P N) with R_i the 0-based mid-rank, and
``sklearn.metrics.roc_auc_score`` exactly.  For a sorted position i,
"#neg < s_i" is the exclusive negative prefix count taken at the first
position of i's tie group and "#neg <= s_i" the inclusive count at its last
position.  Both are copied across tie groups by segmented scans
(Hillis-Steele pointer doubling) over the shared equality bits of adjacent
keys: ceil(log2 M) rounds of one batched multiplication each.
"""
import torch

from .crypten_compat import crypten
from .shares import public


def _shift(x, s: int, forward: bool):
    """x[i + s] (forward) or x[i - s] (backward); out-of-range slots hold 0."""
    m = x.size(0)
    if s >= m:
        return public(torch.zeros(m, dtype=torch.int64))
    fill = public(torch.zeros(s, dtype=torch.int64))
    return crypten.cat([x[s:], fill]) if forward else crypten.cat([fill, x[: m - s]])


def tie_group_counts(sorted_keys, sorted_labels):
    """Per sorted position: (#negatives strictly below its key, #negatives at or below it)."""
    m = sorted_keys.size(0)
    neg = 1 - sorted_labels
    inclusive = neg.cumsum(0)
    exclusive = inclusive - neg
    if m == 1:
        return exclusive, inclusive
    # same[i]: positions i and i+1 tie.  Sorted keys never decrease, so one
    # comparison decides it.  (CrypTen's == returns a mis-scaled sharing at
    # precision 0, so it is not used.)
    same = 1 - (sorted_keys[1:] > sorted_keys[:-1])
    zero = public(torch.zeros(1, dtype=torch.int64))
    link_next = crypten.cat([same, zero])  # tie group continues to i+1
    link_prev = crypten.cat([zero, same])  # tie group continues back to i-1
    to_end, to_start = inclusive, exclusive
    s = 1
    while s < m:
        # after this round: to_end[i] = inclusive[min(i + 2s - 1, group end)],
        # link_next[i] = 1 iff the group reaches past i + 2s - 1 (mirrored backwards)
        factors = crypten.cat([link_next, link_next, link_prev, link_prev])
        targets = crypten.cat([
            _shift(to_end, s, True) - to_end,
            _shift(link_next, s, True),
            _shift(to_start, s, False) - to_start,
            _shift(link_prev, s, False),
        ])
        product = factors * targets
        to_end = to_end + product[:m]
        link_next = product[m: 2 * m]
        to_start = to_start + product[2 * m: 3 * m]
        link_prev = product[3 * m:]
        s *= 2
    return to_start, to_end


def auc_fraction(sorted_keys, sorted_labels):
    """Shared (2U, 2PN): the AUC is their ratio (Mann-Whitney with half credit for ties)."""
    m = sorted_keys.size(0)
    below, at_or_below = tie_group_counts(sorted_keys, sorted_labels)
    twice_u = (sorted_labels * (below + at_or_below)).sum()
    positives = sorted_labels.sum()
    twice_pn = (positives * (m - positives)) * 2
    return twice_u, twice_pn
