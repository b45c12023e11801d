"""mpc-central: the AUC of all clients' data with one discrete-Laplace draw added inside the MPC.

Scores and labels are secret-shared exactly as in mpc-exact; the oblivious
ranking (circuits.radix) and circuits.rank_auc give shares of 2U (twice the
Mann-Whitney count) and of P.  Instead of opening the AUC, the parties add
discrete Laplace noise drawn in the circuit (circuits.noise) and open only

    label DP (default):  2T + Z_T,  T = sum_i (r_i - (M-1)/2) y_i = U - P N / 2,
                         Delta(2T) = M - 1  (a label flip moves 2T by |2 r_k - (M-1)| <= M - 1);
    record DP:           2U + Z_U,  Delta(2U) = 2 (M - 1)  (replacing one record, score and label,
                         changes its own pair count by at most max(P, N) <= M - 1 and no other);
    both:                P + Z_P,   Delta(P) = 1,

Z_T (or Z_U) at alpha eps and Z_P at (1 - alpha) eps, so the release is
(eps, delta_T + delta_P)-DP by basic composition (delta from the circuit's
truncation and rounding, circuits.noise).  M is public.  The aggregator
then computes AUC = 1/2 + T~ / (P~ N~) (label) or U~ / (P~ N~) (record),
N~ = M - P~, with P~ clamped to [1, M - 1] (post-processing).  Label DP with
the centred statistic is the central form of fedauc's adaptive split with a
single client (u' = (M-1)/2 * 1, v' = r - u'): half the sensitivity of 2U.

Its std depends on M, P, N, eps (and the AUC itself), never on how the
rows are spread over clients (docs/protocols/mpc-central.md derives it).
"""
import hashlib
import math
from dataclasses import dataclass

import numpy as np

from ...circuits.noise_laws import DiscreteLaplace
from ..errors import InputError, PartyFailure
from ..dp.fedauc import check_epsilon
from ..dp.swamping import swamped as swamped_release

NEIGHBOURS = ("label", "record")


@dataclass(frozen=True)
class CentralNoise:
    """The central release's parameters; ``repetitions`` > 1 only for experiments (each is its own release)."""
    epsilon: float
    alpha: float = 0.5
    neighbours: str = "label"
    repetitions: int = 1

    def __post_init__(self):
        check_epsilon(self.epsilon)
        if not 0 < self.alpha < 1:
            raise InputError(f"alpha must lie in (0, 1), not {self.alpha}")
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

    def release(self, m: int):
        """What one job charges to the privacy ledger: its discrete Laplace terms and the circuits' delta."""
        from .ledger import Release

        stat, count = self.statistic_noise(m), self.count_noise()
        terms = ((stat.rate, stat.sensitivity), (count.rate, count.sensitivity)) * self.repetitions
        return Release("mpc-central", terms, self.delta(m) * self.repetitions)

    def check(self, m: int) -> None:
        """Raise InputError if the circuit cannot draw this noise for M = m (epsilon too small or too large)."""
        try:
            self.delta(m)
        except ValueError as err:
            raise InputError(str(err)) from None


def auc_from_release(twice_stat: int, noisy_p: int, m: int, neighbours: str) -> float:
    """The aggregator's AUC from the two opened values (P~ clamped to [1, M - 1]), clamped to [0, 1].

    Both clamps are post-processing of the DP release, so they cost no privacy; they bias the estimate
    towards the inside of [0, 1] only where the noise reaches past it (a release flagged :func:`swamped`).
    """
    p = min(max(int(noisy_p), 1), m - 1)
    pn = p * (m - p)
    auc = 0.5 + twice_stat / (2 * pn) if neighbours == "label" else twice_stat / (2 * pn)
    return min(max(auc, 0.0), 1.0)


SWAMPED = ("the noise swamps the release (std {std:.3g} at epsilon {epsilon:g}: its 95% interval is wider than half "
           "the AUC's range): the value (clamped to [0, 1]) says next to nothing about the AUC; raise epsilon or "
           "use more rows")


def swamped(auc: float, std: float) -> bool:
    """protocols.dp.swamping on the AUC's range [0, 1] (the released AUC is clamped: its interval decides)."""
    return swamped_release(auc, std)


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


def release_interval(release: "CentralRelease", noise: CentralNoise) -> tuple:
    """(std, (lo, hi)) of the first released AUC: :func:`release_std` and auc +- 1.96 std within [0, 1]."""
    auc = release.aucs[0]
    std = release_std(auc, release.opened[0][1], release.m, noise)
    return std, (max(0.0, auc - 1.96 * std), min(1.0, auc + 1.96 * std))


