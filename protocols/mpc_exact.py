"""mpc-exact: the exact AUC of all clients' data, of which only the AUC is revealed.

Flow (docs/protocols/mpc-exact.md states every role's view):
1. P0 and P1 each hold an X25519 sealing key pinned in the deployment
   (protocols.deployment); each client makes a key pair for its replies.
2. Each client encodes its scores as order-preserving integer keys, splits
   keys and labels into additive shares mod 2^64 (and the keys, offset to be
   non-negative, also into XOR shares for the radix sort) with the OS CSPRNG
   and seals share p for party p.  The coordinator only relays sealed bundles.
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
   client's row order, for that client alone (protocols.bundles).
"""
import time
from dataclasses import dataclass, field

import numpy as np

from .bundles import open_bundle, open_ranks, seal_ranks
from .clients import share_client
from .encoding import PAD_KEY, ScoreEncoder
from .errors import InputError, PartyFailure
from .runtime import DEALER, LOCAL, PARTIES, Placement, Session, TrafficMeter
from .sealing import KeyPair

FRACTION_BITS = 52  # the AUC is revealed as floor(AUC * 2^52): error < 2.3e-16
METHODS = ("radix", "bitonic")


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
    revealed: tuple = ("AUC as floor(AUC * 2^52) / 2^52", "whether both classes occur")


@dataclass(frozen=True)
class Job:
    rows: tuple  # each client's row count (public; the sealed bundles follow once the job may run)
    method: str
    key_bits: int
    ranks: bool
    central: object = None  # mpc_central.CentralNoise: open noisy statistics instead of the AUC
    dataset: str = ""  # the evaluation set's id in the parties' privacy ledgers (central releases)
    budget: object = None  # ledger.Budget the coordinator asks for (a party's ledger may only lower it)


# ------------------------------------------------------------- party side

def _party(ctx, fraction_bits: int):
    from ..circuits.division import fraction_bits as divide
    from ..circuits.rank_auc import auc_fraction
    from ..circuits.shares import from_share, reveal_int
    from ..circuits.bits import BitConverter
    from ..circuits.shuffle import Shuffler

    key = ctx.seal_key  # pinned in the deployment: clients seal to it
    shuffler = Shuffler(ctx.stream_key)
    converter = BitConverter(ctx.stream_key)
    while (job := ctx.recv("job")) is not None:
        if job.central is not None:  # charged before any input moves
            charge = _charge(ctx, job)
            ctx.send("charge", charge)
            if "refused" in charge:
                continue
        opened = [open_bundle(key, ctx.rank, b) for b in ctx.recv("bundles")]
        refused = _agree_on_inputs(opened, job.rows)
        if refused:
            ctx.send("result", {"refused": refused})
            continue
        meter = TrafficMeter()
        keys = from_share(np.concatenate([o.key_shares for o in opened]))
        key_xor = np.concatenate([o.key_xor_shares for o in opened])
        labels = from_share(np.concatenate([o.label_shares for o in opened]))
        ranking = _ranking(ctx, job, keys.size(0), shuffler)
        starts, (sorted_labels,) = ranking.sort(keys, key_xor, [labels])
        if ctx.rank == 0:
            ctx.progress("tie groups and rank sum")
        twice_u, twice_pn, twice_rank = auc_fraction(shuffler, starts, sorted_labels, mid_ranks=job.ranks)
        if job.central is not None:
            ctx.send("result", {"central": _central_release(ctx, job.central, twice_u, labels, converter),
                                **meter.read()})
            continue
        defined = bool(reveal_int(twice_pn > 0).item())
        scaled = None
        if defined:
            if ctx.rank == 0:
                ctx.progress(f"exact division to {fraction_bits} bits")
            scaled = int(reveal_int(divide(twice_u, twice_pn, fraction_bits)).item())
        rank_bundles = None
        if job.ranks:
            if ctx.rank == 0:
                ctx.progress("ranks back to input order")
            rank_bundles = _rank_bundles(ctx, opened, ranking.to_input_order(twice_rank))
        ctx.send("result", {"defined": defined, "scaled": scaled, "rank_bundles": rank_bundles, **meter.read()})


def _agree_on_inputs(opened, rows) -> str:
    """Why the job's inputs must be refused, or "": P0 and P1 must hold the same clients, in the same order,
    each once, with the announced row counts.  They compare a SHA-256 over (client, rows, reply key), so a
    relay that drops, duplicates or reorders bundles at one party is caught before any computation."""
    import hashlib
    import json

    import torch

    from ..circuits.crypten_compat import crypten

    names = [o.client for o in opened]
    problem = ""
    if len(set(names)) != len(names):
        problem = f"client {next(n for n in names if names.count(n) > 1)!r} has two bundles in this job"
    elif [len(o.key_shares) for o in opened] != list(rows):
        problem = "the bundles do not hold the announced row counts"
    digest = hashlib.sha256(json.dumps([[o.client, len(o.key_shares), o.reply_to.hex()] for o in opened]).encode())
    mine = torch.from_numpy(np.frombuffer(digest.digest(), dtype=np.int64).copy())
    lists = crypten.communicator.get().all_gather(mine)
    if not problem and not all(torch.equal(t, lists[0]) for t in lists):
        problem = "P0 and P1 received different client lists (dropped, added or reordered bundles)"
    return f"inputs refused: {problem}; nothing was computed" if problem else ""


