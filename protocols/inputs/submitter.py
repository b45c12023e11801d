"""A client on its own machine (``mpc-auc client submit``): submit its rows to an open evaluation.

1. Dial P0 and P1 at the deployment's addresses (TLS 1.3, the parties'
   certificates pinned from the deployment file, the client's own
   certificate presented: a party accepts it only while an evaluation with
   the client on its roster is open, so the client retries until then).
2. Take each party's ticket (evaluation id, job nonce, score encoding,
   whether ranks come back, the roster's size, the most rows the client and
   all clients together may send, and the release's terms:
   protocol, epsilon, delta, neighbour notion, every noise parameter, the
   tighter party's budget, whether missing clients are allowed, the AUC's
   decimals; and what that party's ledger holds for this client's key) and
   refuse to go on unless both agree (their standings aside) and name the
   evaluation asked for; show the terms and standings, and refuse what the
   client's :class:`Policy` does not accept (a looser release than its
   ``max_epsilon``, an exact one past its ``Accepts``, a release past its own
   budget in its own ledger: protocols.inputs.own_ledger).
3. Check the rows against the ticket's encoding and limits, record the
   release in the client's own ledger, ask each party for room for its row
   count in the evaluation's total (first come), share and seal the rows to the parties' pinned
   sealing keys, sign the statement with the client's terms
   (protocols.inputs.submission) and send each party its submission; each
   answers ``accepted`` or ``refused`` with the cause.
4. Wait for the job's end: in an evaluation that shares its result, first
   each party's copy of the release, which must agree field by field, carry
   the ticket's noise and nonce and count this client with its rows
   (:func:`check_shared`); then the client's rank bundles (signed by each
   party, bound to this job; protocols.inputs.bundles.open_ranks), ``done``,
   or the job's refusal.
"""
import dataclasses
import time
from dataclasses import dataclass

import numpy as np

from .bundles import open_ranks
from .clients import check_client
from ..errors import ChannelIntegrityError, InputError, PeerLost
from ..runtime.identity import CLIENT_PREFIX, COMPUTE
from ..runtime.ledger import Budget
from ..runtime.link import dial
from ..runtime.control import recv_message, send_message
from ..runtime.sealing import KeyPair
from .own_ledger import OwnLedger, default_path, ticket_release
from .submission import Accepts, SharedResult, SubmissionRefused, Ticket, make_submission
from ..runtime.wire import WireError


# what the parties are told of a release the client's own ledger refuses: not what it spent elsewhere (a client's
# history across evaluations stays its own)
LEDGER_DECLINED = "its own privacy ledger refuses the release (the client's budget or its exact releases)"
ROWS_DECLINED = "its rows do not fit the evaluation's declared input (the client's own check, before it sent anything)"


class JobRefused(InputError):
    """The parties refused the client's submission or the whole job, or the client refused the job; the message
    says why."""


@dataclass(frozen=True)
class Policy:
    """What a client accepts before it sends its rows, checked against both parties' tickets."""
    max_epsilon: float = None  # the most one DP release may spend
    budget: Budget = None  # the client's own budget over every release its own ledger records
    accepts: Accepts = Accepts(max_exact=1)  # exact releases: stated in the signed statement, enforced by both parties
    ledger: str = None  # the client's own ledger file (None: own_ledger.default_path of its key)
    require_security: str = None  # "malicious": only a job under security with abort (the tickets state it)


@dataclass
class Submitted:
    evaluation: str
    rows: int
    status: str  # "computed", or why this client was left out
    ranks: np.ndarray = None  # the client's rows' global 1-based mid-ranks, when the evaluation delivers them
    ticket: Ticket = None  # the job's ticket, both parties' common part (what it released: ticket.terms)
    shared: SharedResult = None  # the released result, checked (:func:`check_shared`), when the evaluation shares it
    standings: tuple = ()  # what each party's ledger held for this client's key before the job


