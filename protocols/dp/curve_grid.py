"""DP ROC curves over an epsilon grid on one evaluation set: mpc-central's DP curve beside DPAUC's threshold ROC.

Each cell (mechanism, epsilon) draws ``draws`` released curves and measures each by
protocols.dp.curve_law.curve_error (the mean |TPR~ - TPR| over an FPR grid against the data's ROC), with a
percentile-bootstrap 95% interval of the mean; the rows of ``mpc-auc compare``'s curve table.

* ``mpc-dp-curve``: the binary tree over the positives between public cuts, the circuit's discrete Laplace
  law (protocols.dp.curve_law.simulate_curves, the same law the MPC draws); label DP at epsilon.
* ``dpauc-threshold-roc``: DPAUC's release [dpauc]: every client adds Lap(4|Theta|/eps)
  to its TP, FP, FN and TN at each of |Theta| thresholds (the paper's accounting), the server sums them; the
  (FPR, TPR) points of the summed counts, clipped at 0 and made monotone along the thresholds by
  protocols.dp.curve_law.monotone, as mpc-dp-curve's are (the same free post-processing for all three, so the
  comparison is between the mechanisms' noise; DPAUC's area mechanisms in protocols.dp.dpauc stay as published).
* ``dpauc-histogram-roc``: the same thresholds with the budget spent once on each client's per-bin positive
  and negative counts (Lap(2/eps)), thresholds' counts from cumulative sums (protocols.dp.dpauc's better
  accounting).
Both DPAUC variants use as many thresholds as the DP curve has cuts, at the authors' layout.
"""
import numpy as np

from ..metric_catalogue import DEFAULT_POINTS
from ..clear_auc import rank_sum_auc
from ..validation import checked
from .curve_law import CurveNoise, curve_area, curve_error, monotone, simulate_curves
from .dpauc import at_or_above, confusion_counts, noisy_histograms, noisy_threshold_counts, paper_thresholds
from .fedauc import generator
from .grid import mean_interval, unit_scores

CURVE_MECHANISMS = ("mpc-dp-curve", "dpauc-threshold-roc", "dpauc-histogram-roc")
CURVE_FIELDS = ("protocol", "epsilon", "points", "curve_error", "curve_error_lo", "curve_error_hi", "auc_rmse",
                "draws")


def curve_grid(clients, epsilons, draws, seed, score_range=(0.0, 1.0), points: int = DEFAULT_POINTS,
               mechanisms=CURVE_MECHANISMS) -> list:
    """Rows of the curve comparison (one per mechanism and epsilon): curve error and its interval, and the
    RMSE of the area under the released curve against the exact AUC.

    The comparison's boundary: each epsilon is checked here (sims.dp_comparison hands over its config's), the
    mechanisms below trust it."""
    epsilons = [checked("epsilon", e) for e in epsilons]
    clients = unit_scores(clients, score_range)
    scores = np.concatenate([np.asarray(s, dtype=np.float64) for _, s, _ in clients])
    labels = np.concatenate([np.asarray(y, dtype=np.int64) for _, _, y in clients])
    owner = np.concatenate([np.full(len(y), k) for k, (_, _, y) in enumerate(clients)])
    truth = rank_sum_auc(scores, labels)
    counts = confusion_counts(owner, scores, labels, paper_thresholds(points), len(clients))
    rng = generator(seed)
    rows = []
    for name in mechanisms:
        for eps in epsilons:
            curves = _released(name, scores, labels, counts, eps, points, draws, rng)
            errors = np.array([curve_error(fpr, tpr, scores, labels) for fpr, tpr in curves])
            areas = np.array([curve_area(fpr, tpr) for fpr, tpr in curves])
            lo, hi = mean_interval(errors, rng)
            rows.append({"protocol": name, "epsilon": float(eps), "points": points,
                         "curve_error": float(errors.mean()), "curve_error_lo": lo, "curve_error_hi": hi,
                         "auc_rmse": float(np.sqrt(np.mean((areas - truth) ** 2))), "draws": draws})
    return rows


def _released(name, scores, labels, counts, epsilon, points, draws, rng) -> list:
    """``draws`` released curves of mechanism ``name``: [(fpr, tpr)]."""
    if name == "mpc-dp-curve":
        return [(c["fpr"], c["tpr"]) for c in simulate_curves(scores, labels, CurveNoise(epsilon, points), draws, rng)]
    if name == "dpauc-threshold-roc":
        (tp, fp, fn, tn), _ = noisy_threshold_counts(counts, epsilon, draws, rng)
    else:
        (pos, neg), _ = noisy_histograms(counts, epsilon, draws, rng)
        tp, fp = at_or_above(pos), at_or_above(neg)
        fn, tn = pos.sum(axis=1)[:, None] - tp, neg.sum(axis=1)[:, None] - fp
    tp, fp, fn, tn = (np.clip(x, 0, None) for x in (tp, fp, fn, tn))
    tiny = np.finfo(float).tiny
    fpr, tpr = fp / np.maximum(fp + tn, tiny), tp / np.maximum(tp + fn, tiny)
    return [(monotone(f[::-1]), monotone(t[::-1])) for f, t in zip(fpr, tpr)]  # thresholds descending: rising

