"""The API's metrics (roc_auc_score's DeLong interval and one-vs-rest, average precision, the curves, evaluate)
and ``mpc-auc run --metrics``: the private values equal the clear ones and scikit-learn's; bad input is refused
by name before any process starts."""
import json

import numpy as np
import pytest
import sklearn.metrics as skm

import mpc_auc
from mpc_auc import metric_api, planner, rows
from mpc_auc.cli import main
from mpc_auc.csv_io import write_evalset
from mpc_auc.synthetic import synthetic_evalset

TOL = 1e-9


def _binary(seed=3, m=300):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, m)
    return y, np.round(np.clip(rng.normal(0.4 + 0.2 * y, 0.2), 0, 1), 2), rng.choice(["a", "b", "c"], m)


def _close(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return abs(a - b) < TOL


def test_evaluate_privately_equals_the_clear_report():
    y, s, c = _binary()
    private = mpc_auc.evaluate(y, s, clients=c, points=20)
    clear = mpc_auc.evaluate(y, s, clients=c, points=20, protocol="clear")
    assert list(private.value) == ["auc", "ci", "ap", "roc", "pr", "ks"] and _close(private.value, clear.value)
    assert abs(private["ap"] - skm.average_precision_score(y, s)) < TOL
    assert any("average precision" in line for line in private.revealed)
    text = json.dumps(private.to_dict(), allow_nan=False)  # strict JSON
    assert '"ks"' in text and private.m == 300 and private.clients == 3


def test_roc_auc_score_returns_delong_std_and_interval_with_labels_of_any_two_values():
    y, s, c = _binary(4)
    words = np.where(y == 1, "spam", "ham")  # the greater label is the positive class, as scikit-learn
    private = mpc_auc.roc_auc_score(words, s, clients=c)
    clear = mpc_auc.roc_auc_score(y, s, protocol="clear")
    assert abs(private.auc - skm.roc_auc_score(words, s)) < TOL
    assert abs(private.std - clear.std) < TOL and _close(private.ci, clear.ci)
    assert private.ci[0] < private.auc < private.ci[1] and "ci=(" in repr(private)
    assert mpc_auc.roc_auc_score(y, s, protocol="clear", ci=False).std is None
    flipped = mpc_auc.roc_auc_score(np.where(y == 1, -1, 1), s, protocol="clear")  # -1 < 1: 1 is positive
    assert abs(flipped.auc - skm.roc_auc_score(np.where(y == 1, -1, 1), s)) < TOL


@pytest.mark.parametrize("average", ["macro", "weighted"])
def test_one_vs_rest_equals_scikit_learn(average):
    rng = np.random.default_rng(5)
    y = rng.choice(["cat", "dog", "eel", "fox"], 240)
    s = rng.dirichlet(np.ones(4), 240)
    s[np.arange(240), np.searchsorted(["cat", "dog", "eel", "fox"], y)] += 0.3
    s = np.round(s, 1)
    s = s / s.sum(axis=1, keepdims=True)  # probabilities, as scikit-learn asks for, with ties
    expected = skm.roc_auc_score(y, s, multi_class="ovr", average=average)
    for protocol in ("mpc-exact", "clear"):
        found = mpc_auc.roc_auc_score(y, s, multi_class="ovr", average=average, protocol=protocol)
        assert abs(found.auc - expected) < TOL and sorted(found.per_class) == ["cat", "dog", "eel", "fox"]


@pytest.mark.parametrize("max_fpr", [0.1, 0.5, 1.0])
def test_partial_auc_equals_scikit_learns_mcclish_standardised(max_fpr):
    y, s, c = _binary(9, 400)
    expected = skm.roc_auc_score(y, s, max_fpr=max_fpr)
    for protocol in ("mpc-exact", "clear"):
        found = mpc_auc.roc_auc_score(y, s, clients=c, max_fpr=max_fpr, protocol=protocol)
        assert abs(found.auc - expected) < TOL and (found.ci is None) == (max_fpr < 1)


def test_average_precision_and_curves_with_pos_label():
    y, s, c = _binary(6)
    words = np.where(y == 1, "yes", "no")
    ap = mpc_auc.average_precision_score(words, s, clients=c, pos_label="yes")
    assert abs(ap.value - skm.average_precision_score(y, s)) < TOL and ap.metric == "ap"
    roc = mpc_auc.roc_curve(y, s, points=10)
    fpr, tpr, _ = roc
    assert roc.flagged.tolist() == [30 * k for k in range(11)] and fpr[-1] == 1.0 and tpr[-1] == 1.0
    precision, recall, _ = mpc_auc.precision_recall_curve(y, s, points=10, protocol="clear")
    assert np.allclose(recall, tpr[::-1], atol=TOL, rtol=0) and abs(precision[0] - y.mean()) < TOL


@pytest.mark.parametrize("call, message", [
    (lambda y, s: mpc_auc.evaluate(y, s, metrics="auc,roc,bogus"), "unknown metric.*'bogus'"),
    (lambda y, s: mpc_auc.roc_auc_score(y, s, max_fpr=0.0), "max_fpr must be a false positive rate"),
    (lambda y, s: mpc_auc.roc_auc_score(y, s, max_fpr=1.5), "max_fpr must be a false positive rate"),
    (lambda y, s: mpc_auc.roc_auc_score(np.arange(len(y)) % 3, np.c_[s, s, s], multi_class="ovr", max_fpr=0.5),
     "max_fpr .* not multi_class"),
    (lambda y, s: mpc_auc.evaluate(y, s, metrics="auc,pauc"), "the pauc metric needs max_fpr"),
    (lambda y, s: mpc_auc.evaluate(y, s, sample_weight=np.ones(len(y))), "sample weights give the weighted AUC alone"),
    (lambda y, s: mpc_auc.average_precision_score(y, s, sample_weight=np.ones(len(y))), "asked: mpc-exact, auc, ap"),
    (lambda y, s: mpc_auc.roc_auc_score(y, np.c_[s, 1 - s]), "pass multi_class='ovr'"),
    (lambda y, s: mpc_auc.roc_auc_score(y % 3, np.c_[s, 1 - s], multi_class="ovr"), "2 classes"),
    (lambda y, s: mpc_auc.roc_auc_score(np.arange(len(y)) % 3, np.c_[s, 1 - s], multi_class="ovr"),
     "y_score has 2 columns but there are 3 classes"),
    (lambda y, s: mpc_auc.roc_auc_score(np.arange(len(y)) % 3, np.c_[s, s, s, s], multi_class="ovr",
                                        labels=[0, 1, 2, 7]), "class 7 has no positives"),
    (lambda y, s: mpc_auc.roc_auc_score(np.arange(len(y)) % 3, np.c_[s, s, s], multi_class="ovo"),
     "multi_class must be"),
    (lambda y, s: mpc_auc.roc_auc_score(np.arange(len(y)) % 3, np.c_[s, s, s], multi_class="ovr",
                                        average="micro"), "average must be"),
    (lambda y, s: mpc_auc.roc_auc_score(np.arange(len(y)) % 3, s), "3 classes"),
    (lambda y, s: mpc_auc.average_precision_score(np.where(y == 1, "a", "b"), s), "name the positive class"),
    (lambda y, s: mpc_auc.roc_curve(y, s, pos_label=2), "pos_label=2 is not a label"),
    (lambda y, s: mpc_auc.roc_curve(y, s, points=0), "points must be"),
    (lambda y, s: mpc_auc.roc_auc_score(np.array([0, "a"] * (len(y) // 2), dtype=object), s), "mixes label kinds"),
    (lambda y, s: mpc_auc.evaluate(y, s, protocol="mpc-central"), "need protocol mpc-exact or clear"),
    (lambda y, s: mpc_auc.delong_test(y, s, s[:-1]), "score_a and score_b must be one score per row"),
    (lambda y, s: mpc_auc.delong_test(y, s, np.c_[s, s]), "score_a and score_b must be one score per row"),
    (lambda y, s: mpc_auc.delong_test(y, s, s + 2), "outside the declared range"),
    (lambda y, s: mpc_auc.delong_test(y, s, s, protocol="mpc-central"), "need protocol mpc-exact or clear"),
])
def test_bad_metric_input_is_refused_by_name_before_any_process(monkeypatch, call, message):
    for module in (rows, metric_api):  # every way a call reaches the planner's execution
        monkeypatch.setattr(module, "execute", lambda *a, **k: pytest.fail("a protocol ran on bad input"))
    y, s, _ = _binary()
    with pytest.raises(mpc_auc.InputError, match=message):
        call(y, s)


def test_run_with_metrics_writes_them_with_the_curves_as_png_and_pdf(tmp_path):
    path = tmp_path / "data.csv"
    write_evalset(str(path), synthetic_evalset(m=400, clients=4, decimals=2, seed=2))
    out = tmp_path / "result.json"
    assert main(["--quiet", "run", "--input", str(path), "--out", str(out), "--metrics", "all", "--points",
                 "40"]) == 0
    record = json.loads(out.read_text())
    assert set(record["metrics"]) == {"ci", "ap", "roc", "pr", "ks"} and len(record["metrics"]["roc"]["fpr"]) == 40
    for ext in ("png", "pdf"):
        assert (tmp_path / f"result.curves.{ext}").stat().st_size > 1000
    with pytest.raises(SystemExit) as refused:  # argparse refuses the option's value
        main(["--quiet", "run", "--input", str(path), "--out", str(tmp_path / "x.json"), "--metrics", "auc,nope"])
    assert refused.value.code == 2 and not (tmp_path / "x.json").exists()


def test_delong_test_privately_equals_the_clear_test_and_the_cli_agrees(tmp_path):
    rng = np.random.default_rng(8)
    m = 600
    y = (rng.random(m) < 0.3).astype(int)
    a = np.clip(np.round(rng.normal(0.4 + 0.2 * y, 0.2), 2), 0, 1)
    b = np.clip(np.round(a + rng.normal(0, 0.15, m), 2), 0, 1)
    c = rng.choice(["h1", "h2", "h3"], m)
    private = mpc_auc.delong_test(y, a, b, clients=c)
    clear = mpc_auc.delong_test(y, a, b, protocol="clear")
    assert abs(private.statistic - clear.statistic) < TOL and abs(private.pvalue - clear.pvalue) < TOL
    assert _close(private.covariance, clear.covariance)
    assert abs(private.value - (private.aucs[0] - private.aucs[1])) < 1e-15
    assert abs(private.aucs[1] - skm.roc_auc_score(y, b)) < TOL and "statistic=" in repr(private)
    path = tmp_path / "two.csv"
    path.write_text("client,a,b,label\n" + "".join(f"{c[i]},{a[i]},{b[i]},{y[i]}\n" for i in range(m)))
    out = tmp_path / "two.json"
    assert main(["--quiet", "run", "--input", str(path), "--score-col", "a,b", "--metrics", "auc,ci",
                 "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    (test,) = record["delong_test"]
    assert (test["a"], test["b"]) == ("a", "b") and abs(test["z"] - clear.statistic) < TOL
    assert abs(record["columns"]["b"]["auc"] - skm.roc_auc_score(y, b)) < TOL


def test_the_interval_is_left_out_with_a_warning_past_its_row_bound(monkeypatch):
    monkeypatch.setattr(planner, "CI_MAX_ROWS", 100)  # a smaller bound, so that a small set passes it
    y, s, _ = _binary(10, 300)
    with pytest.warns(UserWarning, match="at most 100 rows; this set has 300"):
        result = mpc_auc.roc_auc_score(y, s, protocol="clear")
    assert result.std is None and result.ci is None and abs(result.auc - skm.roc_auc_score(y, s)) < TOL
    assert mpc_auc.roc_auc_score(y, s, protocol="clear", ci=True).std > 0  # asked for: computed (no ring here)
    with pytest.raises(mpc_auc.InputError, match="ci must be 'auto', True, False, 'wald' or 'logit'"):
        mpc_auc.roc_auc_score(y, s, ci="yes")