def submit_rows(identity, deployment, evaluation: str, scores, labels, timeout_s: float = 20.0,
                connect_s: float = 60.0, on_progress=None, policy: Policy = Policy(), locate=None) -> Submitted:
    """Submit one client's rows to ``evaluation`` on the deployment's parties; see the module docstring.

    connect_s: how long to keep trying while the parties have not opened the evaluation yet.
    policy: what this client accepts (:class:`Policy`); a job past it is refused before anything is sent.
    locate: ``locate(i)`` names row i in the client's own messages (default: the client and row index).
    Rows that fail the client's check against the ticket are declined with :data:`ROWS_DECLINED`, which names
    nothing of them, a release its own ledger refuses with :data:`LEDGER_DECLINED`, which names nothing of its
    other releases: the parties end the job at once (unless it allows missing clients).
    Raises JobRefused (submission or job refused), InputError (bad rows), PeerLost / ChannelIntegrityError.
    """
    name = identity.role[len(CLIENT_PREFIX):] if identity.role.startswith(CLIENT_PREFIX) else None
    if name is None:
        raise InputError(f"this key belongs to {identity.role}, not to a client")
    scores, labels = np.asarray(scores, dtype=np.float64), np.asarray(labels)
    links, own, entry, sent = {}, OwnLedger(policy.ledger or default_path(identity.public)), None, False
    try:
        tickets = []
        for role in COMPUTE:
            links[role], ticket = _connect(identity, deployment, role, evaluation, timeout_s, connect_s)
            tickets.append(ticket)
        if not all(isinstance(t, Ticket) for t in tickets) or tickets[0].common() != tickets[1].common() \
                or tickets[0].evaluation != evaluation:
            raise JobRefused(f"P0 and P1 issued different tickets for evaluation {evaluation!r}: not submitting")
        ticket, standings = tickets[0].common(), tuple(t.standing for t in tickets)
        told = None  # what the parties are told if this client declines: its error, or nothing of its rows
        try:
            _accept_terms(ticket, standings, policy, on_progress)
            told = ROWS_DECLINED
            check_client(name, scores, labels, ticket.encoder, locate, declared_by=f"evaluation {evaluation!r}")
            told = None
            _check_size(ticket, len(scores))
            told = LEDGER_DECLINED
            entry, why = own.charge(ticket_release(ticket.terms), {"evaluation": evaluation,
                                                                    "nonce": ticket.nonce.hex(), "client": name},
                                    policy.budget, policy.accepts.max_exact)
            if why:
                raise JobRefused(f"{why}: not submitting")
            told = None
            _ask_room(links, len(scores))
            reply = KeyPair()
            submissions = make_submission(identity, ticket, scores, labels, deployment.seal_keys(), reply,
                                          accepts=policy.accepts, dealer_key=deployment.dealer_seal_key())
        except InputError as err:  # the parties need not wait for this client until their deadline
            for link in links.values():
                _decline(link, told or str(err))
            raise
        for role, submission in zip(COMPUTE, submissions):
            sent = True
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
            if kind == "shared":
                shared.append(payload)
                kind, payload = recv_message(links[role], "waiting for the job to finish")
            ends.append((kind, payload))
    except WireError as err:
        raise JobRefused(f"a party sent a malformed message: {err}") from None
    finally:
        if entry is not None and not sent:
            own.void(entry, "nothing was sent")
        for link in links.values():
            link.close(flush_s=1.0)
    kinds = {kind for kind, _ in ends}
    computed = kinds == {"ranks"} or (kinds == {"done"} and ends[0][1] == "computed")
    result = check_shared(shared, ticket, name, len(scores)) if ticket.terms.share_result and computed else None
    if kinds == {"ranks"}:
        verify = [deployment.public(role).verify_key for role in COMPUTE]
        return Submitted(evaluation, len(scores), "computed",
                       open_ranks(reply, name, ticket.job, [bundle for _, bundle in ends], verify,
                                  ticket.terms.security == "malicious"), ticket, result,
                       standings)
    if kinds == {"done"}:
        return Submitted(evaluation, len(scores), ends[0][1], None, ticket, result, standings)
    reasons = [str(payload) for kind, payload in ends if kind != "done"]
    raise JobRefused(reasons[0] if reasons else "the parties ended the job differently")


def _decline(link, why: str) -> None:
    try:
        send_message(link, "declined", why)
    except (PeerLost, ChannelIntegrityError, OSError):
        pass  # the party learns at its deadline instead


def _ask_room(links: dict, rows: int) -> None:
    """Tell both parties how many rows this client sends; each holds room for them in the evaluation's total
    (first come) or says why not (JobRefused naming it).  P1 is asked only once P0 has held room, so that the
    clients P1 holds room for are among P0's and no two clients each take the last room at one party."""
    for role in COMPUTE:
        send_message(links[role], "rows", rows)
        kind, why = recv_message(links[role], f"waiting for {role} to hold room for the rows")
        if kind != "room":
            raise JobRefused(f"{role} refused the submission: {why}")


