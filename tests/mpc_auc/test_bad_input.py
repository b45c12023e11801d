"""Every bad input gets a clear error naming the problem, exit status 2 and no output file."""
import numpy as np
import pytest

from mpc_auc.cli import main
from mpc_auc.dataset import EvalSet
from mpc_auc.protocols.errors import InputError

GOOD = "client,score,label\na,0.9,1\na,0.2,0\nb,0.4,0\nb,0.7,1\n"

CASES = {
    "nan score": ("client,score,label\na,nan,1\na,0.2,0\n", "line 2: score 'nan' is not a number"),
    "inf score": ("client,score,label\na,0.5,1\na,inf,0\n", "line 3: score 'inf' is not a number"),
    "-inf score": ("client,score,label\na,-inf,1\na,0.2,0\n", "score '-inf' is not a number"),
    "score above range": ("client,score,label\na,1.5,1\na,0.2,0\n", "outside the declared range"),
    "score below range": ("client,score,label\na,0.5,1\na,-0.2,0\n", "line 3: score -0.2 is outside"),
    "score not a number": ("client,score,label\na,high,1\na,0.2,0\n", "score 'high' is not a number"),
    "label 2": ("client,score,label\na,0.5,2\na,0.2,0\n", "line 2: label '2' is not 0 or 1"),
    "label text": ("client,score,label\na,0.5,yes\na,0.2,0\n", "label 'yes' is not 0 or 1"),
    "label 0.5": ("client,score,label\na,0.5,0.5\na,0.2,0\n", "label '0.5' is not 0 or 1"),
    "no positives": ("client,score,label\na,0.5,0\nb,0.2,0\n", "no positive labels"),
    "no negatives": ("client,score,label\na,0.5,1\nb,0.2,1\n", "no negative labels"),
    "missing column": ("client,score\na,0.5\n", "missing column(s) label"),
    "duplicate column": ("client,score,label,score\na,0.5,1,3\n", "score appear more than once"),
    "decimal comma": ("client;score;label\na;0,5;1\na;0,2;0\n", "score '0,5' is not a number (a decimal comma"),
    "ambiguous separator": ("client;score;label;x,client,score,label\na;0.5;1;q,a,0.5,1\n", "name the separator"),
    "short row": ("client,score,label\na,0.5,1\na,0.2\n", "line 3: expected 3 fields, found 2"),
    "long row": ("client,score,label\na,0.5,1,7\n", "line 2: expected 3 fields, found 4"),
    "empty client id": ("client,score,label\n,0.5,1\na,0.2,0\n", "line 2: empty client id"),
    "empty score": ("client,score,label\na,0.5,1\na,,0\n", "line 3: empty score in column 'score'"),
    "label benign": ("client,score,label\na,0.5,benign\na,0.2,malignant\n", "line 2: label 'benign' is not 0 or 1"),
    "header only": ("client,score,label\n", "no data rows"),
    "empty file": ("", "is empty"),
}


def _run(tmp_path, text, *extra, raw=None):
    src = tmp_path / "in.csv"
    if raw is not None:
        src.write_bytes(raw)
    elif text is not None:
        src.write_text(text)
    out = tmp_path / "result.json"
    code = main(["run", "--input", str(src), "--protocol", "clear", "--out", str(out), *extra])
    return code, out


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_csv_exits_2_with_message_and_no_output(tmp_path, capsys, name):
    """Each on one line, with plain values (no numpy repr such as np.str_('benign'))."""
    text, message = CASES[name]
    code, out = _run(tmp_path, text)
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1 and "np." not in err
    assert not out.exists() and not list(tmp_path.glob(".mpc-auc-*"))


def test_client_with_no_rows(tmp_path, capsys):
    code, out = _run(tmp_path, GOOD, "--clients", "a,b,c")
    assert code == 2 and "client 'c' has no rows" in capsys.readouterr().err and not out.exists()


def test_row_of_undeclared_client(tmp_path, capsys):
    code, out = _run(tmp_path, GOOD, "--clients", "a")
    assert code == 2 and "client 'b' is not among the declared clients" in capsys.readouterr().err


