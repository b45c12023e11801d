"""Prediction files: one row per sample, with a client, one or more score columns and a label (and, if named,
an id); other columns are ignored.

Read with pyarrow: CSV-like text, its separator sniffed from the header (``,`` ``;`` tab ``|``: the one
that splits the header into the columns asked for; named when several do) unless given, gzip-compressed or
Parquet, each recognised by its magic bytes whatever the file's name; a UTF-8 BOM and blank lines are
ignored.  :class:`Columns` names the columns (``--client-col``, ``--score-col``, ``--label-col``,
``--id-col``; default ``client``, ``score``, ``label`` and no id).  Every value is checked, and the first
problem is named by file and line (lines counted without blank ones) before anything else runs; a
decimal comma (``0,5``) is refused by name.

Bounded (:class:`ReadLimits`, docs/api.md "Reading limits"): each limit is checked before what it bounds is
allocated.  A text file's header is read within ``max_line_bytes`` from its first bytes and its columns
counted, then the whole file streamed once in blocks (through gzip when compressed), counting bytes, lines
and the longest line, before pyarrow parses it; a Parquet file's footer is checked before it is parsed and its
row count, column count, column types (one value a row: no list, struct or map) and the size of the columns
read before any data is, and its text columns stay dictionary-encoded as stored.  Numbers follow one grammar,
:data:`NUMBER` (ASCII digits; no underscores, other digit sets, ``nan`` or ``inf``), and a nonzero number
that underflows to 0 or one that overflows to infinity is refused by name.
"""
import csv
import dataclasses
import gzip
import os
import re
import zlib
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from .dataset import EvalSet
from .protocols.inputs.encoding import ScoreEncoder
from .protocols.errors import InputError
from .protocols.validation import Interval, checked

COLUMNS = ("client", "score", "label")
SEPARATORS = (",", ";", "\t", "|")
PARQUET_MAGIC, GZIP_MAGIC = b"PAR1", b"\x1f\x8b"
DECIMAL_COMMA = re.compile(r"^\s*[+-]?\d*,\d+(?:[eE][+-]?\d+)?\s*$")
NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"  # every number a file holds, whole text
ZERO = r"[+-]?(?:0+(?:\.0*)?|\.0+)(?:[eE][+-]?[0-9]+)?"  # the numbers of NUMBER that are 0
READ_ERRORS = (OSError, EOFError, zlib.error, UnicodeDecodeError, csv.Error, MemoryError, pa.ArrowException)
LIMIT_OPTIONS = {  # ReadLimits field: its command-line option, and what it counts
    "max_bytes": ("--max-input-bytes", "bytes (a text file's, decompressed; the columns read from Parquet, decoded)"),
    "max_rows": ("--max-input-rows", "data rows (a text file's lines after the header, blank ones too)"),
    "max_columns": ("--max-input-columns", "columns (the header's, or the Parquet schema's)"),
    "max_line_bytes": ("--max-line-bytes", "bytes in one line of text (the header too) or in a Parquet footer"),
}
BLOCK = 1 << 20  # pyarrow's default block; a larger one when a line may be longer
COUNT = Interval(int, 1, 1 << 62, what="a positive count")  # each reading limit
SHORT_TEXT = 16  # characters: a text column no wider is a fixed-width numpy array, a wider one objects (_strings)


@dataclass(frozen=True)
class ReadLimits:
    """How much of an input file the readers take; a file past a limit is refused naming the file and the limit
    before what it bounds is allocated (the module's docstring; the fields: :data:`LIMIT_OPTIONS`).  The
    defaults take 100 million rows (Criteo's 45.8 million twice over) of 170 bytes on average."""
    max_bytes: int = 16 << 30
    max_rows: int = 100_000_000
    max_columns: int = 10_000
    max_line_bytes: int = 4 << 20

    def __post_init__(self):
        for field in dataclasses.fields(self):
            checked(field.name, getattr(self, field.name), COUNT)

    @classmethod
    def of(cls, limits) -> "ReadLimits":
        """``limits`` as ReadLimits: one already, a mapping of its fields, or None (the defaults)."""
        if limits is None or isinstance(limits, cls):
            return limits or cls()
        try:
            return cls(**limits)
        except TypeError:
            raise InputError(f"limits must be a ReadLimits or a mapping of its fields ({', '.join(LIMIT_OPTIONS)}), "
                             f"not {limits!r}") from None

    def past(self, path, found: str, field: str) -> InputError:
        """The refusal of ``path``, which holds ``found``: past the limit ``field``, and how to raise it."""
        return InputError(f"{path}: {found}, past the reading limit {field} = {getattr(self, field):,} (raise it with "
                          f"{LIMIT_OPTIONS[field][0]} N, or limits=ReadLimits({field}=N) in Python)")

    @property
    def block(self) -> int:
        """pyarrow's block of text: a line must fit in one."""
        return max(BLOCK, self.max_line_bytes + 2)