def _charge(ctx, job) -> dict:
    """Charge the release to this party's ledger if both parties' ledgers admit it; before any data moves.

    Returns {"refused": why} or what was charged.  M is the sum of the announced (public) row counts.
    """
    import torch

    from ..circuits.crypten_compat import crypten
    from .ledger import ACCOUNTING

    release = job.central.release(sum(job.rows))
    verdict = ctx.ledger.decide(job.dataset, job.budget, release)
    votes = crypten.communicator.get().all_gather(torch.tensor([int(verdict["fits"])]))
    if not all(int(v.item()) for v in votes):
        return {"refused": verdict["message"] or "the other compute party's privacy ledger refused this release"}
    ctx.ledger.commit(job.dataset, verdict["budget"], release)
    budget = verdict["budget"]
    return {"charged": {"epsilon": release.epsilon, "delta": release.circuit_delta},
            "spent": verdict["after"].as_dict(), "accounting": ACCOUNTING,
            "budget": [budget.epsilon, budget.delta] if budget else None,
            "remaining_epsilon": budget.epsilon - verdict["after"].epsilon if budget else None}


def _central_release(ctx, central, twice_u, labels, converter) -> tuple:
    """Open (2T + Z_T or 2U + Z_U, P + Z_P) per repetition (protocols.mpc_central); nothing else."""
    from ..circuits.noise import discrete_laplace
    from ..circuits.shares import reveal_int

    m = labels.size(0)
    if ctx.rank == 0:
        ctx.progress(f"discrete Laplace in circuit ({central.repetitions} release(s))")
    positives = labels.sum()
    stat = twice_u - positives * (m - positives) if central.neighbours == "label" else twice_u
    noisy_stat = stat + discrete_laplace(central.statistic_noise(m), central.repetitions, converter)
    noisy_p = positives + discrete_laplace(central.count_noise(), central.repetitions, converter)
    return reveal_int(noisy_stat).numpy(), reveal_int(noisy_p).numpy()


