"""Prediction files as they come: named columns, extra columns ignored, the separator sniffed, Parquet and gzip
known by their bytes whatever the file's name, and an id column carried into each client's rank file; every
variant gives the clean CSV's AUC, and each malformed one is refused by name."""
import csv
import gzip
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy.stats import rankdata
from sklearn.metrics import roc_auc_score

from mpc_auc.cli import main
from mpc_auc.synthetic import synthetic_evalset

OPTIONS = ["--client-col", "site", "--score-col", "p_hat", "--label-col", "outcome", "--id-col", "record"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The clean CSV and the same rows as a hospital exports them: other names, extra columns, ids."""
    directory = tmp_path_factory.mktemp("predictions")
    evalset = synthetic_evalset(m=300, clients=3, seed=27, decimals=2)
    ids = [f"rec-{i:04d}" for i in range(evalset.m)]
    rows = list(zip(evalset.client, evalset.score, evalset.label))
    with open(directory / "clean.csv", "w", newline="") as f:
        csv.writer(f).writerows([("client", "score", "label")] + [(c, repr(float(s)), int(y)) for c, s, y in rows])
    wide = [("record", "age", "site", "p_hat", "outcome", "note")] + [
        (i, 40 + k % 30, c, repr(float(s)), int(y), "free text, with a comma") for k, (i, (c, s, y)) in
        enumerate(zip(ids, rows))]
    with open(directory / "export.txt", "w", newline="") as f:
        csv.writer(f, delimiter=";").writerows(wide)
    with open(directory / "export.tab", "w", newline="") as f:
        csv.writer(f, delimiter="\t").writerows(wide)
    (directory / "export-gz").write_bytes(gzip.compress((directory / "export.tab").read_bytes()))
    pq.write_table(pa.table({"record": ids, "site": evalset.client, "p_hat": evalset.score, "outcome": evalset.label,
                             "age": np.arange(evalset.m)}), directory / "export-parquet")
    return directory, evalset, ids


def _auc(tmp_path, path, *extra, protocol="clear"):
    out = tmp_path / f"{path.name}-{protocol}.json"
    assert main(["--quiet", "run", "--input", str(path), "--protocol", protocol, "--out", str(out), *extra]) == 0
    return json.loads(out.read_text())["auc"]


@pytest.mark.parametrize("name", ["export.txt", "export.tab", "export-gz", "export-parquet"])
def test_every_export_gives_the_clean_csvs_auc(files, tmp_path, name):
    directory, evalset, _ = files
    clean = _auc(tmp_path, directory / "clean.csv")
    assert abs(clean - roc_auc_score(evalset.label, evalset.score)) < 1e-15  # the exact fraction, rounded once
    assert _auc(tmp_path, directory / name, *OPTIONS) == clean


def test_the_ids_travel_into_each_clients_rank_file_with_one_based_ranks(files, tmp_path):
    directory, evalset, ids = files
    ranks = tmp_path / "ranks"
    auc = _auc(tmp_path, directory / "export-parquet", *OPTIONS, "--ranks-dir", str(ranks), protocol="mpc-exact")
    assert abs(auc - roc_auc_score(evalset.label, evalset.score)) < 1e-12
    expected = dict(zip(ids, rankdata(evalset.score)))  # 1-based mid-ranks, as scipy's
    seen = {}
    for path in sorted(ranks.iterdir()):
        lines = path.read_text().splitlines()
        assert lines[0].startswith("# client ") and "1-based mid-rank" in lines[0] and lines[1] == "id,rank"
        seen.update((key, float(rank)) for key, rank in csv.reader(lines[2:]))
    assert seen == expected


@pytest.mark.parametrize("text, extra, why", [
    ("site;p_hat;outcome\na;0,5;1\nb;0,2;0\n", [], "p_hat '0,5' is not a number (a decimal comma"),
    ("site,p,outcome\na,0.5,1\n", [], "missing column(s) p_hat; the header has site, p, outcome"),
    ("site,p_hat,outcome,p_hat\na,0.5,1,0.4\n", [], "p_hat appear more than once"),
    ("site;p_hat;outcome;x,site,p_hat,outcome\na;0.5;1;q,a,0.5,1\n", [], "name the separator with --sep"),
    ("record,site,p_hat,outcome\n,a,0.5,1\nr2,b,0.2,0\n", ["--id-col", "record"], "line 2: empty record id"),
    ("site,p_hat,outcome\na,0.5,1\n", ["--score-col", "p_hat,p_hat"], "must be distinct"),
    ("site,p_hat,outcome\na,0.5,1\nb,,0\n", [], "bad line 3: empty score in column 'p_hat'"),
    ("record,site,p_hat,outcome\nr1,a,0.5,1\nr1,b,0.2,0\nr2,a,0.4,0\nr1,a,0.3,1\n", ["--id-col", "record"],
     "bad: duplicate record 'r1' of client 'a' on line 2 and line 5 (each row's id must be unique within its client)"),
    ("site,p_hat,outcome\n\na,0.5,1\n\r\n\nb,abc,0\n", [], "bad line 6: p_hat 'abc' is not a number"),  # blank lines
    ("site,p_hat,outcome\n\n\na,0.5,1\nb,0.2,7\n", [], "bad line 5: label '7' is not 0 or 1"),
])
def test_malformed_exports_are_refused_by_name(tmp_path, capsys, text, extra, why):
    path = tmp_path / "bad"
    path.write_text(text)
    out = tmp_path / "r.json"
    code = main(["run", "--input", str(path), "--protocol", "clear", "--out", str(out), "--client-col", "site",
                 "--score-col", "p_hat", "--label-col", "outcome", *extra])
    assert code == 2 and why in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize("text, extra, why", [
    ("score,label\n0.5,1\n,0\n", [], " line 3: empty score in column 'score'"),
    ("record,score,label\nr1,0.5,1\nr2,0.4,0\nr1,0.3,1\n", ["--id-col", "record"],
     ": duplicate record 'r1' on line 2 and line 4 (each row's id must be unique within its client)"),
])
def test_client_submit_names_an_empty_score_and_a_duplicate_id_by_line(tmp_path, capsys, text, extra, why):
    """``client submit`` reads its file before it dials: one line naming the file line, no numpy repr."""
    path = tmp_path / "rows.csv"
    path.write_text(text)
    code = main(["client", "submit", "--deployment", str(tmp_path / "none.yaml"), "--evaluation", "e", "--client",
                 "north", "--key", str(tmp_path / "none.key"), "--input", str(path), *extra])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and lines == [f"mpc-auc: error: {path}{why}"]


def test_a_gzip_file_that_is_not_text_is_named(tmp_path, capsys):
    path = tmp_path / "data"
    path.write_bytes(gzip.compress(b"\xff\xfe\x00binary"))
    assert main(["run", "--input", str(path), "--protocol", "clear", "--out", str(tmp_path / "r.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_the_api_reads_the_same_files(files):
    import mpc_auc

    directory, evalset, ids = files
    rows = mpc_auc.read_predictions(directory / "export-gz", client_col="site", score_col="p_hat",
                                    label_col="outcome", id_col="record")
    assert list(rows.columns) == ["client", "p_hat", "label", "id"] and rows.id.tolist() == ids
    assert np.array_equal(rows.p_hat, evalset.score) and np.array_equal(rows.label, evalset.label)
    result = mpc_auc.roc_auc_score(rows.label, rows.p_hat, clients=rows.client, protocol="clear")
    assert abs(result.auc - roc_auc_score(evalset.label, evalset.score)) < 1e-15
    assert "read_predictions" in dir(mpc_auc) and set(mpc_auc.__all__) <= set(dir(mpc_auc))
