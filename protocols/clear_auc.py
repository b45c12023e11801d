"""The exact AUC in the clear: the reference every private protocol is measured against."""
from fractions import Fraction

import numpy as np


def twice_mid_ranks(scores) -> np.ndarray:
    """2 x the 0-based mid-rank of each score (an integer): first + last position of its tie group."""
    _, inverse, counts = np.unique(np.asarray(scores, dtype=np.float64), return_inverse=True, return_counts=True)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    return 2 * starts[inverse] + counts[inverse] - 1


def rank_sum_auc(scores, labels) -> float:
    """Rank-sum (Mann-Whitney) AUC with mid-ranks for ties, fedauc eq. (1) / App. H.2.

    AUC = (sum_i R_i y_i - P(P-1)/2) / (P N), R_i the 0-based mid-rank of
    score i.  Computed in integers (2 R_i is an integer) and rounded once, so
    it equals ``sklearn.metrics.roc_auc_score`` to the last bit or so.
    """
    return float(_fraction(scores, labels))


def opened_auc(scores, labels, bits: int) -> float:
    """floor(AUC 2^bits) / 2^bits of the exact fraction: what mpc-exact opens (its long division's quotient)."""
    fraction = _fraction(scores, labels)
    return floor_scaled(fraction.numerator, fraction.denominator, bits) / 2 ** bits


def floor_scaled(numerator: int, denominator: int, bits: int) -> int:
    """floor(numerator / denominator * 2^bits), exactly (integers)."""
    return (numerator << bits) // denominator


def _fraction(scores, labels) -> Fraction:
    labels = np.asarray(labels).astype(np.int64)
    twice_midrank = twice_mid_ranks(scores)
    positives = int(labels.sum())
    negatives = len(labels) - positives
    if positives == 0 or negatives == 0:
        raise ValueError("AUC is undefined without both positives and negatives")
    numerator = int((twice_midrank * labels).sum()) - positives * (positives - 1)
    return Fraction(numerator, 2 * positives * negatives)


def weighted_auc(scores, labels, weights) -> float:
    """scikit-learn's weighted ROC AUC (``sample_weight``): the sum over positive-negative pairs of w_i w_j
    ([s_i > s_j] + [s_i = s_j] / 2), over W+ W-; by tie groups, sum_g p_g (NB_g + n_g / 2) / (W+ W-) with p_g,
    n_g the group's positive and negative weight and NB_g the negative weight below it (the rank-sum form of
    fedauc eq. (1) with every row counted w_i times)."""
    labels, weights = np.asarray(labels, dtype=np.float64), np.asarray(weights, dtype=np.float64)
    _, inverse = np.unique(np.asarray(scores, dtype=np.float64), return_inverse=True)
    positive = np.bincount(inverse, weights=weights * labels)
    negative = np.bincount(inverse, weights=weights * (1 - labels))
    if positive.sum() <= 0 or negative.sum() <= 0:
        raise ValueError("the weighted AUC is undefined without positive weight on both classes")
    below = np.cumsum(negative) - negative
    return float((positive * (below + negative / 2)).sum() / (positive.sum() * negative.sum()))