DEFAULT_LIMITS = ReadLimits()


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


def _gzip(path) -> bool:
    return _magic(path).startswith(GZIP_MAGIC)


def _open_text(path):
    if _gzip(path):
        return gzip.open(path, "rt", encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def line_of(path, i: int) -> str:
    """Where data row ``i`` (0-based) of a prediction file is, as its reader says it: ``line N`` of a text file
    (1-based, the header line 1, counting the blank lines pyarrow skips), ``row N`` of a Parquet file.  Read on
    the error path only: one pass over the file up to that line."""
    if _magic(path) == PARQUET_MAGIC:
        return f"row {i + 1}"
    wanted, seen = i + 2, 0  # the header and the rows before it are the lines with text before it
    with _open_text(path) as f:
        for number, line in enumerate(f, 1):
            seen += line not in ("\n", "\r\n", "\r")
            if seen == wanted:
                return f"line {number}"
    return f"line {i + 2}"


def where(path, i: int) -> str:
    """``path`` and the place of its data row ``i`` (:func:`line_of`), for a message."""
    return f"{path} {line_of(path, i)}"


@contextmanager
def _reading(path):
    """A failure of the libraries reading ``path`` (pyarrow, csv, gzip, UTF-8, memory) as an InputError naming it."""
    try:
        yield
    except READ_ERRORS as err:
        raise InputError(f"cannot read {path}: {err}") from None


def _header(path, limits: ReadLimits) -> str:
    """The header line (a BOM dropped), read from the file's first bytes: at most ``max_line_bytes`` of them."""
    try:
        with gzip.open(path, "rb") if _gzip(path) else open(path, "rb") as f:
            line = f.readline(limits.max_line_bytes + 1)
        header = line.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError, EOFError, zlib.error) as err:
        raise InputError(f"cannot read {path}: {err} (a CSV/TSV in UTF-8, gzip-compressed or not, or Parquet)") \
            from None
    if len(line) > limits.max_line_bytes and not line.endswith(b"\n"):
        raise limits.past(path, f"a header line longer than {limits.max_line_bytes:,} bytes", "max_line_bytes")
    if not header.strip():
        raise InputError(f"{path} is empty: expected a header")
    return header


def _fields(header: str, sep: str, path, limits: ReadLimits) -> list:
    """The header's column names as written (surrounding spaces kept: pyarrow names the columns so), counted
    before they are split."""
    if header.count(sep) >= limits.max_columns:
        raise limits.past(path, f"a header of more than {limits.max_columns:,} columns (split on {sep!r})",
                          "max_columns")
    try:
        return next(csv.reader([header.rstrip("\r\n")], delimiter=sep))
    except csv.Error as err:  # Python's csv takes fields of up to 131,072 characters
        raise InputError(f"{path} line 1 (the header): {err}: a column name that long is refused") from None


def _separator(path, header: str, sep, wanted, limits: ReadLimits) -> str:
    """The given separator, or the one of SEPARATORS that splits ``header`` into every wanted column."""
    if sep is not None:
        if len(sep) != 1:
            raise InputError(f"the separator must be one character, not {sep!r}")
        return sep
    fields = {s: _fields(header, s, path, limits) for s in SEPARATORS}
    fits = [s for s in SEPARATORS if set(wanted) <= {f.strip() for f in fields[s]}]
    if len(fits) == 1:
        return fits[0]
    if fits:
        raise InputError(f"{path}: the header splits into the columns {', '.join(wanted)} with each of "
                         f"{', '.join(map(repr, fits))}: name the separator with --sep")
    _check_header(path, max(fields.values(), key=len), wanted)
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


