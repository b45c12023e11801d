"""What the metric functions of the API return: frozen results whose ``.value`` is the metric, each usable as
scikit-learn's return value (docs/api.md, "Results are numbers").

:class:`MetricResult` holds one number (a float with attributes), :class:`CurveResult` a curve (a tuple that
unpacks as scikit-learn's curves), :class:`Report` every metric of one evaluation (``mpc_auc.evaluate``; a float:
its AUC), with what each opened value reveals and a strict-JSON form, :class:`DelongTestResult` DeLong's test (a
float, the AUCs' difference, that unpacks as scipy's test results).
"""
from dataclasses import dataclass, field

import numpy as np

from .results import strict
from .protocols.scalar import ScalarResult


@dataclass(frozen=True, eq=False, repr=False)
class MetricResult(ScalarResult):
    """One metric's number and how it was obtained: a ``float`` with attributes.

    Attributes
    ----------
    value : float
        The metric (average precision), also the result's own float value.
    metric : str
        Its name in the catalogue (``ap``).
    protocol : str
        ``"mpc-exact"`` or ``"clear"``.
    m, clients : int
        The public shape.
    revealed : tuple of str
        Every value the parties opened.
    traffic : dict or None
        Bytes, rounds and peak memory per role.
    wall_s : float
        Seconds from the call to the result.
    security : dict or None
        Under ``Context(security="malicious")``: {"mode", "statistical_bits", "checks"} (and mpc-exact's
        "positives"), as :class:`mpc_auc.AucResult`'s; None: semi-honest or clear.

    See Also
    --------
    mpc_auc.average_precision_score : what returns one.

    Examples
    --------
    >>> from mpc_auc import average_precision_score
    >>> ap = average_precision_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], protocol="clear")
    >>> ap
    MetricResult(ap=0.833333, protocol='clear', m=4, clients=1, wall_s=...)
    >>> f"{ap:.3f}", ap > 0.8
    ('0.833', True)
    """
    value: float
    metric: str
    protocol: str
    m: int
    clients: int
    revealed: tuple = ()
    traffic: dict = None
    wall_s: float = 0.0
    security: dict = None

    def __repr__(self) -> str:
        return (f"MetricResult({self.metric}={self.value:.6f}, protocol={self.protocol!r}, m={self.m}, "
                f"clients={self.clients}, wall_s={self.wall_s:.1f})")


CURVES = {"roc": ("fpr", "tpr", "thresholds"), "pr": ("precision", "recall", "thresholds")}


