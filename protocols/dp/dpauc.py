"""DPAUC (the dpauc paper, AAAI 2023): label-DP ROC from noisy per-threshold confusion counts.

Each client k computes, for every threshold theta in Theta, TP, FP, TN and FN
of its own rows (predicted positive: s >= theta) and adds Lap(1/eps') to each;
the server sums the clients' counts, clips them at 0, turns them into
(FPR, TPR) points, sorts them by FPR (no monotonicity repair) and integrates
with the trapezoid rule, adding the ends (0, 0) and (1, 1).  The paper counts
the budget as eps = 4 |Theta| eps' (sequential composition over the four
counts at every threshold).

``threshold_rr`` is the paper's RR variant: labels flipped, counts debiased.
``histogram_statistics`` spends the same eps better: each client releases
its positive and negative counts per score bin once, with Lap(2/eps) (one
label moves one sample between the two histograms: l1 sensitivity 2), and
the server takes cumulative sums, so every threshold's counts come from the
same noisy histogram.
Each mechanism trusts its epsilon: protocols.dp.suite.run_mechanism and protocols.dp.curve_grid, their
boundaries, checked it.
"""
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .fedauc import flip_probability


def paper_thresholds(count: int) -> np.ndarray:
    """The dpauc authors' threshold layout: half in [0, 0.2), a quarter in [0.2, 0.5), a quarter in [0.5, 1]."""
    if count < 4:
        raise InputError(f"need at least 4 thresholds, not {count}")
    low, mid = count // 2, count // 4
    return np.concatenate([np.linspace(0, 0.2, low, endpoint=False), np.linspace(0.2, 0.5, mid, endpoint=False),
                           np.linspace(0.5, 1, count - low - mid)])


@dataclass
class ConfusionCounts:
    """Per client and threshold (K, T): true and false positives; and the clients' P and N."""

    tp: np.ndarray
    fp: np.ndarray
    positives: np.ndarray  # (K,)
    negatives: np.ndarray  # (K,)
    bins_pos: np.ndarray  # (K, T + 1): positives per score bin (bin b: b thresholds <= s)
    bins_neg: np.ndarray
    scores: np.ndarray  # every sample's score, for mechanisms that perturb scores


def at_or_above(per_bin: np.ndarray) -> np.ndarray:
    """(..., T + 1) per-bin counts -> (..., T) counts with s >= theta_j, i.e. in bins j + 1 .. T."""
    return np.cumsum(per_bin[..., ::-1], axis=-1)[..., ::-1][..., 1:]


def confusion_counts(owner: np.ndarray, scores: np.ndarray, labels: np.ndarray, thresholds: np.ndarray,
                     clients: int) -> ConfusionCounts:
    """TP_k(theta) = #{positives of k with s >= theta}, FP likewise, from per-bin histograms."""
    t = len(thresholds)
    bins = np.searchsorted(np.sort(thresholds), scores, side="right")  # number of thresholds <= s
    flat = owner * (t + 1) + bins
    pos = np.bincount(flat[labels == 1], minlength=clients * (t + 1)).reshape(clients, t + 1)
    neg = np.bincount(flat[labels == 0], minlength=clients * (t + 1)).reshape(clients, t + 1)
    return ConfusionCounts(at_or_above(pos), at_or_above(neg), pos.sum(axis=1), neg.sum(axis=1), pos, neg, scores)


def roc_area(tp, fp, fn, tn) -> np.ndarray:
    """Trapezoid area under the (FPR, TPR) points of summed counts (..., T), sorted by FPR, ends added."""
    tp, fp, fn, tn = (np.clip(x, 0, None) for x in (tp, fp, fn, tn))
    tpr = tp / np.maximum(tp + fn, np.finfo(float).tiny)
    fpr = fp / np.maximum(fp + tn, np.finfo(float).tiny)
    shape = tpr.shape[:-1] + (1,)
    fpr = np.concatenate([np.zeros(shape), fpr, np.ones(shape)], axis=-1)
    tpr = np.concatenate([np.zeros(shape), tpr, np.ones(shape)], axis=-1)
    order = np.argsort(fpr, axis=-1, kind="stable")
    fpr, tpr = np.take_along_axis(fpr, order, -1), np.take_along_axis(tpr, order, -1)
    return (np.diff(fpr, axis=-1) * (tpr[..., 1:] + tpr[..., :-1]) / 2).sum(axis=-1)


