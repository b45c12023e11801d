"""The example Flower app (examples/flower) in Flower's simulation runtime against three ``mpc-auc party``
processes on 127.0.0.2-4: 5 clients, 2 rounds of FedAvg, each evaluation round one DP release of the global AUC
(the default) whose interval holds scikit-learn's AUC on the union of the clients' test sets, charged to each
client's key at both parties and in each client's own ledger.  The crafted-model attack (a server that chooses
the model reads one label per round off the AUC): every label read from exact rounds, no better than the DP
bound from the default's (sims.security.flower_oracle); real rounds of it in test-all."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mpc_auc.protocols.mpc.accounting import key_account
from mpc_auc.protocols.runtime.identity import Identity
from mpc_auc.protocols.runtime.ledger import Ledger, default_directory
from mpc_auc.sims.security.flower_oracle import oracle_rates
from roles_on_hosts import client_keys

pytest.importorskip("flwr", reason="Flower is the optional extra mpc-auc[flower] (make test installs it)")
EXAMPLE = Path(__file__).parents[2] / "examples" / "flower"
SIMULATION = """
from flwr.simulation import run_simulation
from {client} import app as client_app
from mpcauc_flower.{server} import app as server_app
run_simulation(server_app, client_app, num_supernodes=5, backend_config={{"init_args": {{"num_cpus": 1}},
               "client_resources": {{"num_cpus": 0.2}}}})  # 5 Ray workers, one per node, not 10
"""


def _simulate(deployed, tmp_path, server="server_app", client="mpcauc_flower.client_app", **settings):
    """Run ``client`` (the example's ClientApp, or a module of tests/) with ``server`` in Flower's simulation, in a
    directory holding the deployment file, the coordinator's key and five fresh client keys; ``settings``: the
    run config's values (by the environment: the simulation API passes no run config).  Returns (the directory,
    the log)."""
    directory = deployed[0]
    work = tmp_path / "run"
    (work / "keys").mkdir(parents=True)
    for name in ("deployment.yaml", "coordinator.key"):
        shutil.copy(directory / name, work / name)
    client_keys(work / "keys", [f"client-{p}" for p in range(5)])
    # the tests' own ClientApp copied beside the run: tests/ on the path would shadow the package (its mpc_auc/)
    shutil.copy(Path(__file__).parents[1] / "flower_bad_client.py", work)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(EXAMPLE), str(work), os.environ.get("PYTHONPATH", "")]),
           **{"MPCAUC_FLOWER_" + k.upper(): str(v) for k, v in settings.items()}}
    proc = subprocess.run([sys.executable, "-c", SIMULATION.format(server=server, client=client)], cwd=work, env=env,
                          capture_output=True, text=True, timeout=600)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-4000:]
    return work, log


def _union_of_tests():
    sys.path.insert(0, str(EXAMPLE))
    try:
        from mpcauc_flower.task import union_of_tests
    finally:
        sys.path.remove(str(EXAMPLE))
    return union_of_tests(5)


def test_the_flower_example_releases_a_dp_global_auc_per_round_charged_to_every_client(deployed, tmp_path):
    work, log = _simulate(deployed, tmp_path)
    rounds = json.loads((work / "mpcauc-flower-rounds.json").read_text())["rounds"]
    assert [r["round"] for r in rounds] == [1, 2]
    y_test, _ = _union_of_tests()
    assert len(y_test) > 100 and 0 < y_test.mean() < 1
    for r in rounds:
        assert r["epsilon"] == 1.0 and 0 < r["std"] < 0.2  # one DP release at the default epsilon
        assert abs(r["private_auc"] - r["clear_auc"]) < 5 * r["std"]  # clear: scikit-learn on the union of the tests
        assert r["interval"][0] <= r["private_auc"] <= r["interval"][1]
        assert re.search(rf"round {r['round']}: private global AUC \(mpc-auc, DP at epsilon 1\) [0-9.]+ \(95% "
                         rf"interval [0-9.]+ \.\. [0-9.]+\), clear AUC [0-9.]+", log)
    for p in range(5):  # two releases of epsilon 1 on each client's key, at both parties and in its own ledger
        key = Identity.load(str(work / "keys" / f"client-{p}.key")).public
        for role in ("P0", "P1"):
            releases = Ledger.releases(Ledger(default_directory(), role).state(key_account(key)))
            assert [r.epsilon for r in releases] == pytest.approx([1.0, 1.0])
        own = json.loads((work / "keys" / f"client-{p}.ledger.json").read_text())["releases"]
        assert [r["epsilon"] for r in own] == [1.0, 1.0]


def test_a_round_keeps_its_auc_when_one_client_sends_rows_outside_the_domain(deployed, tmp_path):
    """Node 0 submits scores of 2.0 past its own checks (tests/flower_bad_client.py); the example's rounds leave
    it out (mpcauc-exclude-invalid, its default) and each keeps its DP AUC over the other four, naming it."""
    work, log = _simulate(deployed, tmp_path, client="flower_bad_client")
    rounds = json.loads((work / "mpcauc-flower-rounds.json").read_text())["rounds"]
    assert [r["round"] for r in rounds] == [1, 2]
    assert all(r["private_auc"] is not None and r["excluded"] == 1 and r["epsilon"] == 1.0 for r in rounds), rounds
    assert log.count("left out 'client-0': rows outside the domain") == 2
    key = Identity.load(str(work / "keys" / "client-0.key")).public
    for role in ("P0", "P1"):  # nothing charged to the client left out
        assert Ledger.releases(Ledger(default_directory(), role).state(key_account(key))) == []


def test_the_crafted_model_reads_every_label_from_exact_rounds_and_no_more_than_the_dp_bound_allows():
    """The example's union of test sets (M, P); exact rounds (the old default) read every target's label; the DP
    default's rounds, as many as a client's budget of 2 allows at epsilon 1, stay under e/(1+e) per round, and
    under e^2/(1+e^2) on one target read in both (the circuit's noise law, 40,000 draws; 4.3 standard errors)."""
    y_test, _ = _union_of_tests()
    rates = oracle_rates(len(y_test), int(y_test.sum()), 1.0, 2.0, 40_000, np.random.default_rng(3))
    assert rates["exact_rounds"] == 1.0 and rates["rounds"] == 2
    slack = 4.3 * np.sqrt(0.25 / 40_000)
    assert rates["server_per_round"] <= rates["strongest_per_round"] + slack
    assert 0.55 < rates["strongest_per_round"] <= rates["bound_per_round"] + slack
    assert rates["strongest_one_target"] <= rates["bound_one_target"] + slack


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["mpc-central", "mpc-exact"])
def test_real_crafted_rounds_read_labels_only_from_exact_rounds(deployed, tmp_path, protocol):
    """The crafted ServerApp in real rounds: exact rounds (clients that accept 3 exact releases) read all three
    targets' labels; DP rounds run as long as the clients' budgets of 2 allow (two of three) and their reads are
    the DP reads measured above."""
    exact = protocol == "mpc-exact"
    work, _ = _simulate(deployed, tmp_path, "crafted_server_app", mpcauc_protocol=protocol,
                        mpcauc_max_exact=3 if exact else 0)
    rounds = json.loads((work / "mpcauc-oracle-rounds.json").read_text())["rounds"]
    assert len(rounds) == 3
    if exact:
        assert all(r["read"] == r["label"] for r in rounds), rounds
    else:
        assert [r["auc"] is not None for r in rounds] == [True, True, False], rounds