def _check_size(ticket: Ticket, rows: int) -> None:
    """InputError if the parties will not take this many rows from one client (the ticket's limits)."""
    for limit, what in ((ticket.max_rows, "per client"), (ticket.max_total_rows, "over all its clients")):
        if limit is not None and rows > limit:
            raise InputError(f"this client has {rows:,} rows; evaluation {ticket.evaluation!r} takes at most "
                             f"{limit:,} {what}")


def _accept_terms(ticket: Ticket, standings, policy: Policy, on_progress) -> None:
    """Show the client what the job releases and what each party's ledger holds for it; raise JobRefused if the
    release is looser than its policy."""
    terms = ticket.terms
    if terms is None:
        raise JobRefused("the parties' ticket does not state what the job releases: not submitting")
    if on_progress is not None:
        on_progress(f"the job releases {terms.describe()}; {ticket.roster_size} client(s) on the roster")
        for standing in standings:
            if standing is not None:
                on_progress(standing.describe())
    if policy.require_security is not None and terms.security != policy.require_security:
        raise JobRefused(f"the job runs under security {terms.security} and this client requires "
                         f"{policy.require_security} (--require-security): not submitting")
    if terms.exact and policy.accepts.max_exact == 0:
        why = (f"looser than --max-epsilon {policy.max_epsilon:g} (an exact release; --max-exact K accepts K)"
               if policy.max_epsilon is not None else "and this client accepts no exact release (--max-exact 0)")
        raise JobRefused(f"the job releases {terms.describe()}, {why}: not submitting")
    if not terms.exact and terms.delta is None:  # its own ledger could not account the release
        raise JobRefused(f"the job releases {terms.describe()} without stating its delta: not submitting")
    if not terms.exact and policy.max_epsilon is not None and terms.epsilon > policy.max_epsilon:
        raise JobRefused(f"the job releases {terms.describe()}, looser than --max-epsilon {policy.max_epsilon:g}: "
                         "not submitting")
    if why := policy.accepts.refusal(terms):
        raise JobRefused(f"{why}: not submitting")


def check_shared(copies: list, ticket: Ticket, name: str, rows: int) -> SharedResult:
    """The released result both parties sent this client, or JobRefused naming the first field that does not
    hold: a field the two copies differ in, noise parameters other than the ticket's, another job's nonce, a
    client list that leaves this client or its rows out, clients excluded where the tickets did not allow it, or
    lists that do not add up to the roster."""
    if len(copies) != len(COMPUTE) or not all(isinstance(c, SharedResult) for c in copies):
        raise JobRefused("the evaluation shares its result, but not both parties sent one: refusing the result")
    first, second = copies
    for field in dataclasses.fields(SharedResult):
        if not _same(getattr(first, field.name), getattr(second, field.name)):
            raise JobRefused(f"P0 and P1 sent different {field.name!r} in the shared result: refusing it")
    if not _same(first.noise, ticket.terms.noise):
        raise JobRefused("the shared result's 'noise' is not the one both tickets stated: refusing it")
    if first.nonce != ticket.nonce:
        raise JobRefused("the shared result's 'nonce' is another job's: refusing it")
    clients, missing, excluded = list(first.clients), list(first.missing), list(first.excluded)
    if len(first.rows) != len(clients) or name not in clients or list(first.rows)[clients.index(name)] != rows:
        raise JobRefused(f"the shared result's 'clients' and 'rows' do not count this client's {rows} rows: "
                         "refusing it")
    if excluded and not ticket.terms.exclude_invalid:
        raise JobRefused("the shared result's 'excluded' leaves clients out, which the tickets did not allow: "
                         "refusing it")
    named = clients + missing + excluded
    if len(set(named)) != len(named) or len(named) != ticket.roster_size:
        raise JobRefused(f"the shared result's 'clients', 'missing' and 'excluded' do not make up the roster of "
                         f"{ticket.roster_size}: refusing it")
    return first


def _same(a, b) -> bool:
    """Equal as released values: numbers, strings, containers and numpy arrays compared element by element."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and \
            a.dtype == b.dtype and bool((a == b).all())
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


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
