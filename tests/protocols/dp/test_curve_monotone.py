"""A released DP curve is monotone and within [0, 1]: the isotonic projection of protocols.dp.curve_law."""
import numpy as np
from sklearn.isotonic import IsotonicRegression

from mpc_auc.protocols.dp.curve_grid import _released
from mpc_auc.protocols.dp.curve_law import (CurveNoise, curve_from_nodes, monotone, prefix_sums, simulate_curves,
                                            slice_counts, tree_nodes)
from mpc_auc.protocols.dp.dpauc import confusion_counts, paper_thresholds
from mpc_auc.protocols.metric_catalogue import cut_positions


def _noisy(seed):
    """285 rows at epsilon 1 (the issue's case): the rows, the cuts and one draw's noisy nodes."""
    rng = np.random.default_rng(seed)
    labels = (rng.random(285) < 0.37).astype(np.int64)
    scores = rng.random(285) + 0.5 * labels
    noise = CurveNoise(1.0)
    flagged = cut_positions(285, noise.points)
    nodes = tree_nodes(slice_counts(labels[np.argsort(scores, kind="stable")], flagged))
    return flagged, nodes + noise.node_noise(285).sample(rng, len(nodes))


def test_projection_is_sklearns_isotonic_fit_within_0_1():
    rng = np.random.default_rng(0)
    for _ in range(50):
        values = np.cumsum(rng.normal(0.01, 0.05, 40)) + rng.normal(0, 0.1, 40)
        expected = IsotonicRegression(y_min=0.0, y_max=1.0).fit_transform(np.arange(40), values)
        assert np.allclose(monotone(values), expected, atol=1e-12)


def test_projection_is_the_closest_monotone_sequence():
    """No other non-decreasing sequence in [0, 1] lies closer: random ones and the projection nudged."""
    rng = np.random.default_rng(1)
    values = rng.normal(0.5, 0.4, 12)
    best = monotone(values)
    assert np.all(np.diff(best) >= 0) and best.min() >= 0 and best.max() <= 1
    for _ in range(2000):
        other = np.sort(np.clip(best + rng.normal(0, 0.05, 12), 0, 1))
        assert np.sum((other - values) ** 2) >= np.sum((best - values) ** 2) - 1e-12


def test_released_curve_is_monotone_where_the_raw_one_steps_back():
    stepped_back = 0
    for seed in range(20):
        flagged, nodes = _noisy(seed)
        tp = prefix_sums(nodes, len(flagged))
        p = min(max(tp[-1], 1.0), 284.0)
        raw_fpr = (flagged - tp) / (285 - p)
        stepped_back += bool(np.any(np.diff(raw_fpr) < 0))
        curve = curve_from_nodes(nodes, flagged, 285)
        for key in ("fpr", "tpr"):
            assert np.all(np.diff(curve[key]) >= 0), (seed, key)
            assert min(curve[key]) >= 0 and max(curve[key]) <= 1
        assert np.allclose(curve["fpr"], monotone(raw_fpr))
    assert stepped_back > 10  # the noise does make raw curves step back at this size


def test_simulated_and_compared_curves_are_monotone():
    rng = np.random.default_rng(2)
    labels = (rng.random(285) < 0.4).astype(np.int64)
    scores = np.clip(rng.random(285) * 0.8 + 0.2 * labels, 0, 1)
    for curve in simulate_curves(scores, labels, CurveNoise(1.0), 5, rng):
        assert np.all(np.diff(curve["fpr"]) >= 0) and np.all(np.diff(curve["tpr"]) >= 0)
    counts = confusion_counts(np.arange(285) % 3, scores, labels, paper_thresholds(20), 3)
    for name in ("dpauc-threshold-roc", "dpauc-histogram-roc"):
        for fpr, tpr in _released(name, scores, labels, counts, 1.0, 20, 5, rng):
            assert np.all(np.diff(fpr) >= 0) and np.all(np.diff(tpr) >= 0), name
            assert min(fpr.min(), tpr.min()) >= 0 and max(fpr.max(), tpr.max()) <= 1
