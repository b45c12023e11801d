"""Release hygiene and the red-team's bad inputs (the red team's items 4 and 5).

mpc-central's JSON, stdout and stderr hold only the released values and
public parameters, never the exact P, N or AUC; every DP protocol needs an
explicit --epsilon; the JSON carries the std and a 95% interval computed
from the release.  Each bad input exits 2 with a message naming it, writes
nothing and starts no MPC process.
"""
import json
import re
import subprocess
import sys
import time

import numpy as np
import pytest

from mpc_auc.cli import main
from mpc_auc.csv_io import write_evalset
from mpc_auc.dataset import EvalSet
from mpc_auc.protocols.clear_auc import rank_sum_auc
from mpc_auc.protocols.dp.central_law import CentralNoise, analytic_std
from mpc_auc.synthetic import synthetic_evalset


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    directory = tmp_path_factory.mktemp("hygiene")
    evalset = synthetic_evalset(m=613, positives=157, clients=3, seed=17)
    write_evalset(directory / "in.csv", evalset)
    return directory, evalset


def _token(number) -> str:
    """The integer as a whole number in text (not part of a longer number, nor of a word such as the provenance's
    git commit hash, which holds any three digits now and then)."""
    return rf"(?<![\w.]){re.escape(str(number))}(?!\w)"


def test_mpc_central_shows_no_exact_p_n_or_auc(data):
    directory, evalset = data
    out = directory / "central.json"
    for _ in range(6):  # P(Z_P = 0) = 0.24 at eps 0.5: then the released count is the exact one, legitimately
        proc = subprocess.run([sys.executable, "-m", "mpc_auc", "run", "--input", str(directory / "in.csv"),
                               "--protocol", "mpc-central", "--epsilon", "1", "--out", str(out)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        record = json.loads(out.read_text())
        if record["revealed"][1] != f"noisy P = {evalset.positives}":
            break
    auc = rank_sum_auc(evalset.score, evalset.label)
    assert record["auc"] != auc  # the release is noisy
    exact = [evalset.positives, evalset.negatives]
    texts = {"json": out.read_text(), "stdout": proc.stdout, "stderr": proc.stderr}
    released = [record["auc"], record["std"], *record["ci"]]  # noisy: their digits may start like the exact AUC
    for where, text in texts.items():
        text = text.replace(str(directory), "<tmp>")  # pytest's folder name carries a run number (pytest-157)
        for value in released:
            text = text.replace(repr(value), "<released>").replace(f"{value:.15f}", "<released>")  # JSON, stdout
        for number in exact:
            assert not re.search(_token(number), text), f"exact count {number} in {where}"
        for digits in (4, 6, 10, 15):
            assert f"{auc:.{digits}f}" not in text, f"exact AUC in {where}"
        assert repr(auc) not in text
    noise = CentralNoise(1.0)
    std = record["std"]
    assert 0.5 < std / analytic_std(evalset.m, evalset.positives, auc, noise) < 2
    assert record["ci"][0] <= record["auc"] <= record["ci"][1]


@pytest.mark.parametrize("argv, message", [
    (["run", "--protocol", "mpc-central"], "it needs epsilon"),
    (["run", "--protocol", "mpc-central", "--epsilon", "2000"], "too large"),
    (["run", "--protocol", "mpc-central", "--epsilon", "1e-25"], "too small"),
    (["ustat", "--kernel", "auc"], "it needs epsilon"),
], ids=["no-epsilon", "huge-epsilon", "tiny-epsilon", "ustat-no-epsilon"])
def test_dp_budget_must_be_given_and_drawable(data, capsys, argv, message):
    directory, _ = data
    out = directory / "never.json"
    assert main(argv + ["--input", str(directory / "in.csv"), "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def _run(args, capsys):
    code = main(args)
    return code, capsys.readouterr().err


def test_bad_out_paths_are_refused_before_any_work(data, capsys):
    directory, _ = data
    source = directory / "in.csv"
    before = source.read_bytes()
    cases = [
        (["--out", str(directory / "missing" / "r.json")], "does not exist"),
        (["--out", str(directory)], "is a directory"),
        (["--out", str(source)], "is one of this command's inputs"),
        (["--out", str(directory / "r.json"), "--ranks-dir", str(directory / "missing" / "ranks")],
         "new directory inside an existing one"),
        (["--out", str(directory / "r.json"), "--timeout", "nan"], None),
        (["--out", str(directory / "r.json"), "--timeout", "inf"], None),
    ]
    for extra, message in cases:
        if message is None:  # argparse: exit 2 with usage
            with pytest.raises(SystemExit) as stop:
                main(["run", "--input", str(source)] + extra)
            err = capsys.readouterr().err
            assert stop.value.code == 2 and "timeout must be a number of seconds: a number, finite" in err
            continue
        code, err = _run(["run", "--input", str(source)] + extra, capsys)
        assert code == 2 and message in err, (extra, err)
    assert source.read_bytes() == before and not (directory / "r.json").exists()


def test_bad_client_ids_and_float32_range_are_refused(tmp_path, capsys):
    source = tmp_path / "in.csv"
    for client, message in (("a\x07b", "control character"), ("x" * 300, "at most 256")):
        source.write_text(f"client,score,label\n{client},0.1,0\nok,0.9,1\n")
        code, err = _run(["run", "--input", str(source), "--out", str(tmp_path / "r.json")], capsys)
        assert code == 2 and message in err
    source.write_text("client,score,label\na,0.1,0\nb,0.9,1\n")
    code, err = _run(["run", "--input", str(source), "--out", str(tmp_path / "r.json"), "--score-dtype", "float32",
                      "--score-range", "0", "1e39"], capsys)
    assert code == 2 and "exceeds the float32 range" in err
    assert not (tmp_path / "r.json").exists()


def test_rank_files_have_collision_free_names(tmp_path):
    rows = "client,score,label\nclient-1,0.1,0\na/b,0.2,1\nclient,0.3,0\n/,0.4,1\n"
    (tmp_path / "in.csv").write_text(rows)
    ranks = tmp_path / "ranks"
    assert main(["run", "--input", str(tmp_path / "in.csv"), "--out", str(tmp_path / "r.json"),
                 "--ranks-dir", str(ranks)]) == 0
    files = sorted(ranks.iterdir())
    assert len(files) == 4  # one per client, none overwritten
    owners = [f.read_text().splitlines()[0] for f in files]
    assert owners == [f"# client {c}: global 1-based mid-rank of each of its rows (ties share their mean rank)"
                      for c in ("client-1", "a/b", "client", "/")]


def test_grouping_many_clients_is_fast():
    m = 40_000
    evalset = EvalSet.build([f"c{i}" for i in range(m)], np.random.default_rng(0).random(m), np.arange(m) % 2)
    start = time.perf_counter()
    groups = evalset.clients()
    assert time.perf_counter() - start < 2.0  # O(M log M); the O(K M) version took 23 s
    assert len(groups) == m and groups[123][0] == "c123" and groups[123][1][0] == evalset.score[123]
