"""One request planner for both front ends: the CLI (``mpc-auc run``, ``evaluation open``) and the Python API.

:func:`plan` turns a request's options (protocol, epsilon, budget, neighbours, score range and type,
method, ranks, decimals, metrics, ledger, deployment) into a checked :class:`Plan`, with every numeric option
judged by protocols.validation and every rule between options stated once here; :func:`execute` runs a
plan on the clients' rows and returns an :class:`Outcome`.  So ``mpc_auc.roc_auc_score(..., epsilon=0)``
and ``mpc-auc run --epsilon 0`` refuse with the same words, and return the same AUC on the same rows.
"""
import numbers
from dataclasses import dataclass

import numpy as np

from .protocols.clear_auc import rank_sum_auc, weighted_auc
from .protocols.clear_metrics import clear_delong_test, report
from .protocols.dp.central_law import NEIGHBOURS, CentralNoise, release_interval
from .protocols.dp.swamping import swamped
from .protocols.dp.curve_law import CurveNoise
from .protocols.errors import InputError
from .protocols.inputs.encoding import ScoreEncoder
from .protocols.inputs.weights import check_weights
from .protocols.metric_catalogue import DEFAULT_POINTS, cut_positions, metric_names
from .protocols.inputs.submission import Evaluation, Roster
from .protocols.mpc.central import mpc_central_auc, released
from .protocols.mpc.exact import exact_result, mpc_exact_auc
from .protocols.mpc.ranking_job import METHODS, JobRun, Request, run_ranking_jobs, score_columns
from .protocols.runtime.ledger import Budget
from .protocols.runtime.session import Placement
from .protocols.validation import checked

PROTOCOLS = ("mpc-exact", "mpc-central", "clear")
DTYPES = ("float64", "float32")


@dataclass(frozen=True)
class Plan:
    """A checked request: what to run, where, and what it may release."""
    protocol: str
    encoder: ScoreEncoder
    placement: Placement
    noise: object = None  # mpc-central's release: CentralNoise (the AUC) or CurveNoise (the DP curve)
    budget: Budget = None  # the evaluation set's budget the parties' ledgers enforce (mpc-central)
    method: str = "radix"
    ranks: bool = False  # mpc-exact: deliver each client its rows' global ranks
    decimals: int = None  # mpc-exact: open the AUC rounded to this many decimals
    timeout: float = 20.0
    dataset_id: str = None  # mpc-central: a declared ledger id (narrows the budget, never resets it)
    metrics: tuple = ("auc",)  # mpc-exact and clear: the metrics opened, from one sort (protocols.metric_catalogue)
    points: int = DEFAULT_POINTS  # the curves' cuts
    max_fpr: float = None  # pauc: where the partial AUC stops (read to 2^-40)


@dataclass(frozen=True)
class Outcome:
    """What one planned run released."""
    auc: float
    m: int
    clients: int
    std: float = None  # mpc-central: the release's std around the AUC
    ci: tuple = None  # mpc-central: auc +- 1.96 std within [0, 1]
    swamped: bool = False  # mpc-central: the noise swamps the release (protocols.dp.swamping)
    release: object = None  # the protocol's own result (MpcAucResult, CentralRelease), None for clear
    metrics: dict = None  # the metrics beyond the AUC (protocols.mpc.exact.opened_metrics' form)
    others: list = None  # several score columns: the later ones' {"auc", "metrics"}
    covariance: dict = None  # several score columns with ci: (i, j) -> DeLong's Cov(AUC_i, AUC_j)