def _ranking(ctx, job, m: int, shuffler):
    from ..circuits.bitonic import BitonicRanking, layer_count
    from ..circuits.radix import RadixRanking

    total = job.key_bits if job.method == "radix" else layer_count(m)
    step = max(1, total // 10)

    def progress(done, _total):
        if ctx.rank == 0 and (done % step == 0 or done == total):
            ctx.progress(f"oblivious {job.method} sort of {m} scores: step {done}/{total}")

    if job.method == "radix":
        return RadixRanking(shuffler, job.key_bits, progress)
    return BitonicRanking(PAD_KEY, progress)


def _rank_bundles(ctx, opened, twice_rank) -> list:
    """This party's share of each client's doubled ranks, sealed for that client and signed by this party."""
    shares = twice_rank._tensor.share.numpy()
    bundles, start = [], 0
    for o in opened:
        rows = len(o.key_shares)
        bundles.append(seal_ranks(ctx.rank, o.client, o.reply_to, shares[start:start + rows], ctx.sign))
        start += rows
    return bundles


# ------------------------------------------------------- coordinator side

def mpc_exact_auc(datasets, encoder: ScoreEncoder = ScoreEncoder(), provider: str = "TTP",
                  method: str = "radix", ranks: bool = False, placement: Placement = LOCAL,
                  timeout_s: float = 20.0, on_progress=None):
    """Run mpc-exact on each dataset in one session of the parties.

    datasets: list of datasets, each a list of (client_id, scores, labels).
    provider: must be "TTP" (a separate dealer process; the shuffles need it).
    method: "radix" (the fast oblivious sort) or "bitonic" (the reference network).  ranks: also deliver each client its rows'
      global mid-ranks (result.ranks), sealed so only that client can read them.
    placement: the roles spawned here over loopback TLS (default), or a deployment's serving roles.
    Returns one MpcAucResult per dataset.  Raises InputError for bad input
    (before any party learns anything) and PartyFailure if a role fails.
    """
    results = []
    for run in run_ranking_jobs(datasets, encoder, provider, method, ranks, None, placement, timeout_s,
                                on_progress):
        result = _combine(run, provider, method, encoder)
        if ranks:
            result.ranks = {c: open_ranks(k, c, (run.outs[0]["rank_bundles"][i], run.outs[1]["rank_bundles"][i]),
                                          run.party_keys)
                            for i, ((c, _, _), k) in enumerate(zip(run.clients, run.client_keys))}
        results.append(result)
    return results


@dataclass
class JobRun:
    """One dataset's pass through the parties: what each party sent back, and the set-up around it."""
    outs: list
    clients: list
    bundles: list
    client_keys: list
    sharing_s: float
    wall_s: float
    party_keys: list = None  # P0's and P1's Ed25519 verify keys, pinned: rank bundles must carry their signatures
    dealer_traffic: dict = field(default_factory=dict)

    @property
    def m(self) -> int:
        return sum(len(s) for _, s, _ in self.clients)

    def traffic(self) -> dict:
        """Per role: the parties' meters for this job, and the dealer's totals for the session."""
        meters = ("bytes", "rounds", "sent_bytes", "peak_rss")
        return {**{role: {k: o[k] for k in meters} for role, o in zip(PARTIES, self.outs)}, **self.dealer_traffic}


def run_ranking_jobs(datasets, encoder, provider, method, ranks, central, placement, timeout_s,
                     on_progress, ledger_ids=None, budget=None) -> list:
    """Share each dataset, run the oblivious ranking job in one session, and return a JobRun per dataset."""
    if method not in METHODS:
        raise InputError(f"method must be one of {METHODS}, not {method!r}")
    if provider != "TTP":
        raise InputError("mpc-exact needs the separate dealer (provider TTP) for its shuffles")
    if not datasets:
        raise InputError("no dataset to evaluate")
    for clients in datasets:
        if not clients:
            raise InputError("a dataset has no clients")
    runs = []
    with Session(_party, (FRACTION_BITS,), provider=provider, placement=placement,
                 timeout_s=timeout_s, on_progress=on_progress) as session:
        party_keys = session.deployment.seal_keys()
        verify_keys = [session.deployment.public(role).verify_key for role in PARTIES]
        jobs = []
        for clients in datasets:
            start = time.perf_counter()
            client_keys = [KeyPair() for _ in clients]
            bundles = [share_client(c, s, y, encoder, party_keys, k.public)
                       for (c, s, y), k in zip(clients, client_keys)]
            jobs.append((bundles, client_keys, time.perf_counter() - start))
        for index, ((bundles, client_keys, sharing_s), clients) in enumerate(zip(jobs, datasets)):
            start = time.perf_counter()
            job = Job(tuple(len(s) for _, s, _ in clients), method, encoder.key_bits, ranks, central,
                      ledger_ids[index] if ledger_ids else "", budget)
            for role in PARTIES:
                session.send(role, "job", job)
            if central is not None:
                charges = [session.recv(role, "charge") for role in PARTIES]
                if any("refused" in c for c in charges):  # no input was sent
                    runs.append(JobRun(charges, clients, [], client_keys, sharing_s, 0.0, verify_keys))
                    continue
            for p, role in enumerate(PARTIES):
                session.send(role, "bundles", [pair[p] for pair in bundles])
            outs = [session.recv(role, "result") for role in PARTIES]
            if central is not None:
                outs[0]["ledger"] = charges[0]
            runs.append(JobRun(outs, clients, bundles, client_keys, sharing_s, time.perf_counter() - start,
                               verify_keys))
        for role in PARTIES:
            session.send(role, "job", None)
        finals = {role: session.recv(role, "done") for role in session.roles}
    if DEALER in finals:  # the dealer serves all jobs of the session; its totals are per session
        for run in runs:
            run.dealer_traffic = {DEALER: {f"{k}_session_total": v for k, v in finals[DEALER].items()}}
    return runs


def _combine(run: JobRun, provider, method, encoder) -> MpcAucResult:
    outs = run.outs
    refused = [out["refused"] for out in outs if "refused" in out]
    if refused:
        raise InputError(refused[0])
    if outs[0]["defined"] != outs[1]["defined"] or outs[0]["scaled"] != outs[1]["scaled"]:
        raise PartyFailure("P1", "the parties opened different outputs: "
                                 f"{outs[0]['scaled']} vs {outs[1]['scaled']}")
    if not outs[0]["defined"]:
        raise InputError("the joint data has no positives or no negatives: the AUC is undefined")
    return MpcAucResult(
        auc=outs[0]["scaled"] / 2 ** FRACTION_BITS,
        m=run.m,
        clients=len(run.clients),
        provider=provider,
        method=method,
        wall_s=run.wall_s,
        sharing_s=run.sharing_s,
        traffic=run.traffic(),
        upload_bytes=sum(len(b.header) + len(b.sealed) for pair in run.bundles for b in pair),
        exact_encoding=encoder.exact,
    )
