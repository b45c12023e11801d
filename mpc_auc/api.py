"""The Python API: the AUC of scores and labels spread over clients, in scikit-learn's conventions.

Works from a notebook and from a plain script with no ``if __name__ == "__main__"`` guard: the role
processes never re-run the caller's script (protocols.runtime.session).  Every input is checked before any
process starts; a problem raises :class:`InputError` (a ``ValueError``) naming it.
"""
import time
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .csv_io import Columns, ReadLimits, read_score_columns
from .dataset import EvalSet
from .labels import binary_labels, one_vs_rest
from .context import Context
from .planner import Plan, auc_plan, execute, plan, ustat_epsilon
from .protocols.dp.central_law import SWAMPED
from .protocols.dp.grid import FIELDS, grid
from .protocols.clear_metrics import paired_test
from .protocols.dp.suite import MECHANISMS
from .protocols.errors import InputError
from .protocols.inputs.encoding import FINITE
from .protocols.inputs.weights import check_weights, rounding_error
from .protocols.metric_catalogue import REPORT
from .protocols.refused import Refused
from .protocols.ustat.two_party import Sample, ustat_2pc
from .protocols.validation import PARAMETERS, checked
from .report import DelongTestResult, MetricResult, Report

@dataclass(frozen=True, repr=False)
class AucResult:
    """One AUC and how it was obtained.

    Attributes
    ----------
    auc : float
        The released AUC (mpc-exact: floor(AUC * 2^52) / 2^52; mpc-central: the noisy release).
    protocol : str
        ``"mpc-exact"``, ``"mpc-central"`` or ``"clear"``.
    m, clients : int
        The public shape: rows and clients.
    epsilon, delta : float or None
        The release's privacy (mpc-central: delta is the noise circuit's); None for exact releases.
    std : float or None
        mpc-exact and clear (``ci=True``): DeLong's standard error sqrt(S10/P + S01/N), computed inside the MPC;
        mpc-central: the standard deviation of the release around the AUC (its noise and rounding).
    ci : tuple of float or None
        mpc-exact and clear: DeLong's 95% Wald interval auc +- z_0.975 std (as pROC's DeLong default, not
        clipped); mpc-central: the 95% interval auc +- 1.96 std, clipped to [0, 1].  None when not asked for,
        or when a class has fewer than two rows.
    per_class : dict or None
        ``multi_class="ovr"``: each class's one-vs-rest AUC (each opened).
    ranks : numpy.ndarray or None
        From :func:`global_ranks`: each row's global mid-rank, 1-based and ties averaged, as
        ``scipy.stats.rankdata(y_score)``; each client learns only its own rows' ranks.
    traffic : dict
        Bytes, rounds and peak memory per role.
    wall_s : float
        Seconds from the call to the result.
    budget_remaining : float or None
        mpc-central with a ``budget``: the epsilon the parties' ledgers have left for this data.
    swamped : bool
        mpc-central: the noise swamps the release, its 95% interval being wider than half the AUC's range
        (a ``UserWarning`` says so too; the same rule as ``u_statistic``'s); ``auc`` is clamped to [0, 1]
        in any case (post-processing of the release).
    weight_error : float or None
        mpc-exact with ``sample_weight``: the most that rounding the weights to the MPC's integer units can have
        moved ``auc`` (0.0 when every weight is a multiple of the unit; docs/protocols/mpc-exact.md,
        "Weighted AUC").

    See Also
    --------
    roc_auc_score, global_ranks : what returns one.

    Examples
    --------
    >>> result = roc_auc_score([0, 0, 1, 1, 0, 1], [.1, .4, .35, .8, .2, .9], protocol="clear")
    >>> result
    AucResult(auc=0.888889, protocol='clear', m=6, clients=1, ci=(0.5809, 1.1969), wall_s=...)
    >>> round(result.std, 4), result.epsilon is None
    (0.1571, True)
    """
    auc: float
    protocol: str
    m: int
    clients: int
    epsilon: float = None
    delta: float = None
    std: float = None
    ci: tuple = None
    ranks: np.ndarray = None
    traffic: dict = None
    wall_s: float = 0.0
    budget_remaining: float = None
    swamped: bool = False
    per_class: dict = None
    weight_error: float = None

    def __repr__(self) -> str:
        privacy = f", epsilon={self.epsilon:g}" if self.epsilon else ""
        privacy += f", ci=({self.ci[0]:.4f}, {self.ci[1]:.4f})" if self.ci else ""
        return (f"AucResult(auc={self.auc:.6f}, protocol={self.protocol!r}, m={self.m}, clients={self.clients}"
                f"{privacy}, wall_s={self.wall_s:.1f})")


