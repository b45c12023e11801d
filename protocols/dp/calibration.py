"""Noise calibration: the analytic Gaussian mechanism (Balle & Wang 2018, Theorem 8).

Adding N(0, sigma^2) to a statistic of l2 sensitivity Delta is (eps, delta)-DP
if and only if

    Phi(Delta / (2 sigma) - eps sigma / Delta) - e^eps Phi(-Delta / (2 sigma) - eps sigma / Delta) <= delta.

The left side falls as sigma grows.  The mechanisms take their sigma from the
maintained accountant, dp-accounting's ``get_smallest_gaussian_noise`` (its
privacy-loss distribution of one Gaussian query is this same condition); our
own bisection on the closed form, :func:`balle_wang_sigma`, is kept as the
cross-check (tests/protocols/dp/test_calibration.py: they agree to 1e-6 and dp-accounting's
sigma satisfies the condition).  Unlike the classical
sigma = Delta sqrt(2 ln(1.25 / delta)) / eps, this holds for every eps > 0
(the classical bound needs eps < 1) and is tight.

Both trust their budget: the mechanisms' registry (protocols.dp.suite) checks epsilon and delta first.
"""
import functools
import math

from dp_accounting.pld import accountant, common


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2))


def gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """The smallest delta for which N(0, sigma^2) noise is (epsilon, delta)-DP at this sensitivity."""
    a, b = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
    return _phi(a - b) - math.exp(epsilon) * _phi(-a - b)


@functools.lru_cache(maxsize=4096)
def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest sigma making Gaussian noise (epsilon, delta)-DP, from dp-accounting (remembered per
    arguments: dp-accounting's search takes ~60 ms here, and the adaptive split asks for a grid of them)."""
    if sensitivity == 0:
        return 0.0
    return float(accountant.get_smallest_gaussian_noise(common.DifferentialPrivacyParameters(epsilon, delta), 1,
                                                        sensitivity))


def balle_wang_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Our own bisection on Balle & Wang's Theorem 8 (to a relative 1e-12): the cross-check."""
    if sensitivity == 0:
        return 0.0
    lo, hi = 1e-3 * sensitivity, sensitivity
    while gaussian_delta(hi, epsilon, sensitivity) > delta:
        lo, hi = hi, 2 * hi
    while gaussian_delta(lo, epsilon, sensitivity) <= delta:
        lo /= 2
    while hi - lo > 1e-12 * hi:
        mid = (lo + hi) / 2
        if gaussian_delta(mid, epsilon, sensitivity) > delta:
            lo = mid
        else:
            hi = mid
    return hi
