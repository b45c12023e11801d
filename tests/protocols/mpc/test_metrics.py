"""The metrics beyond the AUC inside mpc-exact (circuits.rank_metrics) against scikit-learn and against
DeLong's variance written out here pair by pair (DeLong1988): one session of P0, P1 and the dealer for every set.
"""
import math

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve

from mpc_auc.protocols.metric_catalogue import CI_MAX_ROWS, REPORT
from mpc_auc.protocols.errors import InputError
from mpc_auc.planner import execute, plan
from mpc_auc.protocols.mpc.exact import mpc_exact_auc
from mpc_auc.protocols.refused import Refused
from mpc_auc.protocols.release_spec import ReleaseSpec
from mpc_auc.synthetic import synthetic_evalset

# (m, clients, decimals, auc): heavy ties, all tied, K = M (and two-byte positions: 257 rows), small classes, no
# ties; small sets (1,191 rows in all): the references are exact at any size
CASES = [(150, 5, 1, 0.77), (200, 20, 2, 0.8), (257, 257, None, 0.7), (100, 3, 0, 0.77), (120, 7, 1, 0.95),
         (300, 10, 3, 0.6), (64, 2, None, 0.5)]
POINTS = 25
MAX_FPR = 0.3
TOL = 1e-9


def _sets():
    sets = [synthetic_evalset(m=m, clients=k, decimals=d, auc=auc, seed=40 + i) for i, (m, k, d, auc) in
            enumerate(CASES)]
    tied = [("a", np.full(6, 0.5), np.array([0, 1, 0, 1, 1, 0])), ("b", np.full(5, 0.5), np.array([0, 0, 1, 0, 1]))]
    single = [("a", np.array([0.1, 0.4, 0.4, 0.9]), np.array([0, 0, 1, 0]))]  # one positive: no DeLong variance
    return [s.clients() for s in sets] + [tied, single]


@pytest.fixture(scope="module")
def evaluated():
    datasets = _sets()
    results = mpc_exact_auc(datasets, spec=ReleaseSpec(REPORT, POINTS, MAX_FPR), timeout_s=60)
    return [(np.concatenate([s for _, s, _ in c]), np.concatenate([y for _, _, y in c]), r)
            for c, r in zip(datasets, results)]


