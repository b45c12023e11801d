"""The parties' privacy ledger: charged before data moves, refused past the budget, durable, PLD-accounted."""
import json
import multiprocessing as mp
import os
import signal
import time

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld

from mpc_auc.cli import main
from mpc_auc.csv_io import write_evalset
from mpc_auc.protocols.errors import InputError
from mpc_auc.protocols.runtime.ledger import Budget, Charge, Exact, Ledger, LedgerPlace, Release, compose
from mpc_auc.protocols.dp.central_law import CentralNoise
from mpc_auc.protocols.mpc.central import mpc_central_auc
from mpc_auc.protocols.mpc.ranking_job import dataset_id
from mpc_auc.protocols.runtime.session import Placement
from mpc_auc.synthetic import synthetic_evalset
from ledger_writers import charge_many, write_forever


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
    owners = [f"owner:{c}" for c, _, _ in evalset.clients()]
    for role in ("P0", "P1"):  # both ledgers hold exactly the one release, in each owner's and the rows' account
        ledger = Ledger(str(tmp_path / "ledger"), role)
        for account in owners + [dataset_id(evalset.clients())]:
            state = ledger.state(account)
            assert len(state["releases"]) == 1, account
            assert state["budget"] == (None if account.startswith("owner:") else [1.5, 1e-9])


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
        assert ledger.charge(Charge(r, sets=("set",), budget=Budget(10.0)))["fits"]
    expected = None
    for n in noises:
        for d in (n.statistic_noise(1000), n.count_noise()):
            one = pld.from_discrete_laplace_mechanism(d.rate, sensitivity=d.sensitivity,
                                                      value_discretization_interval=1e-4)
            expected = one if expected is None else expected.compose(one)
    circuit = sum(r.circuit_delta for r in releases)
    for target in (1e-9, 1e-6):
        spent = compose(Ledger.releases(ledger.state("set")), target)
        assert spent.epsilon == pytest.approx(expected.get_epsilon_for_delta(target - circuit), rel=1e-12)
        assert spent.epsilon <= spent.epsilon_basic == pytest.approx(2.1)
        assert spent.delta == pytest.approx(circuit)
    assert compose(Ledger.releases(ledger.state("set")), 1e-6).epsilon < 2.1  # PLD is tighter than basic


def test_a_party_killed_mid_write_leaves_the_ledger_intact(tmp_path):
    context = mp.get_context("spawn")
    counts = []
    for round_, pause in enumerate((0.0, 0.003, 0.011, 0.017)):
        writer = context.Process(target=write_forever, args=(str(tmp_path),))
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


def test_dataset_ids_depend_on_the_rows_as_a_multiset_only():
    a = synthetic_evalset(m=50, clients=2, seed=1).clients()
    b = synthetic_evalset(m=50, clients=2, seed=2).clients()
    assert dataset_id(a) == dataset_id([(c, s.copy(), y.copy()) for c, s, y in a]) != dataset_id(b)
    scores = np.concatenate([s for _, s, _ in a])
    labels = np.concatenate([y for _, _, y in a])
    order = np.random.default_rng(0).permutation(len(scores))
    regrouped = [("renamed", scores[order[:7]], labels[order[:7]]), ("other", scores[order[7:]], labels[order[7:]])]
    assert dataset_id(regrouped) == dataset_id(a)  # shuffled rows, renamed and regrouped clients: one set
    flipped = [("x", scores, np.where(np.arange(len(labels)) == 0, 1 - labels, labels))]
    assert dataset_id(flipped) != dataset_id(a)  # a changed label is another set


def test_concurrent_charges_spend_at_most_the_budget(tmp_path):
    """Three processes race to charge 8 releases of epsilon 0.25 each against a budget of 1: exactly four fit."""
    context = mp.get_context("spawn")
    results = context.Queue()
    writers = [context.Process(target=charge_many, args=(str(tmp_path), results)) for _ in range(3)]
    for w in writers:
        w.start()
    fits = [results.get(timeout=120) for _ in range(24)]
    for w in writers:
        w.join()
    assert sum(fits) == 4
    state = Ledger(str(tmp_path), "P0").state("shared")
    assert len(state["releases"]) == 4  # an owner's account: the job's budget narrows each charge, is never recorded
    assert state["budget"] is None


def test_a_partys_own_budget_and_a_second_id_narrow_never_reset(tmp_path):
    release = Release("mpc-central", ((0.5, 1),), 0.0)
    own = LedgerPlace(str(tmp_path), Budget(0.6)).open("P0")
    assert own.charge(Charge(release, sets=("set",), budget=Budget(10.0)))["fits"]  # the organiser asks for 10
    refused = own.charge(Charge(release, sets=("set",), budget=Budget(10.0)))  # the party allows 0.6
    assert not refused["fits"] and "this party's own budget" in refused["message"]
    ledger = Ledger(str(tmp_path), "P1")
    assert ledger.charge(Charge(release, sets=("rows", "declared:a"), budget=Budget(1.0)))["fits"]
    assert ledger.charge(Charge(release, sets=("rows", "declared:b"), budget=Budget(1.0)))["fits"]  # rows count
    assert not ledger.charge(Charge(release, sets=("rows", "declared:c"), budget=Budget(1.0)))["fits"]


