"""The U-statistic baselines of ustats: all-pairs 2PC (§6) and the generic LDP protocol (§3, Alg. 1).

Both are simulated in the clear with the mechanisms' exact laws (the
paper simulates its 2PC primitive too); the data conventions and kernels
are those of protocols.ustat.two_party (AUC: two-sample, classes public;
Kendall on the [0, 1] scale, reported as tau = 2 theta - 1).

* **All pairs** (ustats §5-6): every pair computes h + Lap(1/eps0) in 2PC;
  a user lies in n - 1 pairs (AUC: in N or P pairs), so its privacy is the
  m-fold composition of eps0-DP Laplace releases, m its pair count.  eps0 is
  the largest of three valid accountings (:func:`per_pair_epsilon`): basic
  composition (eps0 = eps/m, delta 0), advanced composition (Dwork, Rothblum,
  Vadhan 2010: eps = sqrt(2 m ln(1/delta)) eps0 + m eps0 (e^eps0 - 1)) and
  dp-accounting's privacy-loss-distribution accountant for m Laplace
  mechanisms (tight up to its pessimistic discretization), whichever lets the
  least noise through; at m >= 10^3 and delta = 1e-6 that is the PLD, 1.2-1.3x
  the advanced eps0.  delta = 1e-6 (our choice: the paper's value is missing
  from our copy).  The mean of the n(n-1)/2 pairs' noises is drawn from a
  normal law with its exact variance 2/(eps0^2 pairs): at >= 10^4 pairs the
  Laplace sum is normal to within the CLT error, and the n^2 draws would not
  fit in memory.
* **Quantized LDP** (ustats §3, Alg. 1, App. A): each user rounds its
  value to one of t bins (the bin of x is floor(x t), t - 1 for x = 1) and
  sends t-ary randomized response: the true bin with probability
  1 - beta + beta/t, else uniform (beta = t/(t + e^eps - 1)).  The debiased
  one-hot e^ = (e - beta/t 1)/(1 - beta) gives the unbiased pair estimate
  e^_i' A e^_j, and the U-statistic of these, computed from the report
  counts in O(t^2).  A is the quantized kernel: the average kernel (App.
  A, eq. 15) with uniform mass inside a bin -- AUC: 1 above, 1/2 same bin;
  Gini: |c_a - c_b|, and 1/(3t) inside a bin.  Discrete data (Kendall
  ratings) skip the quantization: the domain is the set of distinct rows.
  t = round((n eps^2)^(1/3)) clipped to [2, 1024] unless given (our rule:
  it balances the O(1/t^2) quantization bias against the O(t/(n eps^2))
  randomization variance; the paper's constant is missing from our copy).
"""
import functools
import math

import numpy as np
from dp_accounting.pld import privacy_loss_distribution

from .two_party import Sample
from ..clear_auc import rank_sum_auc

ALL_PAIRS_DELTA = 1e-6


# --------------------------------------------------------- exact statistic

def complete_ustat(kernel: str, sample: Sample) -> float:
    """The U-statistic over all pairs (AUC over all positive/negative pairs), exactly."""
    v = np.asarray(sample.values)
    if kernel == "auc":
        return rank_sum_auc(v, sample.labels)
    n = len(v)
    if kernel == "gini":
        ordered = np.sort(v.astype(np.float64))
        return float(2 * (ordered * (2 * np.arange(n) - n + 1)).sum() / (n * (n - 1)))
    rows, counts = np.unique(v, axis=0, return_counts=True)  # kendall: tau over the distinct ratings
    s = np.sign(rows[:, None, 0] - rows[None, :, 0]) * np.sign(rows[:, None, 1] - rows[None, :, 1])
    return float(counts @ s @ counts / (n * (n - 1)))  # same-row pairs contribute sgn 0


# -------------------------------------------------------------- all pairs

def composition_epsilon(per_pair: float, pairs_per_user: int, delta: float) -> float:
    """Advanced composition: sqrt(2 m ln(1/delta)) e0 + m e0 (e^e0 - 1)."""
    m = pairs_per_user
    return math.sqrt(2 * m * math.log(1 / delta)) * per_pair + m * per_pair * math.expm1(per_pair)


def advanced_per_pair(epsilon: float, pairs_per_user: int, delta: float) -> float:
    """The eps0 whose advanced composition over ``pairs_per_user`` pairs is exactly ``epsilon`` (bisection)."""
    lo, hi = 0.0, epsilon
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if composition_epsilon(mid, pairs_per_user, delta) < epsilon else (lo, mid)
    return lo


def pld_epsilon(per_pair: float, pairs_per_user: int, delta: float) -> float:
    """dp-accounting's PLD bound on the epsilon of ``pairs_per_user`` Laplace(1/eps0) releases at ``delta``.

    The discretization (eps0/100 in privacy-loss units) is pessimistic, so the bound is valid; it
    changes the result by < 1e-6 relative against eps0/1000 at m = 10^4 and 2.5 * 10^5.
    """
    single = privacy_loss_distribution.from_laplace_mechanism(1 / per_pair, sensitivity=1,
                                                              value_discretization_interval=per_pair / 100)
    return single.self_compose(pairs_per_user).get_epsilon_for_delta(delta)


ACCOUNTANTS = ("basic", "advanced", "pld")


