"""mpc-exact: the exact AUC of all clients' data, of which only the AUC is revealed.

Flow (docs/protocols/mpc-exact.md states every role's view):
1. P0 and P1 each hold an X25519 sealing key pinned in the deployment
   (protocols.runtime.deployment); each client makes a key pair for its replies.
2. The parties open the job: they draw its nonce together and issue each
   client its ticket (protocols.inputs.intake).  Each client encodes its scores as
   order-preserving integer keys, splits keys and labels into additive shares
   mod 2^64 (and the keys, offset to be non-negative, also into XOR shares
   for the radix sort) with the OS CSPRNG, seals share p for party p and signs
   a statement binding both bundles to the job (protocols.inputs.submission).  It
   sends them over its own TLS links to the parties (``mpc-auc client
   submit``), or the coordinator relays them (the local run, which simulates
   every client).  The parties admit only rostered, signed, fresh, bound
   submissions and check they hold the same ones.
3. Each party opens its bundles and enters CrypTen (precision 0, exact ring
   arithmetic) with its shares; the dealer serves Beaver triples and the
   shuffle correlations.
4. Oblivious ranking of the shared keys carrying the shared labels: the
   radix sort (circuits.radix, default) or the bitonic reference
   (circuits.bitonic); then the tie-aware Mann-Whitney fraction 2U / 2PN
   and mid-ranks (circuits.rank_auc, fedauc eq. 1 with mid-ranks).
5. Reveal [2PN > 0] (is the AUC defined?), then floor(AUC * 2^52) by exact
   long division (circuits.division).  Nothing else is opened.
6. Optionally (``ranks=True``) each sample's global mid-rank goes to the
   client that owns it: each party seals its share of twice the rank, in the
   client's row order, for that client alone (protocols.inputs.bundles).
"""
import dataclasses
import math
import secrets
import struct
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from ..inputs.bundles import open_ranks, seal_ranks
from ..inputs.clients import check_client, check_client_id
from ..inputs.encoding import PAD_KEY, ScoreEncoder
from ..errors import InputError, PartyFailure
from ..runtime.identity import CLIENT_PREFIX, Identity, client_role
from ..inputs.intake import Intake, gather_bytes, refusal
from .ledger import Release
from .mpc_central import dataset_id
from ..runtime.session import DEALER, LOCAL, PARTIES, LocalRoles, Placement, Session, TrafficMeter
from ..inputs.sealing import KeyPair
from ..inputs.submission import Evaluation, ReleaseTerms, Roster, make_submission

RANKS_TO_CLIENTS = "ranks to their clients (not DP here: client-side DP on them is the clients' own business)"
FRACTION_BITS = 52  # the AUC is revealed as floor(AUC * 2^52): error < 2.3e-16
METHODS = ("radix", "bitonic")
ROLE_MODULES = ("mpc_auc.protocols.runtime.roles", "mpc_auc.protocols.runtime.communicator",
                "mpc_auc.protocols.mpc.ledger", "mpc_auc.circuits.dealer", "mpc_auc.circuits.radix",
                "mpc_auc.circuits.bitonic", "mpc_auc.circuits.division", "mpc_auc.circuits.gates",
                "mpc_auc.circuits.noise")


@dataclass
class MpcAucResult:
    auc: float
    m: int
    clients: int
    provider: str
    method: str
    wall_s: float
    sharing_s: float
    traffic: dict = field(default_factory=dict)  # role -> {"bytes", "rounds", "sent_bytes", "peak_rss"}
    upload_bytes: int = 0  # sealed bundles sent by all clients to both parties
    exact_encoding: bool = True
    ranks: dict = None  # client -> its rows' global 0-based mid-ranks (only with ranks=True)
    missing: list = field(default_factory=list)  # rostered clients left out (an evaluation allowing it)
    check_s: float = 0.0  # P0's time in the in-MPC check of the clients' rows (part of wall_s)
    revealed: tuple = ("AUC as floor(AUC * 2^52) / 2^52", "whether both classes occur",
                       "one validity bit per client (its rows are in the protocol's domain)")