def roc_auc_score(y_true, y_score, *, clients=None, protocol: str = "mpc-exact", epsilon: float = None, ci="auto",
                  multi_class: str = "raise", average: str = "macro", labels=None, sample_weight=None, max_fpr=None,
                  context: Context = None) -> AucResult:
    """The ROC AUC of ``y_score`` against ``y_true``, computed without any party seeing the others' rows.

    The scores are ranked obliviously by two compute parties with a separate dealer (mpc-exact,
    mpc-central); the AUC is the rank-sum (Mann-Whitney) statistic of the vFL rank-sum paper
    (fedauc eq. 1 with mid-ranks), AUC = (sum of positives' mid-ranks - P(P+1)/2) / (P N).

    Parameters
    ----------
    y_true : array-like of shape (M,)
        Labels of any two values (the greater is the positive class, as scikit-learn), or of three or more
        classes with ``multi_class="ovr"``.
    y_score : array-like of shape (M,) or (M, classes)
        Scores, finite and inside ``context.score_range``; one column per class for ``multi_class="ovr"``.
    clients : array-like of shape (M,), optional
        The client holding each row (ids: letters, digits, ``._-``); default: one client.  With mpc-central each
        client id names an owner of its rows, whose spend the parties' ledgers keep across evaluations (without
        ``clients``, only the rows as a multiset are charged).
    protocol : {"mpc-exact", "mpc-central", "clear"}
        mpc-exact opens the exact AUC; mpc-central one noisy release (label DP, or record DP with
        ``context.neighbours="record"``) at ``epsilon``; clear computes in this process (no privacy).
    epsilon : float, optional
        Required by mpc-central, refused by the others.
    ci : {"auto", True, False}
        mpc-exact and clear: also compute DeLong's variance inside the MPC and return ``std`` and ``ci``; the
        parties then open the variance too.  It is computed for at most 2^20 rows: "auto" skips it beyond (with
        a UserWarning), and for the partial, weighted or one-vs-rest AUC; True refuses such a set.
    multi_class : {"raise", "ovr"}
        ``"ovr"``: one-vs-rest AUC of each class (one sort per class), averaged by ``average``.
    average : {"macro", "weighted"}
        ``multi_class="ovr"``: the plain mean of the classes' AUCs, or weighted by each class's share of the
        rows (which the caller holds in ``y_true``).
    labels : array-like, optional
        ``multi_class="ovr"``: the class of each score column; default: the sorted classes of ``y_true``.
    sample_weight : array-like of shape (M,), optional
        Non-negative weights: the weighted AUC, as scikit-learn's (mpc-exact and clear; the AUC alone).  Each
        weight enters the MPC as an integer number of units of 2^-q, q chosen so that all rows hold at most 2^30
        units: exact for weights that are multiples of 2^-q, else within the bound of docs/protocols/mpc-exact.md,
        "Weighted AUC" (``weight_error``).
    max_fpr : float, optional
        The standardised partial AUC up to this FPR (McClish 1989, as scikit-learn), computed inside the MPC
        (mpc-exact and clear, at most 2^20 rows; the parties open the partial area, to 2^-40, instead of the
        AUC).  1 or None: the full AUC.
    context : Context, optional
        Where the roles run, the scores' range and type, the privacy unit and budget, the AUC's decimals
        (:class:`Context`; default ``Context()``: roles spawned on this machine, scores in [0, 1]).

    Returns
    -------
    AucResult

    Raises
    ------
    InputError
        A bad input, named: lengths, NaN or out-of-range scores, labels other than 0/1, one class
        missing, a bad client id, epsilon missing or <= 0, an option the protocol does not take.  The
        options are checked by the same planner as the command line's (mpc_auc.planner), with the same words.

    See Also
    --------
    evaluate : every metric from one sort.
    global_ranks : each row's global rank, with the AUC.
    sklearn.metrics.roc_auc_score : the same value, in the clear.

    Examples
    --------
    >>> y, s = [0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]
    >>> roc_auc_score(y, s, protocol="clear").auc
    0.75
    >>> roc_auc_score([0, 1, 2, 2], np.eye(4, 3)[[0, 1, 2, 2]], multi_class="ovr", protocol="clear").auc
    1.0
    """
    start = time.perf_counter()
    request = auc_plan(protocol=protocol, epsilon=epsilon, ci=ci, multi_class=multi_class, average=average,
                       columns=np.ndim(y_score), max_fpr=max_fpr, weighted=sample_weight is not None, context=context)
    if multi_class == "ovr":
        return _multiclass_roc_auc(request, y_true, y_score, clients, average, labels, sample_weight, start)
    return _binary_roc_auc(request, binary_labels(y_true, greater=True), y_score, clients, sample_weight, start)


