"""Labels as scikit-learn's metrics read them: any two values for a binary metric, one score column per class
for one-vs-rest.  Every problem is an InputError naming it (never numpy's TypeError on mixed label types)."""
import numpy as np

from .protocols.errors import InputError


def column(values) -> np.ndarray:
    """``values`` as an array, one column of shape (M, 1) (a one-column DataFrame) as (M,): scikit-learn's
    ``column_or_1d``."""
    values = np.asarray(values)
    return values.ravel() if values.ndim == 2 and values.shape[1] == 1 else values


def plain(value):
    """A numpy scalar as the Python value it holds (``np.str_('benign')`` -> ``'benign'``), for messages."""
    return value.item() if isinstance(value, np.generic) else value


def classes_of(y_true) -> tuple:
    """(labels as an array, its sorted distinct values); InputError for a label array that is not 1-D, is empty,
    has NaN or mixes kinds numpy cannot order.  A (M, 1) column is taken as (M,)."""
    labels = column(y_true)
    if labels.ndim != 1:
        raise InputError(f"y_true must be one-dimensional, not of shape {labels.shape}")
    if labels.size == 0:
        raise InputError("y_true is empty: a metric needs rows of both classes")
    if labels.dtype.kind == "f" and not np.isfinite(labels).all():
        raise InputError(f"row {int(np.argmax(~np.isfinite(labels)))}: label {plain(labels[~np.isfinite(labels)][0])} "
                         "is not a finite number")
    try:
        return labels, np.unique(labels)
    except TypeError:
        raise InputError("y_true mixes label kinds that cannot be ordered (e.g. numbers and strings)") from None


def binary_labels(y_true, pos_label=None, greater: bool = False, one_class: bool = False) -> np.ndarray:
    """0/1 labels, 1 for the positive class: ``pos_label``, else the greater of the two classes (``greater``:
    roc_auc_score's rule) or 1 when the labels are {0, 1} or {-1, 1} (the curves' and average precision's).
    ``one_class``: the rows may all be of one class (a client's share of a test set), ``pos_label`` absent."""
    labels, classes = classes_of(y_true)
    if len(classes) > 2:
        shown = ", ".join(map(str, classes[:5])) + (", ..." if len(classes) > 5 else "")
        raise InputError(f"y_true has {len(classes)} classes ({shown}): a binary metric takes two; for "
                         "roc_auc_score pass one score column per class with multi_class='ovr'")
    if pos_label is None:
        if labels.dtype == bool:
            return labels.astype(np.int64)
        if greater:
            return (labels == classes[-1]).astype(np.int64)
        if not (set(classes.tolist()) <= {0, 1} or set(classes.tolist()) <= {-1, 1}):
            raise InputError(f"y_true's labels are {', '.join(map(repr, classes.tolist()))}: name the positive class "
                             "with pos_label")
        pos_label = 1
    pos_label = plain(pos_label)
    if pos_label not in classes.tolist() and not (one_class and len(classes) < 2):
        raise InputError(f"pos_label={pos_label!r} is not a label of y_true (labels: "
                         f"{', '.join(map(repr, classes.tolist()))})")
    return (labels == pos_label).astype(np.int64)


def one_vs_rest(y_true, y_score, labels=None) -> list:
    """[(class, its 0/1 labels, its score column)] for a multi-class AUC, one score column per class in the order
    of ``labels`` (default: the sorted classes of y_true, as scikit-learn)."""
    y, classes = classes_of(y_true)
    scores = np.asarray(y_score)
    order = classes if labels is None else column(labels)
    if scores.ndim != 2:
        raise InputError(f"multi_class='ovr' takes y_score of shape (rows, classes), not {scores.shape}")
    if len(order) < 3 and labels is None:
        raise InputError(f"y_true has {len(order)} classes: multi_class='ovr' is for three or more")
    if scores.shape[1] != len(order):
        raise InputError(f"y_score has {scores.shape[1]} columns but there are {len(order)} classes: one score "
                         "column per class")
    if labels is not None and len(set(order.tolist())) != len(order):
        raise InputError("labels must not repeat a class")
    stray = sorted(set(classes.tolist()) - set(order.tolist()), key=str)
    if stray:
        raise InputError(f"y_true has label(s) {', '.join(map(repr, stray))} missing from labels")
    out = []
    for k, name in enumerate(order.tolist()):
        hits = (y == name).astype(np.int64)
        if not hits.any():
            raise InputError(f"class {name!r} has no positives in y_true: its one-vs-rest AUC is undefined")
        if hits.all():
            raise InputError(f"class {name!r} holds every row: its one-vs-rest AUC is undefined")
        out.append((name, hits, scores[:, k]))
    return out