def simulate_release(twice_ranks: np.ndarray, labels: np.ndarray, noise: CentralNoise, draws: int,
                     rng: np.random.Generator) -> np.ndarray:
    """``draws`` AUCs with the release law of the circuit (same discrete Laplace coins), sampled in the clear.

    For the plain-DP comparison (protocols.dp.dp_suite); tests/test_mpc_central.py
    checks the MPC run against the same analytic std.
    """
    twice_ranks, labels = np.asarray(twice_ranks, dtype=np.int64), np.asarray(labels, dtype=np.int64)
    m, p = len(labels), int(labels.sum())
    if noise.neighbours == "label":
        stat = int(((twice_ranks - (m - 1)) * labels).sum())
    else:
        stat = int((twice_ranks * labels).sum()) - p * (p - 1)
    noisy_stat = stat + noise.statistic_noise(m).sample(rng, draws)
    noisy_p = p + noise.count_noise().sample(rng, draws)
    return np.array([auc_from_release(int(s), int(c), m, noise.neighbours) for s, c in zip(noisy_stat, noisy_p)])


def dataset_id(clients) -> str:
    """A stable id of an evaluation set for the ledgers: SHA-256 over its rows as a multiset of (score, label)
    pairs, so that no reordering of rows, renaming or regrouping of clients changes it."""
    scores = np.concatenate([np.asarray(s, dtype=np.float64) for _, s, _ in clients]) + 0.0  # -0.0 as 0.0
    labels = np.concatenate([np.asarray(y, dtype=np.int64) for _, _, y in clients])
    order = np.lexsort((labels, scores))
    digest = hashlib.sha256(np.ascontiguousarray(scores[order]).tobytes())
    digest.update(np.ascontiguousarray(labels[order]).tobytes())
    return "rows-sha256:" + digest.hexdigest()


@dataclass
class CentralRelease:
    aucs: list  # one AUC per repetition
    opened: list  # (2T~ or 2U~, P~) per repetition: all the aggregator and the parties see
    m: int
    clients: int
    epsilon: float
    delta: float
    neighbours: str
    wall_s: float
    traffic: dict
    ledger: dict = None  # what the parties' ledgers charged, spent and have left
    missing: list = None  # rostered clients left out (an evaluation allowing it)


def mpc_central_auc(datasets, noise: CentralNoise, encoder=None, method: str = "radix", placement=None,
                    timeout_s: float = 20.0, on_progress=None, budget=None, dataset_ids=None) -> list:
    """Run mpc-central on each dataset (a list of (client_id, scores, labels)); one CentralRelease each.

    Each release is first charged to both parties' privacy ledgers (protocols.mpc.ledger) under the
    dataset's rows (:func:`dataset_id`) and, if ``dataset_ids`` gives one per dataset, under that id too
    (a declared id narrows the budget, it cannot reset it), against ``budget`` (ledger.Budget or None:
    record only); a release the ledgers refuse raises InputError and nothing is computed.
    """
    from ..inputs.encoding import ScoreEncoder
    from .mpc_exact import run_ranking_jobs, simulated
    from ..runtime.session import LOCAL

    encoder = encoder or ScoreEncoder()
    for clients in datasets:  # before any process starts
        noise.check(sum(len(scores) for _, scores, _ in clients))
    declared = dataset_ids or [None] * len(datasets)
    requests = [simulated(clients, encoder, (dataset_id(clients),) + ((f"declared:{i}",) if i else ()))
                for clients, i in zip(datasets, declared)]
    return [central_release(run, noise) for run in run_ranking_jobs(
        requests, "TTP", method, False, noise, placement or LOCAL, timeout_s, on_progress, budget)]


def central_release(run, noise: CentralNoise) -> CentralRelease:
    """The release both parties opened in one job (mpc_exact.JobRun), checked to agree."""
    run.refused()
    (stat0, p0), (stat1, p1) = run.outs[0]["central"], run.outs[1]["central"]
    if not ((stat0 == stat1).all() and (p0 == p1).all()):
        raise PartyFailure("P1", "the parties opened different releases")
    m = run.m
    return CentralRelease(
        aucs=[auc_from_release(int(s), int(p), m, noise.neighbours) for s, p in zip(stat0, p0)],
        opened=list(zip(stat0.tolist(), p0.tolist())), m=m, clients=len(run.outs[0]["clients"]),
        epsilon=noise.epsilon, delta=noise.delta(m), neighbours=noise.neighbours, wall_s=run.wall_s,
        traffic=run.traffic(), ledger=run.outs[0]["ledger"], missing=run.outs[0]["missing"])
