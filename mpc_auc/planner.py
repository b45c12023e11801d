"""One request planner for both front ends: the CLI (``mpc-auc run``, ``evaluation open``) and the Python API.

:func:`plan` turns a request's options (protocol, epsilon, the release spec, ranks, weights) and the caller's
:class:`mpc_auc.context.Context` into a checked :class:`Plan`; every rule between options is stated once here
(each option's own domain is checked where it is made: the Context, protocols.release_spec.ReleaseSpec);
:func:`execute` runs a plan on the clients' rows and returns an :class:`Outcome`.  So
``mpc_auc.roc_auc_score(..., epsilon=0)`` and ``mpc-auc run --epsilon 0`` refuse with the same words, and return
the same AUC on the same rows.
"""
import dataclasses
import warnings
from dataclasses import dataclass

import numpy as np

from . import warm
from .context import Context
from .protocols.clear_auc import rank_sum_auc, weighted_auc
from .protocols.clear_metrics import INTERVALS, clear_delong_test, report
from .protocols.dp.central_law import CentralNoise, release_interval
from .protocols.dp.swamping import swamped
from .protocols.dp.curve_law import CurveNoise
from .protocols.dp.release_noise import ReleaseNoise
from .protocols.errors import InputError
from .protocols.inputs.encoding import ScoreEncoder
from .protocols.inputs.weights import check_weights
from .protocols.metric_catalogue import CI_MAX_ROWS, DEFAULT_POINTS, cut_positions, metric_names
from .protocols.inputs.submission import Declaration, Roster
from .protocols.mpc.central import CentralRelease, CurveRelease, mpc_central_auc, released
from .protocols.mpc.exact import MpcAucResult, exact_result, mpc_exact_auc
from .protocols.mpc.ranking_job import JobRun, Request, run_ranking_jobs, score_columns
from .protocols.release_spec import MALICIOUS_REFUSAL, ReleaseSpec
from .protocols.runtime.ledger import Budget
from .protocols.runtime.session import Placement
from .protocols.validation import checked

PROTOCOLS = ("mpc-exact", "mpc-central", "clear")


@dataclass(frozen=True)
class Plan:
    """A checked request: what to run, where, and what it may release."""
    protocol: str
    encoder: ScoreEncoder
    placement: Placement
    noise: ReleaseNoise = None  # mpc-central's release: the AUC's noise or the DP curve's
    budget: Budget = None  # the evaluation set's budget the parties' ledgers enforce (mpc-central)
    method: str = "radix"
    ranks: bool = False  # mpc-exact: deliver each client its rows' global ranks
    spec: ReleaseSpec = ReleaseSpec()  # mpc-exact and clear: what is opened from the one sort
    timeout: float = 60.0
    dataset_id: str = None  # mpc-central: a declared ledger id (narrows the budget, never resets it)
    optional: tuple = ()  # metrics left out (with a warning) where the rows are past their bound, not refused
    interval: str = "wald"  # DeLong's interval's kind (protocols.clear_metrics.delong_interval)


@dataclass(frozen=True)
class Outcome:
    """What one planned run released."""
    auc: float
    m: int
    clients: int
    std: float = None  # mpc-central: the release's std around the AUC
    ci: tuple = None  # mpc-central: auc +- 1.96 std within [0, 1]
    swamped: bool = False  # mpc-central: the noise swamps the release (protocols.dp.swamping)
    release: MpcAucResult | CentralRelease | CurveRelease = None  # the protocol's own result; None for clear
    metrics: dict = None  # the metrics beyond the AUC (protocols.mpc.exact.opened_metrics' form)
    others: list = None  # several score columns: the later ones' {"auc", "metrics"}
    covariance: dict = None  # several score columns with ci: (i, j) -> DeLong's Cov(AUC_i, AUC_j)


