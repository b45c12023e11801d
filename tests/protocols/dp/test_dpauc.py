"""DPAUC threshold mechanisms against the exact thresholded ROC area and against each other."""
import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from mpc_auc.protocols.dp import dpauc, fedauc
from mpc_auc.synthetic import synthetic_evalset


@pytest.fixture(scope="module")
def data():
    evalset = synthetic_evalset(m=20000, clients=10, seed=4)
    owner = np.unique(evalset.client, return_inverse=True)[1]
    return evalset, owner


def test_paper_threshold_layout():
    theta = dpauc.paper_thresholds(100)
    assert len(theta) == 100 and (np.diff(theta) > 0).all()
    assert (theta < 0.2).sum() == 50 and ((theta >= 0.2) & (theta < 0.5)).sum() == 25 and theta[-1] == 1.0


def test_exact_counts_give_the_thresholded_roc_and_approach_the_auc(data):
    evalset, owner = data
    counts = dpauc.confusion_counts(owner, evalset.score, evalset.label, np.linspace(0, 1, 2001), 10)
    tp, fp = counts.tp.sum(0), counts.fp.sum(0)
    assert tp[0] == evalset.positives and fp[0] == evalset.negatives  # theta = 0: everything positive
    p, n = counts.positives.sum(), counts.negatives.sum()
    area = dpauc.roc_area(tp, fp, p - tp, n - fp)
    assert abs(area - roc_auc_score(evalset.label, evalset.score)) < 2e-3  # fine grid: close to the AUC


@pytest.mark.parametrize("mechanism", [dpauc.threshold_laplace, dpauc.threshold_rr, dpauc.histogram_statistics])
def test_noisy_areas_centre_on_the_exact_thresholded_area(data, mechanism):
    evalset, owner = data
    theta = dpauc.paper_thresholds(20)
    counts = dpauc.confusion_counts(owner, evalset.score, evalset.label, theta, 10)
    tp, fp = counts.tp.sum(0), counts.fp.sum(0)
    exact = dpauc.roc_area(tp, fp, counts.positives.sum() - tp, counts.negatives.sum() - fp)
    noisy = mechanism(counts, 8.0, 300, fedauc.generator(5))
    assert abs(noisy.mean() - exact) < 3 * noisy.std() / np.sqrt(len(noisy)) + 1e-3


def test_histogram_release_beats_per_threshold_release(data):
    evalset, owner = data
    counts = dpauc.confusion_counts(owner, evalset.score, evalset.label, dpauc.paper_thresholds(100), 10)
    per_threshold = dpauc.threshold_laplace(counts, 1.0, 300, fedauc.generator(6))
    histogram = dpauc.histogram_statistics(counts, 1.0, 300, fedauc.generator(6))
    assert histogram.std() < per_threshold.std() / 2  # measured: 0.0077 vs 0.029 at eps = 1, 100 thresholds


def test_table_5_trends_few_thresholds_bias_many_thresholds_spread():
    """dpauc Table 5, qualitatively, at the paper's size (the full table: sims/papers/dpauc_table5.py)."""
    evalset = synthetic_evalset(m=458_407, clients=10, seed=0)
    owner = np.unique(evalset.client, return_inverse=True)[1]
    exact = roc_auc_score(evalset.label, evalset.score)
    rng = fedauc.generator(12)
    bias, spread = {}, {}
    for count in (10, 50, 200):
        counts = dpauc.confusion_counts(owner, evalset.score, evalset.label, dpauc.paper_thresholds(count), 10)
        auc = dpauc.threshold_laplace(counts, 8.0, 200, rng)
        bias[count], spread[count] = abs(auc.mean() - exact), auc.std()
    assert bias[10] > 5 * bias[200]  # a coarse trapezoid under-reads the AUC
    assert spread[10] < spread[50] < spread[200]  # eps' = eps / (4 |Theta|) shrinks


def _assert_sum_of_laplaces(noise, clients, scale):
    """noise: sums of ``clients`` Laplace(scale) draws; (noise / sd)^2 averages 1 with kurtosis 3 + 3 / clients."""
    squares = noise ** 2 / (2 * clients * scale ** 2)
    assert abs(squares.mean() - 1) < 2.576 * np.sqrt((2 + 3 / clients) / squares.size)


def test_histogram_noise_has_scale_2_over_eps(data):
    evalset, owner = data
    counts = dpauc.confusion_counts(owner, evalset.score, evalset.label, dpauc.paper_thresholds(20), 10)
    (pos, neg), scale = dpauc.noisy_histograms(counts, 1.0, 2000, fedauc.generator(15))
    assert scale == 2.0
    _assert_sum_of_laplaces(pos - counts.bins_pos.sum(axis=0), 10, scale)
    _assert_sum_of_laplaces(neg - counts.bins_neg.sum(axis=0), 10, scale)


def test_per_threshold_noise_has_the_paper_scale(data):
    """Each summed count carries K Laplace draws of scale 4 |Theta| / eps: variance 2 K scale^2 (99%)."""
    evalset, owner = data
    counts = dpauc.confusion_counts(owner, evalset.score, evalset.label, dpauc.paper_thresholds(20), 10)
    (tp, fp, fn, tn), scale = dpauc.noisy_threshold_counts(counts, 2.0, 2000, fedauc.generator(14))
    assert scale == 4 * 20 / 2.0
    for noisy, exact in ((tp, counts.tp), (fp, counts.fp)):
        _assert_sum_of_laplaces(noisy - exact.sum(axis=0), 10, scale)
