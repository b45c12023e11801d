"""Flower, both APIs (docs/flower.md): a legacy-API app (FedProx and a NumPyClient) and a Message-API app whose
evaluation rounds sample 3 of 5 nodes, each in Flower's simulation with its parties, keys and deployment started by
one call (mpc_auc.flower.local_deployment); each round's exact private AUC equals the clear AUC of the sampled
clients' predictions and is a server-side metric.  A mixin for the wrong API is refused when the class is made."""
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("flwr", reason="Flower is the optional extra mpc-auc[flower] (make test installs it)")
from flwr.server.strategy import FedProx  # noqa: E402
from flwr.serverapp.strategy import FedAvg  # noqa: E402
from flwr.supercore.task_identity import TaskIdentity  # noqa: E402

from mpc_auc.flower import (MpcAucEvaluation, MpcAucFedAvg, MpcAucLegacyEvaluation, _ask_nodes,  # noqa: E402
                            local_deployment)
from mpc_auc.protocols.errors import InputError  # noqa: E402
from roles_on_hosts import client_keys  # noqa: E402

EXAMPLE = Path(__file__).parents[2] / "examples" / "flower"


def _run_example(module: str, work: Path):
    """Run examples/flower's ``mpcauc_flower.<module>`` (parties, keys and simulation in one call) in ``work``;
    returns (its rounds, its log)."""
    out = work / "rounds.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(EXAMPLE), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", f"mpcauc_flower.{module}", str(work / "mpcauc"), str(out)],
                          cwd=work, env=env, capture_output=True, text=True, timeout=300)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-4000:]
    return json.loads(out.read_text())["rounds"], log


def _check_rounds(rounds: list, work: Path) -> None:
    """One round, opened for 3 sampled clients, whose exact private AUC equals scikit-learn's on the union of their
    predictions (to 2^-52: scikit-learn's trapezoids round where the exact U/(PN) is rounded once); the keys the
    one call wrote are 0600."""
    assert len(rounds) == 1 and len(rounds[0]["clients"]) == 3, rounds
    r = rounds[0]
    assert r["private_auc"] is not None, r
    assert abs(r["private_auc"] - r["clear_auc"]) <= 2 ** -52, r
    for key in [work / "mpcauc" / f"{role}.key" for role in ("P0", "P1", "dealer", "coordinator")] + \
               list((work / "mpcauc" / "keys").glob("*.key")):
        assert stat.S_IMODE(key.stat().st_mode) == 0o600, key


@pytest.mark.slow  # a minute of Ray and Flower's legacy server: make test-all
def test_a_legacy_fedprox_numpyclient_app_reports_the_exact_private_auc_as_a_centralized_metric(tmp_path):
    rounds, log = _run_example("legacy_simulation", tmp_path)
    _check_rounds(rounds, tmp_path)
    summary = log[log.index("History (metrics, centralized)"):]
    assert f"'mpcauc-auc': [(1, {rounds[0]['private_auc']!r})]" in summary
    assert "History (metrics, distributed, evaluate)" not in log  # the release is not a client-side metric


@pytest.mark.slow  # a minute of Ray: make test-all (test_flower.py's simulations run the Message API in make test)
def test_a_message_api_app_that_samples_3_of_5_nodes_reports_the_exact_private_auc_as_a_serverapp_metric(tmp_path):
    rounds, log = _run_example("sampled_simulation", tmp_path)
    _check_rounds(rounds, tmp_path)
    assert "configure_evaluate: Sampled 3 nodes (out of 5)" in log
    serverapp = log[log.index("ServerApp-side Evaluate Metrics"):]
    assert "'mpcauc-auc'" in serverapp
    clientapp = log[log.index("Aggregated ClientApp-side Evaluate Metrics"):log.index("ServerApp-side Evaluate")]
    assert "mpcauc-auc" not in clientapp


