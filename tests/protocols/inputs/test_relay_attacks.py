"""A relay between the clients and the parties, using only the library's own functions.

The coordinator plays the relay: it talks to the parties' ranking target
itself and hands P1 tampered submissions (replayed from an earlier job,
dropped, duplicated, reordered, sealed and signed by the relay under a real
client's name, from a client not on the roster, made for another
evaluation, sealed to a substituted P1 key, or announced by a count that is
no count).  Every one is refused by
both parties with a message naming the cause, and nothing is opened; the
honest relay is the control.  A relay that forges a party's rank bundle is
refused by the client.
"""
import re

import numpy as np
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from mpc_auc.cli import main
from mpc_auc.protocols.inputs.bundles import RANK_TAG, JobId, seal_ranks
from mpc_auc.csv_io import write_evalset
from mpc_auc.protocols.runtime.identity import Identity, client_role
from mpc_auc.protocols.errors import InputError
from mpc_auc.protocols.mpc.ranking_job import FRACTION_BITS, Job, JobRun
from mpc_auc.protocols.mpc.ranking_party import serve_jobs as _party
from mpc_auc.protocols.runtime.session import PARTIES, Session
from mpc_auc.protocols.runtime.sealing import KeyPair
from mpc_auc.protocols.inputs.submission import Declaration, Roster, Ticket, make_submission
from mpc_auc.protocols.refused import Refused
from mpc_auc.synthetic import synthetic_evalset

ROWS = {"a": ([0.1, 0.7, 0.4], [0, 1, 1]), "b": ([0.2, 0.9, 0.3], [1, 0, 0]), "c": ([0.5, 0.6, 0.8], [0, 1, 0])}
CLIENTS = {name: Identity(client_role(name)) for name in ROWS}
EVALUATION = Declaration("relay-test", Roster(tuple(CLIENTS[n].public for n in ROWS)))


def _job(session, tamper, earlier=None, rows=None):
    """One job in which P1 receives ``tamper(P1's submissions, made, earlier, seal keys)``; the parties' answers.

    rows: the row counts the coordinator announces with the job (None: none announced)."""
    for role in PARTIES:
        session.send(role, "job", Job(EVALUATION, "radix", False, rows))
    ticket = [session.recv(role, "ticket") for role in PARTIES][0]
    keys = session.deployment.seal_keys()
    made = {n: make_submission(CLIENTS[n], ticket, s, y, keys, KeyPair()) for n, (s, y) in ROWS.items()}
    for role, submissions in (("P0", [made[n][0] for n in ROWS]),
                              ("P1", tamper([made[n][1] for n in ROWS], made, earlier, ticket, keys))):
        counted = isinstance(submissions, list)  # else the relay's count itself is the attack
        session.send(role, "submissions", len(submissions) if counted else submissions)  # the count, then each
        for submission in submissions if counted else ():
            session.send(role, "submission", submission)
    return [session.recv(role, "result") for role in PARTIES], made


def _attack(tamper, replay=False, rows=None):
    with Session(_party, (FRACTION_BITS,), provider="TTP", timeout_s=20) as session:
        earlier = _job(session, lambda subs, *_: subs)[1] if replay else None  # the relay records a job
        outs, _ = _job(session, tamper, earlier, rows)
        for role in PARTIES:
            session.send(role, "job", None)
    return outs


def _impostor(ticket, keys):
    """The relay's own key pair under the real name "b": shares and statement of its choosing."""
    return make_submission(Identity(client_role("b")), ticket, [0.99, 0.98, 0.97], [1, 1, 1], keys, KeyPair())


def _substituted(ticket, keys):
    """b's genuine submission, but b was given the relay's key in place of P1's (so the relay could read it)."""
    return make_submission(CLIENTS["b"], ticket, *ROWS["b"], [keys[0], KeyPair().public], KeyPair())


