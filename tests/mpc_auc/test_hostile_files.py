"""Hostile input files are refused by name before the reader allocates what they hold (csv_io.ReadLimits;
docs/api.md, "Reading limits"), and every number a file holds follows one grammar (csv_io.NUMBER).

The files come from mpc_auc.sims.security.hostile_inputs, which measures them at full size; here they are smaller, and
the limit they pass is lowered to match where writing a full-size one would take long."""
import gzip
import re

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

from mpc_auc import csv_io
from mpc_auc.api import read_predictions
from mpc_auc.cli import main
from mpc_auc.csv_io import NUMBER, Columns, ReadLimits, read_evalset, read_score_columns, read_table, read_user_values
from mpc_auc.protocols.errors import InputError
from mpc_auc.protocols.inputs.encoding import FINITE
from mpc_auc.sims.security.hostile_inputs import (GOOD, gzip_bomb, long_dictionary_value, long_header, measure,
                                         nested_scores, odd_number, parquet_bomb, wide_header)

WANTED = ("client", "score", "label")


def _refused(path, limits=csv_io.DEFAULT_LIMITS, *words) -> str:
    """The message of the InputError reading ``path`` raises; it names the file and each of ``words``."""
    with pytest.raises(InputError) as refusal:
        read_evalset(path, limits=limits)
    message = str(refusal.value)
    assert str(path) in message and all(word in message for word in words), message
    return message


def test_a_parquet_bomb_is_refused_by_its_row_count_before_any_data_is_read(tmp_path, monkeypatch):
    path = tmp_path / "bomb.parquet"
    parquet_bomb(path, 300_000, group=100_000)
    assert path.stat().st_size < 20_000  # 300,000 rows in a few kB
    with monkeypatch.context() as patched:
        patched.setattr(csv_io.pq, "read_table", lambda *a, **k: pytest.fail("data read before the limits"))
        _refused(path, ReadLimits(max_rows=299_999), "300,000 rows", "max_rows = 299,999", "--max-input-rows")
    assert len(read_table(path, WANTED, limits=ReadLimits(max_rows=300_000))["score"]) == 300_000


def test_a_parquet_files_footer_columns_and_decoded_size_are_held_to_the_limits(tmp_path):
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.table({"client": ["a", "b"], "score": [0.2, 0.7], "label": [0, 1], "x": [1, 2]}), path)
    _refused(path, ReadLimits(max_line_bytes=100), "a Parquet footer", "max_line_bytes = 100")
    _refused(path, ReadLimits(max_columns=3), "4 columns", "max_columns = 3", "--max-input-columns")
    _refused(path, ReadLimits(max_bytes=100), "columns client, score, label of", "decoded", "max_bytes = 100")
    assert read_evalset(path).m == 2


def test_a_long_dictionary_value_does_not_widen_every_row(tmp_path, monkeypatch):
    """A client id of 250 characters in every one of 200,000 rows, stored once: the rows share its str object
    (8 bytes a row); widened into fixed-width text (the weakened variant) the column takes 1,000 bytes a row."""
    rows, path = 200_000, tmp_path / "wide.parquet"
    long_dictionary_value(path, rows)
    got = read_evalset(path)
    assert got.client.dtype == object and got.client.nbytes == 8 * rows and got.client[1] == "b" * 250
    monkeypatch.setattr(csv_io, "SHORT_TEXT", 10 ** 6)
    assert read_evalset(path).client.nbytes == 1_000 * rows


def test_a_gzip_bomb_is_refused_by_its_rows_while_it_streams(tmp_path, monkeypatch):
    path = tmp_path / "bomb.gz"
    gzip_bomb(path, 2_000_000)
    assert path.stat().st_size < 100_000
    _refused(path, ReadLimits(max_rows=1_000_000), "more than 1,000,000 rows", "max_rows = 1,000,000")
    _refused(path, ReadLimits(max_bytes=10_000_000), "more than 10,000,000 bytes once decompressed",
             "--max-input-bytes")
    monkeypatch.setattr(csv_io, "_survey", lambda path, limits: None)  # the weakened reader: no survey
    assert len(read_table(path, WANTED, limits=ReadLimits(max_rows=1_000_000))["score"]) == 2_000_000


