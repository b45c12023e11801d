"""The Python API's metrics beyond the AUC, from the same oblivious sort: average precision, the ROC and PR curves,
the whole report, and DeLong's test of two models, in scikit-learn's conventions (docs/api.md, "More metrics from
the same sort").  The options are the planner's (mpc_auc.planner); the rows go through mpc_auc.rows.
"""
import time

import numpy as np

from .context import Context
from .labels import binary_labels
from .planner import execute, plan
from .protocols.clear_metrics import paired_test
from .protocols.errors import InputError
from .protocols.metric_catalogue import REPORT
from .protocols.mpc.exact import secured
from .report import CURVES, CurveResult, DelongTestResult, MetricResult, Report
from .rows import evaluation_rows, run_rows


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
        The AP (to 2^-32): a float, with attributes.

    See Also
    --------
    evaluate : AP with every other metric, from one sort.

    Examples
    --------
    >>> print(average_precision_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], protocol="clear"))
    0.8333333333333333
    """
    return _single("ap", y_true, y_score, clients, pos_label, protocol, sample_weight, context)


def roc_curve(y_true, y_score, *, clients=None, pos_label=None, points: int = 100, protocol: str = "mpc-exact",
              epsilon: float = None, sample_weight=None, context: Context = None) -> CurveResult:
    """The ROC curve at ``points`` public cuts of the ranking, as ``fpr, tpr, thresholds`` (scikit-learn's order).

    With the top ceil(k M / points) scores flagged, k = 1..points, the FPR and TPR (a tie group a cut falls in
    counted in proportion: scikit-learn's curve, interpolated linearly in the rows flagged).  The scores and
    thresholds stay secret (``thresholds`` is NaN); the cuts are public (``flagged``), and with them the points
    reveal the class counts.
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
    CurveResult
        ``(fpr, tpr, thresholds)`` from (0, 0) (threshold ``inf``, no row flagged) through the cuts; the other
        thresholds NaN (secret); ``flagged``: the public cuts, 0 first.

    See Also
    --------
    precision_recall_curve : the same cuts' precision and recall.

    Examples
    --------
    >>> fpr, tpr, thresholds = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], points=4, protocol="clear")
    >>> fpr.tolist(), tpr.tolist()
    ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0])
    """
    return _single("roc", y_true, y_score, clients, pos_label, protocol, sample_weight, context, points, epsilon)


def precision_recall_curve(y_true, y_score, *, clients=None, pos_label=None, points: int = 100,
                           protocol: str = "mpc-exact", epsilon: float = None, sample_weight=None,
                           context: Context = None) -> CurveResult:
    """The precision-recall curve at the cuts of :func:`roc_curve` (exact, or the DP curve with
    ``protocol="mpc-central"``), as ``precision, recall, thresholds`` (scikit-learn's order).

    Parameters
    ----------
    y_true, y_score, clients, pos_label, points, protocol, epsilon, sample_weight, context
        As in :func:`roc_curve`.

    Returns
    -------
    CurveResult
        ``(precision, recall, thresholds)`` by decreasing recall, the cuts' points and then scikit-learn's end,
        precision 1 at recall 0; thresholds (one fewer) all NaN (secret); ``flagged``: the public cuts, 0 last.

    See Also
    --------
    roc_curve : the same cuts' FPR and TPR.

    Examples
    --------
    >>> precision, recall, _ = precision_recall_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], points=2,
    ...                                               protocol="clear")
    >>> precision.tolist(), recall.tolist()
    ([0.5, 0.5, 1.0], [1.0, 0.5, 0.0])
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
        ``value``: metric -> value; ``revealed`` lists each opened value; as a float, the AUC.

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
    outcome, evalset, groups = run_rows(request, binary_labels(y_true, pos_label), y_score, clients, sample_weight)
    revealed = getattr(outcome.release, "revealed", ())
    return Report({"auc": outcome.auc, **outcome.metrics}, protocol, evalset.m, len(groups), tuple(revealed),
                  getattr(outcome.release, "traffic", None), time.perf_counter() - start, secured(outcome.release))


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
        A float, AUC_a - AUC_b (``value``), that unpacks as ``statistic, pvalue`` (z and its two-sided p-value, as
        scipy's tests); ``aucs``, ``covariance``.

    See Also
    --------
    roc_auc_score : one model's AUC and DeLong interval.

    Examples
    --------
    >>> test = delong_test([0, 0, 1, 1, 0, 1], [.1, .4, .35, .8, .2, .9], [.3, .2, .6, .7, .1, .5], protocol="clear")
    >>> statistic, pvalue = test
    >>> round(test, 4), round(statistic, 4), round(pvalue, 4)
    (-0.1111, -0.7071, 0.4795)
    """
    start = time.perf_counter()
    a, b = np.asarray(score_a), np.asarray(score_b)
    if a.ndim != 1 or b.shape != a.shape or len(a) != len(np.asarray(y_true)):
        raise InputError(f"score_a and score_b must be one score per row of y_true: shapes {a.shape} and {b.shape} "
                         f"for {np.shape(y_true)[0] if np.ndim(y_true) else 0} labels")
    request = plan(protocol=protocol, context=context, metrics=("auc", "ci"))
    labels = binary_labels(y_true, pos_label, greater=pos_label is None)
    evalset, groups, data = evaluation_rows(labels, a, clients, request.encoder)
    evaluation_rows(labels, b, clients, request.encoder)  # the second column's checks
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
            epsilon=None):
    """One metric of :func:`evaluate` as a MetricResult, or a curve as a CurveResult (the AUC is opened with it)."""
    report = evaluate(y_true, y_score, clients=clients, metrics=(metric,), points=points, pos_label=pos_label,
                      protocol=protocol, epsilon=epsilon, sample_weight=sample_weight, context=context)
    found, shape = report[metric], (protocol, report.m, report.clients)
    if metric in CURVES:
        first, second, _ = CURVES[metric]
        first, second, flagged = _scikit_learns_ends(metric, found[first], found[second], found["flagged"])
        return CurveResult(first, second, metric, *shape, flagged, report.revealed, report.traffic, report.wall_s,
                           report.security)
    return MetricResult(float(found), metric, *shape, report.revealed, report.traffic, report.wall_s,
                        report.security)


def _scikit_learns_ends(metric: str, first, second, flagged) -> tuple:
    """A curve's points at the cuts (fewest rows flagged first) in scikit-learn's order with its ends: ROC from
    (0, 0), no row flagged; PR by decreasing recall to precision 1, recall 0 (public: nothing is opened for them)."""
    if metric == "roc":
        return np.r_[0.0, first], np.r_[0.0, second], np.r_[0, flagged]
    return np.r_[first[::-1], 1.0], np.r_[second[::-1], 0.0], np.r_[flagged[::-1], 0]
