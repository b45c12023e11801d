"""The metrics a private evaluation may open, and what each reveals (docs/protocols/mpc-exact.md, "Metrics").

Every metric comes from the same oblivious sort of a score column (circuits.rank_auc, circuits.rank_metrics);
an evaluation names the ones it opens, both parties and every client see the list in the job's terms, and
nothing else is opened.
"""
import numpy as np

from .errors import InputError

METRICS = {
    "auc": "the AUC to 52 bits (or rounded to the evaluation's decimals)",
    "ci": "DeLong's variance of the AUC to 2^-54 (the std and the 95% Wald interval follow) and whether each class "
          "has two rows or more",
    "ap": "the average precision to 52 bits",
    "roc": "TPR and FPR at each public cut of the ranking, to 52 bits (with the cuts they reveal the class counts "
           "and the positives between consecutive cuts)",
    "pr": "precision and recall at each public cut of the ranking, to 52 bits (precision at the last cut is "
          "the share of positives)",
    "ks": "the Kolmogorov-Smirnov statistic max |TPR - FPR| to 52 bits",
    "pauc": "the area under the ROC curve up to the evaluation's max FPR, to 2^-40 (scikit-learn's partial AUC "
            "before McClish's standardisation)",
}
REPORT = ("auc", "ci", "ap", "roc", "pr", "ks")  # "all": every metric that takes no parameter
FPR_BITS = 40  # max_fpr is read to 2^-40
CI_MAX_ROWS = 1 << 20  # ci and pauc in the 64-bit ring: 4 N^2 P < 2^60, N 2^40 < 2^61 (circuits.rank_metrics)
DEFAULT_POINTS = 100  # curve points: the top 1%, 2%, ..., 100% of the ranking
TWO_ROWS = "DeLong's variance needs two rows of each class"
MIN_SLICE_ROWS = 10  # direct evaluations: the exact curves' cuts leave at least this many rows between them


def metric_names(value) -> tuple:
    """The metrics asked for (a comma-separated string or a sequence of names; "all": the REPORT) in catalogue
    order, "auc" always among them; InputError naming any that does not exist."""
    names = [v.strip() for v in value.split(",")] if isinstance(value, str) else list(value)
    if names == ["all"]:
        return REPORT
    unknown = [n for n in names if n not in METRICS]
    if unknown or not names:
        raise InputError(f"unknown metric(s) {', '.join(map(repr, unknown)) or '(none given)'}; choose from "
                         f"{', '.join(METRICS)}")
    return tuple(n for n in METRICS if n in names or n == "auc")


def revealed(metrics, points: int) -> list:
    """What an evaluation opening ``metrics`` reveals, one line per metric."""
    curves = f" ({points} cuts)" if points else ""
    return [METRICS[name] + (curves if name in ("roc", "pr") else "") for name in metrics]


def curve_values(metrics) -> list:
    """The curves' values opened at each cut for ``metrics``: TPR (the ROC curve's and the PR curve's recall), FPR
    with "roc", precision with "pr"."""
    return ["tpr"] + (["fpr"] if "roc" in metrics else []) + (["precision"] if "pr" in metrics else [])


def cut_positions(m: int, points: int) -> np.ndarray:
    """The public cuts of a curve with ``points`` points: c_k = ceil(k M / points) rows flagged, k = 1..points
    (the top c_k scores), without repeats."""
    return np.unique(-(-np.arange(1, points + 1, dtype=np.int64) * m // points))


def thin_slices(m: int, points: int) -> str:
    """Why exact curves at ``points`` cuts of ``m`` rows are refused to an organiser who does not hold the rows
    (a direct evaluation), or "": the counts between consecutive cuts are opened, so with as many cuts as rows
    they would open every label in rank order; the parties keep every slice at least MIN_SLICE_ROWS rows."""
    if m >= MIN_SLICE_ROWS * points:
        return ""
    return (f"exact curves at {points} cuts of {m} rows would open the labels of slices of fewer than "
            f"{MIN_SLICE_ROWS} rows: a direct evaluation takes at most {m // MIN_SLICE_ROWS} cuts here")
