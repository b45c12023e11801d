"""The example Flower app (examples/flower) in Flower's simulation runtime against three ``mpc-auc party``
processes on 127.0.0.2-4: 5 clients, 2 rounds of FedAvg, each evaluation round one DP release of the global AUC
(the default), charged to each client's key at both parties and in each client's own ledger.  In the same
simulation node 0 submits rows outside the domain in round 1 (tests/flower_bad_client.py): that round leaves it
out and keeps its DP AUC over the other four, charging it nothing; round 2, with every node honest, releases an AUC
whose interval holds scikit-learn's AUC on the union of the clients' test sets.  The crafted-model attack (a server
that chooses the model reads one label per round off the AUC): every label read from exact rounds, no better than
the DP bound from the default's (sims.security.flower_oracle); real rounds of it in test-all."""
import json
import re

import numpy as np
import pytest

from mpc_auc.protocols.mpc.accounting import key_account
from mpc_auc.protocols.runtime.identity import Identity
from mpc_auc.protocols.runtime.ledger import Ledger, default_directory
from mpc_auc.sims.security.flower_oracle import oracle_rates
from flower_simulation import simulate, union_of_tests_of_the_example

pytest.importorskip("flwr", reason="Flower is the optional extra mpc-auc[flower] (make test installs it)")


def test_the_flower_example_charges_each_dp_round_to_its_clients_and_leaves_a_bad_node_out(deployed, tmp_path):
    """One simulation for both claims (one Ray start, not two): the DP rounds and their charges, and a node whose
    rows fail the domain check left out of its round (mpcauc-exclude-invalid, the example's default), named, and
    charged nothing for it."""
    work, log = simulate(deployed, tmp_path, client="flower_bad_client")
    rounds = json.loads((work / "mpcauc-flower-rounds.json").read_text())["rounds"]
    assert [r["round"] for r in rounds] == [1, 2]
    y_test, _ = union_of_tests_of_the_example()
    assert len(y_test) > 100 and 0 < y_test.mean() < 1
    for r in rounds:
        assert r["epsilon"] == 1.0 and 0 < r["std"] < 0.2  # one DP release at the default epsilon
        assert r["interval"][0] <= r["private_auc"] <= r["interval"][1]
        assert re.search(rf"round {r['round']}: private global AUC \(mpc-auc, DP at epsilon 1\) [0-9.]+ \(95% "
                         rf"interval [0-9.]+ \.\. [0-9.]+\), clear AUC [0-9.]+", log)
    assert [r["excluded"] for r in rounds] == [1, 0], rounds  # node 0 left out of round 1 only
    assert log.count("left out 'client-0': rows outside the domain") == 1
    honest = rounds[1]  # clear: scikit-learn on the union of all five tests
    assert abs(honest["private_auc"] - honest["clear_auc"]) < 5 * honest["std"]
    for p in range(5):  # epsilon 1 on each client's key per round it took part in, at both parties
        key = Identity.load(str(work / "keys" / f"client-{p}.key")).public
        taken = [1.0] if p == 0 else [1.0, 1.0]
        for role in ("P0", "P1"):
            releases = Ledger.releases(Ledger(default_directory(), role).state(key_account(key)))
            assert [r.epsilon for r in releases] == pytest.approx(taken), (p, role)
        if p:  # and in its own ledger
            own = json.loads((work / "keys" / f"client-{p}.ledger.json").read_text())["releases"]
            assert [r["epsilon"] for r in own] == [1.0, 1.0]


def test_the_crafted_model_reads_every_label_from_exact_rounds_and_no_more_than_the_dp_bound_allows():
    """The example's union of test sets (M, P); exact rounds (the old default) read every target's label; the DP
    default's rounds, as many as a client's budget of 2 allows at epsilon 1, stay under e/(1+e) per round, and
    under e^2/(1+e^2) on one target read in both (the circuit's noise law, 40,000 draws; 4.3 standard errors)."""
    y_test, _ = union_of_tests_of_the_example()
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
    work, _ = simulate(deployed, tmp_path, "crafted_server_app", mpcauc_protocol=protocol,
                        mpcauc_max_exact=3 if exact else 0)
    rounds = json.loads((work / "mpcauc-oracle-rounds.json").read_text())["rounds"]
    assert len(rounds) == 3
    if exact:
        assert all(r["read"] == r["label"] for r in rounds), rounds
    else:
        assert [r["auc"] is not None for r in rounds] == [True, True, False], rounds
