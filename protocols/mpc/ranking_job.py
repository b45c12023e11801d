"""One ranking job, as the coordinator runs it: what mpc-exact and mpc-central share.

A *job* is one evaluation set through the parties: the coordinator sends each party a :class:`Job`, both
issue the same ticket, the clients' submissions arrive (relayed here for simulated clients, or directly
from the clients' own machines), the parties run their loop (protocols.mpc.ranking_party) and send back
what they opened.  mpc-exact (protocols.mpc.exact) turns that into the AUC, mpc-central
(protocols.mpc.central) into a DP release.  The parties run the service :data:`SERVICE`.
"""
import dataclasses
import hashlib
import secrets
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from ..dp.central_law import CentralNoise
from ..dp.curve_law import CurveNoise
from ..errors import InputError, PartyFailure
from ..refused import Refused
from ..release_spec import ReleaseSpec
from ..inputs.clients import check_client
from ..inputs.encoding import ScoreEncoder
from ..inputs.submission import Accepts, Declaration, Roster, make_submission
from ..inputs.weights import bits_for, check_weights
from ..runtime.ledger import Budget
from ..runtime.metrics import plain
from ..runtime.identity import CLIENT_PREFIX, Identity, check_client_id, client_role
from ..runtime.control import Service
from ..runtime.sealing import KeyPair
from ..runtime.session import DEALER, PARTIES, LocalRoles, Placement, Session
from ..runtime import wire

SERVICE = Service("mpc-ranking", "mpc_auc.protocols.mpc.ranking_party")
FRACTION_BITS = 52  # the AUC is revealed as floor(AUC * 2^52): error < 2.3e-16
METHODS = ("radix", "bitonic")


@wire.message
@dataclass(frozen=True)
class Job:
    evaluation: Declaration  # id, roster, encoding, how submissions arrive, what an exact release opens (its spec)
    method: str
    ranks: bool
    rows: tuple = None  # relayed submissions: each client's row count, announced so a release is charged first
    central: CentralNoise | CurveNoise = None  # mpc-central: the DP release's noise (protocols.dp.release_noise)
    datasets: tuple = ()  # ids of the evaluation set the coordinator names for the ledgers (each narrows)
    budget: Budget = None  # the budget the coordinator asks for (a party's ledger may only lower it)
    owners: tuple = ()  # a relayed job: the owners of its rows, as its coordinator declares them (accounting.owners)


def dataset_id(clients) -> str:
    """A stable id of an evaluation set for the ledgers: SHA-256 over its rows as a multiset of (score, label)
    pairs, so that no reordering of rows, renaming or regrouping of clients changes it."""
    scores = np.concatenate([np.asarray(s, dtype=np.float64) for _, s, _ in clients]) + 0.0  # -0.0 as 0.0
    labels = np.concatenate([np.asarray(y, dtype=np.int64) for _, _, y in clients])
    order = np.lexsort((labels, scores))
    digest = hashlib.sha256(np.ascontiguousarray(scores[order]).tobytes())
    digest.update(np.ascontiguousarray(labels[order]).tobytes())
    return "rows-sha256:" + digest.hexdigest()


@contextmanager
def roles_started(placement: Placement, timeout_s: float):
    """``placement`` with the local roles of mpc-exact and mpc-central started now, so that they import,
    draw their keys and bind their sockets while the caller reads and checks its input; the first session
    on the placement adopts them.  Leaving the block stops any that are still running (the input was
    refused, or the run interrupted).  A deployment's roles already run: it is yielded as it is."""
    if placement.deployment is not None:
        yield placement
        return
    started = LocalRoles(SERVICE, "TTP", placement, timeout_s, background=True)
    try:
        yield dataclasses.replace(placement, started=started)
    finally:
        started.stop()


def warm_roles(placement: Placement, timeout_s: float) -> LocalRoles:
    """The local roles of mpc-exact and mpc-central on ``placement``, started now to serve one session after
    another (mpc_auc.warm) until their ``stop``."""
    return LocalRoles(SERVICE, "TTP", placement, timeout_s, serving=True)


