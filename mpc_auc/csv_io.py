"""Prediction files: one row per sample, with a client, one or more score columns and a label (and, if named,
an id); other columns are ignored.

Read with pyarrow: CSV-like text, its separator sniffed from the header (``,`` ``;`` tab ``|``: the one
that splits the header into the columns asked for; named when several do) unless given, gzip-compressed or
Parquet, each recognised by its magic bytes whatever the file's name; a UTF-8 BOM and blank lines are
ignored.  :class:`Columns` names the columns (``--client-col``, ``--score-col``, ``--label-col``,
``--id-col``; default ``client``, ``score``, ``label`` and no id).  Every value is checked, and the first
problem is named by file and line (lines counted without blank ones) before anything else runs; a
decimal comma (``0,5``) is refused by name.
"""
import csv
import gzip
import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from .dataset import EvalSet
from .protocols.inputs.encoding import ScoreEncoder
from .protocols.errors import InputError

COLUMNS = ("client", "score", "label")
SEPARATORS = (",", ";", "\t", "|")
PARQUET_MAGIC, GZIP_MAGIC = b"PAR1", b"\x1f\x8b"
DECIMAL_COMMA = re.compile(r"^\s*[+-]?\d*,\d+(?:[eE][+-]?\d+)?\s*$")


@dataclass(frozen=True)
class Columns:
    """Which columns of a prediction file hold what; ``client`` None: every row is one client's (``client
    submit`` reading a file of its own rows)."""
    client: str = "client"
    scores: tuple = ("score",)
    label: str = "label"
    id: str = None
    weight: str = None  # sample weights (the weighted AUC)

    def __post_init__(self):
        names = self.wanted
        if len(set(names)) != len(names):
            raise InputError(f"the client, score, label, id and weight columns must be distinct: {', '.join(names)}")

    @property
    def wanted(self) -> tuple:
        """The columns read, in the order of :func:`read_table`'s checks (the first one an id of its rows)."""
        return tuple(c for c in (self.client, *self.scores, self.label, self.id, self.weight) if c is not None)


def _magic(path) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(4)
    except OSError as err:
        raise InputError(f"cannot read {path}: {err}") from None


