"""The experiment commands: YAML configs checked by name, flags on top, strict JSON with provenance,
the effective config written and replayable, CSV, PNG and PDF, every option documented with its default."""
import argparse
import csv
import json
import math
import shutil
import subprocess
import sys

import pytest
import yaml

from mpc_auc.cli import main as cli_main
from mpc_auc.cli.parser import experiments, parser
from mpc_auc.results import read_strict_json, strict, write_json

EXAMPLE = "examples/compare.yaml"


def _mpc_auc(*argv, cwd=None):
    return subprocess.run([sys.executable, "-m", "mpc_auc", *argv], capture_output=True, text=True, timeout=600,
                          cwd=cwd)


def _files(out):
    return sorted(p.name for p in out.iterdir())


@pytest.mark.slow  # it measures: every mechanism at a tenth of Criteo, 100 draws (the formats: the next test)
def test_the_example_config_writes_strict_json_csv_png_and_pdf(tmp_path):
    """The acceptance command, its output moved to a temporary directory by a flag."""
    out = tmp_path / "cmp"
    done = _mpc_auc("compare", "--config", EXAMPLE, "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    assert _files(out) == ["compare.csv", "compare.json", "config.yaml", "rmse.pdf", "rmse.png"]
    result = read_strict_json(out / "compare.json")  # refuses NaN and Infinity
    config = yaml.safe_load(open(EXAMPLE))
    assert len(result["rows"]) == 1 + (len(config["protocols"]) - 1) * len(config["epsilons"])
    vanilla = result["rows"][0]
    assert vanilla["protocol"] == "fedauc-vanilla" and vanilla["epsilon"] is None and vanilla["rmse"] == 0
    prov = result["provenance"]
    assert prov["version"] and prov["seed"] == 1 and prov["arguments"]["config"] == EXAMPLE
    assert prov["created_utc"].endswith("+00:00") and prov["arguments"]["out"] == str(out)
    rows = list(csv.DictReader(open(out / "compare.csv")))
    assert len(rows) == len(result["rows"]) and rows[0]["epsilon"] == ""
    assert (out / "rmse.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "rmse.pdf").read_bytes()[:5] == b"%PDF-"


def test_the_written_config_repeats_the_experiment(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    config = tmp_path / "small.yaml"
    config.write_text("m: 2000\nclients: 4\nprotocols: [fedauc-rr, fedauc-lap-local, mpc-central]\n"
                      "epsilons: [1, 4]\ndraws: 5\n")  # no seed: one is drawn and recorded
    assert cli_main(["-q", "compare", "--config", str(config), "--out", str(first)]) == 0
    assert _files(first) == ["compare.csv", "compare.json", "config.yaml", "curve_error.pdf", "curve_error.png",
                             "curve_example.pdf", "curve_example.png", "curves.csv", "rmse.pdf", "rmse.png"]
    rows = list(csv.DictReader(open(first / "compare.csv")))
    assert len(rows) == len(read_strict_json(first / "compare.json")["rows"]) == 6
    curves = list(csv.DictReader(open(first / "curves.csv")))  # three DP curve mechanisms at each epsilon
    assert [(r["protocol"], float(r["epsilon"])) for r in curves] == [
        (name, eps) for name in ("mpc-dp-curve", "dpauc-threshold-roc", "dpauc-histogram-roc") for eps in (1, 4)]
    assert len(read_strict_json(first / "compare.json")["curves"]) == 6
    assert (first / "rmse.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (first / "rmse.pdf").read_bytes()[:5] == b"%PDF-"
    written = yaml.safe_load(open(first / "config.yaml"))
    assert written["seed"] is not None and written["draws"] == 5 and written["out"] == str(first)
    assert cli_main(["-q", "compare", "--config", str(first / "config.yaml"), "--out", str(second)]) == 0
    a, b = (read_strict_json(d / "compare.json")["rows"] for d in (first, second))
    assert [(r["protocol"], r["epsilon"], r["mean"]) for r in a] == [(r["protocol"], r["epsilon"], r["mean"])
                                                                       for r in b]
    a, b = (read_strict_json(d / "compare.json")["curves"] for d in (first, second))
    assert [r["curve_error"] for r in a] == [r["curve_error"] for r in b]


@pytest.mark.parametrize("text, flags, message", [
    ("epsilonz: [1]\n", [], "unknown parameter(s) epsilonz"),
    ("epsilons: [0, 1]\n", [], "epsilons must be a non-empty list of positive numbers"),
    ("draws: 1\n", [], "draws must be >= 2"),
    ("draws: ten\n", [], "draws must be an integer"),
    ("protocols: [fedauc-rr, rot13]\n", [], "protocols must be one of"),
    ("delta: 2\n", [], "delta must lie strictly between 0 and 1"),
    ("- a list\n", [], "must be a mapping of parameters"),
    ("m: [unclosed\n", [], "is not valid YAML"),
    ("m: 2000\n", ["--epsilons", "-1"], "epsilons must be a non-empty list of positive numbers"),
])
def test_a_bad_config_or_flag_is_refused_by_name_before_anything_is_written(tmp_path, capsys, text, flags, message):
    """By the command line's entry point in this process (its exit status is ``python -m mpc_auc``'s)."""
    config = tmp_path / "bad.yaml"
    config.write_text(text)
    out = tmp_path / "out"
    capsys.readouterr()
    assert cli_main(["compare", "--config", str(config), "--out", str(out), *flags]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and not out.exists(), err


def _table7(out, rows_per_eps: int) -> dict:
    """``mpc-auc table7`` without the MPC row into ``out``: its four files, every row of the table in table7.csv and
    table7.json (``rows_per_eps`` per epsilon), the Markdown table; the result."""
    assert cli_main(["-q", "table7", "--out", str(out), "--draws", "8", "--seed", "3", "--no-central"]) == 0
    assert _files(out) == ["config.yaml", "table7.csv", "table7.json", "table7.md"]
    result = read_strict_json(out / "table7.json")
    rows = list(csv.DictReader(open(out / "table7.csv")))
    assert len(rows) == len(result["rows"]) == 4 * rows_per_eps
    assert {r["row"] for r in rows} == {"RR", "GlobalLaplace", "LocalLaplace (IID)", "LocalLaplace (Non-IID)",
                                        "adaptive (IID)", "adaptive (non-IID)"}
    assert "| RR | 1 |" in (out / "table7.md").read_text()
    return result


@pytest.mark.slow  # it measures: the 458,407-row set at every client count (the formats: the next test)
def test_table7_stays_within_a_factor_2_of_the_papers_std(tmp_path):
    result = _table7(tmp_path / "t7", 4 * 7 + 2 * 4)  # per eps: 4 full rows, 2 with 4 columns
    for name, s in result["summary"].items():  # 8 draws: a std within a factor 2 of the paper's
        assert 0.5 < s["median"] < 2.0, (name, s)


def test_table7_writes_markdown_csv_and_json(tmp_path, monkeypatch):
    """The formats on a hundredth of the set (4,584 rows, P in proportion) at its two smallest client counts (10 and
    458: per eps 4 full rows, 2 with both columns); the stds against the paper's on the whole set: the slow test
    above (make test-all)."""
    from mpc_auc.sims.papers import fedauc_table7

    monkeypatch.setattr(fedauc_table7, "CRITEO_M", 4584)
    monkeypatch.setattr(fedauc_table7, "CRITEO_P", 1173)
    monkeypatch.setattr(fedauc_table7, "CLIENTS", fedauc_table7.CLIENTS[:2])
    assert _table7(tmp_path / "t7", 4 * 2 + 2 * 2)["m"] == 4584


def test_ustat_experiment_reports_both_accountings(tmp_path):
    out = tmp_path / "u"
    assert cli_main(["-q", "ustat-experiment", "--out", str(out), "--n", "300", "--kendall-n", "400", "--draws",
                     "4", "--epsilons", "1", "--seed", "2"]) == 0
    assert _files(out) == ["config.yaml", "mse.csv", "mse.json", "mse.pdf", "mse.png"]
    result = read_strict_json(out / "mse.json")
    change = result["all_pairs_accounting"]
    assert len(change) == 4
    for c in change:  # the PLD accountant lets 1.2-1.5x eps0 through: 1.4-2.3x less noise variance
        assert 1.4 < c["exact_ratio"] < 2.3, c
    assert {r["protocol"] for r in result["rows"]} >= {"all-pairs 2pc", "all-pairs 2pc (advanced only)",
                                                       "ustat-2pc k=1", "quantized-ldp"}


def _options(command: argparse.ArgumentParser, path=()):
    for action in command._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _options(child, path + (name,))
        elif action.option_strings and action.dest not in ("help", "version"):
            yield path, action, command


def test_every_option_has_help_and_shows_its_default():
    seen = 0
    for path, action, command in _options(parser(building=tuple(experiments()))):
        assert action.help, (path, action.option_strings)
        if action.default not in (None, False, argparse.SUPPRESS):
            formatter = command._get_formatter()
            assert "default" in formatter._get_help_string(action) % {"default": action.default}, (
                path, action.option_strings)
        seen += 1
    assert seen > 100


def test_strict_json_refuses_what_json_would_let_through(tmp_path):
    assert strict({"a": float("inf"), "b": [float("nan"), 1.5]}) == {"a": None, "b": [None, 1.5]}
    path = tmp_path / "x.json"
    write_json(path, {"epsilon": math.inf})
    assert read_strict_json(path) == {"epsilon": None}
    path.write_text('{"epsilon": Infinity}')  # what json.dump writes by default
    with pytest.raises(ValueError, match="Infinity"):
        read_strict_json(path)


def test_quiet_and_verbose(tmp_path):
    base = ["compare", "--m", "1000", "--clients", "2", "--protocols", "fedauc-rr", "--epsilons", "1", "--draws",
            "3", "--seed", "1"]
    quiet = _mpc_auc("--quiet", *base, "--out", str(tmp_path / "q"))
    verbose = _mpc_auc("--verbose", *base, "--out", str(tmp_path / "v"))
    assert quiet.returncode == verbose.returncode == 0
    assert quiet.stderr == "" and "fedauc-rr" in verbose.stderr and "rmse=" in verbose.stderr
    with pytest.raises(SystemExit) as stop:  # one or the other
        cli_main(["--quiet", "--verbose", *base])
    assert stop.value.code == 2


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_run_result_records_its_provenance(tmp_path):
    data, out = tmp_path / "d.csv", tmp_path / "r.json"
    data.write_text("client,score,label\na,0.1,0\na,0.7,1\nb,0.4,0\nb,0.9,1\n")
    assert cli_main(["-q", "run", "--input", str(data), "--out", str(out), "--protocol", "clear"]) == 0
    prov = read_strict_json(out)["provenance"]
    assert prov["arguments"]["input"] == str(data) and prov["arguments"]["protocol"] == "clear"
    assert prov["git_commit"] is None or len(prov["git_commit"].split("+")[0]) == 40
    assert json.loads(out.read_text())["auc"] == 1.0


def test_the_sort_steps_drive_a_bar_with_eta_on_a_terminal(monkeypatch):
    """On a terminal the roles' step messages become one tqdm bar; other messages stay status lines."""
    import io

    from mpc_auc import progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    progress.set_level(progress.NORMAL)
    handler = progress.RoleProgress()
    for step in list(range(6, 62, 6)) + [62]:
        handler("P0", f"oblivious radix sort of 5000 scores: step {step}/62")
    handler("P0", "tie groups and rank sum")
    text = screen.getvalue()
    assert "oblivious radix sort of 5000 scores" in text and "/62 [" in text and "step/s]" in text  # elapsed<ETA
    assert "[P0] oblivious" not in text and "[P0] tie groups and rank sum" in text


def test_compare_reads_a_tsv_with_two_valued_labels(tmp_path):
    """--input with --positive-label (and the separator from the header): the exact AUC matches sklearn."""
    from sklearn.metrics import roc_auc_score

    data = tmp_path / "d.tsv"
    rows = [("a" if i % 2 else "b", (i * 37 % 100) / 100, "yes" if (i * 37 % 100) > 40 + i % 7 else "no")
            for i in range(300)]
    data.write_text("client\tscore\tlabel\n" + "".join(f"{c}\t{v}\t{y}\n" for c, v, y in rows))
    out = tmp_path / "out"
    assert cli_main(["-q", "compare", "--input", str(data), "--positive-label", "yes", "--protocols", "fedauc-rr",
                     "--epsilons", "1", "--draws", "3", "--seed", "1", "--out", str(out)]) == 0
    truth = roc_auc_score([y == "yes" for _, _, y in rows], [v for _, v, _ in rows])
    assert abs(read_strict_json(out / "compare.json")["exact_auc"] - truth) < 1e-12
    done = _mpc_auc("compare", "--input", str(data), "--protocols", "fedauc-rr", "--out", str(tmp_path / "x"))
    assert done.returncode == 2 and "--positive-label" in done.stderr and not (tmp_path / "x").exists()