def _delong_variance(scores, labels) -> float:
    """DeLong et al. (1988) from the kernel psi over every (positive, negative) pair: V10 and V01 its row and
    column means, Var = S10 / P + S01 / N with sample variances."""
    psi = (scores[labels == 1][:, None] > scores[labels == 0][None, :]) + 0.5 * (
        scores[labels == 1][:, None] == scores[labels == 0][None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    return v10.var(ddof=1) / len(v10) + v01.var(ddof=1) / len(v01)


def _at_cuts(scores, labels, flagged):
    """scikit-learn's curve, interpolated linearly in the rows flagged, at each cut: (tp, fp)."""
    fpr, tpr, _ = roc_curve(labels, scores, drop_intermediate=False)
    p, n = labels.sum(), len(labels) - labels.sum()
    tp, fp = tpr * p, fpr * n
    tp_cut = np.interp(flagged, tp + fp, tp)
    return tp_cut, np.asarray(flagged) - tp_cut


@pytest.mark.parametrize("i", range(len(CASES) + 1))
def test_auc_delong_ap_and_ks_equal_their_references(evaluated, i):
    scores, labels, result = evaluated[i]
    metrics = result.metrics
    assert abs(result.auc - roc_auc_score(labels, scores)) < TOL
    variance = _delong_variance(scores, labels)
    assert abs(metrics["ci"]["variance"] - variance) < TOL and math.isclose(metrics["ci"]["variance"], variance,
                                                                           rel_tol=1e-6, abs_tol=1e-15)
    std = math.sqrt(variance)
    z = 1.959963984540054
    assert np.allclose(metrics["ci"]["ci"], (result.auc - z * std, result.auc + z * std), atol=TOL, rtol=0)
    assert abs(metrics["ap"] - average_precision_score(labels, scores)) < TOL
    fpr, tpr, _ = roc_curve(labels, scores)
    assert abs(metrics["ks"] - np.max(np.abs(tpr - fpr))) < TOL
    assert abs(metrics["pauc"]["mcclish"] - roc_auc_score(labels, scores, max_fpr=MAX_FPR)) < TOL


@pytest.mark.parametrize("i", range(len(CASES) + 1))
def test_curves_equal_scikit_learns_interpolated_at_the_cuts(evaluated, i):
    scores, labels, result = evaluated[i]
    roc, pr = result.metrics["roc"], result.metrics["pr"]
    flagged = np.asarray(roc["flagged"])
    m = len(labels)
    assert flagged.tolist() == sorted(set(-(-np.arange(1, POINTS + 1) * m // POINTS)))  # public: the cuts only
    tp, fp = _at_cuts(scores, labels, flagged)
    p, n = labels.sum(), m - labels.sum()
    assert np.max(np.abs(np.asarray(roc["tpr"]) - tp / p)) < TOL
    assert np.max(np.abs(np.asarray(roc["fpr"]) - fp / n)) < TOL
    assert np.max(np.abs(np.asarray(pr["precision"]) - tp / flagged)) < TOL
    assert pr["recall"] == roc["tpr"] and pr["flagged"] == roc["flagged"]


def test_a_single_positive_opens_no_variance_but_the_other_metrics(evaluated):
    scores, labels, result = evaluated[-1]
    assert result.metrics["ci"] == Refused("DeLong's variance needs two rows of each class")
    assert abs(result.metrics["ap"] - average_precision_score(labels, scores)) < TOL


def test_the_cases_hold_ties_and_extremes(evaluated):
    assert any(len(np.unique(s)) == 1 for s, _, _ in evaluated)  # every score tied
    assert any(len(np.unique(s)) < len(s) / 4 for s, _, _ in evaluated)  # heavy ties
    assert any(len(np.unique(s)) == len(s) for s, _, _ in evaluated)  # none


def test_what_is_revealed_lists_every_metric(evaluated):
    revealed = evaluated[0][2].revealed
    for words in ("DeLong's variance", "average precision", "TPR and FPR", "precision and recall",
                  "Kolmogorov-Smirnov"):
        assert any(words in line for line in revealed), words
    assert sum(f"({POINTS} cuts)" in line for line in revealed) == 2


@pytest.mark.parametrize("metrics, message", [
    ("auc,roc,nope", "unknown metric"), ("", "unknown metric"), (("auc", "KS"), "unknown metric"),
])
def test_unknown_metrics_are_refused_before_any_process(metrics, message):
    with pytest.raises(InputError, match=message):
        ReleaseSpec(metrics)


def test_the_variance_is_refused_past_its_ring_bound_before_any_process():
    rows = CI_MAX_ROWS + 1
    clients = [("a", np.zeros(rows), np.arange(rows) % 2)]
    for metrics, fpr in (("auc,ci", None), ("auc", 0.5)):
        with pytest.raises(InputError, match=f"at most {CI_MAX_ROWS} rows"):
            execute(plan(metrics=metrics, max_fpr=fpr), clients)


def _delong_covariance(a, b, labels) -> float:
    """DeLong et al. (1988): Cov(AUC_a, AUC_b) = S10_ab / P + S01_ab / N from the kernels' row and column means."""
    def means(scores):
        x, y = scores[labels == 1][:, None], scores[labels == 0][None, :]
        psi = (x > y) + 0.5 * (x == y)
        return psi.mean(axis=1), psi.mean(axis=0)

    (a10, a01), (b10, b01) = means(a), means(b)
    return np.cov(a10, b10)[0, 1] / len(a10) + np.cov(a01, b01)[0, 1] / len(a01)


@pytest.fixture(scope="module")
def paired():
    """Three models scored on the same tie-heavy rows (the third anti-correlated with the first), in one job."""
    rng = np.random.default_rng(11)
    m = 500
    labels = (rng.random(m) < 0.3).astype(np.int64)
    a = np.clip(np.round(rng.normal(0.4 + 0.2 * labels, 0.2), 2), 0, 1)
    b = np.clip(np.round(a + rng.normal(0, 0.1, m), 2), 0, 1)
    c = np.clip(np.round(1 - a + rng.normal(0, 0.3, m), 1), 0, 1)
    scores = np.c_[a, b, c]
    owner = rng.integers(0, 4, m)
    clients = [(f"h{k}", scores[owner == k], labels[owner == k]) for k in range(4)]
    order = np.concatenate([np.flatnonzero(owner == k) for k in range(4)])
    result = mpc_exact_auc([clients], spec=ReleaseSpec("auc,ci,ap"), timeout_s=60)[0]
    return scores[order], labels[order], result


def test_each_score_column_gets_its_auc_and_metrics(paired):
    scores, labels, result = paired
    aucs = [result.auc] + [o["auc"] for o in result.others]
    metrics = [result.metrics] + [o["metrics"] for o in result.others]
    for k in range(3):
        assert abs(aucs[k] - roc_auc_score(labels, scores[:, k])) < TOL
        assert abs(metrics[k]["ci"]["variance"] - _delong_variance(scores[:, k], labels)) < TOL
        assert abs(metrics[k]["ap"] - average_precision_score(labels, scores[:, k])) < TOL


def test_the_covariances_and_the_paired_z_equal_delongs_definition(paired):
    scores, labels, result = paired
    assert sorted(result.covariance) == [(0, 1), (0, 2), (1, 2)]
    variances = [_delong_variance(scores[:, k], labels) for k in range(3)]
    aucs = [roc_auc_score(labels, scores[:, k]) for k in range(3)]
    found_aucs = [result.auc] + [o["auc"] for o in result.others]
    found_vars = [result.metrics["ci"]["variance"]] + [o["metrics"]["ci"]["variance"] for o in result.others]
    for (i, j), found in result.covariance.items():
        expected = _delong_covariance(scores[:, i], scores[:, j], labels)
        assert abs(found - expected) < TOL
        z = (aucs[i] - aucs[j]) / math.sqrt(variances[i] + variances[j] - 2 * expected)
        found_z = (found_aucs[i] - found_aucs[j]) / math.sqrt(found_vars[i] + found_vars[j] - 2 * found)
        assert abs(found_z - z) < TOL
    assert result.covariance[(0, 2)] < 0 < result.covariance[(0, 1)]  # a negative covariance keeps its sign
    assert any("each pair of score columns" in line for line in result.revealed)


def test_clients_with_different_numbers_of_score_columns_are_refused():
    clients = [("a", np.array([[0.1, 0.2], [0.3, 0.4]]), np.array([0, 1])), ("b", np.array([0.5, 0.6]),
                                                                             np.array([1, 0]))]
    with pytest.raises(InputError, match="same number of score columns"):
        mpc_exact_auc([clients])


def test_the_bitonic_ranking_opens_the_same_metrics():
    """The metrics read the tie groups, not the sort: the bitonic reference gives the radix sort's values."""
    clients = synthetic_evalset(m=120, clients=3, decimals=1, seed=9).clients()  # the bitonic sort pads to 128
    radix, bitonic = (mpc_exact_auc([clients], spec=ReleaseSpec(REPORT, 10, 0.4), method=method,
                                    timeout_s=120)[0] for method in ("radix", "bitonic"))
    assert radix.auc == bitonic.auc and radix.metrics == bitonic.metrics


def test_as_many_cuts_as_rows_open_every_label_which_direct_evaluations_refuse():
    """What the parties' minimum slice (metric_catalogue.thin_slices) stops: without it (a relayed job, whose
    coordinator holds the rows anyway) curves at M cuts open the label of every row in rank order."""
    from mpc_auc.protocols.metric_catalogue import thin_slices

    rng = np.random.default_rng(7)
    scores, labels = rng.permutation(60) / 60, rng.integers(0, 2, 60)
    (result,) = mpc_exact_auc([[("a", scores, labels)]], spec=ReleaseSpec(("auc", "roc"), 60))
    positives = np.rint(np.array(result.metrics["roc"]["tpr"]) * labels.sum())
    recovered = np.diff(positives, prepend=0)  # the positives between consecutive cuts: one row each
    assert np.array_equal(recovered, labels[np.argsort(-scores)])
    assert "at most 6 cuts" in thin_slices(60, 60) and thin_slices(60, 6) == ""