@dataclass(frozen=True)
class Job:
    evaluation: object  # submission.Evaluation: id, roster, encoding, how submissions arrive
    method: str
    ranks: bool
    rows: tuple = None  # relayed submissions: each client's row count, announced so a release is charged first
    central: object = None  # mpc_central.CentralNoise: open noisy statistics instead of the AUC
    datasets: tuple = ()  # ids of the evaluation set the coordinator names for the ledgers (each narrows)
    budget: object = None  # ledger.Budget the coordinator asks for (a party's ledger may only lower it)

    @property
    def ledger_ids(self) -> tuple:
        """Every id a release is charged to.  Clients submitting directly: the roster as a set of keys, which
        the parties compute themselves (no order, name or id string the organiser picks resets it), then
        any ids the coordinator names.  Simulated clients (a local run, fresh keys per run): the ids the
        coordinator names, the first being the rows' multiset (mpc_central.dataset_id)."""
        own = (f"roster-keys-sha256:{self.evaluation.roster.key_set_digest}",) \
            if self.evaluation.direct or not self.datasets else ()
        return own + tuple(self.datasets)


# ------------------------------------------------------------- party side

def _party(ctx, fraction_bits: int):
    from ...circuits.gates import Gates
    from ...circuits.shuffle import Shuffler

    # one sequential stream each per session: the dealer expands the same streams for its correlations
    shuffler, gates = Shuffler(ctx.stream_key), Gates(ctx.stream_key)
    while (job := ctx.recv("job")) is not None:
        intake = Intake(ctx, job, _terms(ctx, job))
        charge = None
        if job.central is not None and job.rows is not None and not intake.problem:  # before any input moves
            charge = _charge(ctx, job, sum(job.rows))
            intake.problem = charge.get("refused", "")
        ctx.send("ticket", {"refused": refusal(intake.problem)} if intake.problem else intake.ticket)
        if intake.problem:
            continue
        admitted = intake.collect()
        if not intake.problem and job.central is not None and charge is None:  # direct: rows known only now
            charge = _charge(ctx, job, sum(a.rows for a in admitted))
            intake.problem = charge.get("refused", "")
        if intake.problem:
            intake.finish(lambda _: ("refused", refusal(intake.problem)))
            ctx.send("result", {"refused": refusal(intake.problem), "missing": intake.missing})
            continue
        owners, opened = [(a.client, a.rows) for a in admitted], [a.opened for a in admitted]
        del admitted  # _compute empties ``opened`` once it holds the rows: the bundles' buffers go with it
        result = _compute(ctx, job, intake, opened, fraction_bits, shuffler, gates)
        if "invalid" in result:  # nothing was opened but the clients' validity bits: no release happened
            if charge is not None:
                ctx.ledger.void(charge["entry"], "the job stopped on invalid inputs before any release")
            problem = refusal(invalid_inputs(result["invalid"]))
            intake.finish(lambda _: ("refused", problem))
            ctx.send("result", {"refused": problem, "invalid": result["invalid"], "missing": intake.missing})
            continue
        result.update(clients=[c for c, _ in owners], rows=[r for _, r in owners], missing=intake.missing)
        if charge is not None:
            result["ledger"] = {k: v for k, v in charge.items() if k != "entry"}
        bundles = result.pop("rank_bundles", None) or {}
        if bundles:  # recorded before delivery: no budget is charged here, the clients' own DP is theirs
            ctx.ledger.record(job.ledger_ids, Release(RANKS_TO_CLIENTS, (), 0.0))
        intake.finish(lambda name: ("ranks", bundles[name]) if name in bundles else
                      ("done", "computed" if name in result["clients"] else
                       "the other party holds no submission from you: left out"))
        if not job.evaluation.direct:
            result["rank_bundles"] = bundles or None
        ctx.send("result", result)