def global_ranks(y_true, y_score, *, clients=None, context: Context = None) -> AucResult:
    """Each row's global mid-rank among all clients' scores, with the exact AUC, by mpc-exact.

    The two compute parties rank the scores obliviously, as for :func:`roc_auc_score`, and each client learns
    only its own rows' ranks (sealed to it by both parties); here every client is simulated in this process,
    so the caller gets them all.  The ranks are fedauc's global ranks (the vFL rank-sum paper, fedauc eq. 1),
    delivered 1-based with ties averaged.

    Parameters
    ----------
    y_true : array-like of shape (M,)
        Labels of any two values (the greater is the positive class).
    y_score : array-like of shape (M,)
        Scores, finite and inside ``context.score_range``.
    clients : array-like of shape (M,), optional
        The client holding each row; default: one client.
    context : Context, optional
        Where the roles run, the scores' range and type (:class:`Context`; default ``Context()``).

    Returns
    -------
    AucResult
        ``ranks``: 1-based mid-ranks with ties averaged, as ``scipy.stats.rankdata(y_score)``; ``auc``: the
        exact AUC, opened with them.

    Raises
    ------
    InputError
        A bad input, named, as :func:`roc_auc_score`'s; a ``context.budget`` (an exact release takes none).

    See Also
    --------
    roc_auc_score : the AUC alone.
    Evaluation.open : ``ranks=True``: each client of a deployed evaluation gets its rows' ranks.

    Examples
    --------
    >>> result = global_ranks([0, 1, 1], [0.2, 0.2, 0.9])  # three role processes, a few seconds
    >>> result.ranks
    array([1.5, 1.5, 3. ])
    >>> result.auc
    0.75
    """
    start = time.perf_counter()
    request = plan(protocol="mpc-exact", ranks=True, context=context)
    return _binary_roc_auc(request, binary_labels(y_true, greater=True), y_score, clients, None, start)


def _binary_roc_auc(request: Plan, labels, y_score, clients, sample_weight, start: float) -> AucResult:
    """The AUC (or the partial AUC, or with ranks) of two classes, as the planned protocol releases it."""
    outcome, evalset, groups = _run(request, labels, y_score, clients, sample_weight)
    found = outcome.auc
    if request.spec.max_fpr is not None:
        if isinstance(outcome.metrics["pauc"], Refused):
            raise InputError(outcome.metrics["pauc"].reason)
        found = outcome.metrics["pauc"]["mcclish"]
    common = dict(auc=found, protocol=request.protocol, m=evalset.m, clients=len(groups),
                  wall_s=time.perf_counter() - start)
    delong = (outcome.metrics or {}).get("ci")
    interval = dict(std=delong["std"], ci=delong["ci"]) if isinstance(delong, dict) else {}
    if request.protocol == "clear":
        return AucResult(**interval, **common)
    if request.protocol == "mpc-central":
        release = outcome.release
        if outcome.swamped:
            warnings.warn(SWAMPED.format(std=outcome.std, epsilon=request.noise.epsilon), UserWarning, stacklevel=3)
        return AucResult(epsilon=request.noise.epsilon, delta=release.delta, std=outcome.std, ci=outcome.ci,
                         swamped=outcome.swamped, traffic=release.traffic,
                         budget_remaining=(release.ledger or {}).get("remaining_epsilon"), **common)
    result = outcome.release
    ranks = None
    if request.ranks:
        ranks = np.empty(evalset.m)
        for name, rows in groups:
            ranks[rows] = result.ranks[name]
    return AucResult(ranks=ranks, traffic=result.traffic, weight_error=_weight_error(sample_weight), **interval,
                     **common)