def plan(*, protocol: str = "mpc-exact", epsilon=None, context: Context = None, metrics=("auc",),
         points=DEFAULT_POINTS, max_fpr=None, ranks: bool = False, weighted: bool = False,
         optional: tuple = ()) -> Plan:
    """A checked :class:`Plan`, or InputError naming the first problem (the API and the CLI both ask here).
    ``optional``: metrics left out with a warning, instead of refused, when the rows are past their bound."""
    context = context or Context()
    if protocol not in PROTOCOLS:
        raise InputError(f"protocol must be one of {', '.join(PROTOCOLS)}; not {protocol!r}")
    if protocol != "mpc-central" and (epsilon is not None or context.budget is not None):
        raise InputError(f"protocol {protocol} releases the exact AUC: it takes no epsilon and no budget")
    if context.security == "malicious" and (protocol not in ("mpc-exact", "mpc-central") or weighted
                                            or context.method != "radix"):
        what = (f"protocol {protocol}" if protocol not in ("mpc-exact", "mpc-central") else "sample weights"
                if weighted else f"method {context.method}")
        raise InputError(MALICIOUS_REFUSAL.format(what=what))
    if context.security == "malicious":  # ci="auto" leaves DeLong's interval out (its sums cost up to 10 MAC keys)
        metrics = tuple(name for name in metric_names(metrics) if name not in optional)
    central = protocol == "mpc-central"  # its metrics only choose the noise (the AUC's, or the DP curve's)
    spec = ReleaseSpec(metrics, points, max_fpr, context.auc_decimals, "semi-honest" if central else context.security)
    noise = _noise(epsilon, context, spec) if central else None
    if central and context.security == "malicious":
        spec = ReleaseSpec(security=context.security)
    if (ranks or context.auc_decimals is not None) and protocol != "mpc-exact":
        raise InputError(f"ranks and auc_decimals need protocol mpc-exact, not {protocol}")
    if weighted and (protocol == "mpc-central" or ranks or not spec.auc_only):
        raise InputError("sample weights give the weighted AUC alone: protocol mpc-exact or clear, without ranks, "
                         f"DeLong's interval, max_fpr or other metrics (asked: {protocol}, {', '.join(spec.metrics)}"
                         f"{', ranks' if ranks else ''})")
    if context.deployment and context.ledger:
        raise InputError("ledger is for local runs: deployed parties keep their own (mpc-auc party --ledger)")
    placement = Placement.deployed(context.deployment, context.key) if context.deployment else \
        Placement(host=context.host, port=context.port, ledger=context.ledger)
    return Plan(protocol, ScoreEncoder(*context.score_range, context.score_dtype), placement, noise,
                context.budget if noise else None, context.method, bool(ranks), spec, context.timeout,
                context.dataset_id, tuple(optional))


def _noise(epsilon, context: Context, spec: ReleaseSpec) -> ReleaseNoise:
    """mpc-central's release noise: the DP curve's when roc or pr is asked for, else the AUC's."""
    exact_only = [m for m in spec.metrics if m not in ("auc", "roc", "pr")]
    if exact_only:
        raise InputError(f"metrics {', '.join(exact_only)} need protocol mpc-exact or clear; mpc-central releases "
                         "one noisy AUC, or with roc or pr the DP curve")
    if epsilon is None:
        raise InputError("protocol mpc-central is differentially private: it needs epsilon")
    if spec.curves:
        return CurveNoise(epsilon, spec.points, neighbours=context.neighbours)
    return CentralNoise(epsilon, context.alpha, context.neighbours)


