"""The analytic Gaussian mechanism's sigma is valid, tight, and beats the classical bound where that holds."""
import math

import numpy as np
import pytest

from mpc_auc.protocols.dp import fedauc
from mpc_auc.protocols.dp.calibration import analytic_gaussian_sigma, balle_wang_sigma, gaussian_delta
from mpc_auc.synthetic import synthetic_evalset


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0, 4.0, 8.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-9])
def test_sigma_is_the_smallest_valid_one(epsilon, delta):
    sigma = analytic_gaussian_sigma(epsilon, delta)
    assert gaussian_delta(sigma, epsilon) <= delta
    assert gaussian_delta(sigma * (1 - 1e-6), epsilon) > delta


@pytest.mark.parametrize("epsilon", [0.05, 0.5, 1.0, 4.0, 16.0])
@pytest.mark.parametrize("delta, sensitivity", [(1e-5, 1.0), (1e-9, 3.0), (0.01, 1e4)])
def test_dp_accounting_agrees_with_our_own_bisection(epsilon, delta, sensitivity):
    """The library's sigma (used by the mechanisms) against our closed-form bisection: equal to 1e-6,
    and valid by the closed form itself."""
    ours, library = balle_wang_sigma(epsilon, delta, sensitivity), analytic_gaussian_sigma(epsilon, delta, sensitivity)
    assert library == pytest.approx(ours, rel=1e-6)
    assert gaussian_delta(library, epsilon, sensitivity) <= delta * (1 + 1e-9)


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 0.9])
def test_below_eps_1_it_is_tighter_than_the_classical_bound(epsilon):
    classical = math.sqrt(2 * math.log(1.25 / 1e-5)) / epsilon
    assert analytic_gaussian_sigma(epsilon, 1e-5) < classical


def test_sigma_scales_with_the_sensitivity():
    unit = analytic_gaussian_sigma(1.0, 1e-6)
    assert analytic_gaussian_sigma(1.0, 1e-6, 37.0) == pytest.approx(37.0 * unit, rel=1e-7)


@pytest.mark.parametrize("sensitivity", ["local", "global"])
def test_gaussian_noise_terms_have_their_stated_sigma(sensitivity):
    """(noise / sigma)^2 averages 1 with standard error sqrt(2 / n)."""
    evalset = synthetic_evalset(m=2000, clients=20, seed=3)
    ranked = fedauc.RankedClients.from_clear_scores(evalset.clients())
    stats = fedauc.gaussian_statistics(ranked, 4.0, 1e-6, 400, fedauc.generator(9), sensitivity)
    for term, (noise, scale) in stats.noise.items():
        squares = (noise / scale) ** 2
        assert abs(squares.mean() - 1) < 2.576 * np.sqrt(2 / squares.size), term
