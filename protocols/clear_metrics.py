"""Ranking metrics in the clear beyond the AUC: DeLong's variance and test, average precision, curve points, KS.

The references the private versions of these metrics are measured against (docs/references.md: DeLong1988,
Sun2014).  Placement values, with ties counted one half (DeLong1988; computed from mid-ranks as in
Sun2014): for a positive with score x,
V10(x) = (#negatives below x + #negatives tied with x / 2) / N; for a negative with score y,
V01(y) = (#positives above y + #positives tied with y / 2) / P.  The AUC is the mean of either.
"""
import math
from dataclasses import dataclass

import numpy as np

from .clear_auc import twice_mid_ranks
from .errors import InputError
from .metric_catalogue import TWO_ROWS
from .refused import Refused


@dataclass(frozen=True)
class DelongAuc:
    """One AUC with DeLong's variance: ``std`` = sqrt(S10/P + S01/N) and the 95% interval ``ci`` (Wald, or the
    kind :func:`delong_auc` was asked for)."""
    value: float
    variance: float
    std: float
    ci: tuple


@dataclass(frozen=True)
class DelongTest:
    """Two AUCs on the same rows, their DeLong covariance matrix, z = (A - B) / sd(A - B) and its two-sided p."""
    value: tuple
    covariance: tuple
    difference: float
    z: float
    p_value: float


Z_975 = 1.959963984540054  # the standard normal's 0.975 quantile
INTERVALS = ("wald", "logit")  # the kinds of DeLong's 95% interval: delong_interval


def delong_interval(auc: float, std: float, kind: str = "wald") -> tuple:
    """DeLong's 95% interval from the released AUC and its standard error (post-processing of both).

    ``"wald"``: auc +- z_0.975 std, as pROC's DeLong default (it can leave [0, 1] near the ends).
    ``"logit"``: bounded inside (0, 1): logit(auc) +- z_0.975 std / (auc (1 - auc)) (the delta method's standard
    error of logit(auc)), mapped back by the logistic function (Pepe 2003, sec. 5.2; Qin & Hotilovac 2008).
    With std 0 it is the point auc (DeLong's std of an exact AUC of 0 or 1).  An AUC released at 0 or 1 with a
    std above 0 (rounded to ``auc_decimals``) has no logit: its interval is the Wald one clipped to [0, 1]."""
    if kind == "wald":
        return (auc - Z_975 * std, auc + Z_975 * std)
    if kind != "logit":
        raise InputError(f"the interval must be one of {', '.join(INTERVALS)}, not {kind!r}")
    if std == 0:
        return (auc, auc)
    if auc <= 0 or auc >= 1:
        low, high = delong_interval(auc, std)
        return (max(low, 0.0), min(high, 1.0))
    centre, half = math.log(auc / (1 - auc)), Z_975 * std / (auc * (1 - auc))
    return (1 / (1 + math.exp(half - centre)), 1 / (1 + math.exp(-centre - half)))


def placement_values(scores, labels) -> tuple:
    """(V10 of each positive, V01 of each negative), in row order within each class (DeLong1988).

    From mid-ranks (Sun2014): with 2R the doubled 0-based mid-rank among all rows and 2T among the
    row's own class, V10 = (R - T) / N for a positive and V01 = 1 - (R - T) / P for a negative.
    """
    scores, labels = _checked(scores, labels)
    positive = labels == 1
    twice_all = twice_mid_ranks(scores)
    p, n = int(positive.sum()), int((~positive).sum())
    v10 = (twice_all[positive] - twice_mid_ranks(scores[positive])) / (2 * n)
    v01 = 1 - (twice_all[~positive] - twice_mid_ranks(scores[~positive])) / (2 * p)
    return v10, v01


def delong_auc(scores, labels) -> DelongAuc:
    """The AUC, DeLong's variance S10/P + S01/N (S10, S01 the sample variances of the placement values)
    and the Wald interval AUC +- z_0.975 std, as pROC's DeLong default."""
    v10, v01 = placement_values(scores, labels)
    auc = float(v10.mean())
    variance = _variance(v10, v01)
    std = math.sqrt(variance)
    return DelongAuc(auc, variance, std, delong_interval(auc, std))


def clear_delong_test(scores_a, scores_b, labels) -> DelongTest:
    """DeLong's test of two correlated AUCs on the same rows: z = (A - B) / sqrt(Var A + Var B - 2 Cov), in the
    clear (the reference that mpc_auc.delong_test's MPC run is checked against)."""
    va10, va01 = placement_values(scores_a, labels)
    vb10, vb01 = placement_values(scores_b, labels)
    a, b = float(va10.mean()), float(vb10.mean())
    cov_ab = _covariance(va10, vb10) / len(va10) + _covariance(va01, vb01) / len(va01)
    return paired_test(a, b, _variance(va10, va01), _variance(vb10, vb01), cov_ab)


def paired_test(a: float, b: float, var_a: float, var_b: float, cov_ab: float) -> DelongTest:
    """DeLong's test from the two AUCs, their variances and covariance: z = (a - b) / sqrt(var_a + var_b -
    2 cov_ab) and the two-sided normal p-value (z infinite when the difference has no variance but a != b)."""
    spread = var_a + var_b - 2 * cov_ab
    z = (a - b) / math.sqrt(spread) if spread > 0 else (0.0 if a == b else math.copysign(math.inf, a - b))
    return DelongTest((a, b), ((var_a, cov_ab), (cov_ab, var_b)), a - b, z, math.erfc(abs(z) / math.sqrt(2)))