@functools.lru_cache(maxsize=256)
def per_pair_epsilon(epsilon: float, pairs_per_user: int, delta: float = ALL_PAIRS_DELTA,
                     accountants: tuple = ACCOUNTANTS) -> tuple:
    """(eps0, accounting): the largest per-pair epsilon that the ``accountants`` allow.

    The PLD value is found by bisection on log eps0 above the best closed form (8 halvings of a
    factor-2 bracket: within 0.3% below the accountant's exact inverse, never above it).
    """
    found = {"basic": epsilon / pairs_per_user}
    if "advanced" in accountants:
        found["advanced"] = advanced_per_pair(epsilon, pairs_per_user, delta)
    found = {name: value for name, value in found.items() if name in accountants}
    lo = max(found.values(), default=epsilon / pairs_per_user)
    if "pld" in accountants and pld_epsilon(lo, pairs_per_user, delta) <= epsilon:
        hi = 2 * lo
        while pld_epsilon(hi, pairs_per_user, delta) <= epsilon:
            lo, hi = hi, 2 * hi
        for _ in range(8):
            mid = math.sqrt(lo * hi)
            lo, hi = (mid, hi) if pld_epsilon(mid, pairs_per_user, delta) <= epsilon else (lo, mid)
        found["pld"] = lo
    best = max(found, key=found.get)
    return found[best], best


def all_pairs_variance(kernel: str, sample: Sample, epsilon: float, delta: float = ALL_PAIRS_DELTA,
                       accountants: tuple = ACCOUNTANTS) -> float:
    """The all-pairs release's variance (its MSE: the mean of every pair is exact), 2 scale^2 / (eps0^2 pairs)."""
    n = len(sample.values)
    if kernel == "auc":
        p = int(np.sum(sample.labels))
        pairs, per_user = p * (n - p), max(p, n - p)
    else:
        pairs, per_user = n * (n - 1) // 2, n - 1
    eps0, _ = per_pair_epsilon(float(epsilon), per_user, delta, tuple(accountants))
    scale = 2.0 if kernel == "kendall" else 1.0  # tau = 2 theta - 1 doubles the [0, 1] kernel's noise
    return scale**2 * 2.0 / (eps0**2 * pairs)


def all_pairs(kernel: str, sample: Sample, epsilon: float, rng: np.random.Generator,
              delta: float = ALL_PAIRS_DELTA, accountants: tuple = ACCOUNTANTS) -> float:
    """All-pairs 2PC with Laplace(1/eps0) per pair (kernel in [0, 1]; Kendall's range 2 on the tau scale);
    ``accountants=("advanced",)`` reproduces the paper's accounting."""
    variance = all_pairs_variance(kernel, sample, epsilon, delta, accountants)
    return complete_ustat(kernel, sample) + rng.normal(0.0, math.sqrt(variance))


# ------------------------------------------------------------ quantized LDP

def bins_rule(n: int, epsilon: float) -> int:
    return int(np.clip(round((n * epsilon**2) ** (1 / 3)), 2, 1024))


def quantized_kernel(kernel: str, t: int) -> np.ndarray:
    """A[a, b]: the average kernel over bins a, b of width 1/t (uniform mass within a bin)."""
    a, b = np.meshgrid(np.arange(t), np.arange(t), indexing="ij")
    if kernel == "auc":
        return (a > b) + 0.5 * (a == b)
    return np.where(a == b, 1.0 / (3 * t), np.abs(a - b) / t)  # gini: E|X - Y| for X, Y uniform in their bins


def k_ary_rr(codes: np.ndarray, t: int, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """t-ary randomized response: keep with prob 1 - beta, else uniform over all t (ustats eq. 9)."""
    beta = t / (t + math.expm1(epsilon))
    uniform = rng.random(len(codes)) < beta
    return np.where(uniform, rng.integers(0, t, size=len(codes)), codes)


def _debiased_sum(counts: np.ndarray, n: int, beta: float, t: int) -> np.ndarray:
    return (counts - n * beta / t) / (1 - beta)


def quantized_ldp(kernel: str, sample: Sample, epsilon: float, rng: np.random.Generator, t: int = None) -> float:
    """ustats Alg. 1: quantize, t-ary RR, and the U-statistic of the debiased kernel e^_i' A e^_j."""
    v = np.asarray(sample.values)
    if kernel == "kendall":
        domain, codes = np.unique(v, axis=0, return_inverse=True)
        codes = codes.ravel()
        t = len(domain)
        s = np.sign(domain[:, None, 0] - domain[None, :, 0]) * np.sign(domain[:, None, 1] - domain[None, :, 1])
        matrix = s.astype(np.float64)  # on the tau scale directly
    else:
        t = t or bins_rule(len(v), epsilon)
        codes = np.minimum((v * t).astype(np.int64), t - 1)
        matrix = quantized_kernel(kernel, t)
    beta = t / (t + math.expm1(epsilon))
    reports = k_ary_rr(codes, t, epsilon, rng)
    if kernel == "auc":
        y = np.asarray(sample.labels)
        pos = _debiased_sum(np.bincount(reports[y == 1], minlength=t), int(y.sum()), beta, t)
        neg = _debiased_sum(np.bincount(reports[y == 0], minlength=t), int((1 - y).sum()), beta, t)
        return float(pos @ matrix @ neg / (y.sum() * (1 - y).sum()))
    n = len(v)
    counts = np.bincount(reports, minlength=t)
    total = _debiased_sum(counts, n, beta, t)
    single = (np.eye(t) - beta / t) / (1 - beta)  # e^ of a report in each bin
    self_terms = counts @ np.einsum("ai,ij,aj->a", single, matrix, single)
    return float((total @ matrix @ total - self_terms) / (n * (n - 1)))