def test_local_deployment_starts_the_parties_and_stops_them_on_exit(tmp_path):
    with local_deployment(2, tmp_path / "d") as deployment:
        processes = dict(deployment.processes)
        assert sorted(processes) == ["P0", "P1", "dealer"] and all(p.poll() is None for p in processes.values())
        assert deployment.strategy_options["rosters"] == [f"{deployment.keys}/client-{i}.roster.yaml"
                                                         for i in range(2)]
        assert deployment.client(1) == {"client": "client-1", "key": f"{deployment.keys}/client-1.key",
                                        "deployment": deployment.deployment}
    assert all(p.poll() is not None for p in processes.values())


def test_a_mixin_for_the_other_api_is_refused_when_the_class_is_made_naming_the_one_to_use():
    with pytest.raises(TypeError, match="use MpcAucLegacyEvaluation"):
        type("S", (MpcAucEvaluation, FedProx), {})
    with pytest.raises(TypeError, match="use MpcAucEvaluation"):
        type("S", (MpcAucLegacyEvaluation, FedAvg), {})


def test_a_sampled_round_refuses_by_name_a_client_no_roster_holds_or_one_two_nodes_claim(tmp_path):
    client_keys(tmp_path, ["client-0", "client-1"])
    strategy = MpcAucFedAvg(deployment=tmp_path / "deployment.yaml",
                            rosters=[tmp_path / f"client-{i}.roster.yaml" for i in range(2)])
    assert strategy._sampled_roster(["client-1"]).names == ["client-1"]
    with pytest.raises(InputError, match="mpc-auc client 'client-7', which no roster file"):
        strategy._sampled_roster(["client-0", "client-7"])
    with pytest.raises(InputError, match="'client-1' appears twice"):
        strategy._sampled_roster(["client-1", "client-1"])


def test_a_node_that_lies_or_fails_costs_the_round_its_evaluation_never_the_run(tmp_path):
    client_keys(tmp_path, ["client-0", "client-1", "client-2"])
    strategy = MpcAucFedAvg(deployment=tmp_path / "deployment.yaml",
                            rosters=[tmp_path / f"client-{i}.roster.yaml" for i in range(3)])

    def silent(nodes):
        raise TimeoutError("node 11 did not answer")

    assert not strategy._open_round(1, "e1", [10, 11], lambda nodes: {10: "client-7", 11: "client-1"})
    assert not strategy._open_round(2, "e2", [10, 11], lambda nodes: {10: "client-1", 11: "client-1"})
    assert not strategy._open_round(3, "e3", [10, 11], silent)
    assert strategy._names == {} and strategy.mpcauc_clients == {} and strategy._evaluations == {}
    roster = strategy._round_roster([10, 11], lambda nodes: {10: "client-0", 11: "client-2"})
    assert roster.names == ["client-0", "client-2"] and strategy._names == {10: "client-0", 11: "client-2"}


class _NodeWithoutQuery:
    """A grid whose one node's ClientApp registers no query.mpcauc function: Flower replies with an error."""

    def send_and_receive(self, messages, timeout):
        error = SimpleNamespace(reason="No query function registered with name 'mpcauc'")
        return [SimpleNamespace(has_error=lambda: True, metadata=SimpleNamespace(src_node_id=7), error=error)]


def test_a_sampled_round_whose_node_cannot_say_who_it_is_is_refused_naming_what_its_clientapp_needs(monkeypatch):
    for name in ("_task_id", "_run_id", "_node_id"):  # a ServerApp's identity, which Flower's Message needs
        monkeypatch.setattr(TaskIdentity, name, 1)
    with pytest.raises(InputError, match=r"node 7 did not say .* needs each ClientApp to answer "
                                         r"@app.query\(\"mpcauc\"\) with mpc_auc.flower.identify"):
        _ask_nodes(_NodeWithoutQuery(), [7])


def test_a_node_whose_config_names_no_client_is_told_what_to_set():
    from mpc_auc.flower import _node_name

    assert _node_name(SimpleNamespace(node_config={"partition-id": 3})) == "client-3"
    assert _node_name(SimpleNamespace(node_config={"mpcauc-client": "north"})) == "north"
    with pytest.raises(InputError, match="set mpcauc-client in its node config"):
        _node_name(SimpleNamespace(node_config={}))
