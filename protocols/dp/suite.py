"""One interface over the plain-DP AUC mechanisms: the same data, budget and seed in; one record out.

``run_mechanism(name, clients, budget, draws, seed)`` runs a mechanism of
``MECHANISMS`` on the partitioned evaluation set (a list of (client id,
scores, labels)) and returns a ``MechanismRelease``: one AUC per noise draw, the
budget spent and how it is counted, and what the server received.  The
rank-based mechanisms take their ranks from the clear sort unless
``ranked`` is given (e.g. ``RankedClients.from_delivered`` after mpc-exact).
A mechanism's budget is checked by :func:`run_mechanism` alone: the mechanisms trust it.
"""
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import dpauc, fedauc, score_ldp
from . import central_law
from ..errors import InputError
from ..validation import PARAMETERS, checked


@dataclass(frozen=True)
class MechanismBudget:
    epsilon: float
    delta: float = 0.0


@dataclass
class MechanismRelease:
    protocol: str
    auc: np.ndarray  # one estimate per noise draw
    epsilon: float
    delta: float
    accounting: str
    server_received: str
    seconds: float


@dataclass(frozen=True)
class Mechanism:
    source: str
    accounting: str
    server_received: str
    run: Callable  # (ranked, counts, budget, draws, rng) -> AUC per draw
    needs_delta: bool = False
    uses_ranks: bool = True  # False: reads the clients' scores through per-threshold counts instead
    circuit_delta: Callable = None  # (budget, M) -> the delta its in-circuit noise spends (mpc-central)


THRESHOLDS = 100  # |Theta| for the dpauc mechanisms (the authors' recommended value)


def _k_ary_auc(ranked, epsilon, draws, rng):
    """Binary labels as two classes through k-ary RR, then the same noisy AUC and debias as fedauc-rr."""
    labels = fedauc.k_ary_randomized_response(ranked.label, 2, epsilon, draws, rng)
    return fedauc.debiased_auc(labels, ranked.rank, fedauc.flip_probability(epsilon))


def _central(ranked, counts, budget, draws, rng):
    noise = central_law.CentralNoise(budget.epsilon)
    return central_law.simulate_release(np.rint(2 * ranked.rank), ranked.label, noise, draws, rng)


def _fedauc(statistics):
    return lambda ranked, counts, budget, draws, rng: fedauc.statistics_auc(statistics(ranked, budget, draws, rng))