def auc_plan(*, protocol: str, epsilon, ci, multi_class: str, average: str, columns: int, max_fpr,
             weighted: bool, context: Context) -> Plan:
    """The plan of :func:`mpc_auc.roc_auc_score`: its own options' rules (``ci``, ``multi_class``, ``average``;
    ``columns``: y_score's dimensions, 2 for one column per class) and then :func:`plan`'s.  DeLong's interval is
    asked for with ``ci`` (True or "wald": the Wald interval, "logit": the bounded one, "auto" the Wald one where
    it applies: not the partial, weighted or one-vs-rest AUC); a one-vs-rest plan opens each class's AUC alone, the
    API running it class by class."""
    if ci not in ("auto", True, False) + INTERVALS:
        raise InputError(f"ci must be 'auto', True, False, 'wald' or 'logit', not {ci!r}")
    if ci == "logit" and protocol == "mpc-central":
        raise InputError("ci='logit' bounds DeLong's interval of an exact AUC (mpc-exact, clear); mpc-central's "
                         "interval is its noise's, clipped to [0, 1]")
    if multi_class not in ("raise", "ovr"):
        raise InputError(f"multi_class must be 'raise' or 'ovr', not {multi_class!r} (one-vs-one is not supported)")
    if average not in ("macro", "weighted"):
        raise InputError(f"average must be 'macro' or 'weighted', not {average!r}")
    if columns == 2 and multi_class != "ovr":
        raise InputError("y_score has one column per class: pass multi_class='ovr' (as scikit-learn asks)")
    ovr = multi_class == "ovr"
    if ovr and protocol == "mpc-central":
        raise InputError("multi_class='ovr' opens one exact AUC per class: it takes no protocol mpc-central")
    partial = max_fpr is not None and checked("max_fpr", max_fpr) < 1
    if partial and ovr:
        raise InputError("max_fpr (the partial AUC) is for a binary AUC, not multi_class='ovr' (as scikit-learn)")
    asked = ci is True or ci in INTERVALS
    interval = (asked and weighted) or (bool(ci) and not (ovr or partial or weighted))  # weighted: refused
    metrics = ("auc", "ci") if interval and protocol != "mpc-central" else ("auc",)
    request = plan(protocol=protocol, epsilon=epsilon, context=context, metrics=metrics, max_fpr=max_fpr,
                   weighted=weighted, optional=("ci",) if ci == "auto" else ())
    return dataclasses.replace(request, interval=ci if ci in INTERVALS else "wald")


def ustat_epsilon(kernel: str, epsilon, labels_given: bool, security: str = "semi-honest") -> float:
    """The epsilon of a ustat-2pc request (:func:`mpc_auc.u_statistic`, ``mpc-auc ustat``), which is differentially
    private: it needs one; the AUC kernels need labels too; its kernels are not built on authenticated shares
    (``security`` "malicious" is refused).  protocols.ustat.two_party.ustat_2pc checks its value."""
    if ReleaseSpec(security=security).malicious:  # the spec checks the value
        raise InputError(MALICIOUS_REFUSAL.format(what="ustat-2pc"))
    if epsilon is None:
        raise InputError("ustat-2pc is differentially private: it needs epsilon")
    if kernel.startswith("auc") and not labels_given:
        raise InputError(f"kernel {kernel} needs labels")
    return epsilon


def execute(request: Plan, clients: list, on_progress=None, weights: list = None, owners: bool = True) -> Outcome:
    """Run ``request`` on ``clients`` ((id, scores, labels) each, checked); the same dispatch for every front end.
    weights: each client's sample weights, exactly when the plan is weighted; owners: the client ids name the
    owners of their rows (a DP release is charged to each: protocols.mpc.accounting), not placeholders."""
    request = _fitted(request, sum(len(labels) for _, _, labels in clients))
    if score_columns(clients) > 1 and (request.protocol == "mpc-central" or request.ranks):
        raise InputError("several score columns (models compared on the same rows) need protocol mpc-exact or "
                         "clear, without ranks")
    if request.protocol == "clear":
        return _clear(request, clients, weights)
    with warm.placement(request.placement, request.timeout) as placement:  # kept roles (mpc_auc.warm)
        if request.protocol == "mpc-central":
            declared = [request.dataset_id] if request.dataset_id else None
            release = mpc_central_auc([clients], request.noise, request.encoder, request.method, placement,
                                      request.timeout, on_progress, request.budget, declared, owners,
                                      request.spec.security)[0]
            return central_outcome(release, request.noise)
        result = mpc_exact_auc([clients], request.encoder, request.spec, request.method, request.ranks, placement,
                               request.timeout, on_progress, None if weights is None else [weights])[0]
    return _exact_outcome(result)


