"""The parties' privacy ledger: charged before data moves, refused past the budget, durable, PLD-accounted."""
import json
import multiprocessing as mp
import os
import signal
import time

import pytest
from dp_accounting.pld import privacy_loss_distribution as pld

from mpc_auc.cli import main
from mpc_auc.csv_io import write_evalset
from mpc_auc.protocols.errors import InputError
from mpc_auc.protocols.mpc.ledger import Budget, Ledger, Release, compose
from mpc_auc.protocols.mpc.mpc_central import CentralNoise, dataset_id, mpc_central_auc
from mpc_auc.protocols.runtime.session import Placement
from mpc_auc.synthetic import synthetic_evalset


def test_second_release_past_the_budget_is_refused_before_any_input_moves(tmp_path, capsys):
    evalset = synthetic_evalset(m=500, clients=3, seed=5)
    write_evalset(tmp_path / "in.csv", evalset)
    args = ["run", "--input", str(tmp_path / "in.csv"), "--protocol", "mpc-central", "--epsilon", "1",
            "--budget", "1.5", "--ledger", str(tmp_path / "ledger")]
    assert main(args + ["--out", str(tmp_path / "one.json")]) == 0
    privacy = json.loads((tmp_path / "one.json").read_text())["privacy"]["ledger"]
    assert privacy["charged"]["epsilon"] == pytest.approx(1.0) and privacy["budget"] == [1.5, 1e-9]
    assert privacy["remaining_epsilon"] == pytest.approx(0.5, abs=1e-6)
    capsys.readouterr()
    assert main(args + ["--out", str(tmp_path / "two.json")]) == 2
    err = capsys.readouterr().err
    assert "privacy budget exceeded" in err and "spent epsilon 1" in err and "requests epsilon 1" in err
    assert not (tmp_path / "two.json").exists()
    for role in ("P0", "P1"):  # both ledgers hold exactly the one release
        (state,) = [json.loads(p.read_text()) for p in (tmp_path / "ledger" / role).glob("*.json")]
        assert len(state["releases"]) == 1 and state["budget"] == [1.5, 1e-9]


def test_the_api_refuses_too_and_a_later_job_cannot_raise_the_budget(tmp_path):
    clients = synthetic_evalset(m=300, clients=2, seed=6).clients()
    placement = Placement(ledger=str(tmp_path))
    mpc_central_auc([clients], CentralNoise(0.5), placement=placement, budget=Budget(1.0))
    with pytest.raises(InputError, match="budget exceeded"):  # 0.5 + 0.8 > 1.0 although this job offers 5
        mpc_central_auc([clients], CentralNoise(0.8), placement=placement, budget=Budget(5.0))
    release = mpc_central_auc([clients], CentralNoise(0.4), placement=placement)[0]  # fits: 0.9 <= 1
    assert release.ledger["budget"] == [1.0, 1e-9] and release.ledger["spent"]["epsilon_basic_composition"] == 0.9


def test_charged_totals_equal_dp_accountings_composition(tmp_path):
    ledger = Ledger(str(tmp_path), "P0")
    noises = [CentralNoise(e) for e in (0.3, 0.7, 1.1)]
    releases = [n.release(1000) for n in noises]
    for r in releases:
        ledger.commit("set", Budget(10.0), r)
    expected = None
    for n in noises:
        for d in (n.statistic_noise(1000), n.count_noise()):
            one = pld.from_discrete_laplace_mechanism(d.rate, sensitivity=d.sensitivity,
                                                      value_discretization_interval=1e-4)
            expected = one if expected is None else expected.compose(one)
    circuit = sum(r.circuit_delta for r in releases)
    for target in (1e-9, 1e-6):
        spent = compose(Ledger._releases(ledger.state("set")), target)
        assert spent.epsilon == pytest.approx(expected.get_epsilon_for_delta(target - circuit), rel=1e-12)
        assert spent.epsilon <= spent.epsilon_basic == pytest.approx(2.1)
        assert spent.delta == pytest.approx(circuit)
    assert compose(Ledger._releases(ledger.state("set")), 1e-6).epsilon < 2.1  # PLD is tighter than basic


def _write_forever(directory):
    ledger = Ledger(directory, "P0")
    release = Release("mpc-central", ((0.001, 500),) * 50, 1e-13)
    while True:
        ledger.commit("crash", Budget(1e9), release)


def test_a_party_killed_mid_write_leaves_the_ledger_intact(tmp_path):
    context = mp.get_context("spawn")
    counts = []
    for round_, pause in enumerate((0.0, 0.003, 0.011, 0.017)):
        writer = context.Process(target=_write_forever, args=(str(tmp_path),))
        writer.start()
        deadline = time.monotonic() + 60
        while len(Ledger(str(tmp_path), "P0").state("crash")["releases"]) < 10 * (round_ + 1):
            assert time.monotonic() < deadline, "the writer made no progress"
            time.sleep(0.005)
        time.sleep(pause)
        os.kill(writer.pid, signal.SIGKILL)  # most likely in the middle of a write
        writer.join()
        state = Ledger(str(tmp_path), "P0").state("crash")  # valid JSON, every release complete
        assert all(len(r["terms"]) == 50 for r in state["releases"])
        counts.append(len(state["releases"]))
    assert counts == sorted(counts) and counts[0] >= 10


def test_dataset_ids_depend_on_the_rows_only():
    a = synthetic_evalset(m=50, clients=2, seed=1).clients()
    b = synthetic_evalset(m=50, clients=2, seed=2).clients()
    assert dataset_id(a) == dataset_id([(c, s.copy(), y.copy()) for c, s, y in a]) != dataset_id(b)
