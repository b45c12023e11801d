"""mpc-central's mechanism and its privacy map: the noise laws, the aggregator's estimate and its std.

The release (protocols.mpc.central runs it inside the MPC) opens

    label DP (default):  2T + Z_T,  T = sum_i (r_i - (M-1)/2) y_i = U - P N / 2,  Delta(2T) = M - 1;
    record DP:           2U + Z_U,  Delta(2U) = 2 (M - 1);
    both:                P + Z_P,   Delta(P) = 1,

Z_T (or Z_U) discrete Laplace at alpha eps and Z_P at (1 - alpha) eps, so the release is
(eps, delta_T + delta_P)-DP by basic composition, delta from the circuit's truncation and rounding
(circuits.noise_laws).  This module holds no MPC: the plain-DP comparison (protocols.dp.suite) samples the
same law in the clear, and the parties' ledgers charge what :meth:`CentralNoise.release` states.
"""
import math
from dataclasses import dataclass

import numpy as np

from ...circuits.noise_laws import DiscreteLaplace
from ..errors import InputError
from ..runtime.ledger import Release
from .release_noise import ReleaseNoise
from ..validation import checked
from ..runtime import wire

NEIGHBOURS = ("label", "record")


@wire.message
@dataclass(frozen=True)
class CentralNoise(ReleaseNoise):
    """The central release's parameters; ``repetitions`` > 1 only for experiments (each is its own release).

    A boundary: built from the planner's, the sims' and (decoded) a peer's values, it checks its own."""
    epsilon: float
    alpha: float = 0.5
    neighbours: str = "label"
    repetitions: int = 1

    def __post_init__(self):
        checked("epsilon", self.epsilon)
        checked("alpha", self.alpha)
        if self.neighbours not in NEIGHBOURS:
            raise InputError(f"neighbours must be one of {NEIGHBOURS}, not {self.neighbours!r}")
        if self.repetitions < 1:
            raise InputError("repetitions must be at least 1")

    def statistic_noise(self, m: int) -> DiscreteLaplace:
        """Z_T (label: Delta = M - 1) or Z_U (record: Delta = 2(M - 1)) at alpha eps."""
        sensitivity = (m - 1) * (1 if self.neighbours == "label" else 2)
        return DiscreteLaplace(self.alpha * self.epsilon, max(1, sensitivity))

    def count_noise(self) -> DiscreteLaplace:
        return DiscreteLaplace((1 - self.alpha) * self.epsilon, 1)

    def delta(self, m: int) -> float:
        return self.statistic_noise(m).delta + self.count_noise().delta

    def delta_ceiling(self, m: int) -> float:
        """A bound of :meth:`delta` at every M up to ``m`` (circuits.noise_laws.DiscreteLaplace.delta_ceiling):
        what a ticket states before M is known."""
        return self.statistic_noise(m).delta_ceiling + self.count_noise().delta_ceiling

    def release(self, m: int):
        """What one job charges to the privacy ledger: its discrete Laplace terms and the circuits' delta."""
        stat, count = self.statistic_noise(m), self.count_noise()
        terms = ((stat.rate, stat.sensitivity), (count.rate, count.sensitivity)) * self.repetitions
        return Release("mpc-central", terms, self.delta(m) * self.repetitions)

    def drawn(self, m: int) -> str:
        return (f"alpha {self.alpha:g} of it, {self.alpha * self.epsilon:g}, on the rank statistic and "
                f"{(1 - self.alpha) * self.epsilon:g} on the class count")


def auc_from_release(twice_stat: int, noisy_p: int, m: int, neighbours: str) -> float:
    """The aggregator's AUC from the two opened values (P~ clamped to [1, M - 1]), clamped to [0, 1].

    Both clamps are post-processing of the DP release, so they cost no privacy; they bias the estimate
    towards the inside of [0, 1] only where the noise reaches past it (a release that
    protocols.dp.swamping.swamped flags: of a clamped AUC, its interval decides).
    """
    p = min(max(int(noisy_p), 1), m - 1)
    pn = p * (m - p)
    auc = 0.5 + twice_stat / (2 * pn) if neighbours == "label" else twice_stat / (2 * pn)
    return min(max(auc, 0.0), 1.0)


SWAMPED = ("the noise swamps the release (std {std:.3g} at epsilon {epsilon:g}: its 95% interval is wider than half "
           "the AUC's range): the value (clamped to [0, 1]) says next to nothing about the AUC; raise epsilon or "
           "use more rows")


def analytic_std(m: int, p: int, auc: float, noise: CentralNoise) -> float:
    """Delta-method std of the released AUC with the circuit's exact noise variances.

    label:  Var = Var(Z_T)/(2PN)^2 + ((AUC - 1/2)(N - P)/(PN))^2 Var(Z_P);
    record: Var = Var(Z_U)/(2PN)^2 + (AUC (N - P)/(PN))^2 Var(Z_P).
    """
    n = m - p
    centre = auc - 0.5 if noise.neighbours == "label" else auc
    var = (noise.statistic_noise(m).variance / (2 * p * n) ** 2
           + (centre * (n - p) / (p * n)) ** 2 * noise.count_noise().variance)
    return math.sqrt(var)


def release_std(auc: float, noisy_p: int, m: int, noise: CentralNoise) -> float:
    """The analytic std evaluated at the released values (post-processing: no exact P or AUC enters)."""
    p = min(max(int(noisy_p), 1), m - 1)
    return analytic_std(m, p, min(max(auc, 0.0), 1.0), noise)


def release_interval(release, noise: CentralNoise) -> tuple:
    """(std, (lo, hi)) of the first released AUC of ``release`` (protocols.mpc.central.CentralRelease):
    :func:`release_std` and auc +- 1.96 std within [0, 1]."""
    auc = release.aucs[0]
    std = release_std(auc, release.opened[0][1], release.m, noise)
    return std, (max(0.0, auc - 1.96 * std), min(1.0, auc + 1.96 * std))


def exact_statistic(twice_ranks: np.ndarray, labels: np.ndarray, neighbours: str) -> tuple:
    """(2T, P) (label neighbours) or (2U, P) (record): what the release adds its noise to, in the clear, from each
    row's doubled 0-based mid-rank (protocols.clear_auc.twice_mid_ranks) and label."""
    twice_ranks, labels = np.asarray(twice_ranks, dtype=np.int64), np.asarray(labels, dtype=np.int64)
    m, p = len(labels), int(labels.sum())
    if neighbours == "label":
        return int(((twice_ranks - (m - 1)) * labels).sum()), p
    return int((twice_ranks * labels).sum()) - p * (p - 1), p


def simulate_release(twice_ranks: np.ndarray, labels: np.ndarray, noise: CentralNoise, draws: int,
                     rng: np.random.Generator) -> np.ndarray:
    """``draws`` AUCs with the release law of the circuit (same discrete Laplace coins), sampled in the clear.

    For the plain-DP comparison (protocols.dp.suite); tests/protocols/mpc/test_central.py
    checks the MPC run against the same analytic std.
    """
    m = len(labels)
    stat, p = exact_statistic(twice_ranks, labels, noise.neighbours)
    noisy_stat = stat + noise.statistic_noise(m).sample(rng, draws)
    noisy_p = p + noise.count_noise().sample(rng, draws)
    return np.array([auc_from_release(int(s), int(c), m, noise.neighbours) for s, c in zip(noisy_stat, noisy_p)])
