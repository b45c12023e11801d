"""The DP suite's one interface, and the comparison command's outputs."""
import csv
import json

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from mpc_auc.protocols.dp.suite import MECHANISMS, MechanismBudget, run_mechanism
from mpc_auc.protocols.errors import InputError
from mpc_auc.protocols.validation import PARAMETERS, checked
from mpc_auc.cli import main as cli_main
from mpc_auc.synthetic import synthetic_evalset


@pytest.fixture(scope="module")
def evalset():
    return synthetic_evalset(m=5000, clients=20, seed=13)


@pytest.mark.parametrize("name", list(MECHANISMS))
def test_every_mechanism_runs_behind_one_interface(evalset, name):
    release = run_mechanism(name, evalset.clients(), MechanismBudget(4.0, 1e-6), draws=50, seed=1)
    assert release.auc.shape == (50,) and np.isfinite(release.auc).all()
    # the per-threshold release drowns 5,000 rows in Lap(4 |Theta| / eps) noise, and Lap(1/eps) on
    # scores in [0, 1] scrambles the ranking (fedauc Table 9): both are pulled towards 0.5
    tolerance = 0.3 if name in ("dpauc-threshold", "score-dp") else 0.05
    assert abs(np.median(release.auc) - roc_auc_score(evalset.label, evalset.score)) < tolerance
    assert release.accounting and release.server_received
    assert release.epsilon == (np.inf if name == "fedauc-vanilla" else 4.0)


def test_same_seed_same_release(evalset):
    a = run_mechanism("fedauc-lap-adaptive", evalset.clients(), MechanismBudget(1.0), 20, seed=5)
    b = run_mechanism("fedauc-lap-adaptive", evalset.clients(), MechanismBudget(1.0), 20, seed=5)
    assert np.array_equal(a.auc, b.auc)


def test_bad_requests_are_refused(evalset):
    with pytest.raises(InputError, match="unknown protocol"):
        run_mechanism("fedauc-magic", evalset.clients(), MechanismBudget(1.0))
    with pytest.raises(InputError, match="epsilon"):
        run_mechanism("fedauc-rr", evalset.clients(), MechanismBudget(0.0))
    with pytest.raises(InputError, match="delta"):
        run_mechanism("fedauc-gauss-local", evalset.clients(), MechanismBudget(1.0, 0.0))


def _words(name, value, interval=None) -> str:
    """What protocols.validation.checked says of ``value``."""
    with pytest.raises(InputError) as refused:
        checked(name, value, interval)
    return str(refused.value)


@pytest.mark.parametrize("epsilon", [0, -1.0, float("nan"), float("inf")])
@pytest.mark.parametrize("name", [n for n in MECHANISMS if n != "fedauc-vanilla"])
def test_the_boundary_refuses_a_bad_epsilon_for_every_mechanism(evalset, name, epsilon):
    """run_mechanism is the mechanisms' boundary (they trust their epsilon): checked's words, before any work."""
    with pytest.raises(InputError) as refused:
        run_mechanism(name, evalset.clients(), MechanismBudget(epsilon, 1e-6))
    assert str(refused.value) == _words("epsilon", epsilon)


@pytest.mark.parametrize("delta", [0.0, 1.0, float("nan")])
@pytest.mark.parametrize("name", [n for n, m in MECHANISMS.items() if m.needs_delta])
def test_the_boundary_refuses_a_bad_delta_for_the_gaussian_mechanisms(evalset, name, delta):
    """The Gaussian calibration (protocols.dp.calibration) trusts its delta too."""
    with pytest.raises(InputError) as refused:
        run_mechanism(name, evalset.clients(), MechanismBudget(1.0, delta))
    assert str(refused.value) == _words("delta", delta, PARAMETERS["mechanism_delta"])


def test_compare_writes_table_json_and_plot(tmp_path):
    out = tmp_path / "cmp"
    assert cli_main(["compare", "--out", str(out), "--m", "3000", "--clients", "10", "--draws", "20",
                         "--epsilons", "1", "4", "--protocols", "fedauc-rr", "fedauc-lap-adaptive"]) == 0
    rows = list(csv.DictReader(open(out / "compare.csv")))
    assert [(r["protocol"], float(r["epsilon"])) for r in rows] == [
        ("fedauc-rr", 1.0), ("fedauc-rr", 4.0), ("fedauc-lap-adaptive", 1.0), ("fedauc-lap-adaptive", 4.0)]
    record = json.loads((out / "compare.json").read_text())
    assert record["m"] == 3000 and len(record["rows"]) == 4
    assert all(r["rmse"] >= abs(r["bias"]) for r in record["rows"])  # RMSE^2 = bias^2 + variance
    assert (out / "rmse.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "rmse.pdf").read_bytes()[:5] == b"%PDF-"
    assert all(float(r["rmse_lo"]) <= float(r["rmse"]) <= float(r["rmse_hi"]) for r in rows)


def test_a_declared_score_range_calibrates_the_score_mechanisms(tmp_path):
    """Scores on [-5, 5] with --score-range -5 5 give the rows of the same scores mapped to [0, 1]: DP on
    scores adds Lap(1/eps) on the unit scale, i.e. scale 10/eps on the declared one (sensitivity = width).
    Without the map it would add Lap(1/eps) to scores 10 wide: ten times the privacy loss it states."""
    import mpc_auc

    rng = np.random.default_rng(8)
    labels = rng.integers(0, 2, 2000)
    logits = np.clip(rng.normal(labels * 1.2, 1.5), -5, 5)
    kwargs = dict(protocols=["score-dp", "score-cldp", "dpauc-threshold", "fedauc-rr"], epsilons=[1.0], draws=30,
                  seed=4)
    declared = mpc_auc.compare(labels, logits, context=mpc_auc.Context(score_range=(-5, 5)), **kwargs)
    mapped = mpc_auc.compare(labels, (logits + 5) / 10, **kwargs)
    columns = ["protocol", "mean", "std", "rmse"]
    assert declared[columns].equals(mapped[columns])
    raw = mpc_auc.compare(labels, logits / 10 + 0.5, **kwargs)  # the same map written another way: same rows
    assert np.allclose(raw["mean"], mapped["mean"], atol=1e-12)
    source = tmp_path / "logits.csv"
    source.write_text("client,score,label\n" + "".join(f"c{i % 4},{s!r},{y}\n" for i, (s, y) in
                                                        enumerate(zip(logits.tolist(), labels.tolist()))))
    out = tmp_path / "cmp"
    assert cli_main(["-q", "compare", "--input", str(source), "--out", str(out), "--draws", "5", "--epsilons", "1",
                     "--protocols", "score-dp"]) == 2  # outside the default [0, 1]: refused, nothing written
    assert not out.exists()
    assert cli_main(["-q", "compare", "--input", str(source), "--out", str(out), "--draws", "5", "--epsilons", "1",
                     "--protocols", "score-dp", "--score-range", "-5", "5"]) == 0
    assert json.loads((out / "compare.json").read_text())["rows"][0]["protocol"] == "score-dp"