def test_unreadable_files(tmp_path, capsys):
    out = tmp_path / "result.json"
    assert main(["run", "--input", str(tmp_path / "missing.csv"), "--out", str(out)]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert main(["run", "--input", str(tmp_path), "--out", str(out)]) == 2  # a directory
    assert "cannot read" in capsys.readouterr().err
    code, _ = _run(tmp_path, None, raw=b"\xff\xfe\x00binary")
    assert code == 2 and "cannot read" in capsys.readouterr().err
    assert not out.exists()


def test_good_file_passes_and_writes(tmp_path):
    code, out = _run(tmp_path, GOOD)
    assert code == 0 and out.exists()


def test_api_errors_name_the_problem():
    with pytest.raises(InputError, match="mismatched lengths"):
        EvalSet.build(["a", "a"], [0.1, 0.2], [1])
    with pytest.raises(InputError, match="client 'b' has no rows"):
        EvalSet.from_clients({"a": ([0.1, 0.9], [0, 1]), "b": ([], [])})
    with pytest.raises(InputError, match="client 'a': 2 scores but 1 labels"):
        EvalSet.from_clients({"a": ([0.1, 0.9], [0])})
    with pytest.raises(InputError, match="not a finite"):
        EvalSet.from_clients({"a": (np.array([np.nan, 0.5]), [0, 1])})


@pytest.mark.parametrize("option, value, message", [
    ("--timeout", "1e300", "timeout must be a number of seconds: a number, finite, > 0 and <= 1e+06; not 1e+300"),
    ("--timeout", "nan", "timeout must be a number of seconds: a number, finite"),
    ("--epsilon", "0", "epsilon must be a privacy budget epsilon: a number, finite, > 0; not 0.0"),
    ("--epsilon", "-1", "must be a privacy budget epsilon"),
    ("--epsilon", "inf", "epsilon must be a privacy budget epsilon: a number, finite"),
    ("--alpha", "1", "must be a share strictly between 0 and 1"),
    ("--port", "70000", "must be a TCP port"),
])
def test_numeric_options_are_range_checked(tmp_path, capsys, option, value, message):
    src = tmp_path / "in.csv"
    src.write_text(GOOD)
    with pytest.raises(SystemExit) as stop:
        main(["run", "--input", str(src), "--protocol", "mpc-central", "--out", str(tmp_path / "r.json"),
              option, value] + (["--epsilon", "1"] if option != "--epsilon" else []))
    assert stop.value.code == 2 and message in capsys.readouterr().err


def test_an_unwritable_out_is_refused_before_any_work_and_charges_nothing(tmp_path, capsys):
    """--out under /proc (its directory exists, takes no new file): exit 2 before any role starts, so the
    ledger is never created; an unwritable ledger directory is refused the same way."""
    src = tmp_path / "in.csv"
    src.write_text(GOOD)
    ledger = tmp_path / "ledger"
    code = main(["run", "--input", str(src), "--protocol", "mpc-central", "--epsilon", "1", "--out",
                 "/proc/mpc-auc-result.json", "--ledger", str(ledger)])
    assert code == 2 and "cannot write in /proc" in capsys.readouterr().err
    assert not ledger.exists()
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the ledger directory should be")
    code = main(["run", "--input", str(src), "--protocol", "mpc-central", "--epsilon", "1", "--out",
                 str(tmp_path / "r.json"), "--ledger", str(blocked / "sub")])
    assert code == 2 and "cannot write the parties' privacy ledger" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_no_command_writes_over_its_inputs(tmp_path, capsys):
    roster = tmp_path / "a.roster.yaml"
    assert main(["client", "keygen", "--name", "a", "--key", str(tmp_path / "a.key"), "--roster", str(roster)]) == 0
    before = roster.read_text()
    code = main(["evaluation", "open", "--deployment", str(tmp_path / "deployment.yaml"), "--id", "e",
                 "--roster", str(roster), "--out", str(roster)])
    assert code == 2 and "is one of this command's inputs" in capsys.readouterr().err
    assert roster.read_text() == before
    code = main(["client", "keygen", "--name", "b", "--key", str(tmp_path / "b"), "--roster", str(tmp_path / "b")])
    assert code == 2 and "same file" in capsys.readouterr().err