def _survey(path, limits: ReadLimits) -> None:
    """Refuse a text file past the limits before pyarrow parses it: its bytes (decompressed) streamed once in
    blocks no longer than a line may be, counting bytes, lines and the line that crosses blocks (every line
    within a block is shorter than the block); only one block is held."""
    packed = _gzip(path)
    if not packed and os.path.getsize(path) > limits.max_bytes:
        raise limits.past(path, f"{os.path.getsize(path):,} bytes", "max_bytes")
    size, total, newlines, run = min(BLOCK, limits.max_line_bytes), 0, 0, 0
    with pa.input_stream(path, compression="gzip" if packed else None) as stream:
        while block := stream.read(size):
            total += len(block)
            if total > limits.max_bytes:
                raise limits.past(path, f"more than {limits.max_bytes:,} bytes" + " once decompressed" * packed,
                                  "max_bytes")
            first = block.find(b"\n")
            if first >= 0:
                _check_line(path, run + first, newlines + 1, limits)
                newlines += block.count(b"\n")
                run = len(block) - 1 - block.rfind(b"\n")
            else:
                run += len(block)
            _check_line(path, run, newlines + 1, limits)
            if newlines - 1 > limits.max_rows:  # the header's line is not a row
                raise limits.past(path, f"more than {limits.max_rows:,} rows", "max_rows")
    if run and newlines > limits.max_rows:  # a last line without its newline
        raise limits.past(path, f"more than {limits.max_rows:,} rows", "max_rows")


def _check_line(path, length: int, line: int, limits: ReadLimits) -> None:
    if length > limits.max_line_bytes:
        raise limits.past(path, f"line {line:,} is longer than {limits.max_line_bytes:,} bytes", "max_line_bytes")


def read_table(path, columns, sep: str = None, types: dict = None, limits: ReadLimits = DEFAULT_LIMITS) -> dict:
    """{column: pyarrow array} of the ``columns`` of a table (any order, names stripped, other columns ignored):
    text (strings, or a dictionary of them), or for a CSV the arrow type ``types`` names for a column (a float64
    column parsed without a text copy, a dictionary-encoded id column), where every value of the file converts.

    The first column, when it holds text and ``types`` asks no number of it, is an id: none may be empty.
    Raises InputError naming the file (and line) of the first problem, or the limit of ``limits`` the file is
    past before it is read; a typed column that does not convert, or whose numbers pyarrow reads more widely
    than :data:`NUMBER`, is read again as text.
    """
    path = str(path)
    with _reading(path):
        out = _parquet(path, columns, types or {}, limits) if _magic(path) == PARQUET_MAGIC else \
            _text_table(path, columns, sep, types, limits)
        if len(out[columns[0]]) == 0:
            raise InputError(f"{path} has a header but no data rows")
        ids = out[columns[0]]
        if (pa.types.is_string(ids.type) or pa.types.is_dictionary(ids.type)) and \
                not pa.types.is_floating((types or {}).get(columns[0], pa.string())):  # a number's own check
            _no_empty(ids, path, columns[0])
    return out


def _text_table(path, columns, sep, types, limits: ReadLimits) -> dict:
    """read_table of a text file: its header checked, the file surveyed, then parsed."""
    header = _header(path, limits)
    delimiter = _separator(path, header, sep, columns, limits)
    names = _fields(header, delimiter, path, limits)
    _check_header(path, names, columns)
    _survey(path, limits)
    raw = [n for n in names if n.strip() in columns]  # as the header spells them
    table = _typed_csv(path, delimiter, raw, types, limits) if types else None
    if table is None:
        table = _csv(path, delimiter, {n: pa.string() for n in raw}, limits)
    out = {}
    for name in table.column_names:  # one column at a time, each dropped from the table once trimmed
        column = table[name].combine_chunks()
        table = table.drop_columns([name])
        out[name.strip()] = _trimmed(column)
        del column
    return {c: out[c] for c in columns}


