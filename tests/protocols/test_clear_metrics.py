"""The clear references of the ranking metrics beyond the AUC: DeLong's variance and test, average precision,
against scikit-learn and against their definitions computed pair by pair."""
import math

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from mpc_auc.protocols.clear_metrics import average_precision, clear_delong_test, delong_auc, placement_values
from mpc_auc.protocols.errors import InputError


def _data(seed, m=300, decimals=2):
    rng = np.random.default_rng(seed)
    labels = (rng.random(m) < 0.3).astype(int)
    labels[:2] = (0, 1)
    a = np.round(rng.normal(labels * 1.0, 1.0), decimals)  # rounding makes ties
    b = np.round(a + rng.normal(0, 0.8, m), decimals)  # a second model, correlated with the first
    return a, b, labels


def _psi(scores, labels):
    """The kernel matrix psi(x_i, y_j) over every (positive, negative) pair: 1, 1/2 for a tie, 0."""
    x, y = scores[labels == 1][:, None], scores[labels == 0][None, :]
    return (x > y) + 0.5 * (x == y)


@pytest.mark.parametrize("seed", range(5))
def test_placement_values_are_the_kernel_means(seed):
    a, _, labels = _data(seed)
    v10, v01 = placement_values(a, labels)
    psi = _psi(a, labels)
    assert np.allclose(v10, psi.mean(1)) and np.allclose(v01, psi.mean(0))
    assert math.isclose(v10.mean(), roc_auc_score(labels, a), abs_tol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_the_variance_and_the_test_follow_their_definitions(seed):
    a, b, labels = _data(seed)
    pa, pb = _psi(a, labels), _psi(b, labels)
    p, n = pa.shape

    def cov(u, v):
        return np.cov(u, v)[0, 1]

    var_a = cov(pa.mean(1), pa.mean(1)) / p + cov(pa.mean(0), pa.mean(0)) / n
    var_b = cov(pb.mean(1), pb.mean(1)) / p + cov(pb.mean(0), pb.mean(0)) / n
    cov_ab = cov(pa.mean(1), pb.mean(1)) / p + cov(pa.mean(0), pb.mean(0)) / n
    one = delong_auc(a, labels)
    assert math.isclose(one.variance, var_a, rel_tol=1e-10) and math.isclose(one.std, math.sqrt(var_a))
    assert math.isclose(one.ci[1] - one.value, 1.959963984540054 * one.std)
    test = clear_delong_test(a, b, labels)
    z = (pa.mean() - pb.mean()) / math.sqrt(var_a + var_b - 2 * cov_ab)
    assert math.isclose(test.z, z, rel_tol=1e-9) and math.isclose(test.covariance[0][1], cov_ab, rel_tol=1e-9)
    assert math.isclose(test.p_value, math.erfc(abs(z) / math.sqrt(2)), rel_tol=1e-9)


def test_one_model_against_itself_is_no_difference_and_a_better_one_is_found():
    a, _, labels = _data(7, m=2000)
    same = clear_delong_test(a, a, labels)
    assert same.z == 0.0 and same.p_value == 1.0
    noise = np.random.default_rng(8).normal(0, 3, len(a))
    worse = clear_delong_test(a, a + noise, labels)
    assert worse.difference > 0 and worse.z > 4 and worse.p_value < 1e-4


@pytest.mark.parametrize("seed, decimals", [(0, 1), (1, 2), (2, 6), (3, 0)])
def test_average_precision_equals_scikit_learns_with_ties(seed, decimals):
    a, _, labels = _data(seed, decimals=decimals)
    assert math.isclose(average_precision(a, labels), average_precision_score(labels, a), rel_tol=1e-12)


@pytest.mark.parametrize("scores, labels, message", [
    ([0.1, 0.2], [0, 1, 1], "one length"),
    ([0.1, float("nan")], [0, 1], "finite"),
    ([0.1, 0.2], [0, 2], "0 or 1"),
    ([0.1, 0.2], [1, 1], "both classes"),
])
def test_bad_input_is_named(scores, labels, message):
    for metric in (delong_auc, average_precision):
        with pytest.raises(InputError, match=message):
            metric(scores, labels)