def average_precision(scores, labels) -> float:
    """scikit-learn's average precision: sum over distinct thresholds, descending, of (R_k - R_{k-1}) P_k,
    with every row of a tie group counted at its group's threshold."""
    true_positives, counts = roc_vertices(scores, labels)
    precision = true_positives / counts
    recall = true_positives / true_positives[-1]
    return float(np.sum(np.diff(recall, prepend=0.0) * precision))


def curve_at_cuts(scores, labels, flagged) -> dict:
    """TPR, FPR and precision with the top ``flagged[k]`` rows flagged, the tie group a cut falls in counted in
    proportion (the linear interpolation of scikit-learn's curve in the number of rows flagged)."""
    true_positives, counts = roc_vertices(scores, labels)
    p = true_positives[-1]
    tp = np.interp(np.asarray(flagged, dtype=np.float64), np.r_[0, counts], np.r_[0, true_positives])
    flagged = np.asarray(flagged, dtype=np.float64)
    return {"tpr": tp / p, "fpr": (flagged - tp) / (counts[-1] - p), "precision": tp / flagged}


def partial_area(scores, labels, max_fpr: float) -> float:
    """The area under the ROC curve from FPR 0 to ``max_fpr``, the curve cut where it crosses max_fpr (linear
    inside a tie group), as scikit-learn's partial AUC computes it before standardising."""
    true_positives, counts = roc_vertices(scores, labels)
    p, n = true_positives[-1], counts[-1] - true_positives[-1]
    fpr, tpr = np.r_[0.0, (counts - true_positives) / n], np.r_[0.0, true_positives / p]
    stop = int(np.searchsorted(fpr, max_fpr, "right"))
    if stop < len(fpr):
        tpr = np.append(tpr[:stop], np.interp(max_fpr, fpr[stop - 1:stop + 1], tpr[stop - 1:stop + 1]))
        fpr = np.append(fpr[:stop], max_fpr)
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2))


def mcclish(area: float, max_fpr: float) -> float:
    """McClish's (1989) standardised partial AUC, as scikit-learn's roc_auc_score(max_fpr=...): 0.5 for a
    chance curve and 1 for a perfect one: 0.5 (1 + (A - f^2/2) / (f - f^2/2))."""
    low = max_fpr ** 2 / 2
    return 0.5 * (1 + (area - low) / (max_fpr - low))


def ks_statistic(scores, labels) -> float:
    """The Kolmogorov-Smirnov statistic: the largest |TPR - FPR| over the thresholds."""
    true_positives, counts = roc_vertices(scores, labels)
    p, n = true_positives[-1], counts[-1] - true_positives[-1]
    return float(np.max(np.abs(true_positives / p - (counts - true_positives) / n)))


def report(scores, labels, metrics, flagged, max_fpr: float = None) -> dict:
    """The metrics beyond the AUC in the clear, in the form mpc-exact opens them (protocols.mpc.exact.
    opened_metrics); ``flagged``: the curves' cuts (protocols.metric_catalogue); max_fpr: pauc's."""
    out = {}
    if "ci" in metrics:
        if min(np.sum(np.asarray(labels) == 1), np.sum(np.asarray(labels) == 0)) < 2:
            out["ci"] = Refused(TWO_ROWS)
        else:
            found = delong_auc(scores, labels)
            out["ci"] = {"variance": found.variance, "std": found.std, "ci": found.ci}
    if "ap" in metrics:
        out["ap"] = average_precision(scores, labels)
    points = curve_at_cuts(scores, labels, flagged) if {"roc", "pr"} & set(metrics) else {}
    if "roc" in metrics:
        out["roc"] = {"flagged": list(flagged), "fpr": points["fpr"].tolist(), "tpr": points["tpr"].tolist()}
    if "pr" in metrics:
        out["pr"] = {"flagged": list(flagged), "recall": points["tpr"].tolist(),
                     "precision": points["precision"].tolist()}
    if "ks" in metrics:
        out["ks"] = ks_statistic(scores, labels)
    if "pauc" in metrics:
        area = partial_area(scores, labels, max_fpr)
        out["pauc"] = {"max_fpr": max_fpr, "area": area, "mcclish": mcclish(area, max_fpr)}
    return out


def roc_vertices(scores, labels) -> tuple:
    """(true positives, rows flagged) at each distinct threshold, descending (scikit-learn's curve vertices)."""
    scores, labels = _checked(scores, labels)
    order = np.argsort(-scores, kind="stable")
    ranked = scores[order]
    ends = np.append(np.flatnonzero(np.diff(ranked) != 0), len(ranked) - 1)
    return np.cumsum(labels[order])[ends].astype(np.float64), (ends + 1).astype(np.float64)


def _variance(v10, v01) -> float:
    return _covariance(v10, v10) / len(v10) + _covariance(v01, v01) / len(v01)


def _covariance(x, y) -> float:
    """The sample covariance with denominator len - 1 (0 for a single value)."""
    if len(x) < 2:
        return 0.0
    return float(((x - x.mean()) * (y - y.mean())).sum() / (len(x) - 1))


def _checked(scores, labels) -> tuple:
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels)
    if scores.ndim != 1 or scores.shape != labels.shape:
        raise InputError(f"scores and labels must be one-dimensional of one length, not {scores.shape} and "
                         f"{labels.shape}")
    if not np.isfinite(scores).all():
        raise InputError("scores must be finite numbers")
    if not np.isin(labels, (0, 1)).all():
        raise InputError("labels must be 0 or 1")
    labels = labels.astype(np.int64)
    if labels.min(initial=1) == 1 or labels.max(initial=0) == 0:
        raise InputError("both classes must occur: the metric is undefined otherwise")
    return scores, labels