def score_columns(clients) -> int:
    """The score columns every client of ``clients`` ((id, scores, labels)) holds: 1 for scores (rows,), c for
    (rows, c); InputError when there are no clients or they differ."""
    if not clients:
        raise InputError("a dataset has no clients")
    columns = {np.shape(scores)[1] if np.ndim(scores) == 2 else 1 for _, scores, _ in clients}
    if len(columns) != 1:
        raise InputError(f"every client must submit the same number of score columns, not {sorted(columns)}")
    return columns.pop()


@dataclass(frozen=True)
class Request:
    """One job as the coordinator asks for it: the evaluation and, when it relays them, the clients' rows."""
    evaluation: Declaration
    clients: list = None  # [(client identity, scores, labels)] simulated here; None: clients submit directly
    datasets: tuple = ()  # ledger ids named by the coordinator (protocols.mpc.accounting.sets)
    weights: list = None  # a weighted evaluation's simulated clients: each one's sample weights, in order
    owners: tuple = ()  # the declared owners of the rows (protocols.mpc.accounting.owners)


def simulated(clients, encoder: ScoreEncoder, datasets: tuple = (), spec: ReleaseSpec = ReleaseSpec(),
              weights: list = None, owners: tuple = ()) -> Request:
    """Every client of ``clients`` ((id, scores, labels)) simulated in this process, each with a fresh key
    on a roster of its own; all rows are checked here, before any role starts.  spec: what the job opens
    (protocols.release_spec); weights: each
    client's sample weights for the weighted AUC, in units of 2^-q with q chosen here for all of them
    (protocols.inputs.weights.bits_for); owners: the owners of the rows the parties' ledgers charge."""
    columns = score_columns(clients)
    for name, scores, labels in clients:
        check_client_id(name)
        check_client(name, scores, labels, encoder, columns=columns)
    weight_bits = None
    if weights is not None:
        if len(weights) != len(clients):
            raise InputError(f"{len(clients)} clients but sample weights for {len(weights)}")
        for (name, _, labels), w in zip(clients, weights):
            check_weights(w, len(labels), lambda i, name=name: f"client {name!r} row {i}")
        weight_bits = bits_for(np.concatenate([np.asarray(w, dtype=np.float64) for w in weights]))
    identities = [Identity(client_role(name)) for name, _, _ in clients]
    evaluation = Declaration(f"local-{secrets.token_hex(8)}", Roster(tuple(i.public for i in identities)), encoder,
                            spec=spec, columns=columns, weight_bits=weight_bits)
    return Request(evaluation, [(i, s, y) for i, (_, s, y) in zip(identities, clients)], tuple(datasets),
                   None if weights is None else list(weights), tuple(owners))


@dataclass
class JobRun:
    """One job's pass through the parties: what each party sent back, and the set-up around it."""
    outs: list
    ticket: object = None  # submission.Ticket of the job (None if refused at its start)
    reply_keys: dict = field(default_factory=dict)  # simulated client -> its key for its rank bundles
    sharing_s: float = 0.0
    wall_s: float = 0.0
    party_keys: list = None  # P0's and P1's Ed25519 verify keys, pinned: rank bundles must carry their signatures
    upload_bytes: int = 0
    dealer_traffic: dict = field(default_factory=dict)
    finals: dict = field(default_factory=dict)  # role -> what its session target returned (for all jobs)

    @property
    def m(self) -> int:
        return sum(self.outs[0]["rows"])

    def refused(self) -> None:
        """Raise InputError with the parties' reasons if they refused the job."""
        reasons = list(dict.fromkeys(out.reason for out in self.outs if isinstance(out, Refused)))
        if reasons:
            raise InputError(" | ".join(reasons))

    def agreed(self) -> None:
        """Raise PartyFailure naming the field if P0 and P1 reported other clients, row counts, missing or excluded
        clients for the job (the organiser takes every released field from both, not from P0 alone)."""
        for field in ("clients", "rows", "missing", "excluded"):
            if list(self.outs[0].get(field, [])) != list(self.outs[1].get(field, [])):
                raise PartyFailure("P1", f"P0 and P1 reported different {field!r} for the same job")

    def traffic(self) -> dict:
        """Per role: the parties' meters for this job, and the dealer's totals for the session."""
        meters = ("bytes", "rounds", "sent_bytes", "sent_to", "hops", "phases", "peak_rss")
        return plain({**{role: {k: o[k] for k in meters if k in o} for role, o in zip(PARTIES, self.outs)},
                      **self.dealer_traffic})