def plan(*, protocol: str = "mpc-exact", epsilon=None, alpha=0.5, neighbours: str = "label", budget=None,
         score_range=(0.0, 1.0), score_dtype: str = "float64", method: str = "radix", ranks: bool = False,
         auc_decimals=None, deployment: str = None, key: str = None, ledger: str = None,
         host: str = "127.0.0.1", port=None, timeout=20.0, dataset_id: str = None, metrics=("auc",),
         points=DEFAULT_POINTS, max_fpr=None) -> Plan:
    """A checked :class:`Plan`, or InputError naming the first problem (the API and the CLI both ask here)."""
    if protocol not in PROTOCOLS:
        raise InputError(f"protocol must be one of {', '.join(PROTOCOLS)}; not {protocol!r}")
    metrics = metric_names(metrics)
    if max_fpr is not None and checked("max_fpr", max_fpr) < 1:
        metrics = metric_names(metrics + ("pauc",))
    elif "pauc" in metrics:
        raise InputError("the pauc metric needs max_fpr, the FPR the partial AUC stops at (0 < max_fpr < 1)")
    curve = protocol == "mpc-central" and bool({"roc", "pr"} & set(metrics))
    exact_only = [m for m in metrics if m not in ("auc", "roc", "pr")] if protocol == "mpc-central" else []
    if exact_only:
        raise InputError(f"metrics {', '.join(exact_only)} need protocol mpc-exact or clear; mpc-central releases "
                         "one noisy AUC, or with roc or pr the DP curve")
    noise = limit = None
    if protocol == "mpc-central":
        if epsilon is None:
            raise InputError("protocol mpc-central is differentially private: it needs epsilon")
        if neighbours not in NEIGHBOURS:
            raise InputError(f"neighbours must be one of {', '.join(NEIGHBOURS)}; not {neighbours!r}")
        noise = CurveNoise(checked("epsilon", epsilon), checked("points", points), neighbours=neighbours) if curve \
            else CentralNoise(checked("epsilon", epsilon), checked("alpha", alpha), neighbours)
        limit = parse_budget(budget) if budget is not None else None
    elif epsilon is not None or budget is not None:
        raise InputError(f"protocol {protocol} releases the exact AUC: it takes no epsilon and no budget")
    if (ranks or auc_decimals is not None) and protocol != "mpc-exact":
        raise InputError(f"ranks and auc_decimals need protocol mpc-exact, not {protocol}")
    if method not in METHODS:
        raise InputError(f"method must be one of {', '.join(METHODS)}; not {method!r}")
    if score_dtype not in DTYPES:
        raise InputError(f"score_dtype must be one of {', '.join(DTYPES)}; not {score_dtype!r}")
    if deployment and ledger:
        raise InputError("ledger is for local runs: deployed parties keep their own (mpc-auc party --ledger)")
    encoder = ScoreEncoder(*_numbers(score_range, "score_range", 2), score_dtype)
    placement = Placement.deployed(deployment, key) if deployment else \
        Placement(host=host, port=None if port is None else checked("port", port), ledger=ledger)
    return Plan(protocol, encoder, placement, noise, limit, method, bool(ranks),
                None if auc_decimals is None else checked("auc_decimals", auc_decimals), checked("timeout", timeout),
                dataset_id, metrics, checked("points", points), max_fpr if "pauc" in metrics else None)


def parse_budget(value) -> Budget:
    """A budget given as epsilon, (epsilon, delta), or the command line's ``EPS[,DELTA]``."""
    if isinstance(value, str):
        try:
            value = tuple(float(part) for part in value.split(","))
        except ValueError:
            raise InputError(f"budget must be EPS or EPS,DELTA (numbers), not {value!r}") from None
    return Budget(*_numbers(value, "budget", 1))


def execute(request: Plan, clients: list, on_progress=None, weights: list = None, owners: bool = True) -> Outcome:
    """Run ``request`` on ``clients`` ((id, scores, labels) each, checked); the same dispatch for every front end.
    weights: each client's sample weights, for the weighted AUC (mpc-exact or clear, the AUC alone); owners: the
    client ids name the owners of their rows (a DP release is charged to each: protocols.mpc.accounting), not
    placeholders."""
    m = sum(len(labels) for _, _, labels in clients)
    if score_columns(clients) > 1 and (request.protocol == "mpc-central" or request.ranks):
        raise InputError("several score columns (models compared on the same rows) need protocol mpc-exact or "
                         "clear, without ranks")
    if weights is not None and (request.protocol == "mpc-central" or request.ranks or request.metrics != ("auc",)):
        raise InputError("sample weights give the weighted AUC alone: protocol mpc-exact or clear, without ranks and "
                         f"other metrics (asked: {request.protocol}, {', '.join(request.metrics)}"
                         f"{', ranks' if request.ranks else ''})")
    if request.protocol == "clear":
        return _clear(request, clients, m, weights)
    if request.protocol == "mpc-central":
        declared = [request.dataset_id] if request.dataset_id else None
        release = mpc_central_auc([clients], request.noise, request.encoder, request.method, request.placement,
                                  request.timeout, on_progress, request.budget, declared, owners)[0]
        return central_outcome(release, request.noise)
    result = mpc_exact_auc([clients], request.encoder, method=request.method, ranks=request.ranks,
                           placement=request.placement, timeout_s=request.timeout, on_progress=on_progress,
                           decimals=request.decimals, metrics=request.metrics, points=request.points,
                           max_fpr=request.max_fpr, weights=None if weights is None else [weights])[0]
    return _exact_outcome(result)