def _multiclass_roc_auc(request: Plan, y_true, y_score, clients, average: str, labels, sample_weight,
                        start: float) -> AucResult:
    """The one-vs-rest AUC: each class's exact (weighted) AUC, one job each, averaged as scikit-learn's ovr
    (``average="weighted"``: by each class's share of the rows, or of the weight)."""
    per_class, shares, traffic = {}, {}, {}
    for name, hits, column in one_vs_rest(y_true, y_score, labels):
        outcome, evalset, groups = _run(request, hits, column, clients, sample_weight)
        per_class[name] = outcome.auc
        shares[name] = hits.mean() if sample_weight is None else np.average(hits, weights=sample_weight)
        traffic[str(name)] = getattr(outcome.release, "traffic", None)
    weights = np.array([shares[c] for c in per_class]) if average == "weighted" else None
    exact = request.protocol == "clear"
    return AucResult(float(np.average(list(per_class.values()), weights=weights)), request.protocol, evalset.m,
                     len(groups), traffic=traffic, wall_s=time.perf_counter() - start, per_class=per_class,
                     weight_error=None if exact else _weight_error(sample_weight))


def average_precision_score(y_true, y_score, *, clients=None, pos_label=None, protocol: str = "mpc-exact",
                            sample_weight=None, context: Context = None) -> MetricResult:
    """Average precision as scikit-learn's ``average_precision_score`` (every row of a tie group counted at its
    group's threshold), computed inside the MPC from the same oblivious sort as the AUC; only AP is opened.

    Parameters
    ----------
    y_true, y_score, clients, protocol, context
        As in :func:`roc_auc_score`.
    pos_label : optional
        The positive class (default 1, for labels {0, 1} or {-1, 1}).
    sample_weight : None
        Refused: AP is unweighted here (scikit-learn's parameter, named so that passing one says so).

    Returns
    -------
    MetricResult
        ``value``: the AP (to 2^-32).

    See Also
    --------
    evaluate : AP with every other metric, from one sort.

    Examples
    --------
    >>> average_precision_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], protocol="clear").value
    0.8333333333333333
    """
    return _single("ap", y_true, y_score, clients, pos_label, protocol, sample_weight, context)


def roc_curve(y_true, y_score, *, clients=None, pos_label=None, points: int = 100, protocol: str = "mpc-exact",
              epsilon: float = None, sample_weight=None, context: Context = None) -> MetricResult:
    """The ROC curve at ``points`` public cuts of the ranking.

    With the top ceil(k M / points) scores flagged, k = 1..points, the FPR and TPR (a tie group a cut falls in
    counted in proportion: scikit-learn's curve, interpolated linearly in the rows flagged).  The scores and
    thresholds stay secret; the cuts are public, and with them the points reveal the class counts.
    ``protocol="mpc-central"`` with ``epsilon``: the DP curve instead (label DP: the positives between the cuts
    released by the binary tree mechanism with noise drawn inside the MPC, ties split by row order;
    docs/protocols/mpc-central.md, "The DP curve").

    Parameters
    ----------
    y_true, y_score, clients, pos_label, protocol, epsilon, sample_weight, context
        As in :func:`average_precision_score` and :func:`roc_auc_score`.
    points : int
        The number of cuts (1 to 10^4).

    Returns
    -------
    MetricResult
        ``value``: (fpr, tpr); ``flagged``: the cuts.

    See Also
    --------
    precision_recall_curve : the same cuts' precision and recall.

    Examples
    --------
    >>> fpr, tpr = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], points=4, protocol="clear").value
    >>> fpr.tolist(), tpr.tolist()
    ([0.0, 0.5, 0.5, 1.0], [0.5, 0.5, 1.0, 1.0])
    """
    return _single("roc", y_true, y_score, clients, pos_label, protocol, sample_weight, context, points, epsilon)


