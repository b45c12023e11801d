"""Sample weights as integer units (protocols.inputs.weights): the precision the API picks, the refusals a
client's own weights get, and the rounding bound against the clear weighted AUC."""
import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from mpc_auc.protocols.clear_auc import weighted_auc
from mpc_auc.protocols.errors import InputError
from mpc_auc.protocols.inputs.weights import TOTAL_UNITS, bits_for, check_weights, error_bound, weight_units

RNG = np.random.default_rng(26)


@pytest.mark.parametrize("weights", [np.ones(1000), RNG.random(5000) * 1e6, RNG.random(50) * 1e-9,
                                     np.r_[np.zeros(10), 3.0], RNG.integers(1, 5, 10**6).astype(float)])
def test_the_precision_fills_the_total_and_no_more(weights):
    q = bits_for(weights)
    assert np.rint(np.ldexp(weights, q)).sum() <= TOTAL_UNITS < np.rint(np.ldexp(weights, q + 1)).sum()


@pytest.mark.parametrize("weights, why", [([1.0, np.nan], r"row 1: weight nan is not a finite number"),
                                          ([1.0, -0.5], r"row 1: weight -0.5 is negative"),
                                          ([1.0, 2.0, 3.0], r"one per row: 2 rows"),
                                          (["a", "b"], "must be numbers")])
def test_bad_weights_are_named(weights, why):
    with pytest.raises(InputError, match=why):
        check_weights(weights, 2)


def test_units_refuse_a_weight_the_precision_cannot_hold():
    assert weight_units([0.0, 0.25, 3.0], 2, 3).tolist() == [0, 1, 12]
    with pytest.raises(InputError, match=r"row 1: weight 0.1 rounds to 0 units of 2\^-2: declare more"):
        weight_units([1.0, 0.1], 2, 2)
    with pytest.raises(InputError, match=r"row 0: weight 2.0 exceeds 2\^30 units of 2\^-30: declare fewer"):
        weight_units([2.0], 30, 1)
    with pytest.raises(InputError, match="must not all be 0"):
        bits_for(np.zeros(4))


def test_the_clear_weighted_auc_is_scikit_learns():
    for _ in range(20):
        m = int(RNG.integers(20, 400))
        y, s = RNG.integers(0, 2, m), np.round(RNG.random(m), int(RNG.integers(1, 3)))
        w = RNG.random(m) * RNG.integers(0, 2, m)  # zeros too
        assert abs(weighted_auc(s, y, w) - roc_auc_score(y, s, sample_weight=w)) < 1e-12
    assert weighted_auc(s, y, np.ones(m)) == pytest.approx(roc_auc_score(y, s), abs=1e-15)


def test_rounding_stays_within_the_stated_bound():
    """Weights rounded to units of 2^-q move the weighted AUC by at most error_bound; exactly 0 on the grid."""
    for _ in range(300):
        m = int(RNG.integers(10, 200))
        y, s = RNG.integers(0, 2, m), np.round(RNG.random(m), 1)
        w = np.exp(RNG.normal(0, 2, m))  # weights over several orders of magnitude
        q = int(RNG.integers(2, 12))
        if (np.rint(np.ldexp(w, q)) == 0).any() or y.min() == y.max():
            continue
        rounded = np.ldexp(np.rint(np.ldexp(w, q)), -q)
        assert abs(weighted_auc(s, y, rounded) - weighted_auc(s, y, w)) <= error_bound(w, q) * (1 + 1e-9)
    assert error_bound(np.array([0.25, 3.0, 0.0]), 2) == 0.0
    # not vacuous: two positives around one negative, 10.5 - e and 10.5 + e units, rounded apart
    y, s, w = np.array([1, 0, 1]), np.array([0.9, 0.5, 0.1]), np.array([10.499, 1.0, 10.501]) / 4
    rounded = np.ldexp(np.rint(np.ldexp(w, 2)), -2)
    assert abs(weighted_auc(s, y, rounded) - weighted_auc(s, y, w)) > 0.1 * error_bound(w, 2)
