"""A client on its own machine (``mpc-auc client submit``): submit its rows to an open evaluation.

1. Dial P0 and P1 at the deployment's addresses (TLS 1.3, the parties'
   certificates pinned from the deployment file, the client's own
   certificate presented: a party accepts it only while an evaluation with
   the client on its roster is open, so the client retries until then).
2. Take each party's ticket (evaluation id, job nonce, score encoding,
   whether ranks come back, and the release's terms: protocol, epsilon,
   delta, neighbour notion, the tighter party's budget, whether missing
   clients are allowed, the AUC's decimals) and refuse to go on unless both
   are the same and name the evaluation asked for; show the terms, and refuse
   a looser release than ``max_epsilon``.
3. Check the rows against the ticket's encoding, share and seal them to the
   parties' pinned sealing keys, sign the statement (protocols.inputs.submission)
   and send each party its submission; each answers ``accepted`` or
   ``refused`` with the cause.
4. Wait for the job's end: in an evaluation that shares its result, first
   each party's copy of the release (the opened values, as the organiser gets
   them); then the client's rank bundles (signed by each party, bound to this
   job; protocols.inputs.bundles.open_ranks), ``done``, or the job's refusal.
"""
import time
from dataclasses import dataclass

import numpy as np

from .bundles import open_ranks
from .clients import check_client
from ..errors import ChannelIntegrityError, InputError, PeerLost
from ..runtime.identity import CLIENT_PREFIX, COMPUTE
from ..runtime.link import dial
from ..runtime.control import recv_message, send_message
from ..runtime.sealing import KeyPair
from .submission import SubmissionRefused, Ticket, make_submission
from ..runtime.wire import WireError


class JobRefused(InputError):
    """The parties refused the client's submission or the whole job; the message says why."""


@dataclass
class Outcome:
    evaluation: str
    rows: int
    status: str  # "computed", or why this client was left out
    ranks: np.ndarray = None  # the client's rows' global 1-based mid-ranks, when the evaluation delivers them
    ticket: Ticket = None  # the job's ticket (what it released: ticket.terms)
    shared: list = None  # each party's copy of the released result, when the evaluation shares it


def submit(identity, deployment, evaluation: str, scores, labels, timeout_s: float = 20.0,
           connect_s: float = 60.0, on_progress=None, max_epsilon: float = None) -> Outcome:
    """Submit one client's rows to ``evaluation`` on the deployment's parties; see the module docstring.

    connect_s: how long to keep trying while the parties have not opened the evaluation yet.
    max_epsilon: refuse (JobRefused, nothing sent) a job whose ticket states a looser release: a DP release
      past this epsilon, or an exact one.
    Raises JobRefused (submission or job refused), InputError (bad rows), PeerLost / ChannelIntegrityError.
    """
    name = identity.role[len(CLIENT_PREFIX):] if identity.role.startswith(CLIENT_PREFIX) else None
    if name is None:
        raise InputError(f"this key belongs to {identity.role}, not to a client")
    scores, labels = np.asarray(scores, dtype=np.float64), np.asarray(labels)
    links = {}
    try:
        tickets = []
        for role in COMPUTE:
            links[role], ticket = _connect(identity, deployment, role, evaluation, timeout_s, connect_s)
            tickets.append(ticket)
        if tickets[0] != tickets[1] or not isinstance(tickets[0], Ticket) or tickets[0].evaluation != evaluation:
            raise JobRefused(f"P0 and P1 issued different tickets for evaluation {evaluation!r}: not submitting")
        ticket = tickets[0]
        _accept_terms(ticket.terms, max_epsilon, on_progress)
        check_client(name, scores, labels, ticket.encoder)
        reply = KeyPair()
        submissions = make_submission(identity, ticket, scores, labels, deployment.seal_keys(), reply.public)
        for role, submission in zip(COMPUTE, submissions):
            send_message(links[role], "submission", submission)
        for role in COMPUTE:
            kind, why = recv_message(links[role], f"waiting for {role} to admit the submission")
            if kind != "accepted":
                raise JobRefused(f"{role} refused the submission: {why}")
        if on_progress is not None:
            on_progress(f"both parties admitted {len(scores)} rows; waiting for the job to finish")
        ends, shared = [], []
        for role in COMPUTE:
            kind, payload = recv_message(links[role], "waiting for the job to finish")
            if kind == "shared" and isinstance(payload, dict):
                shared.append(payload)
                kind, payload = recv_message(links[role], "waiting for the job to finish")
            ends.append((kind, payload))
    except WireError as err:
        raise JobRefused(f"a party sent a malformed message: {err}") from None
    finally:
        for link in links.values():
            link.close(flush_s=1.0)
    kinds = {kind for kind, _ in ends}
    shared = shared if len(shared) == len(COMPUTE) else None
    if kinds == {"ranks"}:
        verify = [deployment.public(role).verify_key for role in COMPUTE]
        return Outcome(evaluation, len(scores), "computed",
                       open_ranks(reply, name, ticket.job, [bundle for _, bundle in ends], verify), ticket, shared)
    if kinds == {"done"}:
        return Outcome(evaluation, len(scores), ends[0][1], None, ticket, shared)
    reasons = [str(payload) for kind, payload in ends if kind != "done"]
    raise JobRefused(reasons[0] if reasons else "the parties ended the job differently")


def _accept_terms(terms, max_epsilon, on_progress) -> None:
    """Show the client what the job releases; raise JobRefused if it is looser than ``max_epsilon``."""
    if terms is None:
        raise JobRefused("the parties' ticket does not state what the job releases: not submitting")
    if on_progress is not None:
        on_progress(f"the job releases {terms.describe()}")
    if max_epsilon is not None and (terms.epsilon is None or terms.epsilon > max_epsilon):
        raise JobRefused(f"the job releases {terms.describe()}, looser than --max-epsilon {max_epsilon:g}: "
                         "not submitting")


def _connect(identity, deployment, role: str, evaluation: str, timeout_s: float, connect_s: float):
    """A link to ``role`` and its ticket, retrying while the evaluation is not open there."""
    deadline = time.monotonic() + connect_s
    while True:
        link = None
        try:
            link = dial(identity, deployment, role, {"purpose": "submit", "evaluation": evaluation}, timeout_s)
            kind, ticket = recv_message(link, f"waiting for {role}'s ticket")
            if kind != "ticket":
                raise SubmissionRefused(f"{role} sent {kind!r} instead of a ticket")
            return link, ticket
        except (PeerLost, ChannelIntegrityError) as err:
            if link is not None:
                link.close(flush_s=0.2)
            if time.monotonic() > deadline:
                raise JobRefused(f"{role} did not let this client in within {connect_s:.0f} s ({err}): is "
                                 f"evaluation {evaluation!r} open with this client on its roster?") from None
            time.sleep(0.5)