def _open_text(path):
    if _magic(path).startswith(GZIP_MAGIC):
        return gzip.open(path, "rt", encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def _header(path) -> str:
    try:
        with _open_text(path) as f:
            header = f.readline()
    except (OSError, UnicodeDecodeError, EOFError) as err:
        raise InputError(f"cannot read {path}: {err} (a CSV/TSV in UTF-8, gzip-compressed or not, or Parquet)") \
            from None
    if not header.strip():
        raise InputError(f"{path} is empty: expected a header")
    return header


def _fields(header: str, sep: str) -> list:
    """The header's column names as written (surrounding spaces kept: pyarrow names the columns so)."""
    return next(csv.reader([header.rstrip("\r\n")], delimiter=sep))


def _separator(path, header: str, sep, wanted) -> str:
    """The given separator, or the one of SEPARATORS that splits ``header`` into every wanted column."""
    if sep is not None:
        if len(sep) != 1:
            raise InputError(f"the separator must be one character, not {sep!r}")
        return sep
    fits = [s for s in SEPARATORS if set(wanted) <= {f.strip() for f in _fields(header, s)}]
    if len(fits) == 1:
        return fits[0]
    if fits:
        raise InputError(f"{path}: the header splits into the columns {', '.join(wanted)} with each of "
                         f"{', '.join(map(repr, fits))}: name the separator with --sep")
    widest = max(SEPARATORS, key=lambda s: len(_fields(header, s)))
    _check_header(path, _fields(header, widest), wanted)
    raise AssertionError("unreachable: a header without a wanted column is refused above")


def _check_header(path, names, wanted) -> None:
    """Refuse a header that lacks a wanted column or names one twice; other columns are ignored."""
    header = [h.strip() for h in names]
    missing = [c for c in wanted if c not in header]
    if missing:
        shown = ", ".join(header[:12]) + (", ..." if len(header) > 12 else "")
        raise InputError(f"{path}: missing column(s) {', '.join(missing)}; the header has {shown} (name the columns "
                         "with --client-col, --score-col, --label-col)")
    twice = [c for c in wanted if header.count(c) > 1]
    if twice:
        raise InputError(f"{path}: column(s) {', '.join(twice)} appear more than once in the header")


def read_table(path, columns, sep: str = None, types: dict = None) -> dict:
    """{column: pyarrow array} of the ``columns`` of a table (any order, names stripped, other columns ignored):
    strings, or for a CSV the arrow type ``types`` names for a column (a float64 column parsed without a text
    copy, a dictionary-encoded id column), where every value of the file converts.

    The first column, when it holds text, is an id: none may be empty.  Raises InputError naming the file (and
    line) of the first problem; a typed column that does not convert is read again as text, to name it.
    """
    path = str(path)
    if _magic(path) == PARQUET_MAGIC:
        try:
            names = pq.read_schema(path).names
            _check_header(path, names, columns)
            table = pq.read_table(path, columns=[n for n in names if n.strip() in columns])
        except (OSError, pa.ArrowException) as err:
            raise InputError(f"cannot read {path}: {err}") from None
        out = {name.strip(): table[name] for name in table.column_names}
        out = {c: pc.cast(pc.cast(out[c], pa.int8()) if pa.types.is_boolean(out[c].type) else out[c], pa.string())
               for c in columns}
    else:
        header = _header(path)
        delimiter = _separator(path, header, sep, columns)
        names = _fields(header, delimiter)
        _check_header(path, names, columns)
        raw = [n for n in names if n.strip() in columns]  # as the header spells them
        table = _typed_csv(path, delimiter, raw, types) if types else None
        if table is None:
            table = _csv(path, delimiter, {n: pa.string() for n in raw})
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
    if pa.types.is_string(ids.type) or pa.types.is_dictionary(ids.type):
        _no_empty(ids, path, columns[0])
    return out


def _no_empty(column, path, name: str) -> None:
    empty = _texts_equal(column, "")
    if empty.any():
        raise InputError(f"{path} line {_first(empty) + 2}: empty {name} id")


def _source(path):
    """What pyarrow reads: the file, or its gzip stream (recognised by its magic bytes, whatever its name)."""
    return pa.input_stream(path, compression="gzip") if _magic(path).startswith(GZIP_MAGIC) else path


def _csv(path, delimiter: str, types: dict):
    try:
        return pcsv.read_csv(_source(path), parse_options=pcsv.ParseOptions(delimiter=delimiter),
                             convert_options=pcsv.ConvertOptions(column_types=types, include_columns=list(types),
                                                                 strings_can_be_null=False))
    except pa.ArrowInvalid as err:
        raise InputError(_parse_problem(path, delimiter, str(err))) from None
    except (OSError, pa.ArrowException) as err:
        raise InputError(f"cannot read {path}: {err}") from None


def _typed_csv(path, delimiter: str, raw, types: dict):
    """The CSV's columns ``raw`` (as the header spells them) with ``types`` applied, or None when the text path
    must read it (a value that does not convert, a missing number)."""
    typed = {n: types.get(n.strip(), pa.string()) for n in raw}
    try:
        table = pcsv.read_csv(_source(path), parse_options=pcsv.ParseOptions(delimiter=delimiter),
                              convert_options=pcsv.ConvertOptions(column_types=typed, include_columns=list(raw),
                                                                  strings_can_be_null=False))
    except (OSError, pa.ArrowException):
        return None
    if any(table[n].null_count for n in raw if n.strip() in types):
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


def _parse_problem(path, delimiter: str, message: str) -> str:
    """The first line whose field count differs from the header's (the slow path, only when pyarrow refused
    the file)."""
    if "columns" in message:
        with _open_text(path) as f:
            rows = csv.reader(f, delimiter=delimiter)
            width = len(next(rows, []))
            for line, row in enumerate(rows, start=2):
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
                hint = " (a decimal comma: write it with a point, e.g. 0.5)" if DECIMAL_COMMA.match(text) else ""
                raise InputError(f"{path} line {i + 2}: {what} {text!r} is not a number{hint}") from None
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
                 both_classes: bool = True, sep: str = None, positive_label: str = None,
                 columns: Columns = Columns()) -> EvalSet:
    """Load and validate every row of the first score column; raise InputError naming the file line of the first
    problem.  both_classes: require positives and negatives (False for one client's own file)."""
    return read_score_columns(path, columns, encoder, declared_clients, both_classes, sep, positive_label)[0]


def read_score_columns(path, columns: Columns = Columns(), encoder: ScoreEncoder = ScoreEncoder(),
                       declared_clients=None, both_classes: bool = True, sep: str = None,
                       positive_label: str = None) -> tuple:
    """(the evaluation set of the first score column, the scores of every column (M, columns), the id column's values
    or None, the weight column's numbers or None) of a prediction file with the ``columns`` named (several score
    columns: models scored on the same rows); every score column is checked as the first, and problems are named by
    file line. Without a client column (``columns.client`` None) every row is the one declared client's."""
    if columns.client is None and (declared_clients is None or len(declared_clients) != 1):
        raise InputError("a file without a client column holds one client's rows: name that client")
    types = {**({columns.client: pa.dictionary(pa.int32(), pa.string())} if columns.client else {}),
             **{name: pa.float64() for name in columns.scores + ((columns.weight,) if columns.weight else ())}}
    table = read_table(path, columns.wanted, sep, types)
    if columns.client:
        client = _strings(table.pop(columns.client))  # each text column freed once converted
    else:
        client = np.full(len(table[columns.label]), declared_clients[0])
    scores = [_numbers(table.pop(name), path, name) for name in columns.scores]
    labels = read_labels(table.pop(columns.label), path, positive_label)
    weights = _numbers(table.pop(columns.weight), path, "weight") if columns.weight else None
    ids = None
    if columns.id:
        _no_empty(table[columns.id], path, columns.id)
        ids = _strings(table.pop(columns.id))
    pa.default_memory_pool().release_unused()  # the text the pool keeps: 0.3 GB at 4.6M rows, before the shares
    named = len(columns.scores) > 1  # say which column a problem is in when there are several

    def locate(name):
        return lambda i: f"{path} line {i + 2}" + (f" ({name})" if named else "")

    sets = [EvalSet.build(client, column, labels, encoder, declared_clients, locate=locate(name),
                          both_classes=both_classes) for name, column in zip(columns.scores, scores)]
    return sets[0], np.stack(scores, axis=1), ids, weights


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
