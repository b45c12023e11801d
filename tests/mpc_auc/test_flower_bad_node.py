"""A Flower node that submits rows outside the domain, in the example app's simulation against three
``mpc-auc party`` processes (tests/flower_simulation.py): each round leaves it out and keeps its DP AUC over the
other four, charging it nothing.  Its own file beside test_flower.py, so that the two simulations run on two
workers."""
import json

import pytest

from mpc_auc.protocols.mpc.accounting import key_account
from mpc_auc.protocols.runtime.identity import Identity
from mpc_auc.protocols.runtime.ledger import Ledger, default_directory
from flower_simulation import simulate

pytest.importorskip("flwr", reason="Flower is the optional extra mpc-auc[flower] (make test installs it)")


def test_a_round_keeps_its_auc_when_one_client_sends_rows_outside_the_domain(deployed, tmp_path):
    """Node 0 submits scores of 2.0 past its own checks (tests/flower_bad_client.py); the example's rounds leave
    it out (mpcauc-exclude-invalid, its default) and each keeps its DP AUC over the other four, naming it."""
    work, log = simulate(deployed, tmp_path, client="flower_bad_client")
    rounds = json.loads((work / "mpcauc-flower-rounds.json").read_text())["rounds"]
    assert [r["round"] for r in rounds] == [1, 2]
    assert all(r["private_auc"] is not None and r["excluded"] == 1 and r["epsilon"] == 1.0 for r in rounds), rounds
    assert log.count("left out 'client-0': rows outside the domain") == 2
    key = Identity.load(str(work / "keys" / "client-0.key")).public
    for role in ("P0", "P1"):  # nothing charged to the client left out
        assert Ledger.releases(Ledger(default_directory(), role).state(key_account(key))) == []
