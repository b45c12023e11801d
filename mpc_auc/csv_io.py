"""CSV files of evaluation rows: header ``client,score,label``, one row per sample."""
import csv
import math

import numpy as np

from .dataset import EvalSet
from .protocols.encoding import ScoreEncoder
from .protocols.errors import InputError

COLUMNS = ("client", "score", "label")


def _read_table(path, columns) -> list:
    """The data rows of a CSV with exactly ``columns`` (any order), each as its fields in ``columns`` order.

    Raises InputError naming the file (and line) of the first problem.
    """
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise InputError(f"cannot read {path}: {err}") from None
    if not rows:
        raise InputError(f"{path} is empty: expected a header {','.join(columns)}")
    header = [h.strip() for h in rows[0]]
    missing = [c for c in columns if c not in header]
    extra = [h for h in header if h not in columns]
    if missing or extra or len(header) != len(columns):
        parts = []
        if missing:
            parts.append(f"missing column(s) {', '.join(missing)}")
        if extra:
            parts.append(f"unexpected column(s) {', '.join(extra)}")
        if not parts:
            parts.append("duplicate column names")
        raise InputError(f"{path}: {'; '.join(parts)}; the header must be {','.join(columns)}")
    at = [header.index(c) for c in columns]
    body = rows[1:]
    if not body:
        raise InputError(f"{path} has a header but no data rows")
    out = []
    for i, row in enumerate(body):
        if len(row) != len(columns):
            raise InputError(f"{path} line {i + 2}: expected {len(columns)} fields, found {len(row)}")
        out.append([row[j].strip() for j in at])
    return out


def read_evalset(path, encoder: ScoreEncoder = ScoreEncoder(), declared_clients=None,
                 both_classes: bool = True) -> EvalSet:
    """Load and validate every row; raise InputError naming the file line of the first problem.

    both_classes: require positives and negatives (False for one client's own file)."""
    body = _read_table(path, COLUMNS)
    clients, scores, labels = [], np.empty(len(body)), np.empty(len(body), dtype=np.int64)
    for i, (client, score, label) in enumerate(body):
        line = i + 2
        if not client:
            raise InputError(f"{path} line {line}: empty client id")
        scores[i] = _number(score, path, line, "score")
        value = _number(label, path, line, "label")
        if value not in (0.0, 1.0):
            raise InputError(f"{path} line {line}: label {label!r} is not 0 or 1")
        labels[i] = int(value)
        clients.append(client)
    return EvalSet.build(clients, scores, labels, encoder, declared_clients,
                         locate=lambda i: f"{path} line {i + 2}", both_classes=both_classes)


USER_COLUMNS = {"gini": ("user", "value"), "kendall": ("user", "a", "b")}


def read_user_values(path, kernel: str) -> np.ndarray:
    """One row per user: ``user,value`` (gini, a value in [0, 1]) or ``user,a,b`` (kendall, integer ratings)."""
    body = _read_table(path, USER_COLUMNS[kernel])
    values = np.empty((len(body), len(USER_COLUMNS[kernel]) - 1))
    for i, (user, *fields) in enumerate(body):
        line = i + 2
        if not user:
            raise InputError(f"{path} line {line}: empty user id")
        for j, text in enumerate(fields):
            x = _number(text, path, line, "value" if kernel == "gini" else "rating")
            if not math.isfinite(x):
                raise InputError(f"{path} line {line}: {text!r} is not finite")
            if kernel == "gini" and not 0.0 <= x <= 1.0:
                raise InputError(f"{path} line {line}: value {text!r} lies outside [0, 1]")
            if kernel == "kendall" and x != int(x):
                raise InputError(f"{path} line {line}: rating {text!r} is not an integer")
            values[i, j] = x
    return values[:, 0] if kernel == "gini" else values.astype(np.int64)


def _number(text: str, path, line: int, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{path} line {line}: {what} {text!r} is not a number") from None
    if what == "label" and math.isnan(value):
        raise InputError(f"{path} line {line}: label {text!r} is not 0 or 1")
    return value


def write_evalset(path, evalset: EvalSet) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(COLUMNS)
        for c, s, y in zip(evalset.client, evalset.score, evalset.label):
            out.writerow((c, repr(float(s)), int(y)))