def _fitted(request: Plan, m: int) -> Plan:
    """``request`` for ``m`` rows: the metrics computed for at most CI_MAX_ROWS rows in the MPC's ring (ci, pauc)
    left out with a UserWarning when optional, else refused by mpc-exact (computed by clear)."""
    past = [name for name in request.spec.bounded if m > CI_MAX_ROWS]
    kept = [name for name in past if name not in request.optional]
    if kept and request.protocol == "mpc-exact":
        raise InputError(f"the {' and '.join(kept)} metric(s) are computed for at most {CI_MAX_ROWS} rows; this set "
                         f"has {m}")
    dropped = [name for name in past if name in request.optional]
    if not dropped:
        return request
    warnings.warn(f"DeLong's interval is computed for at most {CI_MAX_ROWS} rows; this set has {m}: std and ci are "
                  "left out (ci=False says so without the warning)", UserWarning, stacklevel=3)
    spec = dataclasses.replace(request.spec, metrics=tuple(n for n in request.spec.metrics if n not in dropped))
    return dataclasses.replace(request, spec=spec)


def open_evaluation(request: Plan, evaluation_id: str, roster, intake, on_progress=None) -> Outcome:
    """Declare an evaluation whose clients submit from their own machines on the deployment ``request`` names,
    wait for the submissions and the parties' computation, and return what was released (the same for the
    command's ``evaluation open`` and the API's :class:`mpc_auc.Evaluation`).  roster: a Roster, or its files;
    intake: how the parties take the submissions in (:class:`mpc_auc.context.Intake`), each field checked by
    protocols.inputs.submission.Declaration."""
    if request.placement.deployment is None:
        raise InputError("an evaluation whose clients submit directly needs a deployment (mpc-auc deploy init)")
    evaluation = Declaration(evaluation_id, roster if isinstance(roster, Roster) else Roster.load(roster),
                            request.encoder, direct=True, deadline_s=intake.deadline, spec=request.spec,
                            allow_missing=intake.allow_missing, max_rows=intake.max_rows,
                            max_total_rows=intake.max_total_rows, share_result=intake.share_result,
                            exclude_invalid=intake.exclude_invalid)
    declared = (f"declared:{request.dataset_id}",) if request.dataset_id else ()
    (run,) = run_ranking_jobs([Request(evaluation, None, declared)], request.method, request.ranks, request.noise,
                              request.placement, request.timeout, on_progress, request.budget)
    return _released(run, request.noise, request.method)


def shared_outcome(ticket, shared) -> Outcome:
    """The release both parties shared with a client (protocols.inputs.submitter.Submitted.shared, checked field by
    field across the parties), read as the organiser reads it: the same numbers."""
    out = {"clients": list(shared.clients), "rows": list(shared.rows), "missing": list(shared.missing),
           "excluded": list(shared.excluded),
           "check_s": 0.0, "ledger": None, **shared.opened}
    return _released(JobRun([out, out], ticket), shared.noise, shared.method)


def _released(run, noise, method: str) -> Outcome:
    if noise is not None:
        return central_outcome(released(run, noise), noise)
    return _exact_outcome(exact_result(run, method))


def _exact_outcome(result) -> Outcome:
    """An mpc-exact result (protocols.mpc.exact.MpcAucResult) as the planner's Outcome."""
    return Outcome(result.auc, result.m, result.clients, release=result, metrics=result.metrics,
                   others=result.others, covariance=result.covariance)


def _clear(request: Plan, clients: list, weights: list = None) -> Outcome:
    """The same outputs computed here, in the clear (no privacy): every score column's AUC and metrics, and
    DeLong's covariances when several columns are asked for with ci; with weights, every column's weighted AUC."""
    m = sum(len(y) for _, _, y in clients)
    labels = np.concatenate([y for _, _, y in clients])
    columns = np.concatenate([np.asarray(s, dtype=np.float64) for _, s, _ in clients]).reshape(m, -1).T
    if weights is not None:
        w = np.concatenate([check_weights(w, len(y)) for w, (_, _, y) in zip(weights, clients)])
        try:
            aucs = [weighted_auc(c, labels, w) for c in columns]
        except ValueError as err:
            raise InputError(str(err)) from None
        return Outcome(aucs[0], m, len(clients), metrics={}, others=[{"auc": a, "metrics": {}} for a in aucs[1:]])
    spec = request.spec
    flagged = cut_positions(m, spec.points).tolist()
    found = [(rank_sum_auc(c, labels), report(c, labels, spec.metrics, flagged, spec.max_fpr)) for c in columns]
    covariance = {}
    if len(columns) > 1 and all(isinstance(r.get("ci"), dict) for _, r in found):
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

