"""Inputs in every format the reader takes give the same rows and the same AUC as the CSV.

TSV (separator from the header), gzip, Parquet, a UTF-8 BOM with a trailing blank line, and labels
given as True/False or -1/+1 with --positive-label; problems named by line."""
import gzip
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sklearn.metrics import roc_auc_score

from mpc_auc.cli import main
from mpc_auc.csv_io import read_evalset, write_evalset
from mpc_auc.protocols.clear_auc import rank_sum_auc
from mpc_auc.synthetic import synthetic_evalset


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tables")
    evalset = synthetic_evalset(m=600, clients=3, seed=4, decimals=2)
    csv_path = directory / "rows.csv"
    write_evalset(str(csv_path), evalset)
    text = csv_path.read_text()
    paths = {"csv": csv_path}
    paths["tsv"] = directory / "rows.tsv"
    paths["tsv"].write_text(text.replace(",", "\t"))
    paths["csv.gz"] = directory / "rows.csv.gz"
    paths["csv.gz"].write_bytes(gzip.compress(text.encode()))
    paths["tsv.gz"] = directory / "rows.tsv.gz"
    paths["tsv.gz"].write_bytes(gzip.compress(text.replace(",", "\t").encode()))
    paths["bom"] = directory / "bom.csv"
    paths["bom"].write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode() + b"\r\n")
    paths["parquet"] = directory / "rows.parquet"
    pq.write_table(pa.table({"client": evalset.client, "score": evalset.score, "label": evalset.label}),
                   paths["parquet"])
    return evalset, paths


@pytest.mark.parametrize("kind", ["tsv", "csv.gz", "tsv.gz", "bom", "parquet"])
def test_every_format_reads_the_same_rows_and_auc_as_the_csv(tables, tmp_path, kind):
    evalset, paths = tables
    got = read_evalset(str(paths[kind]))
    assert np.array_equal(got.client, evalset.client) and np.array_equal(got.label, evalset.label)
    assert np.array_equal(got.score, evalset.score)
    out = tmp_path / "auc.json"
    assert main(["run", "--input", str(paths[kind]), "--protocol", "clear", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["auc"] == rank_sum_auc(evalset.score, evalset.label)  # the CSV's AUC


def test_the_mpc_run_on_parquet_equals_sklearn(tables, tmp_path):
    evalset, paths = tables
    out = tmp_path / "auc.json"
    assert main(["run", "--input", str(paths["parquet"]), "--out", str(out)]) == 0
    assert abs(json.loads(out.read_text())["auc"] - roc_auc_score(evalset.label, evalset.score)) < 1e-12


@pytest.mark.parametrize("positive, negative", [("True", "False"), ("+1", "-1"), ("yes", "no")])
def test_positive_label_maps_two_valued_labels(tables, tmp_path, positive, negative):
    evalset, _ = tables
    rows = ["client,score,label"] + [f"{c},{float(s)!r},{positive if y else negative}"
                                     for c, s, y in zip(evalset.client, evalset.score, evalset.label)]
    path = tmp_path / "labels.csv"
    path.write_text("\n".join(rows) + "\n")
    got = read_evalset(str(path), positive_label=positive)
    assert np.array_equal(got.label, evalset.label)
    assert main(["run", "--input", str(path), "--protocol", "clear", "--out", str(tmp_path / "o.json")]) == 2


def test_problems_are_named_by_line(tmp_path, capsys):
    cases = {
        "client\tscore\tlabel\na\t0.5\t1\nb\t0.2\n": "line 3: expected 3 fields, found 2",
        "client,score,label\na,0.5,1\nb,x,0\n": "line 3: score 'x' is not a number",
        "client,score,label\na,0.5,1\nb,0.2,True\n": "needs --positive-label",
        "client,score,label\na,0.5,1\n,0.2,0\n": "line 3: empty client id",
        "client,score,label\na,0.5,1\nb,0.2,0\nc,0.3,2\n": "line 4: label '2' is not 0 or 1",
    }
    for text, message in cases.items():
        path = tmp_path / "bad.csv"
        path.write_text(text)
        assert main(["run", "--input", str(path), "--protocol", "clear", "--out", str(tmp_path / "o.json")]) == 2
        assert message in capsys.readouterr().err, text
        assert not (tmp_path / "o.json").exists()
    path.write_text("client,score,label\na,0.5,yes\nb,0.2,no\nc,0.3,maybe\n")
    assert main(["run", "--input", str(path), "--positive-label", "yes", "--protocol", "clear",
                 "--out", str(tmp_path / "o.json")]) == 2
    assert "exactly two values" in capsys.readouterr().err
