"""Exact moments of U-statistic kernels on discrete populations, and the predicted MSE of ustat-2pc.

One-sample (Hoeffding 1948; ustats eq. 3): theta = E h(X, X'),
sigma1^2 = Var E[h(X, X') | X], sigma2^2 = Var h(X, X').  Two-sample
(AUC, X+ ~ positives, X- ~ negatives): sigma10^2 = Var E[h | X+],
sigma01^2 = Var E[h | X-], sigma2^2 = Var h.
"""
import numpy as np

from .two_party import pair_noise


def gini_kernel(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(a - b)


def kendall_kernel(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The Kendall kernel rescaled to [0, 1]: (1 + sgn(a1 - b1) sgn(a2 - b2)) / 2; tau = 2 theta - 1."""
    return (1 + np.sign(a[..., 0] - b[..., 0]) * np.sign(a[..., 1] - b[..., 1])) / 2


def auc_kernel(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    return (pos > neg) + 0.5 * (pos == neg)


def moments(population, kernel) -> tuple:
    """(theta, sigma1^2, sigma2^2) of ``kernel`` under ``population`` (exact, by the support matrix)."""
    s, p = population.support, population.pmf
    h = kernel(s[:, None], s[None, :])
    theta = p @ h @ p
    given = h @ p
    return float(theta), float(p @ given**2 - theta**2), float(p @ h**2 @ p - theta**2)


def two_sample_moments(positives, negatives, kernel=auc_kernel) -> tuple:
    """(theta, sigma10^2, sigma01^2, sigma2^2) for X+ ~ positives, X- ~ negatives."""
    sp, pp, sn, pn = positives.support, positives.pmf, negatives.support, negatives.pmf
    h = kernel(sp[:, None], sn[None, :])
    theta = pp @ h @ pn
    return (float(theta), float(pp @ (h @ pn) ** 2 - theta**2), float(pn @ (pp @ h) ** 2 - theta**2),
            float(pp @ h**2 @ pn - theta**2))


def predicted_mse(sigma1_sq: float, sigma2_sq: float, n: int, k: int, noise_var: float) -> float:
    """ustats Thm. 5 (Blom 1976): 4 s1/n + (2 s2 - 4 s1)/(kn) + 2 noise_var/(kn), in kernel units.

    noise_var: the per-pair noise variance (2 k^2/eps^2 for Laplace k/eps,
    which gives the theorem's 4k/(n eps^2)).  Against the population
    parameter, over fresh data and the protocol's randomness.
    """
    return 4 * sigma1_sq / n + (2 * sigma2_sq - 4 * sigma1_sq) / (k * n) + 2 * noise_var / (k * n)


def predicted_mse_two_sample(s10: float, s01: float, s2: float, m: int, k: int, noise_var: float) -> float:
    """The two-sample analogue with k rounds of m matched (positive, negative) pairs, m = P = N:

    (s10 + s01)/m + (s2 - s10 - s01)/(k m) + noise_var/(k m).  Same counting
    as Thm. 5: a pair shares its positive with k - 1 other pairs and its
    negative with k - 1 others.  For the RR release s2 is the tie-coin bit's
    variance theta (1 - theta).
    """
    return (s10 + s01) / m + (s2 - s10 - s01) / (k * m) + noise_var / (k * m)


def noise_variance(kernel: str, epsilon: float, k: int) -> float:
    """Per-pair variance the release adds, in [0, 1] kernel units (RR: q(1-q)/(1-2q)^2 after debiasing)."""
    noise = pair_noise(kernel, epsilon, k)
    if kernel.startswith("auc"):
        q = noise.flip
        return q * (1 - q) / (1 - 2 * q) ** 2
    return noise.variance / noise.sensitivity**2  # the kernel's integer units per 1.0
