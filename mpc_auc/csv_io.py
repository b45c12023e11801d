"""Tables of evaluation rows: header ``client,score,label``, one row per sample.

Read with pyarrow: CSV or TSV (the separator is taken from the header line unless given), gzip-compressed
when the name ends in ``.gz``, or Parquet (``.parquet``, ``.pq``); a UTF-8 BOM and blank lines are
ignored.  Every value is checked, and the first problem is named by file and line (lines counted
without blank ones) before anything else runs.
"""
import csv
import gzip

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from .dataset import EvalSet
from .protocols.inputs.encoding import ScoreEncoder
from .protocols.errors import InputError

COLUMNS = ("client", "score", "label")
PARQUET = (".parquet", ".pq")


def _open_text(path):
    return gzip.open(path, "rt", encoding="utf-8-sig", newline="") if str(path).endswith(".gz") else \
        open(path, encoding="utf-8-sig", newline="")


def _separator(path, sep) -> str:
    if sep is not None:
        if len(sep) != 1:
            raise InputError(f"the separator must be one character, not {sep!r}")
        return sep
    try:
        with _open_text(path) as f:
            header = f.readline()
    except (OSError, UnicodeDecodeError, EOFError) as err:
        raise InputError(f"cannot read {path}: {err}") from None
    if not header.strip():
        raise InputError(f"{path} is empty: expected a header")
    return "\t" if "\t" in header else ","


def _check_header(path, names, columns) -> None:
    header = [h.strip() for h in names]
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


def read_table(path, columns, sep: str = None, types: dict = None) -> dict:
    """{column: pyarrow array} of a table with exactly ``columns`` (any order, names stripped): strings, or
    for a CSV the arrow type ``types`` names for a column (a float64 column parsed without a text copy, a
    dictionary-encoded id column), where every value of the file converts.

    The first column is an id: none may be empty.  Raises InputError naming the file (and line) of the
    first problem; a typed column that does not convert is read again as text, to name it.
    """
    path = str(path)
    if path.endswith(PARQUET):
        try:
            table = pq.read_table(path)
        except (OSError, pa.ArrowException) as err:
            raise InputError(f"cannot read {path}: {err}") from None
        _check_header(path, table.column_names, columns)
        out = {name.strip(): table[name] for name in table.column_names}
        out = {c: pc.cast(pc.cast(out[c], pa.int8()) if pa.types.is_boolean(out[c].type) else out[c], pa.string())
               for c in columns}
    else:
        delimiter = _separator(path, sep)
        table = _typed_csv(path, delimiter, columns, types) if types else None
        if table is None:
            table = _csv(path, delimiter, {c: pa.string() for c in columns})
        _check_header(path, table.column_names, columns)
        out = {}
        for name in table.column_names:  # one column at a time, each dropped from the table once trimmed
            column = table[name].combine_chunks()
            table = table.drop_columns([name])
            out[name.strip()] = _trimmed(column)
            del column
    if len(out[columns[0]]) == 0:
        raise InputError(f"{path} has a header but no data rows")
    out = {c: out[c].combine_chunks() if isinstance(out[c], pa.ChunkedArray) else out[c] for c in columns}
    ids = out[columns[0]]
    empty = _texts_equal(ids, "")
    if empty.any():
        raise InputError(f"{path} line {_first(empty) + 2}: empty {columns[0]} id")
    return out


def _csv(path, delimiter: str, types: dict):
    try:
        return pcsv.read_csv(path, parse_options=pcsv.ParseOptions(delimiter=delimiter),
                             convert_options=pcsv.ConvertOptions(column_types=types, strings_can_be_null=False))
    except pa.ArrowInvalid as err:
        raise InputError(_parse_problem(path, delimiter, str(err), len(types))) from None
    except (OSError, pa.ArrowException) as err:
        raise InputError(f"cannot read {path}: {err}") from None


