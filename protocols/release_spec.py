"""The release spec: what one exact evaluation opens, as one frozen value checked once when it is made.

A release is described before it runs (as OpenDP's Measurement is): the metrics opened from the one sort
(protocols.metric_catalogue), the number of public cuts the curves are opened at, the FPR the partial AUC stops
at and the decimals the AUC is rounded to.  The planner makes it, the evaluation both parties hold carries it
(protocols.inputs.submission.Declaration, and through it every job), and the parties' ledgers pin what it opens;
nothing below checks it again.  Made from a message, it is checked again by the party that decodes it.
"""
from dataclasses import dataclass

from .errors import InputError
from .metric_catalogue import DEFAULT_POINTS, metric_names
from .validation import checked

CURVES = ("roc", "pr")
BOUNDED = ("ci", "pauc")  # computed in the 64-bit ring for at most CI_MAX_ROWS rows
SECURITY = ("semi-honest", "malicious")  # against a compute party that follows the protocol, or one that deviates
MALICIOUS_METRICS = ("auc", "ci", "ap", "roc", "pr", "ks", "pauc")  # mpc-exact's under security with abort
MALICIOUS_REFUSAL = ("under security malicious mpc-exact opens the AUC of one score column (and the count of "
                     "positives), the AUC rounded to decimals, DeLong's interval, average precision, the ROC and PR "
                     "curves, the KS statistic, the partial AUC and the clients' ranks, and mpc-central its DP "
                     "releases, by the radix sort; {what} is not built on authenticated shares yet (docs/protocols/malicious-security.md)")


@dataclass(frozen=True)
class ReleaseSpec:
    """What an exact release opens.

    Parameters
    ----------
    metrics : str or sequence of str
        The metrics (protocols.metric_catalogue.METRICS; "all": the report), put in catalogue order with
        "auc" always among them.
    points : int
        The number of public cuts of the ranking the curves (roc, pr) are opened at (1 to 10^4).
    max_fpr : float, optional
        The FPR the partial AUC stops at, 0 < max_fpr <= 1: below 1 it adds the pauc metric, 1 is the full
        AUC (None).  The pauc metric without it is refused.
    decimals : int, optional
        Open the AUC rounded to this many decimals (1 to 12) instead of to 52 bits.
    security : {"semi-honest", "malicious"}
        "malicious": security with abort against one deviating compute party (docs/protocols/malicious-security.md):
        every metric of the report and the partial AUC (MALICIOUS_METRICS), the AUC to 52 bits or to decimals, and
        the count of positives with them.

    Examples
    --------
    >>> ReleaseSpec("ci,auc", max_fpr=0.5)
    ReleaseSpec(metrics=('auc', 'ci', 'pauc'), points=100, max_fpr=0.5, decimals=None, security='semi-honest')
    >>> ReleaseSpec(max_fpr=1.0).max_fpr is None
    True
    """
    metrics: tuple = ("auc",)
    points: int = DEFAULT_POINTS
    max_fpr: float = None
    decimals: int = None
    security: str = "semi-honest"

    def __post_init__(self):
        metrics = metric_names(self.metrics)
        max_fpr = None if self.max_fpr is None or checked("max_fpr", self.max_fpr) == 1 else float(self.max_fpr)
        if max_fpr is not None:
            metrics = metric_names(metrics + ("pauc",))
        elif "pauc" in metrics:
            raise InputError("the pauc metric needs max_fpr, the FPR the partial AUC stops at (0 < max_fpr < 1)")
        object.__setattr__(self, "metrics", metrics)
        object.__setattr__(self, "max_fpr", max_fpr)
        object.__setattr__(self, "points", checked("points", self.points))
        if self.decimals is not None:
            object.__setattr__(self, "decimals", checked("auc_decimals", self.decimals))
        if self.security not in SECURITY:
            raise InputError(f"security must be one of {', '.join(SECURITY)}; not {self.security!r}")
        rounded_ci = self.decimals is not None and "ci" in metrics  # the interval's steps need the exact W
        if self.malicious and (set(metrics) - set(MALICIOUS_METRICS) or rounded_ci):
            extra = ([m for m in metrics if m not in MALICIOUS_METRICS]
                     + (["auc_decimals with ci (DeLong's variance would open the exact rank sums)"] if rounded_ci
                        else []))
            raise InputError(MALICIOUS_REFUSAL.format(what=", ".join(extra)))

    @property
    def malicious(self) -> bool:
        """Security with abort against a deviating compute party (circuits.macs)."""
        return self.security == "malicious"

    @property
    def curves(self) -> bool:
        """Whether curves are opened (their cuts are then public)."""
        return bool(set(CURVES) & set(self.metrics))

    @property
    def bounded(self) -> tuple:
        """The metrics computed for at most CI_MAX_ROWS rows."""
        return tuple(name for name in BOUNDED if name in self.metrics)

    @property
    def auc_only(self) -> bool:
        return self.metrics == ("auc",)

    def fields(self) -> list:
        """The spec as the plain values a digest hashes."""
        return [list(self.metrics), self.points, self.max_fpr, self.decimals, self.security]

