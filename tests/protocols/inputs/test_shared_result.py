"""A shared result every client checks: a P0 that rewrites a field of the result it shares (tests/weakened_party.py:
the row counts, the clients, the missing ones, the noise parameters, the opened values) is refused by every
client, which names the field; the organiser's result, taken from both parties, is what was released."""
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import mpc_auc
from roles_on_hosts import client_keys, deploy

FIELDS = ["rows", "clients", "missing", "noise", "opened"]
WRAPPER = [sys.executable, str(Path(__file__).parents[2] / "weakened_party.py"), ",".join(FIELDS)]


@pytest.fixture(scope="module")
def lying_p0(tmp_path_factory):
    yield from deploy(tmp_path_factory, commands={"P0": WRAPPER})


def test_a_p0_that_rewrites_any_field_of_the_shared_result_is_refused_by_every_client(lying_p0):
    directory = lying_p0[0]
    names = ["north", "south"]
    rng = np.random.default_rng(5)
    rows = {n: (np.round(rng.random(150), 2), (rng.random(150) < 0.4).astype(np.int64)) for n in names}
    for field in FIELDS:  # the wrapper lies about the next field in each job
        client_keys(directory, names)
        evaluation = f"shared-{field}"
        dp = dict(protocol="mpc-central", epsilon=1.0) if field == "noise" else {}
        opened = mpc_auc.Evaluation.open(directory / "deployment.yaml", id=evaluation,
                                         roster=[directory / f"{n}.roster.yaml" for n in names],
                                         intake=mpc_auc.Intake(deadline=60, share_result=True), **dp)

        def submit(name):
            try:
                return mpc_auc.submit(directory / "deployment.yaml", evaluation=evaluation, client=name,
                                      key=directory / f"{name}.key", y_true=rows[name][1], y_score=rows[name][0])
            except mpc_auc.InputError as err:
                return err

        with ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(submit, names))
        assert all(isinstance(a, mpc_auc.InputError) for a in answers), (field, answers)
        assert all(f"P0 and P1 sent different {field!r} in the shared result" in str(a) for a in answers), answers
        result = opened.result(timeout=60)
        assert result.m == 300 and result.clients == 2 and result.missing == ()
        if field == "noise":
            assert result.epsilon == 1.0


def _ticket_and_result():
    """A client's ticket (mpc-central at epsilon 1, a roster of 3) and a shared result that fits it."""
    from mpc_auc.protocols.dp.central_law import CentralNoise
    from mpc_auc.protocols.inputs.encoding import ScoreEncoder
    from mpc_auc.protocols.inputs.submission import ReleaseTerms, SharedResult, Ticket

    noise = CentralNoise(1.0)
    terms = ReleaseTerms("mpc-central", 1.0, 1e-13, "label", noise=noise)
    return (Ticket("e", b"n" * 32, ScoreEncoder(), False, terms, 1, 3),
            SharedResult(b"n" * 32, ("a", "b"), (10, 20), ("c",), "radix", {"central": (1, 2)}, noise))


@pytest.mark.parametrize("field, value, message", [
    ("noise", "four", "'noise' is not the one both tickets stated"),
    ("nonce", b"m" * 32, "'nonce' is another job's"),
    ("rows", (11, 20), "do not count this client's 10 rows"),
    ("missing", (), "do not make up the roster of 3"),
    ("excluded", ("c",), "which the tickets did not allow"),
])
def test_a_shared_result_both_parties_agree_on_is_checked_against_the_clients_own_ticket(field, value, message):
    """Two parties that send the same wrong field (the client cannot tell which lies, but the field contradicts
    what it knows: its ticket's noise and nonce, its own rows, the roster's size) are refused too."""
    import dataclasses

    from mpc_auc.protocols.dp.central_law import CentralNoise
    from mpc_auc.protocols.inputs.submitter import JobRefused, check_shared

    ticket, honest = _ticket_and_result()
    wrong = dataclasses.replace(honest, **{field: CentralNoise(4.0) if value == "four" else value})
    assert check_shared([honest, honest], ticket, "a", 10) is honest
    with pytest.raises(JobRefused, match=message):
        check_shared([wrong, wrong], ticket, "a", 10)


def test_a_client_excluded_where_the_tickets_allow_it_counts_towards_the_roster():
    """With exclude_invalid in both tickets' terms, clients + missing + excluded make up the roster; a name
    listed twice does not."""
    import dataclasses

    from mpc_auc.protocols.inputs.submitter import JobRefused, check_shared

    ticket, honest = _ticket_and_result()
    ticket = dataclasses.replace(ticket, terms=dataclasses.replace(ticket.terms, exclude_invalid=True))
    excluded = dataclasses.replace(honest, missing=(), excluded=("c",))
    assert check_shared([excluded, excluded], ticket, "a", 10) is excluded
    twice = dataclasses.replace(honest, excluded=("c",))
    with pytest.raises(JobRefused, match="do not make up the roster of 3"):
        check_shared([twice, twice], ticket, "a", 10)