def _parquet(path, columns, types: dict, limits: ReadLimits) -> dict:
    """read_table of a Parquet file: its footer's length, row and column counts, the wanted columns' types (one
    value a row) and sizes checked before any data is read; text columns read as dictionaries (a value stored
    once is decoded once), then each column as :func:`_parquet_column` makes it."""
    metadata = _parquet_metadata(path, limits)
    schema = metadata.schema.to_arrow_schema()
    _check_header(path, schema.names, columns)
    raw = [n for n in schema.names if n.strip() in columns]
    for name in raw:
        kind = schema.field(name).type
        if pa.types.is_nested(kind):
            raise InputError(f"{path}: column {name.strip()!r} holds {kind}, values nested in each row: a column "
                             "read here holds one number or text a row (no list, struct or map)")
    leaves = {metadata.schema.column(i).path: i for i in range(metadata.num_columns)}
    stored = sum(metadata.row_group(g).column(leaves[name]).total_uncompressed_size
                 for g in range(metadata.num_row_groups) for name in raw)
    size = stored + 32 * metadata.num_rows * len(raw)  # the arrays they decode into: at most 32 bytes a value
    if size > limits.max_bytes:
        raise limits.past(path, f"columns {', '.join(raw)} of {size:,} bytes decoded (as its footer states them)",
                          "max_bytes")
    text = [n for n in raw if pa.types.is_string(schema.field(n).type) or pa.types.is_binary(schema.field(n).type)]
    table = pq.read_table(path, columns=raw, read_dictionary=text)
    out = {}
    for name in raw:
        column = _parquet_column(table[name].combine_chunks(), types.get(name.strip()))
        if column.null_count:
            raise InputError(f"{where(path, _first(column.is_null().to_numpy(zero_copy_only=False)))}: no "
                             f"{name.strip()} (a null)")
        out[name.strip()] = column
    return {c: out[c] for c in columns}


def _parquet_metadata(path, limits: ReadLimits):
    """A Parquet file's metadata, its footer's length checked before it is parsed, then its counts."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        f.seek(max(size - 8, 0))
        tail = f.read(8)
    if size < 12 or tail[4:] != PARQUET_MAGIC:
        raise InputError(f"cannot read {path}: a Parquet file's start without its end (truncated?)")
    footer = int.from_bytes(tail[:4], "little")
    if footer > limits.max_line_bytes:
        raise limits.past(path, f"a Parquet footer (its schema and index) of {footer:,} bytes", "max_line_bytes")
    metadata = pq.read_metadata(path)
    if metadata.num_columns > limits.max_columns:
        raise limits.past(path, f"{metadata.num_columns:,} columns", "max_columns")
    if metadata.num_rows > limits.max_rows:
        raise limits.past(path, f"{metadata.num_rows:,} rows", "max_rows")
    return metadata


def _parquet_column(column, kind):
    """A Parquet column as read_table gives it: numbers kept where ``kind`` is float64 (float64 and integers cast,
    other floats through their shortest text), a column for a dictionary ``kind`` dictionary-encoded, all else
    as text."""
    if kind == pa.float64() and (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)):
        return pc.cast(column if pa.types.is_float64(column.type) or pa.types.is_integer(column.type) else
                       pc.cast(column, pa.string()), pa.float64())
    if kind is not None and pa.types.is_dictionary(kind) and not pa.types.is_dictionary(column.type):
        column = pc.dictionary_encode(column)
    return _as_text(column)


def _as_text(column):
    """A Parquet column as text: its dictionary's values cast (its indices kept), booleans as 0/1."""
    if pa.types.is_dictionary(column.type):
        return pa.DictionaryArray.from_arrays(column.indices, _as_text(column.dictionary))
    return pc.cast(pc.cast(column, pa.int8()) if pa.types.is_boolean(column.type) else column, pa.string())


def _no_empty(column, path, name: str) -> None:
    empty = _texts_equal(column, "")
    if empty.any():
        raise InputError(f"{where(path, _first(empty))}: empty {name} id")


def _no_duplicate(ids, owners, path, name: str) -> None:
    """Refuse two rows of one client (``owners``: the client column, or None: one client's file) with the same
    id, naming the id and the file lines of its first two rows (a client's ranks are written by id)."""
    keys = _codes(ids)
    if owners is not None:
        keys = _codes(owners) * (int(keys.max()) + 1) + keys
    order = np.argsort(keys, kind="stable")  # the rows of one key in file order
    ordered = keys[order]
    again = np.flatnonzero(ordered[1:] == ordered[:-1]) + 1
    if len(again):
        second = int(order[again].min())  # the earliest row that repeats an id
        first = int(order[np.searchsorted(ordered, keys[second])])
        whose = f" of client {owners[second].as_py()!r}" if owners is not None else ""
        raise InputError(f"{path}: duplicate {name} {ids[second].as_py()!r}{whose} on {line_of(path, first)} "
                         f"and {line_of(path, second)} (each row's id must be unique within its client)")


