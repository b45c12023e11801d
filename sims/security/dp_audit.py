"""Empirical DP audits: a high-confidence lower bound on a mechanism's epsilon from its outputs.

A mechanism is (eps, delta)-DP only if every test T separating its output on
neighbouring data sets D and D' obeys TPR <= e^eps FPR + delta (and the same
with D and D' swapped).  The audit draws n outputs on each of a worst-case
pair (D, D') under the mechanism's stated neighbour relation, reduces each
output to one number (the log-likelihood ratio an auditor who knows D and D'
would compute, or the released value itself), chooses a threshold test on
the first half of the draws and evaluates it on the second half, with
Clopper-Pearson intervals (each side at confidence 1 - alpha/2):

    eps_lb = ln((TPR_lb - delta) / FPR_ub),

the largest over the two directions.  eps_lb exceeds the true epsilon with
probability at most alpha, so a claim is flagged when eps_lb > claimed
epsilon + margin (Jagielski et al. 2020, "Auditing differentially private
machine learning"; Nasr et al. 2021, "Adversary instantiation").

The scores are rounded to DECIMALS decimals first.  Unrounded, the audit
finds the floating-point leak of continuous Laplace noise added to a value
(Mironov 2012): 1.0 + n and 0.0 + n land on different float grids, and
score-dp's and dpauc's simulated releases then show eps_lb of 3-7 at a
claimed 1.  That leak is real for those plain-DP baselines as sampled here
(docs/security-evaluation.md); mpc-central releases integers with discrete
Laplace noise and has no such leak.  Rounding makes the audit measure each
mechanism as it is specified.
"""
import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import beta

from .false_alarms import CHECK_ALPHA

CANDIDATES = 64  # thresholds tried on the first half (quantiles of the pooled scores)
DECIMALS = 9  # scores are rounded: the audit measures the mechanism as stated, not float artefacts (docstring)


def clopper_pearson(successes: int, trials: int, alpha: float) -> tuple:
    """Exact two-sided (1 - alpha) interval for a binomial proportion."""
    lo = 0.0 if successes == 0 else float(beta.ppf(alpha / 2, successes, trials - successes + 1))
    hi = 1.0 if successes == trials else float(beta.ppf(1 - alpha / 2, successes + 1, trials - successes))
    return lo, hi


@dataclass(frozen=True)
class AuditResult:
    epsilon_lb: float  # 0 when no test separates the two sides
    threshold: float
    direction: str  # which side the test accepts: "D" (score >= t means D) or "D'"
    tpr: float  # on the held-out half
    fpr: float
    draws: int  # per side

    def as_dict(self) -> dict:
        return {"epsilon_lb": self.epsilon_lb, "threshold": self.threshold, "direction": self.direction,
                "tpr_holdout": self.tpr, "fpr_holdout": self.fpr, "draws_per_side": self.draws}


def _bound(hits: int, false: int, n: int, delta: float, alpha: float) -> float:
    tpr_lb = clopper_pearson(hits, n, alpha)[0]
    fpr_ub = clopper_pearson(false, n, alpha)[1]
    return max(0.0, math.log((tpr_lb - delta) / fpr_ub)) if tpr_lb > delta and fpr_ub > 0 else 0.0


def epsilon_lower_bound(on_d, on_d2, delta: float = 0.0, alpha: float = CHECK_ALPHA) -> AuditResult:
    """eps_lb from scalar outputs on D and on D' (module docstring); high scores should point to D.  alpha: the
    suite's per-check false-alarm rate (sims.security.false_alarms)."""
    on_d, on_d2 = (np.round(np.asarray(x, dtype=np.float64), DECIMALS) for x in (on_d, on_d2))
    n = min(len(on_d), len(on_d2)) // 2
    if n < 10:
        raise ValueError("an audit needs at least 20 draws per side")
    choose = (on_d[:n], on_d2[:n])
    held = (on_d[n:2 * n], on_d2[n:2 * n])
    pooled = np.concatenate(choose)
    best = (-1.0, 0.0, "D")
    for t in np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, CANDIDATES + 1))):
        for direction, (pos, neg) in (("D", choose), ("D'", choose[::-1])):
            sign = 1 if direction == "D" else -1  # "D'": low scores point to D'
            hits, false = int(np.sum(sign * pos >= sign * t)), int(np.sum(sign * neg >= sign * t))
            value = _bound(hits, false, n, delta, alpha)
            if value > best[0]:
                best = (value, float(t), direction)
    _, t, direction = best
    pos, neg = held if direction == "D" else held[::-1]
    sign = 1 if direction == "D" else -1
    hits, false = int(np.sum(sign * pos >= sign * t)), int(np.sum(sign * neg >= sign * t))
    return AuditResult(_bound(hits, false, n, delta, alpha), t, direction, hits / n, false / n, n)


def laplace_llr(x, mu_d, mu_d2, scale):
    """Log-likelihood ratio ln p_D(x) / p_D'(x) of Laplace noise of ``scale`` around mu_d or mu_d2 (summed
    over the last axis when several released values are tested together)."""
    x = np.asarray(x, dtype=np.float64)
    return np.sum(_per_scale(np.abs(x - mu_d2) - np.abs(x - mu_d), scale), axis=-1)


def _per_scale(numerator, scale):
    """numerator / scale, 0 where the scale is 0 (a noiseless coordinate equal on both sides)."""
    scale = np.broadcast_to(np.asarray(scale, dtype=np.float64), numerator.shape)
    return np.divide(numerator, scale, out=np.zeros_like(numerator), where=scale > 0)


def gaussian_llr(x, mu_d, mu_d2, sigma):
    """ln p_D(x) / p_D'(x) for Gaussian noise of std ``sigma`` (summed over the last axis)."""
    x = np.asarray(x, dtype=np.float64)
    return np.sum(_per_scale((x - mu_d2) ** 2 - (x - mu_d) ** 2, 2 * np.asarray(sigma, dtype=np.float64) ** 2),
                  axis=-1)
