"""CSV files of evaluation rows: header ``client,score,label``, one row per sample."""
import csv
import math

import numpy as np

from .dataset import EvalSet
from .protocols.encoding import ScoreEncoder
from .protocols.errors import InputError

COLUMNS = ("client", "score", "label")


def read_evalset(path, encoder: ScoreEncoder = ScoreEncoder(), declared_clients=None) -> EvalSet:
    """Load and validate every row; raise InputError naming the file line of the first problem."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise InputError(f"cannot read {path}: {err}") from None
    if not rows:
        raise InputError(f"{path} is empty: expected a header {','.join(COLUMNS)}")
    header = [h.strip() for h in rows[0]]
    missing = [c for c in COLUMNS if c not in header]
    extra = [h for h in header if h not in COLUMNS]
    if missing or extra or len(header) != len(COLUMNS):
        parts = []
        if missing:
            parts.append(f"missing column(s) {', '.join(missing)}")
        if extra:
            parts.append(f"unexpected column(s) {', '.join(extra)}")
        if not parts:
            parts.append("duplicate column names")
        raise InputError(f"{path}: {'; '.join(parts)}; the header must be {','.join(COLUMNS)}")
    at = [header.index(c) for c in COLUMNS]
    body = rows[1:]
    if not body:
        raise InputError(f"{path} has a header but no data rows")
    clients, scores, labels = [], np.empty(len(body)), np.empty(len(body), dtype=np.int64)
    for i, row in enumerate(body):
        line = i + 2
        if len(row) != len(COLUMNS):
            raise InputError(f"{path} line {line}: expected {len(COLUMNS)} fields, found {len(row)}")
        client, score, label = (row[j].strip() for j in at)
        if not client:
            raise InputError(f"{path} line {line}: empty client id")
        scores[i] = _number(score, path, line, "score")
        value = _number(label, path, line, "label")
        if value not in (0.0, 1.0):
            raise InputError(f"{path} line {line}: label {label!r} is not 0 or 1")
        labels[i] = int(value)
        clients.append(client)
    return EvalSet.build(clients, scores, labels, encoder, declared_clients,
                         locate=lambda i: f"{path} line {i + 2}")


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
