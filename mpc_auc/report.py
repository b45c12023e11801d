"""What the metric functions of the API return: frozen results whose ``.value`` is the metric.

:class:`MetricResult` holds one metric (a number, or a curve's two arrays); :class:`Report` every metric of one
evaluation (``mpc_auc.evaluate``), with what each opened value reveals and a strict-JSON form.
"""
from dataclasses import dataclass, field

import numpy as np

from .results import strict


@dataclass(frozen=True, repr=False)
class MetricResult:
    """One metric and how it was obtained.

    Attributes
    ----------
    value : float or tuple of numpy.ndarray
        The metric: average precision a float; ``roc_curve`` (fpr, tpr); ``precision_recall_curve``
        (precision, recall), at the cuts in ``flagged``.
    metric : str
        Its name in the catalogue (``ap``, ``roc``, ``pr``, ``ks``).
    protocol : str
        ``"mpc-exact"`` or ``"clear"``.
    m, clients : int
        The public shape.
    flagged : numpy.ndarray or None
        Curves: the rows flagged at each point (the top ``flagged[k]`` scores), a public grid.
    revealed : tuple of str
        Every value the parties opened.
    traffic : dict or None
        Bytes, rounds and peak memory per role.
    wall_s : float
        Seconds from the call to the result.

    See Also
    --------
    mpc_auc.average_precision_score, mpc_auc.roc_curve, mpc_auc.precision_recall_curve : what returns one.

    Examples
    --------
    >>> from mpc_auc import average_precision_score
    >>> average_precision_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], protocol="clear")
    MetricResult(ap=0.833333, protocol='clear', m=4, clients=1, wall_s=...)
    """
    value: object
    metric: str
    protocol: str
    m: int
    clients: int
    flagged: np.ndarray = None
    revealed: tuple = ()
    traffic: dict = None
    wall_s: float = 0.0

    def __repr__(self) -> str:
        shown = f"{self.value:.6f}" if isinstance(self.value, float) else f"<curve of {len(self.flagged)} points>"
        return (f"MetricResult({self.metric}={shown}, protocol={self.protocol!r}, m={self.m}, "
                f"clients={self.clients}, wall_s={self.wall_s:.1f})")


@dataclass(frozen=True, repr=False)
class Report:
    """Every metric of one evaluation, from one sort of the scores.

    Attributes
    ----------
    value : dict
        Metric name -> value: ``auc`` a float; ``ci`` {"variance", "std", "ci"}; ``ap`` and ``ks`` floats;
        ``roc`` {"flagged", "fpr", "tpr"}; ``pr`` {"flagged", "recall", "precision"}; ``pauc`` {"max_fpr",
        "area", "mcclish"}.
        A metric the parties refuse to compute (DeLong's variance when a class has fewer than two rows, a
        bounded metric past its rows) is a :class:`mpc_auc.protocols.refused.Refused` value, whose ``reason``
        says why (``{"refused": reason}`` in JSON).
    protocol, m, clients, revealed, traffic, wall_s
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
    """
    value: dict
    protocol: str
    m: int
    clients: int
    revealed: tuple = ()
    traffic: dict = field(default=None)
    wall_s: float = 0.0

    def __getitem__(self, name: str):
        return self.value[name]

    def to_dict(self) -> dict:
        """The report as strict JSON data (no NaN or infinity: a value that is not finite becomes None).

        Returns
        -------
        dict
            ``metrics`` (each value as JSON data: arrays as lists, a refused metric as ``{"refused": reason}``),
            ``protocol``, ``m``, ``clients``, ``revealed``, ``traffic``, ``wall_s``; ``json.dumps(...,
            allow_nan=False)`` takes it.

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
                "revealed": list(self.revealed), "traffic": self.traffic, "wall_s": self.wall_s}

    def __repr__(self) -> str:
        return (f"Report(auc={self.value['auc']:.6f}, metrics={list(self.value)}, protocol={self.protocol!r}, "
                f"m={self.m}, clients={self.clients})")


@dataclass(frozen=True, repr=False)
class DelongTestResult:
    """DeLong's test of two models' AUCs on the same rows [DeLong1988].

    Attributes
    ----------
    value : float
        AUC_a - AUC_b.
    aucs : tuple of float
        (AUC_a, AUC_b).
    covariance : tuple of tuple of float
        ((Var_a, Cov), (Cov, Var_b)), DeLong's.
    z, p_value : float
        z = (AUC_a - AUC_b) / sqrt(Var_a + Var_b - 2 Cov) and its two-sided normal p-value.
    protocol, m, clients, revealed, traffic, wall_s
        As in :class:`MetricResult`.

    See Also
    --------
    mpc_auc.delong_test : what returns one.

    Examples
    --------
    >>> from mpc_auc import delong_test
    >>> delong_test([0, 0, 1, 1, 0, 1], [.1, .4, .35, .8, .2, .9], [.3, .2, .6, .7, .1, .5], protocol="clear")
    DelongTestResult(aucs=(0.888889, 1.000000), z=-0.7071, p_value=0.4795, protocol='clear', m=6)
    """
    value: float
    aucs: tuple
    covariance: tuple
    z: float
    p_value: float
    protocol: str
    m: int
    clients: int
    revealed: tuple = ()
    traffic: dict = None
    wall_s: float = 0.0

    def __repr__(self) -> str:
        return (f"DelongTestResult(aucs=({self.aucs[0]:.6f}, {self.aucs[1]:.6f}), z={self.z:.4f}, "
                f"p_value={self.p_value:.4g}, protocol={self.protocol!r}, m={self.m})")