def test_a_long_line_is_refused_and_one_at_the_limit_reads(tmp_path):
    """Past pyarrow's 1 MiB block: a line of exactly max_line_bytes reads (its block is sized to hold it)."""
    limit = 3 << 20
    head = b"client,score,label,note\na,0.2,0,x\nb,0.7,1,"
    for extra, reads in ((0, True), (1, False)):
        path = tmp_path / f"long{extra}.csv"
        path.write_bytes(head + b"y" * (limit - len(b"b,0.7,1,") + extra) + b"\n")
        if reads:
            assert read_evalset(path, limits=ReadLimits(max_line_bytes=limit)).m == 2
        else:
            _refused(path, ReadLimits(max_line_bytes=limit), "line 3 is longer than 3,145,728 bytes")


def test_a_gzip_header_line_past_the_limit_is_refused_from_its_first_bytes(tmp_path):
    path = tmp_path / "header.gz"
    long_header(path, 8 << 20)
    _refused(path, csv_io.DEFAULT_LIMITS, "a header line longer than 4,194,304 bytes", "--max-line-bytes")
    _refused(path, ReadLimits(max_line_bytes=9 << 20), "field larger than field limit (131072): a column name")


def test_a_header_of_a_million_columns_is_refused_before_it_is_split(tmp_path):
    path = tmp_path / "wide.csv"
    wide_header(path, 1_000_000)
    _refused(path, csv_io.DEFAULT_LIMITS, "a header of more than 10,000 columns", "max_columns = 10,000")
    path.write_text("client,score,label," + ",".join("x" * 200_000 for _ in range(2)) + "\na,0.2,0,y,z\n")
    _refused(path, csv_io.DEFAULT_LIMITS, "line 1 (the header): field larger than field limit")


@pytest.mark.parametrize("kind", ["list", "struct"])
def test_nested_parquet_score_columns_are_refused_by_name(tmp_path, kind):
    path = tmp_path / f"{kind}.parquet"
    nested_scores(path, kind)
    _refused(path, csv_io.DEFAULT_LIMITS, f"column 'score' holds {kind}<", "(no list, struct or map)")