def precision_recall_curve(y_true, y_score, *, clients=None, pos_label=None, points: int = 100,
                           protocol: str = "mpc-exact", epsilon: float = None, sample_weight=None,
                           context: Context = None) -> MetricResult:
    """The precision-recall curve at the cuts of :func:`roc_curve` (exact, or the DP curve with
    ``protocol="mpc-central"``).

    Parameters
    ----------
    y_true, y_score, clients, pos_label, points, protocol, epsilon, sample_weight, context
        As in :func:`roc_curve`.

    Returns
    -------
    MetricResult
        ``value``: (precision, recall); ``flagged``: the cuts.

    See Also
    --------
    roc_curve : the same cuts' FPR and TPR.

    Examples
    --------
    >>> precision, recall = precision_recall_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], points=2,
    ...                                            protocol="clear").value
    >>> precision.tolist(), recall.tolist()
    ([0.5, 0.5], [0.5, 1.0])
    """
    return _single("pr", y_true, y_score, clients, pos_label, protocol, sample_weight, context, points, epsilon)


def evaluate(y_true, y_score, *, clients=None, metrics=REPORT, points: int = 100, pos_label=None,
             protocol: str = "mpc-exact", epsilon: float = None, max_fpr: float = None, sample_weight=None,
             context: Context = None) -> Report:
    """Every requested metric from one oblivious sort of the scores (as ``mpc-auc run --metrics``).

    Parameters
    ----------
    y_true, y_score, clients, pos_label, protocol, epsilon, context
        As in :func:`roc_auc_score` and :func:`average_precision_score`.
    metrics : str or sequence of str
        From auc, ci (DeLong), ap, roc, pr (at ``points`` cuts), ks and, with ``max_fpr``, pauc ("all": the
        first six); with ``protocol="mpc-central"``, auc alone or roc and pr as the DP curve.
    points : int
        The curves' cuts.
    max_fpr : float, optional
        The partial AUC's FPR (adds pauc).
    sample_weight : array-like, optional
        The weighted AUC, with ``metrics="auc"`` only.

    Returns
    -------
    Report
        ``value``: metric -> value; ``revealed`` lists each opened value.

    See Also
    --------
    roc_auc_score, average_precision_score, roc_curve : one metric each.

    Examples
    --------
    >>> report = evaluate([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], metrics="auc,ap,ks", protocol="clear")
    >>> report["auc"], report["ks"]
    (0.75, 0.5)
    """
    start = time.perf_counter()
    request = plan(protocol=protocol, epsilon=epsilon, context=context, metrics=metrics, points=points,
                   max_fpr=max_fpr, weighted=sample_weight is not None)
    outcome, evalset, groups = _run(request, binary_labels(y_true, pos_label), y_score, clients, sample_weight)
    revealed = getattr(outcome.release, "revealed", ())
    return Report({"auc": outcome.auc, **outcome.metrics}, protocol, evalset.m, len(groups), tuple(revealed),
                  getattr(outcome.release, "traffic", None), time.perf_counter() - start)


