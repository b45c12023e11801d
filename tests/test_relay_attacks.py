"""A relay between the clients and the parties that drops, duplicates or reorders bundles at one party.

The coordinator here plays that relay: it talks to the parties' ranking
target itself and hands P0 and P1 different bundle lists.  P0 and P1
compare a hash of their ordered (client, rows, reply key) lists before
computing and both refuse; nothing is opened.
"""
import pytest

from mpc_auc.protocols.clients import share_client
from mpc_auc.protocols.encoding import ScoreEncoder
from mpc_auc.protocols.mpc_exact import FRACTION_BITS, Job, _party
from mpc_auc.protocols.runtime import PARTIES, Session
from mpc_auc.protocols.sealing import KeyPair

ENCODER = ScoreEncoder()
ROWS = {"a": ([0.1, 0.7, 0.4], [0, 1, 1]), "b": ([0.2, 0.9, 0.3], [1, 0, 0]), "c": ([0.5, 0.6, 0.8], [0, 1, 0])}


def _attack(tamper):
    """Run one job in which P1 receives ``tamper(bundles for P1)``; both parties' answers."""
    with Session(_party, (FRACTION_BITS,), provider="TTP", timeout_s=20) as session:
        keys = session.deployment.seal_keys()
        bundles = [share_client(c, s, y, ENCODER, keys, KeyPair().public) for c, (s, y) in ROWS.items()]
        job = Job(tuple(len(s) for s, _ in ROWS.values()), "radix", ENCODER.key_bits, False)
        for role in PARTIES:
            session.send(role, "job", job)
        session.send("P0", "bundles", [pair[0] for pair in bundles])
        session.send("P1", "bundles", tamper([pair[1] for pair in bundles]))
        outs = [session.recv(role, "result") for role in PARTIES]
        for role in PARTIES:
            session.send(role, "job", None)
    return outs


@pytest.mark.parametrize("tamper, cause", [
    (lambda b: [b[1], b[0], b[2]], "different client lists"),  # reordered at P1
    (lambda b: [b[0], b[0], b[2]], "two bundles"),  # a duplicated client at P1
    (lambda b: b[:2], "announced row counts"),  # a dropped client at P1
    (lambda b: b, None),  # control: the honest relay
], ids=["reordered", "duplicated", "dropped", "honest"])
def test_parties_refuse_inputs_that_differ_between_them(tamper, cause):
    outs = _attack(tamper)
    if cause is None:
        assert outs[0]["defined"] and outs[0]["scaled"] == outs[1]["scaled"]
        return
    assert all("refused" in out and "nothing was computed" in out["refused"] for out in outs)
    assert any(cause in out["refused"] for out in outs)
    assert not any("scaled" in out for out in outs)