def _codes(column) -> np.ndarray:
    """int64 per row of a text or dictionary column: the index of its value among the column's distinct values."""
    encoded = column if pa.types.is_dictionary(column.type) else pc.dictionary_encode(column)
    distinct = pc.dictionary_encode(encoded.dictionary).indices.to_numpy(zero_copy_only=False)  # a value twice in
    return distinct.astype(np.int64)[encoded.indices.to_numpy(zero_copy_only=False)]  # the dictionary: one code


def _csv_options(path, delimiter: str, raw, types: dict, limits: ReadLimits) -> dict:
    """pyarrow.csv.read_csv's arguments: the file (through gzip when compressed), a block a line fits in."""
    source = pa.input_stream(path, compression="gzip") if _gzip(path) else path
    return dict(input_file=source, read_options=pcsv.ReadOptions(block_size=limits.block),
                parse_options=pcsv.ParseOptions(delimiter=delimiter),
                convert_options=pcsv.ConvertOptions(column_types=types, include_columns=list(raw),
                                                    strings_can_be_null=False))


def _csv(path, delimiter: str, types: dict, limits: ReadLimits):
    try:
        return pcsv.read_csv(**_csv_options(path, delimiter, types, types, limits))
    except pa.ArrowInvalid as err:
        raise InputError(_parse_problem(path, delimiter, str(err))) from None


def _typed_csv(path, delimiter: str, raw, types: dict, limits: ReadLimits):
    """The CSV's columns ``raw`` (as the header spells them) with ``types`` applied, or None when the text path
    must read it: a value that does not convert, a missing number, or a number pyarrow may have read beyond
    :data:`NUMBER` (0, which may be an underflow, and the non-finite)."""
    typed = {n: types.get(n.strip(), pa.string()) for n in raw}
    try:
        table = pcsv.read_csv(**_csv_options(path, delimiter, raw, typed, limits))
    except (OSError, pa.ArrowException):
        return None
    if any(table[n].null_count for n in raw if n.strip() in types):
        return None
    if any(pc.any(pc.or_(pc.equal(table[n], 0), pc.invert(pc.is_finite(table[n])))).as_py()
           for n in raw if pa.types.is_floating(typed[n])):
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
            try:
                width = len(next(rows, []))
                for line, row in enumerate(rows, start=2):
                    if row and len(row) != width:
                        return f"{path} line {line}: expected {width} fields, found {len(row)}"
            except csv.Error as err:
                return f"{path} line {rows.line_num}: {err}"
    return f"cannot read {path}: {message}"


def _numbers(array, path, what: str, column: str, kind: str = None) -> np.ndarray:
    """float64 values of a text column (or of a float64 column: a CSV's the typed read checked, a Parquet file's
    numbers); InputError naming the file line of the first empty cell (the ``kind`` of value, default ``what``,
    and its ``column``), or the first text that is no number of :data:`NUMBER`, or one that underflows to 0 or
    overflows to infinity (``what`` and the text)."""
    if pa.types.is_floating(array.type):
        return array.to_numpy(zero_copy_only=False)
    values, bad = _parsed(array)
    if bad.any():
        i = _first(bad)
        text = array[i].as_py()
        problem = f"empty {kind or what} in column {column!r}" if text == "" else f"{what} {_not_a_number(text)}"
        raise InputError(f"{where(path, i)}: {problem}")
    return values