def delong_test(y_true, score_a, score_b, *, clients=None, pos_label=None, protocol: str = "mpc-exact",
                context: Context = None) -> DelongTestResult:
    """DeLong's test of two models scored on the same rows: both AUCs, DeLong's covariance matrix, z and the
    two-sided p-value [DeLong1988], without any party seeing a score or a label.

    Each client submits both score columns of its rows together; each column is sorted obliviously, each
    row's placement values of both sorts go back to input order inside the MPC, and only the two AUCs, the
    two variances and their covariance are opened (z and p follow here).

    Parameters
    ----------
    y_true, clients, pos_label, protocol, context
        As in :func:`average_precision_score`.
    score_a, score_b : array-like of shape (M,)
        The two models' scores, row for row with ``y_true``.

    Returns
    -------
    DelongTestResult
        ``value``: AUC_a - AUC_b; ``aucs``, ``covariance``, ``z``, ``p_value``.

    See Also
    --------
    roc_auc_score : one model's AUC and DeLong interval.

    Examples
    --------
    >>> test = delong_test([0, 0, 1, 1, 0, 1], [.1, .4, .35, .8, .2, .9], [.3, .2, .6, .7, .1, .5], protocol="clear")
    >>> round(test.value, 4), round(test.p_value, 4)
    (-0.1111, 0.4795)
    """
    start = time.perf_counter()
    a, b = np.asarray(score_a), np.asarray(score_b)
    if a.ndim != 1 or b.shape != a.shape or len(a) != len(np.asarray(y_true)):
        raise InputError(f"score_a and score_b must be one score per row of y_true: shapes {a.shape} and {b.shape} "
                         f"for {np.shape(y_true)[0] if np.ndim(y_true) else 0} labels")
    request = plan(protocol=protocol, context=context, metrics=("auc", "ci"))
    labels = binary_labels(y_true, pos_label, greater=pos_label is None)
    evalset, groups, data = _evaluation(labels, a, clients, request.encoder)
    _evaluation(labels, b, clients, request.encoder)  # the second column's checks
    data = [(name, np.c_[column, b[rows]], y) for (name, column, y), (_, rows) in zip(data, groups)]
    outcome = execute(request, data)
    if (0, 1) not in (outcome.covariance or {}):
        raise InputError("DeLong's test needs two rows of each class")
    test = paired_test(outcome.auc, outcome.others[0]["auc"], outcome.metrics["ci"]["variance"],
                       outcome.others[0]["metrics"]["ci"]["variance"], outcome.covariance[(0, 1)])
    revealed = tuple(getattr(outcome.release, "revealed", ()))
    return DelongTestResult(test.difference, test.value, test.covariance, test.z, test.p_value, protocol, evalset.m,
                            len(groups), revealed, getattr(outcome.release, "traffic", None),
                            time.perf_counter() - start)


def _single(metric, y_true, y_score, clients, pos_label, protocol, sample_weight, context, points=100,
            epsilon=None) -> MetricResult:
    """One metric of :func:`evaluate` as a MetricResult (the AUC is opened with it)."""
    report = evaluate(y_true, y_score, clients=clients, metrics=(metric,), points=points, pos_label=pos_label,
                      protocol=protocol, epsilon=epsilon, sample_weight=sample_weight, context=context)
    found, flagged = report[metric], None
    if metric in ("roc", "pr"):
        flagged = np.asarray(found["flagged"])
        found = tuple(np.asarray(found[k]) for k in (("fpr", "tpr") if metric == "roc" else ("precision", "recall")))
    return MetricResult(found, metric, protocol, report.m, report.clients, flagged, report.revealed, report.traffic,
                        report.wall_s)


def _run(request: Plan, labels, y_score, clients, sample_weight) -> tuple:
    """Check the rows and run ``request`` on them: (the planner's Outcome, the evaluation set, its client groups).
    labels: 0/1; the client ids name the owners of their rows only when ``clients`` is given."""
    evalset, groups, data = _evaluation(labels, y_score, clients, request.encoder)
    weights = None
    if sample_weight is not None:
        weights = check_weights(sample_weight, evalset.m, lambda i: f"sample_weight[{i}]")
        weights = [weights[rows] for _, rows in groups]
    return execute(request, data, weights=weights, owners=clients is not None), evalset, groups


def _weight_error(sample_weight):
    """The rounding bound of the units the simulated clients send (protocols.inputs.weights); None unweighted."""
    return None if sample_weight is None else rounding_error(sample_weight)


def _evaluation(y_true, y_score, clients, encoder) -> tuple:
    """The checked evaluation set, its (client, rows) groups and the clients' (id, scores, labels); y_true: 0/1."""
    labels = np.asarray(y_true)
    scores = np.asarray(y_score)
    if scores.ndim != 1 or labels.ndim != 1:
        raise InputError("y_true and y_score must be one-dimensional")
    owners = np.full(len(scores), "c0") if clients is None else np.asarray(clients)
    evalset = EvalSet.build(owners, scores, labels, encoder)
    groups = evalset.client_rows()
    return evalset, groups, [(name, evalset.score[rows], evalset.label[rows]) for name, rows in groups]