def _typed_csv(path, delimiter: str, columns, types: dict):
    """The CSV with ``types`` applied, or None when the text path must read it (a value that does not
    convert, a missing number, a header that names the columns with spaces)."""
    try:
        table = pcsv.read_csv(path, parse_options=pcsv.ParseOptions(delimiter=delimiter),
                              convert_options=pcsv.ConvertOptions(
                                  column_types={c: types.get(c, pa.string()) for c in columns},
                                  strings_can_be_null=False))
    except (OSError, pa.ArrowException):
        return None
    if sorted(table.column_names) != sorted(columns) or any(table[c].null_count for c in types):
        return None
    return table


def _trimmed(column):
    """A text column without surrounding whitespace (of a dictionary column: its dictionary); numbers as read."""
    if pa.types.is_dictionary(column.type):
        return pa.DictionaryArray.from_arrays(column.indices, pc.utf8_trim_whitespace(column.dictionary))
    if pa.types.is_string(column.type):
        return pc.utf8_trim_whitespace(column)
    return column


def _texts_equal(column, text: str) -> np.ndarray:
    """[value == text] per row of a text or dictionary column."""
    if pa.types.is_dictionary(column.type):
        hits = np.flatnonzero(pc.equal(column.dictionary, text).to_numpy(zero_copy_only=False))
        return np.isin(column.indices.to_numpy(zero_copy_only=False), hits)
    return pc.equal(column, text).to_numpy(zero_copy_only=False)


def _parse_problem(path, delimiter: str, message: str, width: int) -> str:
    """The first line whose field count is wrong (the slow path, only when pyarrow refused the file)."""
    if "columns" in message:
        with _open_text(path) as f:
            for line, row in enumerate(csv.reader(f, delimiter=delimiter), start=1):
                if row and len(row) != width:
                    return f"{path} line {line}: expected {width} fields, found {len(row)}"
    return f"cannot read {path}: {message}"


def _numbers(array, path, what: str) -> np.ndarray:
    """float64 values of a string (or float64) column; InputError naming the first text that is not a number."""
    if pa.types.is_floating(array.type):
        return array.to_numpy(zero_copy_only=False)
    try:
        return pc.cast(array, pa.float64()).to_numpy(zero_copy_only=False)
    except pa.ArrowInvalid:  # the slow path: Python's float() names the first text that is not a number
        values = []
        for i, text in enumerate(array.to_pylist()):
            try:
                values.append(float(text))
            except ValueError:
                raise InputError(f"{path} line {i + 2}: {what} {text!r} is not a number") from None
        return np.array(values)