def run_ranking_jobs(requests, method, ranks, central, placement, timeout_s, on_progress, budget=None,
                     party=None, party_args=()) -> list:
    """Run each request's job in one session of the parties; a JobRun per request.

    party: the parties' session target, :data:`SERVICE` unless an experiment wraps it (sims.security.view_parties
    records their views; party_args: its arguments after the fraction bits); what it returns at the session's end
    is in each JobRun's ``finals``.
    """
    if not requests:
        raise InputError("no dataset to evaluate")
    runs = []
    with Session(party or SERVICE, (FRACTION_BITS, *party_args), provider="TTP", placement=placement,
                 timeout_s=timeout_s, on_progress=on_progress) as session:
        verify_keys = [session.deployment.public(role).verify_key for role in PARTIES]
        for request in requests:
            runs.append(_run_job(session, request, method, ranks, central, budget))
            runs[-1].party_keys = verify_keys
        for role in PARTIES:
            session.send(role, "job", None)
        finals = {role: session.recv(role, "done") for role in session.roles}
    for run in runs:
        run.finals = finals
    if DEALER in finals:  # the dealer serves all jobs of the session; its totals are per session
        for run in runs:
            run.dealer_traffic = {DEALER: {f"{k}_session_total": v for k, v in finals[DEALER].items()}}
    return runs


def _relay(session, run: JobRun, request: Request) -> tuple:
    """Make each simulated client's submission and relay it to both parties at once (protocols.inputs.intake: the
    count first, then one message per client in roster order), so that the coordinator holds one client's sealed
    bundles at a time; (seconds spent making them, bytes uploaded)."""
    seal_keys, made_s, uploaded = session.deployment.seal_keys(), 0.0, 0
    for role in PARTIES:
        session.send(role, "submissions", len(request.clients))
    for j, (identity, scores, labels) in enumerate(request.clients):
        making = time.perf_counter()
        reply = KeyPair()
        run.reply_keys[identity.role[len(CLIENT_PREFIX):]] = reply
        pair = make_submission(identity, run.ticket, scores, labels, seal_keys, reply,
                               None if request.weights is None else request.weights[j],
                               Accepts(),  # relayed: the coordinator's own rows, not counted
                               session.deployment.dealer_seal_key())
        made_s += time.perf_counter() - making
        uploaded += sum(len(s.bundle.header) + len(s.bundle.sealed) + len(s.statement) + len(s.signature)
                        for s in pair)
        for role, submission in zip(PARTIES, pair):
            session.send(role, "submission", submission)
    return made_s, uploaded


def _run_job(session, request: Request, method, ranks, central, budget) -> JobRun:
    start = time.perf_counter()
    rows = tuple(len(y) for _, _, y in request.clients) if request.clients is not None else None
    job = Job(request.evaluation, method, ranks, rows, central, request.datasets, budget, request.owners)
    for role in PARTIES:
        session.send(role, "job", job)
    tickets = [session.recv(role, "ticket") for role in PARTIES]
    if any(isinstance(t, Refused) for t in tickets):  # refused before any input moved
        return JobRun([t for t in tickets if isinstance(t, Refused)])
    if tickets[0] != tickets[1]:
        raise PartyFailure("P1", "P0 and P1 issued different tickets for the same job")
    run = JobRun([], tickets[0])
    if request.clients is not None:
        run.sharing_s, run.upload_bytes = _relay(session, run, request)
    run.outs = [session.recv(role, "result") for role in PARTIES]
    run.wall_s = time.perf_counter() - start
    return run