def read_predictions(path, *, client_col: str = "client", score_col="score", label_col: str = "label",
                     id_col: str = None, weight_col: str = None, sep: str = None, positive_label=None,
                     limits=None) -> pd.DataFrame:
    """A prediction file as a DataFrame, read with the same reader, checks and messages as ``mpc-auc run``.

    CSV-like text with its separator sniffed, gzip or Parquet known by their bytes, other columns ignored,
    decimal commas refused by name; the first bad row is named by its line.

    Parameters
    ----------
    path : str or os.PathLike
        The prediction file.
    client_col, label_col : str
        The columns of each row's client and label.
    score_col : str or sequence of str
        The score column, or several (models scored on the same rows).
    id_col, weight_col : str, optional
        A column of row ids, and one of weights (for ``sample_weight``).
    sep : str, optional
        The separator, where several split the header into the named columns (default: sniffed).
    positive_label : optional
        The label of the positive class, for labels other than 0/1 (True, +1, yes...).
    limits : ReadLimits or dict, optional
        How much of the file is read: a :class:`mpc_auc.csv_io.ReadLimits` or a dict of its fields
        (``max_bytes``, ``max_rows``, ``max_columns``, ``max_line_bytes``; default ``ReadLimits()``, docs/api.md,
        "Reading limits"); a file past one is refused, naming it, before it is read.

    Returns
    -------
    pandas.DataFrame
        The columns ``client``, each score column under its own name, ``label`` (0/1) and, with ``id_col``,
        ``id``, with ``weight_col``, ``weight``.

    Raises
    ------
    InputError
        The file unreadable, a column missing, a bad row (named by its line), a reading limit passed.

    See Also
    --------
    roc_auc_score : the AUC of the rows read.

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "export.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("site;age;p_hat;outcome\\n"
    ...                 "north;40;0.1;0\\nnorth;51;0.4;0\\nsouth;62;0.35;1\\nsouth;38;0.8;1\\n")
    >>> rows = read_predictions(path, client_col="site", score_col="p_hat", label_col="outcome")
    >>> rows
      client  p_hat  label
    0  north   0.10      0
    1  north   0.40      0
    2  south   0.35      1
    3  south   0.80      1
    >>> roc_auc_score(rows.label, rows.p_hat, clients=rows.client, protocol="clear").auc
    0.75
    >>> folder.cleanup()
    """
    scores = (score_col,) if isinstance(score_col, str) else tuple(score_col)
    columns = Columns(client_col, scores, label_col, id_col, weight_col)
    evalset, values, ids, weights = read_score_columns(path, columns, FINITE, both_classes=False, sep=sep,
                                              positive_label=None if positive_label is None else str(positive_label),
                                              limits=ReadLimits.of(limits))
    frame = pd.DataFrame({"client": evalset.client, **dict(zip(scores, values.T)), "label": evalset.label})
    if ids is not None:
        frame["id"] = ids
    if weights is not None:
        frame["weight"] = weights
    return frame