def test_an_owners_budget_is_the_partys_own_narrowed_per_job_never_recorded(tmp_path):
    """An organiser can neither raise an owner's budget past the party's own nor lower it for later jobs."""
    release = Release("mpc-central", ((0.5, 1),), 0.0)
    ledger = LedgerPlace(str(tmp_path), Budget(1.0)).open("P0")
    owner = (("client-key-sha256:aa", "c0"),)
    assert not ledger.charge(Charge(release, owner, budget=Budget(0.1)))["fits"]  # this job asks for less: refused
    assert ledger.charge(Charge(release, owner, budget=Budget(100.0)))["fits"]  # ... and that set nothing
    assert ledger.charge(Charge(release, owner))["fits"]
    third = ledger.charge(Charge(release, owner, sets=("declared:new",), budget=Budget(100.0)))
    assert not third["fits"] and "client 'c0'" in third["message"] and "this party's own budget" in third["message"]
    standing = ledger.standing("client-key-sha256:aa")
    assert standing.spent_epsilon == pytest.approx(1.0, abs=1e-6) and standing.budget == (1.0, 1e-9)
    assert standing.exact_releases == 0 and standing.pinned_clients is None


def test_exact_releases_are_counted_and_pinned_per_owner(tmp_path):
    ledger = Ledger(str(tmp_path), "P0")
    owners = (("k0", "c0"), ("k1", "c1"))

    def exact(clients=("k0", "k1"), points=None, max_fpr=None, limits=(9, 9), decimals=None):
        return ledger.charge(Charge(Release("mpc-exact", (), 0.0, exact=Exact(clients, points, max_fpr, decimals)),
                                    tuple(o for o in owners if o[0] in clients), limits=limits))

    assert exact()["fits"]
    assert "pinned to the decimals" in exact(decimals=3)["message"]  # 52 bits first: no other rounding after
    assert exact(points=100)["fits"]  # the first curves pin the cuts ...
    refused = exact(points=99)
    assert not refused["fits"] and "pinned to 100 cuts" in refused["message"]
    assert not exact(clients=("k0",), limits=(9,))["fits"]  # another set: c1 dropped
    assert exact(max_fpr=0.2)["fits"]
    assert "max FPR 0.2" in exact(max_fpr=0.25)["message"]
    assert "accepts at most 3" in exact(limits=(3, 9))["message"]  # c0 has had 3
    standing = ledger.standing("k1")
    assert (standing.exact_releases, standing.pinned_clients, standing.pinned_points, standing.pinned_max_fpr) == \
        (3, 2, 100, 0.2)
    dp = ledger.charge(Charge(Release("mpc-central", ((1.0, 1),), 0.0), owners[:1]))  # DP is not pinned
    assert dp["fits"]


def test_a_voided_charge_spends_nothing(tmp_path):
    ledger = Ledger(str(tmp_path), "P0")
    release = Release("mpc-central", ((1.0, 1),), 0.0)
    verdict = ledger.charge(Charge(release, sets=("set",), budget=Budget(1.0)))
    ledger.void(verdict["entry"], "stopped before the release")
    assert ledger.charge(Charge(release, sets=("set",), budget=Budget(1.0)))["fits"]
    assert [bool(r.get("void")) for r in ledger.state("set")["releases"]] == [True, False]


def test_a_release_known_by_its_parameters_composes_as_its_dominating_pair():
    pairs = [Release("mpc-central", (), 1e-13, pure_epsilon=e) for e in (0.5, 0.5, 1.0)]
    spent = compose(pairs, 1e-9)
    assert spent.epsilon_basic == pytest.approx(2.0) and spent.epsilon <= 2.0 + 1e-9
    assert spent.epsilon == pytest.approx(2.0, abs=1e-3)  # pure DP: three releases compose to about their sum
    assert compose(pairs * 60, 1e-6).epsilon < 0.9 * compose(pairs * 60, 1e-6).epsilon_basic  # many: PLD wins


def test_one_extra_row_in_a_local_run_spends_from_the_same_owners(tmp_path, capsys):
    """``mpc-auc run`` at a budget of 1: the same 300 rows plus one more (another multiset of rows) are still
    the same clients' rows, so the second release is refused naming a client, the first's charge untouched."""
    evalset = synthetic_evalset(m=300, clients=3, seed=8)
    write_evalset(tmp_path / "in.csv", evalset)
    lines = (tmp_path / "in.csv").read_text().splitlines()
    first_client = lines[1].split(",")[0]
    (tmp_path / "more.csv").write_text("\n".join(lines + [f"{first_client},0.5,1"]) + "\n")
    args = ["run", "--protocol", "mpc-central", "--epsilon", "1", "--budget", "1", "--ledger", str(tmp_path / "l")]
    assert main(args + ["--input", str(tmp_path / "in.csv"), "--out", str(tmp_path / "one.json")]) == 0
    capsys.readouterr()
    assert main(args + ["--input", str(tmp_path / "more.csv"), "--out", str(tmp_path / "two.json")]) == 2
    err = capsys.readouterr().err
    assert "privacy budget exceeded for client" in err and not (tmp_path / "two.json").exists()
    for role in ("P0", "P1"):
        (release,) = Ledger.releases(Ledger(str(tmp_path / "l"), role).state(f"owner:{first_client}"))
        assert release.epsilon == pytest.approx(1.0)