MECHANISMS = {
    "fedauc-vanilla": Mechanism(
        "fedauc §4.2, eq. 1", "none: exact local sums", "ranks to clients; exact localSum, localP, localN per client",
        lambda ranked, counts, budget, draws, rng: np.repeat(fedauc.vanilla(ranked).auc, draws)),
    "fedauc-rr": Mechanism(
        "fedauc §4, eqs. 2-4, 11", "eps-label-DP: randomized response on each label",
        "ranks to clients; localSum, localP, localN of flipped labels",
        lambda ranked, counts, budget, draws, rng: fedauc.randomized_response_auc(ranked, budget.epsilon, draws,
                                                                                   rng).auc),
    "label-rr-onehot": Mechanism(
        "mindspore-label-dp (one-hot, n = 2), debiased by fedauc eqs. 3-4, 11",
        "eps-label-DP: k-ary randomized response on each label",
        "ranks to clients; localSum, localP, localN of randomized labels",
        lambda ranked, counts, budget, draws, rng: _k_ary_auc(ranked, budget.epsilon, draws, rng)),
    "score-dp": Mechanism(
        "fedauc App. R, Table 9", "eps-LDP per score (Lap(1/eps), sensitivity 1); labels exact",
        "noisy scores of every sample; exact localSum, localP, localN",
        lambda ranked, counts, budget, draws, rng: score_ldp.score_laplace(
            counts.scores, ranked.label, budget.epsilon, draws, rng), uses_ranks=False),
    "score-cldp": Mechanism(
        "ldp-fed-cldp slides (exponential mechanism)", "alpha-CLDP per score, alpha = eps, d = |i - j| on 100 levels",
        "perturbed quantized scores of every sample; exact localSum, localP, localN",
        lambda ranked, counts, budget, draws, rng: score_ldp.score_cldp(
            counts.scores, ranked.label, budget.epsilon, draws, rng), uses_ranks=False),
    "fedauc-lap-local": Mechanism(
        "fedauc §5.2", "eps-label-DP: Lap(max rank / (eps/2)) on localSum, Lap(2/eps) on localP",
        "ranks to clients; noisy localSum, localP per client",
        _fedauc(lambda r, b, n, g: fedauc.laplace_statistics(r, b.epsilon, n, g, "local"))),
    "fedauc-lap-global": Mechanism(
        "fedauc App. N", "eps-label-DP: Lap((M-1) / (eps/2)) on localSum, Lap(2/eps) on localP",
        "ranks to clients; noisy localSum, localP per client",
        _fedauc(lambda r, b, n, g: fedauc.laplace_statistics(r, b.epsilon, n, g, "global"))),
    "fedauc-lap-adaptive": Mechanism(
        "fedauc §5.3", "eps-label-DP: orthogonal split, per-client beta in closed form",
        "ranks to clients; noisy localSum, localP per client",
        _fedauc(lambda r, b, n, g: fedauc.adaptive_statistics(r, b.epsilon, n, g))),
    "fedauc-gauss-local": Mechanism(
        "fedauc §5 (Gaussian)", "(eps, delta)-label-DP: analytic Gaussian, basic composition of two halves",
        "ranks to clients; noisy localSum, localP per client",
        _fedauc(lambda r, b, n, g: fedauc.gaussian_statistics(r, b.epsilon, b.delta, n, g, "local")), True),
    "fedauc-gauss-adaptive": Mechanism(
        "fedauc §5.3 (Gaussian)", "(eps, delta)-label-DP: analytic Gaussian on s1, s2; beta per client on a grid",
        "ranks to clients; noisy localSum, localP per client",
        _fedauc(lambda r, b, n, g: fedauc.adaptive_gaussian_statistics(r, b.epsilon, b.delta, n, g)), True),
    "dpauc-threshold": Mechanism(
        "dpauc §Methods", f"eps = 4 |Theta| eps' with |Theta| = {THRESHOLDS} (the paper's count)",
        f"noisy TP, FP, TN, FN per client at {THRESHOLDS} thresholds",
        lambda ranked, counts, budget, draws, rng: dpauc.threshold_laplace(counts, budget.epsilon, draws, rng),
        uses_ranks=False),
    "dpauc-rr": Mechanism(
        "dpauc (RR variant)", "eps-label-DP: randomized response on each label",
        f"clear scores; TP, FP, TN, FN of flipped labels at {THRESHOLDS} thresholds",
        lambda ranked, counts, budget, draws, rng: dpauc.threshold_rr(counts, budget.epsilon, draws, rng),
        uses_ranks=False),
    "dpauc-histogram": Mechanism(
        "ours, on dpauc's thresholds", "eps-label-DP: Lap(2/eps) once per score bin (l1 sensitivity 2)",
        f"noisy positive and negative counts per client in {THRESHOLDS + 1} score bins",
        lambda ranked, counts, budget, draws, rng: dpauc.histogram_statistics(counts, budget.epsilon, draws, rng),
        uses_ranks=False),
    "mpc-central": Mechanism(
        "ours (protocols/mpc/central.py), the law of its MPC release sampled in the clear",
        "(eps, delta)-label-DP: one discrete Laplace on 2T (Delta = M-1) at eps/2 and on P at eps/2; "
        "delta from the circuit's truncation and rounding",
        "nothing before the release; noisy 2T and P from the MPC (scores and labels secret-shared)",
        _central, circuit_delta=lambda budget, m: central_law.CentralNoise(budget.epsilon).delta(m)),
}


def run_mechanism(name: str, clients, budget: MechanismBudget, draws: int = 100, seed=None,
                  ranked: fedauc.RankedClients = None) -> MechanismRelease:
    """Run mechanism ``name`` ``draws`` times on the clients' data (see the module docstring).

    The mechanisms' boundary: the budget is checked here, once (protocols.dp.grid hands over the API's and the
    sims' grids); the mechanisms of protocols.dp.fedauc, dpauc, score_ldp and calibration trust it."""
    if name not in MECHANISMS:
        raise InputError(f"unknown protocol {name!r}; choose from {', '.join(MECHANISMS)}")
    mechanism = MECHANISMS[name]
    if name != "fedauc-vanilla":
        checked("epsilon", budget.epsilon)
    if mechanism.needs_delta:
        checked("delta", budget.delta, PARAMETERS["mechanism_delta"])
    ranked = ranked or fedauc.RankedClients.from_clear_scores(clients)
    counts = None
    if not mechanism.uses_ranks:
        scores = np.concatenate([np.asarray(s, dtype=np.float64) for _, s, _ in clients])
        counts = dpauc.confusion_counts(ranked.client, scores, ranked.label, dpauc.paper_thresholds(THRESHOLDS),
                                        ranked.clients)
    start = time.perf_counter()
    auc = mechanism.run(ranked, counts, budget, draws, fedauc.generator(seed))
    spent = (np.inf, 0.0) if name == "fedauc-vanilla" else (budget.epsilon, budget.delta if mechanism.needs_delta else 0.0)
    if mechanism.circuit_delta is not None:
        spent = (budget.epsilon, mechanism.circuit_delta(budget, len(ranked.label)))
    received = mechanism.server_received
    if mechanism.uses_ranks and mechanism.circuit_delta is None:
        received = f"{ranked.source}; {received}"
    return MechanismRelease(name, auc, *spent, mechanism.accounting, received, time.perf_counter() - start)