def _strings(array) -> np.ndarray:
    """A string column as a numpy str array, through its dictionary (no Python object per row)."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    encoded = array if pa.types.is_dictionary(array.type) else pc.dictionary_encode(array)
    return encoded.dictionary.to_numpy(zero_copy_only=False).astype(str)[encoded.indices.to_numpy()]


def _first(mask: np.ndarray) -> int:
    return int(np.argmax(mask))


def read_labels(array, path, positive_label: str = None) -> np.ndarray:
    """0/1 labels: the values 0 and 1 (``1.0`` too), or, with ``positive_label``, a column of exactly two
    values of which that one is positive (e.g. True/False, -1/+1)."""
    if positive_label is not None:
        values = np.unique(array.to_numpy(zero_copy_only=False).astype(str))
        wanted = str(positive_label).strip()
        if wanted not in values or len(values) != 2:
            found = ", ".join(repr(v) for v in values[:5]) + (", ..." if len(values) > 5 else "")
            raise InputError(f"{path}: with positive label {wanted!r} the label column must hold exactly two "
                             f"values, one of them {wanted!r}; found {found}")
        return pc.equal(array, pa.scalar(wanted)).to_numpy(zero_copy_only=False).astype(np.int64)
    try:
        values = pc.cast(array, pa.float64()).to_numpy(zero_copy_only=False)
        bad = ~np.isin(values, (0.0, 1.0))
    except pa.ArrowInvalid:  # some label is no number: name the first one that is not 0 or 1
        bad = ~np.isin(array.to_numpy(zero_copy_only=False), ("0", "1"))
    if bad.any():
        i = _first(bad)
        raise InputError(f"{path} line {i + 2}: label {array[i].as_py()!r} is not 0 or 1 (a column of other "
                         "values, like True/False or -1/+1, needs --positive-label)")
    return values.astype(np.int64)


def read_evalset(path, encoder: ScoreEncoder = ScoreEncoder(), declared_clients=None,
                 both_classes: bool = True, sep: str = None, positive_label: str = None) -> EvalSet:
    """Load and validate every row; raise InputError naming the file line of the first problem.

    both_classes: require positives and negatives (False for one client's own file)."""
    return read_score_columns(path, ("score",), encoder, declared_clients, both_classes, sep, positive_label)[0]


def read_score_columns(path, score_columns, encoder: ScoreEncoder = ScoreEncoder(), declared_clients=None,
                       both_classes: bool = True, sep: str = None, positive_label: str = None) -> tuple:
    """(the evaluation set of the first score column, the scores of every column (M, columns)) of a file with
    the columns client, each of ``score_columns`` (several models' scores of the same rows) and label; every
    column is checked as :func:`read_evalset` checks its one, and problems are named by file line."""
    columns = ("client", *score_columns, "label")
    if len(set(columns)) != len(columns):
        raise InputError(f"score columns must be distinct and not client or label: {', '.join(score_columns)}")
    table = read_table(path, columns, sep, {"client": pa.dictionary(pa.int32(), pa.string()),
                                            **{name: pa.float64() for name in score_columns}})
    client = _strings(table.pop("client"))  # each text column freed once converted
    scores = [_numbers(table.pop(name), path, name) for name in score_columns]
    labels = read_labels(table.pop("label"), path, positive_label)
    pa.default_memory_pool().release_unused()  # the text the pool keeps: 0.3 GB at 4.6M rows, before the shares
    named = len(score_columns) > 1  # say which column a problem is in when there are several

    def locate(name):
        return lambda i: f"{path} line {i + 2}" + (f" ({name})" if named else "")

    sets = [EvalSet.build(client, column, labels, encoder, declared_clients, locate=locate(name),
                          both_classes=both_classes) for name, column in zip(score_columns, scores)]
    return sets[0], np.stack(scores, axis=1)


USER_COLUMNS = {"gini": ("user", "value"), "kendall": ("user", "a", "b")}


def read_user_values(path, kernel: str, sep: str = None) -> np.ndarray:
    """One row per user: ``user,value`` (gini, a value in [0, 1]) or ``user,a,b`` (kendall, integer ratings)."""
    table = read_table(path, USER_COLUMNS[kernel], sep)
    fields = USER_COLUMNS[kernel][1:]
    values = np.stack([_numbers(table[c], path, "value" if kernel == "gini" else "rating") for c in fields], axis=1)
    problems = [(~np.isfinite(values), "is not finite")]
    if kernel == "gini":
        problems.append((~((values >= 0) & (values <= 1)), "lies outside [0, 1]"))
    else:
        problems.append((values != np.round(values), "is not an integer"))
    for bad, what in problems:
        if bad.any():
            i, j = np.unravel_index(_first(bad.ravel()), bad.shape)
            name = "value" if kernel == "gini" else "rating"
            raise InputError(f"{path} line {i + 2}: {name} {table[fields[j]][i].as_py()!r} {what}")
    return values[:, 0] if kernel == "gini" else values.astype(np.int64)


def write_evalset(path, evalset: EvalSet) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(COLUMNS)
        for c, s, y in zip(evalset.client, evalset.score, evalset.label):
            out.writerow((c, repr(float(s)), int(y)))