class CurveResult(tuple):
    """A curve at public cuts: the tuple ``(fpr, tpr, thresholds)`` (``roc_curve``) or ``(precision, recall,
    thresholds)`` (``precision_recall_curve``), which unpacks as scikit-learn's, with attributes.

    The points are in scikit-learn's order with its ends: an ROC curve from (0, 0) (no row flagged, threshold
    ``inf``) by increasing FPR; a PR curve by decreasing recall, ending at precision 1, recall 0 (no threshold,
    ``thresholds`` one shorter), so ``sklearn.metrics.auc(fpr, tpr)`` and ``auc(recall, precision)`` take them.
    ``thresholds`` is otherwise NaN: the score at a cut is a client's secret score, so none is released (a count
    in its place would be misread as a score; NaN cannot be).  What is public is the cut itself, ``flagged``: the
    point ``k`` flags the top ``flagged[k]`` scores (``mpc_auc.global_ranks`` tells each client which of its rows
    those are).

    Attributes
    ----------
    value : tuple of numpy.ndarray
        The three arrays (the tuple itself); also by name: ``fpr``, ``tpr`` or ``precision``, ``recall``, and
        ``thresholds``.
    flagged : numpy.ndarray
        The rows flagged at each point, a public grid.
    metric, protocol, m, clients, revealed, traffic, wall_s, security
        As in :class:`MetricResult` (``metric``: ``roc`` or ``pr``).

    See Also
    --------
    mpc_auc.roc_curve, mpc_auc.precision_recall_curve : what returns one.

    Examples
    --------
    >>> from mpc_auc import roc_curve
    >>> fpr, tpr, thresholds = curve = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], points=2, protocol="clear")
    >>> fpr.tolist(), tpr.tolist(), thresholds.tolist(), curve.flagged.tolist()
    ([0.0, 0.5, 1.0], [0.0, 0.5, 1.0], [inf, nan, nan], [0, 2, 4])
    >>> curve
    CurveResult(roc: 3 points, protocol='clear', m=4, clients=1)
    """

    def __new__(cls, first, second, metric: str, protocol: str, m: int, clients: int, flagged, revealed=(),
                traffic=None, wall_s: float = 0.0, security: dict = None):
        thresholds = np.full(len(flagged) - (metric == "pr"), np.nan)  # PR: one fewer, as scikit-learn's
        if metric == "roc":
            thresholds[0] = np.inf  # the (0, 0) start: no row flagged, as scikit-learn's
        curve = super().__new__(cls, (np.asarray(first), np.asarray(second), thresholds))
        curve.__dict__.update(metric=metric, protocol=protocol, m=m, clients=clients, flagged=np.asarray(flagged),
                              revealed=revealed, traffic=traffic, wall_s=wall_s, security=security)
        return curve

    @property
    def value(self) -> tuple:
        """The curve's three arrays."""
        return tuple(self)

    def __getattr__(self, name: str):
        names = CURVES.get(self.__dict__.get("metric"), ())
        if name not in names:
            raise AttributeError(f"{type(self).__name__} of {self.__dict__.get('metric')} has no attribute {name!r}")
        return self[names.index(name)]

    def __setattr__(self, name: str, value):
        raise AttributeError(f"a {type(self).__name__} is frozen: cannot set {name!r}")

    __delattr__ = __setattr__

    def __reduce__(self):
        return _rebuilt_curve, (self[0], self[1], dict(self.__dict__))

    def __repr__(self) -> str:
        return (f"CurveResult({self.metric}: {len(self.flagged)} points, protocol={self.protocol!r}, m={self.m}, "
                f"clients={self.clients})")


def _rebuilt_curve(first, second, state: dict) -> CurveResult:
    """A pickled or copied curve back."""
    return CurveResult(first, second, **state)