def test_broken_files_are_named_not_tracebacks(tmp_path):
    whole = gzip.compress(b"client,score,label\n" + b"a,0.5,1\n" * 10_000)
    cases = {"truncated.gz": whole[:len(whole) // 2], "truncated.parquet": b"PAR1" + b"\0" * 64,
             "bad-gzip": b"\x1f\x8b" + b"\0" * 64}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        assert "cannot read" in _refused(tmp_path / name)
    path = tmp_path / "null.parquet"
    pq.write_table(pa.table({"client": ["a", "b"], "score": [0.2, None], "label": [0, 1]}), path)
    _refused(path, csv_io.DEFAULT_LIMITS, "row 2: no score (a null)")  # a Parquet file's rows, not lines


ODD = {  # text: why the reader refuses it
    "0.5_1": "is not a number", "\u0660\u066b\u0665": "is not a number", "\u0660.\u0665": "is not a number",
    "\uff10.5": "is not a number", "0x1p-1": "is not a number", "nan": "is not a number", "-inf": "is not a number",
    "Infinity": "is not a number", "1e5 5": "is not a number", "1e-400": "underflows to 0",
    "-2e-324": "underflows to 0", "1e400": "overflows to infinity", "-1.8e308": "overflows to infinity",
}


@pytest.mark.parametrize("text", sorted(ODD))
@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_odd_number_forms_are_refused_by_name(tmp_path, text, kind):
    path = tmp_path / f"odd.{kind}"
    odd_number(path, text)
    if kind == "parquet":  # the same rows, the scores stored as text
        table = pcsv.read_csv(path, convert_options=pcsv.ConvertOptions(column_types={"score": pa.string()}))
        pq.write_table(table, path)
    place = "row 2" if kind == "parquet" else "line 3"  # a Parquet file's rows, a text file's lines
    _refused(path, csv_io.DEFAULT_LIMITS, f"{place}: score {text!r} {ODD[text]}")


NONZERO = ["0.5", "+.5e-3", "5.", "00.5", "1E+3", "4.9e-324", "3e-324", "1.7976931348623157e308", "  0.25 "]


@pytest.mark.parametrize("zeros, text_path", [([], False), (["-0", "0e-999", ".0", "0"], True)])
def test_the_grammars_numbers_are_read_as_float_reads_them(tmp_path, monkeypatch, zeros, text_path):
    """Through pyarrow's typed read, and through the text path (a 0 may be an underflow: it sends the file
    there): the same values."""
    numbers = NONZERO + zeros
    path = tmp_path / "numbers.csv"
    path.write_text("client,score,label\n" + "".join(f"a,{n},{i % 2}\n" for i, n in enumerate(numbers)))
    texts = []
    monkeypatch.setattr(csv_io, "_csv", lambda *args, read=csv_io._csv: texts.append(1) or read(*args))
    got = read_score_columns(path, encoder=FINITE, both_classes=False)[0].score
    assert all(re.fullmatch(NUMBER, n.strip()) for n in numbers) and bool(texts) == text_path
    assert got.tolist() == [float(n) for n in numbers]


def test_labels_weights_and_user_values_take_the_same_grammar(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("client,score,label,w\na,0.5,1,1\nb,0.2,1e-400,1\n")
    _refused(path, csv_io.DEFAULT_LIMITS, "line 3: label '1e-400' is not 0 or 1")
    path.write_text("client,score,label,w\na,0.5,1,1\nb,0.2,0,1_0\n")
    with pytest.raises(InputError, match=r"line 3: weight '1_0' is not a number"):
        read_score_columns(path, Columns(weight="w"))
    path.write_text("user,value\nu1,0.5\nu2,\u0665\n")
    with pytest.raises(InputError, match=r"line 3: value '\u0665' is not a number"):
        read_user_values(path, "gini")


def test_limits_are_checked_and_taken_by_the_api(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("client,score,label\na,0.2,0\nb,0.7,1\n")
    with pytest.raises(InputError, match="max_rows must be a positive count"):
        ReadLimits(max_rows=0)
    with pytest.raises(InputError, match="limits must be a ReadLimits or a mapping of its fields"):
        read_predictions(path, limits={"rows": 1})
    with pytest.raises(InputError, match=r"more than 1 rows, past the reading limit max_rows = 1 .*ReadLimits"):
        read_predictions(path, limits={"max_rows": 1})
    assert len(read_predictions(path, limits=ReadLimits(max_rows=2))) == 2


def test_the_commands_list_the_limits_and_refuse_in_one_line(tmp_path, capsys):
    for command in (["run"], ["ustat"], ["client", "submit"]):
        with pytest.raises(SystemExit):
            main([*command, "--help"])
        shown = capsys.readouterr().out
        assert all(option in shown for option, _ in csv_io.LIMIT_OPTIONS.values()), command
    path = tmp_path / "wide.csv"
    wide_header(path, 20_000)
    out = tmp_path / "r.json"
    assert main(["run", "--input", str(path), "--protocol", "clear", "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith("mpc-auc: error: ") and "max_columns = 10,000" in error
    assert main(["run", "--input", str(path), "--protocol", "clear", "--out", str(out),
                 "--max-input-columns", "30000"]) == 2  # read now: its one row is one class only
    assert "no negative labels" in capsys.readouterr().err and not out.exists()
    assert main(["run", "--input", str(path), "--protocol", "clear", "--out", str(out), "--max-input-rows", "0"]) == 2
    assert "max_rows must be a positive count" in capsys.readouterr().err


def test_refusals_stay_within_a_memory_ceiling(tmp_path):
    """In a child process each, as mpc-auc run reads them: a 256 MiB header line (gzip) and a million-column
    header peak within 64 MiB of reading a good 4-row file."""
    good = tmp_path / "good.csv"
    good.write_text(GOOD)
    baseline = measure(str(good), str(tmp_path))
    assert baseline["exit"] == 0
    for writer, size in ((long_header, 256 << 20), (wide_header, 1_000_000)):
        path = tmp_path / writer.__name__
        writer(path, size)
        got = measure(str(path), str(tmp_path))
        assert got["exit"] == 2 and got["lines"] == 1 and "past the reading limit" in got["error"], got
        assert got["peak_bytes"] - baseline["peak_bytes"] < 64 << 20, (writer.__name__, got, baseline)