def _parsed(array) -> tuple:
    """(float64 per row, bool per row: not a number of :data:`NUMBER`, an underflow to 0 or an overflow) of a
    text column; a dictionary's values parsed once each.  pyarrow's cast takes a wider grammar (nan, inf,
    infinity), but what it takes beyond :data:`NUMBER` is never finite: only the rows it reads as 0 or as
    non-finite are looked at again, and the whole column only when the cast refuses some text."""
    if pa.types.is_dictionary(array.type):
        values, bad = _parsed(array.dictionary)
        rows = array.indices.to_numpy(zero_copy_only=False)
        return values[rows], bad[rows]
    try:
        values = pc.cast(array, pa.float64())
        bad = np.zeros(len(array), dtype=bool)
    except pa.ArrowInvalid:  # which texts it refused (the slow path, on refusal only)
        grammar = pc.fill_null(pc.match_substring_regex(array, f"^{NUMBER}$"), False)
        values = pc.cast(pc.if_else(grammar, array, "0"), pa.float64())
        bad = ~grammar.to_numpy(zero_copy_only=False)
    values = values.to_numpy(zero_copy_only=False)  # a null: NaN
    odd = np.flatnonzero(~np.isfinite(values) | (values == 0))
    if len(odd):
        texts = array.take(odd)
        distinct = pc.unique(texts)
        zeros = distinct.filter(pc.fill_null(pc.match_substring_regex(distinct, f"^{ZERO}$"), False))
        bad[odd] |= ~pc.fill_null(pc.is_in(texts, value_set=zeros), False).to_numpy(zero_copy_only=False)
    return values, bad


def _not_a_number(text) -> str:
    """Why ``text`` (a value :func:`_parsed` refused) is no number, for a message."""
    if text is None:
        return "is missing (a null)"
    if not re.fullmatch(NUMBER, text):
        hint = " (a decimal comma: write it with a point, e.g. 0.5)" if DECIMAL_COMMA.match(text) else \
            " (a number is written in ASCII digits: a sign, digits, a fraction, an exponent, e.g. -0.5 or 1e-3)"
        return f"{text!r} is not a number{hint}"
    if float(text) == 0:
        return f"{text!r} underflows to 0 (float64's least nonzero magnitude is 4.9e-324)"
    return f"{text!r} overflows to infinity (above 1.8e308 in magnitude, float64's greatest)"


def _strings(array) -> np.ndarray:
    """A text column as a numpy array through its dictionary (no Python object per row): fixed-width str when
    its longest value is short (4 bytes a character a row), else the dictionary's str objects shared (a pointer
    a row), so that one long value does not widen every row."""
    values, indices = _coded(array)
    return values[indices]