@dataclass(frozen=True, eq=False, repr=False)
class Report(ScalarResult):
    """Every metric of one evaluation, from one sort of the scores: a ``float`` (the AUC) with the metrics.

    A report holds several metrics, so its ``value`` is their dict; the report as a number is its AUC
    (``float(report)``, ``report.auc``; NaN where none was released).

    Attributes
    ----------
    auc : float
        ``value["auc"]``.
    value : dict
        Metric name -> value: ``auc`` a float; ``ci`` {"variance", "std", "ci"}; ``ap`` and ``ks`` floats;
        ``roc`` {"flagged", "fpr", "tpr"}; ``pr`` {"flagged", "recall", "precision"}; ``pauc`` {"max_fpr",
        "area", "mcclish"}.
        A metric the parties refuse to compute (DeLong's variance when a class has fewer than two rows, a
        bounded metric past its rows) is a :class:`mpc_auc.protocols.refused.Refused` value, whose ``reason``
        says why (``{"refused": reason}`` in JSON).
    protocol, m, clients, revealed, traffic, wall_s, security
        As in :class:`MetricResult`.

    See Also
    --------
    mpc_auc.evaluate : what returns one.
    mpc_auc.EvaluationResult : a deployed evaluation's, with the clients missing or excluded.

    Examples
    --------
    >>> from mpc_auc import evaluate
    >>> report = evaluate([0, 1, 1], [0.2, 0.3, 0.9], metrics="auc,ci", protocol="clear")
    >>> report
    Report(auc=1.000000, metrics=['auc', 'ci'], protocol='clear', m=3, clients=1)
    >>> report["ci"].reason
    "DeLong's variance needs two rows of each class"
    >>> report.auc, float(report), report > 0.5
    (1.0, 1.0, True)
    """
    value: dict
    protocol: str
    m: int
    clients: int
    revealed: tuple = ()
    traffic: dict = field(default=None)
    wall_s: float = 0.0
    security: dict = None

    @classmethod
    def _number(cls, value: dict) -> float:
        """A report's float: its AUC."""
        return super()._number(value.get("auc"))

    @property
    def auc(self) -> float:
        """The AUC (``value["auc"]``), as a float."""
        return float(self)

    def __getitem__(self, name: str):
        return self.value[name]

    def to_dict(self) -> dict:
        """The report as strict JSON data (no NaN or infinity: a value that is not finite becomes None).

        Returns
        -------
        dict
            ``metrics`` (each value as JSON data: arrays as lists, a refused metric as ``{"refused": reason}``),
            ``protocol``, ``m``, ``clients``, ``revealed``, ``traffic``, ``wall_s`` (and ``security`` under
            security with abort); ``json.dumps(..., allow_nan=False)`` takes it.

        See Also
        --------
        mpc_auc.results.read_strict_json : reads such a file back.

        Examples
        --------
        >>> from mpc_auc import evaluate
        >>> report = evaluate([0, 1, 1], [0.2, 0.3, 0.9], metrics="auc,ci", protocol="clear")
        >>> report.to_dict()["metrics"]
        {'auc': 1.0, 'ci': {'refused': "DeLong's variance needs two rows of each class"}}
        """
        return {"metrics": strict(self.value), "protocol": self.protocol, "m": self.m, "clients": self.clients,
                "revealed": list(self.revealed), "traffic": self.traffic, "wall_s": self.wall_s,
                **({"security": self.security} if self.security else {})}

    def __repr__(self) -> str:
        return (f"Report(auc={self.auc:.6f}, metrics={list(self.value)}, protocol={self.protocol!r}, "
                f"m={self.m}, clients={self.clients})")


@dataclass(frozen=True, eq=False, repr=False)
class DelongTestResult(ScalarResult):
    """DeLong's test of two models' AUCs on the same rows [DeLong1988]: a ``float`` (AUC_a - AUC_b) that unpacks
    as scipy's test results, ``statistic, pvalue = result``.

    Attributes
    ----------
    value : float
        AUC_a - AUC_b, also the result's own float value.
    aucs : tuple of float
        (AUC_a, AUC_b).
    covariance : tuple of tuple of float
        ((Var_a, Cov), (Cov, Var_b)), DeLong's.
    statistic, pvalue : float
        z = (AUC_a - AUC_b) / sqrt(Var_a + Var_b - 2 Cov) and its two-sided normal p-value (scipy's names).
    protocol, m, clients, revealed, traffic, wall_s
        As in :class:`MetricResult`.

    See Also
    --------
    mpc_auc.delong_test : what returns one.

    Examples
    --------
    >>> from mpc_auc import delong_test
    >>> test = delong_test([0, 0, 1, 1, 0, 1], [.1, .4, .35, .8, .2, .9], [.3, .2, .6, .7, .1, .5],
    ...                    protocol="clear")
    >>> test
    DelongTestResult(aucs=(0.888889, 1.000000), statistic=-0.7071, pvalue=0.4795, protocol='clear', m=6)
    >>> statistic, pvalue = test
    >>> round(pvalue, 4), round(test, 4)
    (0.4795, -0.1111)
    """
    value: float
    aucs: tuple
    covariance: tuple
    statistic: float
    pvalue: float
    protocol: str
    m: int
    clients: int
    revealed: tuple = ()
    traffic: dict = None
    wall_s: float = 0.0

    def __iter__(self):
        """``statistic, pvalue = result``, as scipy's test results unpack."""
        return iter((self.statistic, self.pvalue))

    def __repr__(self) -> str:
        return (f"DelongTestResult(aucs=({self.aucs[0]:.6f}, {self.aucs[1]:.6f}), statistic={self.statistic:.4f}, "
                f"pvalue={self.pvalue:.4g}, protocol={self.protocol!r}, m={self.m})")