def _terms(ctx, job) -> ReleaseTerms:
    """What the job releases, for the clients' tickets; the budget is the tighter of the two parties'."""
    evaluation, central = job.evaluation, job.central
    own = ctx.ledger.effective_budget(job.ledger_ids, job.budget) if central is not None else None
    mine = struct.pack(">dd", *(own.epsilon, own.delta) if own else (math.inf, math.inf))
    both = [struct.unpack(">dd", b) for b in gather_bytes(mine)]
    tightest = (min(e for e, _ in both), min(d for _, d in both))
    budget = tightest if math.isfinite(tightest[0]) else None
    common = dict(budget=budget, allow_missing=evaluation.allow_missing, ranks=job.ranks)
    if central is None:
        return ReleaseTerms("mpc-exact", decimals=evaluation.decimals, **common)
    delta = central.delta(sum(job.rows)) * central.repetitions if job.rows is not None else None
    return ReleaseTerms("mpc-central", central.epsilon * central.repetitions, delta, central.neighbours, **common)


def _compute(ctx, job, intake, opened, fraction_bits: int, shuffler, gates) -> dict:
    """The oblivious ranking and the opened outputs of one job, on the agreed inputs."""
    from ...circuits.compare import nonnegative
    from ...circuits.division import decimal_round, digit_bits_for, fraction_bits as divide
    from ...circuits.memory import release_free_memory
    from ...circuits.rank_auc import auc_fraction
    from ...circuits.shares import from_share, public_share, reveal_int

    meter = TrafficMeter()
    keys = np.concatenate([o.key_shares for o in opened])
    key_xor = np.concatenate([o.key_xor_shares for o in opened])
    labels = np.concatenate([o.label_shares for o in opened])
    owners = [(o.client, o.reply_to, len(o.key_shares)) for o in opened]
    opened.clear()  # the caller's list: the opened bundles' rows are copied above
    release_free_memory()  # the sealed and opened bundles
    checking = time.perf_counter()
    invalid = _invalid_clients(ctx, job, gates, owners, labels, key_xor, keys)
    check_s = f"{time.perf_counter() - checking:015.6f}"  # fixed width: record lengths never follow timing
    if invalid:
        return {"invalid": invalid, **meter.read()}
    keys = from_share(keys)
    ranking = _ranking(ctx, job, keys.size(0), shuffler, gates)
    starts, (sorted_labels,) = ranking.sort(keys, key_xor, [labels])
    del keys, key_xor
    release_free_memory()  # the sort's 32-bit steps and its input keys
    if ctx.rank == 0:
        ctx.progress("tie groups and rank sum")
    twice_u, twice_pn, twice_rank = auc_fraction(shuffler, gates, starts, sorted_labels, mid_ranks=job.ranks)
    if job.central is not None:
        release = _central_release(ctx, job.central, from_share(twice_u), from_share(labels), gates)
        return {"central": release, "check_s": check_s, **meter.read()}
    defined = bool(reveal_int(from_share(nonnegative(gates, twice_pn - public_share(1, ctx.rank)))).item())
    scaled = None
    if defined:
        decimals = job.evaluation.decimals
        if ctx.rank == 0:
            ctx.progress(f"exact division to {f'{decimals} decimals' if decimals else f'{fraction_bits} bits'}")
        m = len(labels)
        bound = 2 * (m // 2) * (m - m // 2)  # 2PN <= 2 floor(M/2) ceil(M/2), public
        quotient = decimal_round(gates, twice_u, twice_pn, decimals) if decimals else \
            divide(gates, twice_u, twice_pn, fraction_bits, digit_bits_for(bound))
        scaled = int(reveal_int(from_share(quotient)).item())
    rank_bundles = None
    if job.ranks:
        if ctx.rank == 0:
            ctx.progress("ranks back to input order")
        rank_bundles = _rank_bundles(ctx, intake.ticket.job, owners, ranking.to_input_order(twice_rank))
    return {"defined": defined, "scaled": scaled, "rank_bundles": rank_bundles, "check_s": check_s, **meter.read()}


def _invalid_clients(ctx, job, gates, owners, labels, key_xor, keys) -> list:
    """The clients with a row outside the domain (a label other than 0 or 1, or a key outside the declared
    encoding's range, in the representation the sort reads), checked inside the MPC (circuits.validity);
    only one bit per client is opened."""
    from ...circuits.shares import from_share, reveal_int
    from ...circuits.validity import client_verdicts, valid_rows

    if ctx.rank == 0:
        ctx.progress("checking every client's rows inside the MPC")
    key_bits = job.evaluation.encoder.key_bits
    ok = valid_rows(gates, labels, key_bits=key_bits,
                    **({"key_xor": key_xor} if job.method == "radix" else {"keys": keys}))
    verdicts = reveal_int(from_share(client_verdicts(gates, ok, [rows for _, _, rows in owners]))).numpy()
    return [client for (client, _, _), good in zip(owners, verdicts) if good != 1]


def invalid_inputs(clients) -> str:
    """The refusal naming the clients whose rows failed the in-MPC check."""
    return (f"client(s) {', '.join(map(repr, clients))} submitted rows outside the protocol's domain (a label "
            "other than 0 or 1, or a score key outside the declared encoding's range; checked inside the MPC, "
            "only one validity bit per client was opened)")


def _charge(ctx, job, m: int) -> dict:
    """Charge the release to this party's ledger if both parties' ledgers admit it; before any MPC work.

    Returns {"refused": why} or what was charged.  m: the public total row count.
    """
    import torch

    from ...circuits.crypten_compat import crypten
    from .ledger import ACCOUNTING

    release = job.central.release(m)
    verdict = ctx.ledger.charge(job.ledger_ids, job.budget, release)  # decided and recorded under one lock
    votes = crypten.communicator.get().all_gather(torch.tensor([int(verdict["fits"])]))
    if not all(int(v.item()) for v in votes):
        if verdict["fits"]:
            ctx.ledger.void(verdict["entry"], "the other compute party's ledger refused the release")
        return {"refused": verdict["message"] or "the other compute party's privacy ledger refused this release"}
    budget = verdict["budget"]
    return {"entry": verdict["entry"], "charged": {"epsilon": release.epsilon, "delta": release.circuit_delta},
            "spent": verdict["after"].as_dict(), "accounting": ACCOUNTING,
            "budget": [budget.epsilon, budget.delta] if budget else None,
            "remaining_epsilon": budget.epsilon - verdict["after"].epsilon if budget else None}


def _central_release(ctx, central, twice_u, labels, gates) -> tuple:
    """Open (2T + Z_T or 2U + Z_U, P + Z_P) per repetition (protocols.mpc.mpc_central); nothing else."""
    from ...circuits.noise import discrete_laplace
    from ...circuits.shares import from_share, reveal_int

    m = labels.size(0)
    if ctx.rank == 0:
        ctx.progress(f"discrete Laplace in circuit ({central.repetitions} release(s))")
    positives = labels.sum()
    stat = twice_u - positives * (m - positives) if central.neighbours == "label" else twice_u
    noisy_stat = stat + from_share(discrete_laplace(gates, central.statistic_noise(m), central.repetitions))
    noisy_p = positives + from_share(discrete_laplace(gates, central.count_noise(), central.repetitions))
    return reveal_int(noisy_stat).numpy(), reveal_int(noisy_p).numpy()


def _ranking(ctx, job, m: int, shuffler, gates):
    from ...circuits.bitonic import BitonicRanking, layer_count
    from ...circuits.radix import RadixRanking

    key_bits = job.evaluation.encoder.key_bits
    total = key_bits if job.method == "radix" else layer_count(m)
    step = max(1, total // 10)

    def progress(done, _total):
        if ctx.rank == 0 and (done % step == 0 or done == total):
            ctx.progress(f"oblivious {job.method} sort of {m} scores: step {done}/{total}")

    if job.method == "radix":
        return RadixRanking(shuffler, gates, key_bits, progress)
    return BitonicRanking(PAD_KEY, progress)


def _rank_bundles(ctx, job_id, owners, twice_rank) -> dict:
    """Client -> this party's share of its doubled ranks, sealed for that client and signed by this party.

    owners: (client, its key for rank bundles, its row count) in input order; twice_rank: this party's int64
    shares in input order."""
    bundles, start = {}, 0
    for client, reply_to, rows in owners:
        bundles[client] = seal_ranks(ctx.rank, job_id, client, reply_to, twice_rank[start:start + rows], ctx.sign)
        start += rows
    return bundles


# ------------------------------------------------------- coordinator side

def mpc_exact_auc(datasets, encoder: ScoreEncoder = ScoreEncoder(), provider: str = "TTP",
                  method: str = "radix", ranks: bool = False, placement: Placement = LOCAL,
                  timeout_s: float = 20.0, on_progress=None, decimals: int = None):
    """Run mpc-exact on each dataset in one session of the parties.

    datasets: list of datasets, each a list of (client_id, scores, labels); every client is simulated
      here (:func:`simulated`) and its signed submissions relayed to the parties.
    provider: must be "TTP" (a separate dealer process; the shuffles need it).
    method: "radix" (the fast oblivious sort) or "bitonic" (the reference network).  ranks: also deliver each client its rows'
      global mid-ranks (result.ranks), sealed so only that client can read them; the parties record the
      delivery in their ledgers (under protocols.mpc.mpc_central.dataset_id) without charging any budget.
    placement: the roles spawned here over loopback TLS (default), or a deployment's serving roles.
    decimals: open the AUC rounded to this many decimals instead of to 52 bits (docs/protocols/mpc-exact.md:
      what each opens).
    Returns one MpcAucResult per dataset.  Raises InputError for bad input
    (before any party learns anything) and PartyFailure if a role fails.
    """
    requests = [simulated(clients, encoder, (dataset_id(clients),) if ranks else (), decimals) for clients in datasets]
    return [exact_result(run, provider, method)
            for run in run_ranking_jobs(requests, provider, method, ranks, None, placement, timeout_s, on_progress)]


@contextmanager
def roles_started(placement: Placement, timeout_s: float):
    """``placement`` with the local roles of mpc-exact and mpc-central started now, so that they import,
    draw their keys and bind their sockets while the caller reads and checks its input; the first session
    on the placement adopts them.  Leaving the block stops any that are still running (the input was
    refused, or the run interrupted).  A deployment's roles already run: it is yielded as it is."""
    if placement.deployment is not None:
        yield placement
        return
    started = LocalRoles(_party, "TTP", placement, timeout_s, preload=ROLE_MODULES)
    try:
        yield dataclasses.replace(placement, started=started)
    finally:
        started.stop()


@dataclass(frozen=True)
class Request:
    """One job as the coordinator asks for it: the evaluation and, when it relays them, the clients' rows."""
    evaluation: Evaluation
    clients: list = None  # [(client identity, scores, labels)] simulated here; None: clients submit directly
    datasets: tuple = ()  # ledger ids named by the coordinator (Job.ledger_ids)


def simulated(clients, encoder: ScoreEncoder, datasets: tuple = (), decimals: int = None) -> Request:
    """Every client of ``clients`` ((id, scores, labels)) simulated in this process, each with a fresh key
    on a roster of its own; all rows are checked here, before any role starts.  decimals: open the AUC
    rounded to this many decimals (submission.Evaluation.decimals)."""
    if not clients:
        raise InputError("a dataset has no clients")
    for name, scores, labels in clients:
        check_client_id(name)
        check_client(name, scores, labels, encoder)
    identities = [Identity(client_role(name)) for name, _, _ in clients]
    evaluation = Evaluation(f"local-{secrets.token_hex(8)}", Roster(tuple(i.public for i in identities)), encoder,
                            decimals=decimals)
    return Request(evaluation, [(i, s, y) for i, (_, s, y) in zip(identities, clients)], tuple(datasets))


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
        reasons = list(dict.fromkeys(out["refused"] for out in self.outs if "refused" in out))
        if reasons:
            raise InputError(" | ".join(reasons))

    def traffic(self) -> dict:
        """Per role: the parties' meters for this job, and the dealer's totals for the session."""
        meters = ("bytes", "rounds", "sent_bytes", "peak_rss")
        return {**{role: {k: o[k] for k in meters} for role, o in zip(PARTIES, self.outs)}, **self.dealer_traffic}


def run_ranking_jobs(requests, provider, method, ranks, central, placement, timeout_s, on_progress,
                     budget=None, party=None) -> list:
    """Run each request's job in one session of the parties; a JobRun per request.

    party: the parties' session target, :func:`_party` unless an experiment wraps it (sims.security_views
    records their views); what it returns at the session's end is in each JobRun's ``finals``.
    """
    if method not in METHODS:
        raise InputError(f"method must be one of {METHODS}, not {method!r}")
    if provider != "TTP":
        raise InputError("mpc-exact needs the separate dealer (provider TTP) for its shuffles")
    if not requests:
        raise InputError("no dataset to evaluate")
    runs = []
    with Session(party or _party, (FRACTION_BITS,), provider=provider, placement=placement,
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


def _run_job(session, request: Request, method, ranks, central, budget) -> JobRun:
    start = time.perf_counter()
    rows = tuple(len(s) for _, s, _ in request.clients) if request.clients is not None else None
    job = Job(request.evaluation, method, ranks, rows, central, request.datasets, budget)
    for role in PARTIES:
        session.send(role, "job", job)
    tickets = [session.recv(role, "ticket") for role in PARTIES]
    if any(isinstance(t, dict) for t in tickets):  # refused before any input moved
        return JobRun([t for t in tickets if isinstance(t, dict)])
    if tickets[0] != tickets[1]:
        raise PartyFailure("P1", "P0 and P1 issued different tickets for the same job")
    run = JobRun([], tickets[0])
    if request.clients is not None:
        sharing = time.perf_counter()
        seal_keys = session.deployment.seal_keys()
        submissions = []
        for identity, scores, labels in request.clients:
            reply = KeyPair()
            run.reply_keys[identity.role[len(CLIENT_PREFIX):]] = reply
            submissions.append(make_submission(identity, run.ticket, scores, labels, seal_keys, reply.public))
        run.sharing_s = time.perf_counter() - sharing
        run.upload_bytes = sum(len(s.bundle.header) + len(s.bundle.sealed) + len(s.statement) + len(s.signature)
                               for pair in submissions for s in pair)
        for p, role in enumerate(PARTIES):
            session.send(role, "submissions", [pair[p] for pair in submissions])
            for pair in submissions:  # this party's sealed copies: freed once its link has written them
                pair[p] = None
        del submissions
    run.outs = [session.recv(role, "result") for role in PARTIES]
    run.wall_s = time.perf_counter() - start
    return run


def exact_result(run: JobRun, provider, method) -> MpcAucResult:
    """The AUC both parties opened (and, for simulated clients, their ranks), checked to agree."""
    run.refused()
    outs = run.outs
    if outs[0]["defined"] != outs[1]["defined"] or outs[0]["scaled"] != outs[1]["scaled"]:
        raise PartyFailure("P1", "the parties opened different outputs: "
                                 f"{outs[0]['scaled']} vs {outs[1]['scaled']}")
    if not outs[0]["defined"]:
        raise InputError("the joint data has no positives or no negatives: the AUC is undefined")
    encoder, decimals = run.ticket.encoder, run.ticket.terms.decimals
    ranks = None
    if outs[0].get("rank_bundles"):
        ranks = {c: open_ranks(key, c, run.ticket.job, [out["rank_bundles"][c] for out in outs], run.party_keys)
                 for c, key in run.reply_keys.items()}
    return MpcAucResult(
        auc=round(outs[0]["scaled"] / 10 ** decimals, decimals) if decimals else outs[0]["scaled"] / 2 ** FRACTION_BITS,
        m=run.m,
        clients=len(outs[0]["clients"]),
        provider=provider,
        method=method,
        wall_s=run.wall_s,
        sharing_s=run.sharing_s,
        traffic=run.traffic(),
        upload_bytes=run.upload_bytes,
        exact_encoding=encoder.exact,
        ranks=ranks,
        missing=outs[0]["missing"],
        check_s=float(outs[0]["check_s"]),
        revealed=(f"AUC rounded to {decimals} decimals" if decimals else MpcAucResult.revealed[0],
                  *MpcAucResult.revealed[1:]),
    )