def compare(y_true, y_score, clients=None, *, protocols=None, epsilons=(0.5, 1.0, 2.0, 4.0, 8.0), delta=1e-6,
            draws: int = 100, seed=None, context: Context = None):
    """The plain-DP AUC mechanisms side by side on these rows: one row per protocol and epsilon.

    Each mechanism of the papers (fedauc, dpauc, mindspore label DP, condensed LDP, and the law of
    mpc-central's release) is simulated ``draws`` times on the same clients' data; the error is
    against the exact rank-sum AUC.  The same table as ``mpc-auc compare``.

    Parameters
    ----------
    y_true, y_score, clients : array-like of shape (M,)
        As in :func:`roc_auc_score` (``clients`` default: one client).
    protocols : sequence of str, optional
        Mechanism names (``mpc-auc compare --help`` lists them); default: all.
    epsilons : sequence of float
        The epsilon grid (fedauc-vanilla, which is exact, is run once, with epsilon inf).
    delta : float
        delta of the (epsilon, delta) mechanisms.
    draws : int
        Noise draws per protocol and epsilon (>= 2).
    seed : int, optional
        Seed of the simulated noise (a simulation: not the MPC's CSPRNG); default: the OS CSPRNG.
    context : Context, optional
        Its ``score_range``: the public range of the scores; the mechanisms that perturb or bin score values see
        them mapped to [0, 1] (their sensitivity is the range's width).

    Returns
    -------
    pandas.DataFrame
        Columns protocol, epsilon, delta, mean, std, bias, rmse, rmse_lo, rmse_hi (95% bootstrap
        interval), draws, seconds, accounting, server_received.

    Raises
    ------
    InputError
        An unknown protocol, a bad epsilon, delta or draws, or bad rows (as :func:`roc_auc_score`'s).

    See Also
    --------
    roc_auc_score : ``protocol="mpc-central"``: one DP release over MPC, whose law the ``mpc-central`` row
        simulates.
    u_statistic : a U-statistic by ustat-2pc.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 200)
    >>> s = rng.random(200) * 0.5 + y * 0.3
    >>> table = compare(y, s, np.repeat(["a", "b"], 100), protocols=["fedauc-vanilla", "fedauc-rr"],
    ...                 epsilons=[1.0, 4.0], draws=10, seed=0)
    >>> table[["protocol", "epsilon", "draws"]]
             protocol  epsilon  draws
    0  fedauc-vanilla      inf     10
    1       fedauc-rr      1.0     10
    2       fedauc-rr      4.0     10
    >>> bool(table.rmse[0] == 0 and table.rmse[1] > table.rmse[2])  # exact; less noise at the larger epsilon
    True
    """
    protocols = list(MECHANISMS) if protocols is None else list(protocols)
    unknown = [p for p in protocols if p not in MECHANISMS]
    if unknown:
        raise InputError(f"unknown protocol(s) {', '.join(map(str, unknown))}; choose from {', '.join(MECHANISMS)}")
    epsilons = [checked("epsilon", e) for e in epsilons]
    checked("delta", delta, PARAMETERS["mechanism_delta"])
    encoder = plan(protocol="clear", context=context).encoder
    _, _, data = _evaluation(y_true, y_score, clients, encoder)
    rows, _ = grid(data, protocols, epsilons, delta, checked("draws", draws), seed, (encoder.lo, encoder.hi))
    return pd.DataFrame(rows, columns=list(FIELDS))


def u_statistic(values, *, kernel: str, epsilon: float, k: int = 1, labels=None, seed=None,
                timeout: float = 60.0):
    """A U-statistic of values held one per user, by ustat-2pc (ustats §5): sampled pairs, 2PC kernels.

    ``k`` random permutations pair the users (k pairs per user); each pair's kernel and its noise
    (randomized response at epsilon/k for the AUC, discrete Laplace of scale k/epsilon for Gini and
    Kendall) are computed in 2PC by two parties with a separate dealer, and the aggregator averages
    the released values (ustats Thm. 5: MSE 4 sigma1^2/n + ... + 4k/(n eps^2) for Laplace).

    Parameters
    ----------
    values : array-like
        ``(n,)`` values in [0, 1] (auc, auc-private, gini) or ``(n, 2)`` integer ratings (kendall).
    kernel : {"auc", "auc-private", "gini", "kendall"}
        auc: classes public, auc-private: labels private too.
    epsilon : float
        The privacy budget per user.
    k : int
        Pairs per user.
    labels : array-like of shape (n,), optional
        0/1 classes, for the AUC kernels.
    seed : int, optional
        Seed of the pair sampling only (the noise always comes from the parties' CSPRNG).
    timeout : float
        Seconds before a silent party counts as lost.

    Returns
    -------
    UstatRelease
        ``estimate``, ``std`` (standard error from the released values), ``swamped`` (True when the
        noise leaves the estimate uninformative), ``pairs``, ``effective_epsilon``, ``delta``,
        ``traffic``, ``wall_s``.

    Raises
    ------
    InputError
        An unknown kernel, values outside the kernel's domain, an AUC kernel without labels, a bad epsilon,
        k or timeout.

    See Also
    --------
    compare : the plain-DP AUC mechanisms, simulated side by side.
    roc_auc_score : the AUC of rows held by clients (``protocol="mpc-central"``: one DP release).

    Examples
    --------
    >>> release = u_statistic([0.1, 0.5, 0.9, 0.3], kernel="gini", epsilon=1.0)  # role processes, a second
    >>> release.kernel, release.pairs, release.effective_epsilon
    ('gini', 2, 1.0)
    """
    epsilon = ustat_epsilon(kernel, epsilon, labels is not None)
    sample = Sample(np.asarray(values), None if labels is None else np.asarray(labels))
    return ustat_2pc(kernel, [sample], epsilon, checked("k", k), seed=seed, timeout_s=checked("timeout", timeout))[0]