def open_evaluation(request: Plan, evaluation_id: str, roster, deadline: float, on_progress=None,
                    **intake) -> Outcome:
    """Declare an evaluation whose clients submit from their own machines on the deployment ``request`` names,
    wait for the submissions and the parties' computation, and return what was released (the same for the
    command's ``evaluation open`` and the API's :class:`mpc_auc.Evaluation`).  roster: a Roster, or its files;
    intake: how the parties take the submissions in (protocols.inputs.submission.Evaluation's allow_missing,
    max_rows, max_total_rows, share_result, exclude_invalid), each checked there."""
    if request.placement.deployment is None:
        raise InputError("an evaluation whose clients submit directly needs a deployment (mpc-auc deploy init)")
    evaluation = Evaluation(evaluation_id, roster if isinstance(roster, Roster) else Roster.load(roster),
                            request.encoder, direct=True, deadline_s=deadline, decimals=request.decimals,
                            metrics=request.metrics, points=request.points, max_fpr=request.max_fpr, **intake)
    declared = (f"declared:{request.dataset_id}",) if request.dataset_id else ()
    (run,) = run_ranking_jobs([Request(evaluation, None, declared)], "TTP", request.method, request.ranks,
                              request.noise, request.placement, request.timeout, on_progress, request.budget)
    return _released(run, request.noise, request.method)


def shared_outcome(ticket, shared) -> Outcome:
    """The release both parties shared with a client (protocols.inputs.submitter.Outcome.shared, checked field by
    field across the parties), read as the organiser reads it: the same numbers."""
    out = {"clients": list(shared.clients), "rows": list(shared.rows), "missing": list(shared.missing),
           "excluded": list(shared.excluded),
           "check_s": 0.0, "ledger": None, **shared.opened}
    return _released(JobRun([out, out], ticket), shared.noise, shared.method)


def _released(run, noise, method: str) -> Outcome:
    if noise is not None:
        return central_outcome(released(run, noise), noise)
    return _exact_outcome(exact_result(run, "TTP", method))


def _exact_outcome(result) -> Outcome:
    """An mpc-exact result (protocols.mpc.exact.MpcAucResult) as the planner's Outcome."""
    return Outcome(result.auc, result.m, result.clients, release=result, metrics=result.metrics,
                   others=result.others, covariance=result.covariance)


def _clear(request: Plan, clients: list, m: int, weights: list = None) -> Outcome:
    """The same outputs computed here, in the clear (no privacy): every score column's AUC and metrics, and
    DeLong's covariances when several columns are asked for with ci; with weights, every column's weighted AUC."""
    labels = np.concatenate([y for _, _, y in clients])
    columns = np.concatenate([np.asarray(s, dtype=np.float64) for _, s, _ in clients]).reshape(m, -1).T
    if weights is not None:
        w = np.concatenate([check_weights(w, len(y)) for w, (_, _, y) in zip(weights, clients)])
        try:
            aucs = [weighted_auc(c, labels, w) for c in columns]
        except ValueError as err:
            raise InputError(str(err)) from None
        return Outcome(aucs[0], m, len(clients), metrics={}, others=[{"auc": a, "metrics": {}} for a in aucs[1:]])
    flagged = cut_positions(m, request.points).tolist()
    found = [(rank_sum_auc(c, labels), report(c, labels, request.metrics, flagged, request.max_fpr)) for c in columns]
    covariance = {}
    if len(columns) > 1 and all("variance" in r.get("ci", {}) for _, r in found):
        covariance = {(i, j): clear_delong_test(columns[i], columns[j], labels).covariance[0][1]
                      for i in range(len(columns)) for j in range(i + 1, len(columns))}
    return Outcome(found[0][0], m, len(clients), metrics=found[0][1],
                   others=[{"auc": a, "metrics": r} for a, r in found[1:]], covariance=covariance)


def central_outcome(release, noise) -> Outcome:
    """An mpc-central release (protocols.mpc.central.CentralRelease) with its interval and swamping flag; a DP
    curve (CurveRelease) with its ROC and PR points and the area under the noisy ROC as the AUC."""
    if isinstance(noise, CurveNoise):
        curve = release.curves[0]
        metrics = {"roc": {k: curve[k] for k in ("flagged", "fpr", "tpr")},
                   "pr": {k: curve[k] for k in ("flagged", "recall", "precision")}}
        return Outcome(curve["auc"], release.m, release.clients, release=release, metrics=metrics)
    std, ci = release_interval(release, noise)
    auc = release.aucs[0]
    return Outcome(auc, release.m, release.clients, std, ci, swamped(auc, std), release)


def _numbers(value, name: str, least: int) -> tuple:
    """A number or a pair of numbers as a tuple of floats (``least``: how many may be given at the fewest)."""
    values = (value,) if np.isscalar(value) else tuple(value)
    if not least <= len(values) <= 2 or not all(isinstance(v, numbers.Real) for v in values):
        raise InputError(f"{name} must be {'a number or ' if least == 1 else ''}a pair of numbers, not {value!r}")
    return tuple(float(v) for v in values)