ATTACKS = {
    "replayed": (lambda s, made, earlier, t, k: [s[0], earlier["b"][1], s[2]], "another job"),
    "dropped": (lambda s, *_: s[:2], "no submission from 'c' at both parties"),
    "duplicated": (lambda s, *_: [s[0], s[0], s[2]], "already submitted"),
    "reordered": (lambda s, *_: [s[1], s[0], s[2]], "out of roster order"),
    "relay-sealed": (lambda s, made, e, t, k: [s[0], _impostor(t, k)[1], s[2]], "not signed by that client's key"),
    "unknown-client": (lambda s, made, e, t, k: s + [make_submission(
        Identity(client_role("mallory")), t, [0.5], [1], k, KeyPair())[1]], "not on the roster"),
    "other-evaluation": (lambda s, made, e, t, k: [s[0], make_submission(
        CLIENTS["b"], Ticket("other", t.nonce, t.encoder, False), *ROWS["b"], k, KeyPair())[1], s[2]],
        "submitted for evaluation 'other'"),
    "substituted-key": (lambda s, made, e, t, k: [s[0], _substituted(t, k)[1], s[2]], "substituted party key"),
    "no-count": (lambda s, *_: "three", "announced 'three' submissions"),
}


@pytest.mark.parametrize("name", list(ATTACKS))
def test_the_parties_refuse_a_tampering_relay_naming_the_cause(name):
    tamper, cause = ATTACKS[name]
    outs = _attack(tamper, replay=name == "replayed")
    # a Refused answer holds the reason and the clients named, no opened value
    assert all(isinstance(out, Refused) and "nothing was computed" in out.reason for out in outs), outs
    assert any(cause in out.reason for out in outs), [out.reason for out in outs]
    with pytest.raises(InputError, match=re.escape(cause)):  # what the command reports, with exit 2
        JobRun(outs).refused()


def test_row_counts_other_than_the_announced_ones_are_refused():
    """The ledger is charged for the announced rows (M): submissions holding other counts do not run."""
    outs = _attack(lambda s, *_: s, rows=(3, 3, 2))
    assert all("row counts announced with the job" in out.reason for out in outs)


def test_the_honest_relay_is_accepted():
    outs = _attack(lambda s, *_: s, replay=True)
    assert outs[0]["defined"] and outs[0]["scaled"] == outs[1]["scaled"] and outs[0]["clients"] == list(ROWS)


def test_the_command_exits_2_naming_the_cause_and_writes_nothing(tmp_path, capsys, monkeypatch):
    """``mpc-auc run`` whose relay (its own process) drops a client's submission at P1."""
    write_evalset(tmp_path / "in.csv", synthetic_evalset(m=300, clients=3, seed=4))
    honest, left = Session.send, {}

    def drop(self, role, kind, payload=None):  # P1 is told of one submission fewer, and the last never reaches it
        if (role, kind) == ("P1", "submissions"):
            payload = left["P1"] = payload - 1
        elif (role, kind) == ("P1", "submission"):
            if not left["P1"]:
                return
            left["P1"] -= 1
        honest(self, role, kind, payload)

    monkeypatch.setattr(Session, "send", drop)
    out = tmp_path / "result.json"
    assert main(["run", "--input", str(tmp_path / "in.csv"), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "inputs refused" in err and "no submission from" in err and "nothing was computed" in err
    assert not out.exists()


def test_a_forged_rank_bundle_stops_the_run_and_writes_nothing(tmp_path, capsys, monkeypatch):
    """The relay replaces P0's rank bundle for one client with ranks it sealed (all zero) and signed itself."""
    write_evalset(tmp_path / "in.csv", synthetic_evalset(m=300, clients=3, seed=4))
    honest, relay = Session.recv, Ed25519PrivateKey.generate()

    def forge(self, role, kind):
        payload = honest(self, role, kind)
        if (role, kind) == ("P0", "result"):
            name, genuine = next(iter(payload["rank_bundles"].items()))
            head = genuine.fields(RANK_TAG)
            payload["rank_bundles"][name] = seal_ranks(0, JobId(head.evaluation, head.nonce), name, head.reply_to,
                                                       np.zeros(head.rows, dtype=np.int64), relay.sign)
        return payload

    monkeypatch.setattr(Session, "recv", forge)
    out, ranks = tmp_path / "result.json", tmp_path / "ranks"
    assert main(["run", "--input", str(tmp_path / "in.csv"), "--out", str(out), "--ranks-dir", str(ranks)]) == 2
    assert "not signed by P0" in capsys.readouterr().err
    assert not out.exists() and not ranks.exists()