def noisy_threshold_counts(counts: ConfusionCounts, epsilon: float, draws: int, rng: np.random.Generator):
    """The server's sums over clients of TP, FP, FN, TN + Lap(1/eps') each, eps' = eps / (4 |Theta|); and 1/eps'."""
    k, t = counts.tp.shape
    scale = 4 * t / epsilon
    fn = counts.positives[:, None] - counts.tp
    tn = counts.negatives[:, None] - counts.fp
    return [(x[None] + rng.laplace(0, scale, (draws, k, t))).sum(axis=1) for x in (counts.tp, counts.fp, fn, tn)], scale


def threshold_laplace(counts: ConfusionCounts, epsilon: float, draws: int, rng: np.random.Generator) -> np.ndarray:
    """DPAUC_Lap: the trapezoid area of the noisy per-threshold counts."""
    return roc_area(*noisy_threshold_counts(counts, epsilon, draws, rng)[0])


def noisy_histograms(counts: ConfusionCounts, epsilon: float, draws: int, rng: np.random.Generator):
    """The server's sums over clients of per-bin positives and negatives + Lap(2/eps) each; and the scale 2/eps."""
    k, bins = counts.bins_pos.shape
    scale = 2 / epsilon
    return [(h[None] + rng.laplace(0, scale, (draws, k, bins))).sum(axis=1)
            for h in (counts.bins_pos, counts.bins_neg)], scale


def histogram_statistics(counts: ConfusionCounts, epsilon: float, draws: int, rng: np.random.Generator) -> np.ndarray:
    """The better budget: Lap(2/eps) once on each client's per-bin positive and negative counts, then cumulative sums."""
    (pos, neg), _ = noisy_histograms(counts, epsilon, draws, rng)
    tp, fp = at_or_above(pos), at_or_above(neg)
    return roc_area(tp, fp, pos.sum(axis=1)[:, None] - tp, neg.sum(axis=1)[:, None] - fp)


def observed_positives(counts: ConfusionCounts, epsilon: float, draws: int, rng: np.random.Generator) -> np.ndarray:
    """What DPAUC_RR's server counts: positives per score bin after randomized response, (draws, T + 1)."""
    q = flip_probability(epsilon)
    pos, neg = counts.bins_pos.sum(axis=0), counts.bins_neg.sum(axis=0)
    return rng.binomial(pos, 1 - q, (draws, len(pos))) + rng.binomial(neg, q, (draws, len(neg)))


def threshold_rr(counts: ConfusionCounts, epsilon: float, draws: int, rng: np.random.Generator) -> np.ndarray:
    """DPAUC_RR: labels through randomized response (q = 1/(1+e^eps)), counts per threshold debiased.

    Scores stay exact, so A(theta) = #{s >= theta} is known; the observed
    positives among them have mean TP (1 - q) + (A - TP) q, hence the unbiased
    TP = (TP~ - A q) / (1 - 2q); likewise P' = (P~ - M q) / (1 - 2q) and, as the
    authors do, N' = M - P'.  Each label is released once: eps-label-DP.
    Flips are drawn per score bin (a sum of independent flips is binomial).
    """
    q = flip_probability(epsilon)
    pos, neg = counts.bins_pos.sum(axis=0), counts.bins_neg.sum(axis=0)
    observed = observed_positives(counts, epsilon, draws, rng)
    everyone = at_or_above(pos + neg)
    m = pos.sum() + neg.sum()
    tp = (at_or_above(observed) - everyone * q) / (1 - 2 * q)
    positives = ((observed.sum(axis=1) - m * q) / (1 - 2 * q))[:, None]
    fp = everyone - tp
    return roc_area(tp, fp, positives - tp, (m - positives) - fp)