def _coded(array) -> tuple:
    """(the distinct texts of a text column, each row's index among them), through its dictionary; the texts
    fixed-width str when the longest is short, else str objects (:func:`_strings`)."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    encoded = array if pa.types.is_dictionary(array.type) else pc.dictionary_encode(array)
    values = encoded.dictionary.to_numpy(zero_copy_only=False)
    if (pc.max(pc.utf8_length(encoded.dictionary)).as_py() or 0) <= SHORT_TEXT:
        values = values.astype(str)
    return values, encoded.indices.to_numpy()


def _first(mask: np.ndarray) -> int:
    return int(np.argmax(mask))


def read_labels(array, path, positive_label: str = None) -> np.ndarray:
    """0/1 labels: the values 0 and 1 (``1.0`` too: numbers of :data:`NUMBER`), or, with ``positive_label``, a
    column of exactly two values of which that one is positive (e.g. True/False, -1/+1)."""
    if positive_label is not None:
        distinct = array.dictionary.take(pc.unique(array.indices)) if pa.types.is_dictionary(array.type) else \
            pc.unique(array)
        wanted = str(positive_label).strip()
        if len(distinct) != 2 or wanted not in distinct.to_pylist():
            values = distinct.take(pc.sort_indices(distinct)[:6]).to_pylist()
            found = ", ".join(repr(v) for v in values[:5]) + (", ..." if len(values) > 5 else "")
            raise InputError(f"{path}: with positive label {wanted!r} the label column must hold exactly two "
                             f"values, one of them {wanted!r}; found {found}")
        return _texts_equal(array, wanted).astype(np.int64)
    values, bad = _parsed(array)
    bad |= ~np.isin(values, (0.0, 1.0))
    if bad.any():
        i = _first(bad)
        raise InputError(f"{where(path, i)}: label {array[i].as_py()!r} is not 0 or 1 (a column of other "
                         "values, like True/False or -1/+1, needs --positive-label)")
    return values.astype(np.int64)


def read_evalset(path, encoder: ScoreEncoder = ScoreEncoder(), declared_clients=None,
                 both_classes: bool = True, sep: str = None, positive_label: str = None,
                 columns: Columns = Columns(), limits: ReadLimits = DEFAULT_LIMITS) -> EvalSet:
    """Load and validate every row of the first score column; raise InputError naming the file line of the first
    problem.  both_classes: require positives and negatives (False for one client's own file)."""
    return read_score_columns(path, columns, encoder, declared_clients, both_classes, sep, positive_label,
                              limits)[0]


def read_score_columns(path, columns: Columns = Columns(), encoder: ScoreEncoder = ScoreEncoder(),
                       declared_clients=None, both_classes: bool = True, sep: str = None,
                       positive_label: str = None, limits: ReadLimits = DEFAULT_LIMITS) -> tuple:
    """(the evaluation set of the first score column, the scores of every column (M, columns), the id column's values
    or None, the weight column's numbers or None) of a prediction file with the ``columns`` named (several score
    columns: models scored on the same rows); every score column is checked as the first, and problems are named by
    file line. Without a client column (``columns.client`` None) every row is the one declared client's.  A file
    past ``limits`` is refused before it is read."""
    if columns.client is None and (declared_clients is None or len(declared_clients) != 1):
        raise InputError("a file without a client column holds one client's rows: name that client")
    text = pa.dictionary(pa.int32(), pa.string())
    types = {**({columns.client: text} if columns.client else {}), columns.label: text,
             **{name: pa.float64() for name in columns.scores + ((columns.weight,) if columns.weight else ())}}
    table = read_table(path, columns.wanted, sep, types, limits)
    with _reading(path):
        owners = table.pop(columns.client) if columns.client else None
        coded = _coded(owners) if columns.client else \
            (np.array([declared_clients[0]]), np.zeros(len(table[columns.label]), dtype=np.int16))
        scores = [_numbers(table.pop(name), path, name, name, "score") for name in columns.scores]
        labels = read_labels(table.pop(columns.label), path, positive_label)
        weights = _numbers(table.pop(columns.weight), path, "weight", columns.weight) if columns.weight else None
        ids = None
        if columns.id:
            _no_empty(table[columns.id], path, columns.id)
            _no_duplicate(table[columns.id], owners, path, columns.id)
            ids = _strings(table.pop(columns.id))
        del owners  # each column freed once converted
    pa.default_memory_pool().release_unused()  # the text the pool keeps: 0.3 GB at 4.6M rows, before the shares
    named = len(columns.scores) > 1  # say which column a problem is in when there are several

    def locate(name):
        return lambda i: where(path, i) + (f" ({name})" if named else "")

    sets = [EvalSet.build(None, column, labels, encoder, declared_clients, locate=locate(name),
                          both_classes=both_classes, coded=coded) for name, column in zip(columns.scores, scores)]
    return sets[0], scores[0][:, None] if len(scores) == 1 else np.stack(scores, axis=1), ids, weights


USER_COLUMNS = {"gini": ("user", "value"), "kendall": ("user", "a", "b")}


def read_user_values(path, kernel: str, sep: str = None, limits: ReadLimits = DEFAULT_LIMITS) -> np.ndarray:
    """One row per user: ``user,value`` (gini, a value in [0, 1]) or ``user,a,b`` (kendall, integer ratings)."""
    table = read_table(path, USER_COLUMNS[kernel], sep, limits=limits)
    fields = USER_COLUMNS[kernel][1:]
    with _reading(path):
        values = np.stack([_numbers(table[c], path, "value" if kernel == "gini" else "rating", c) for c in fields],
                          axis=1)
    bad, what = (~((values >= 0) & (values <= 1)), "lies outside [0, 1]") if kernel == "gini" else \
        (values != np.round(values), "is not an integer")  # each value finite: _numbers refuses the others
    if bad.any():
        i, j = np.unravel_index(_first(bad.ravel()), bad.shape)
        name = "value" if kernel == "gini" else "rating"
        raise InputError(f"{where(path, i)}: {name} {table[fields[j]][i].as_py()!r} {what}")
    return values[:, 0] if kernel == "gini" else values.astype(np.int64)


def write_evalset(path, evalset: EvalSet) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(COLUMNS)
        for c, s, y in zip(evalset.client, evalset.score, evalset.label):
            out.writerow((c, repr(float(s)), int(y)))
