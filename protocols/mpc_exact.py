"""mpc-exact: the exact AUC of all clients' data, of which only the AUC is revealed.

Flow (docs/protocols/mpc-exact.md states every role's view):
1. P0 and P1 each make an X25519 key pair and publish the public half.
2. Each client encodes its scores as order-preserving integer keys, splits
   keys and labels into additive shares mod 2^64 with the OS CSPRNG and seals
   share p for party p.  The coordinator only relays sealed bundles.
3. Each party opens its bundles and enters CrypTen (precision 0, exact ring
   arithmetic) with its shares; the dealer serves Beaver triples.
4. Bitonic sort of the shared keys carrying the shared labels
   (circuits.bitonic), then the tie-aware Mann-Whitney fraction 2U / 2PN
   (circuits.rank_auc, fedauc eq. 1 with mid-ranks).
5. Reveal [2PN > 0] (is the AUC defined?), then floor(AUC * 2^52) by exact
   long division (circuits.division).  Nothing else is opened.
"""
import time
from dataclasses import dataclass, field

import numpy as np

from .bundles import open_bundle
from .clients import share_client
from .encoding import PAD_KEY, ScoreEncoder
from .errors import InputError, PartyFailure
from .runtime import DEALER, PARTIES, Session, traffic_stats
from .sealing import PartyKey

FRACTION_BITS = 52  # the AUC is revealed as floor(AUC * 2^52): error < 2.3e-16


@dataclass
class MpcAucResult:
    auc: float
    m: int
    clients: int
    provider: str
    wall_s: float
    sharing_s: float
    traffic: dict = field(default_factory=dict)  # role -> {"bytes": ..., "rounds": ...}
    upload_bytes: int = 0  # sealed bundles sent by all clients to both parties
    exact_encoding: bool = True
    revealed: tuple = ("AUC as floor(AUC * 2^52) / 2^52", "whether both classes occur")


# ------------------------------------------------------------- party side

def _party(ctx, fraction_bits: int):
    import torch

    from ..circuits.bitonic import bitonic_sort, layer_count
    from ..circuits.crypten_compat import crypten
    from ..circuits.division import fraction_bits as divide
    from ..circuits.rank_auc import auc_fraction
    from ..circuits.shares import from_share, reveal_int

    key = PartyKey()
    ctx.send("public_key", key.public)
    comm = crypten.communicator.get()
    while (bundles := ctx.recv("job")) is not None:
        opened = [open_bundle(key, ctx.rank, b) for b in bundles]
        key_share = np.concatenate([o[1] for o in opened])
        label_share = np.concatenate([o[2] for o in opened])
        comm.reset_communication_stats()
        m = len(key_share)
        layers = layer_count(m)
        step = max(1, layers // 10)

        def progress(done, total):
            if ctx.rank == 0 and (done % step == 0 or done == total):
                ctx.progress(f"oblivious sort of {m} scores: layer {done}/{total}")

        keys = from_share(torch.from_numpy(key_share))
        labels = from_share(torch.from_numpy(label_share))
        sorted_keys, (sorted_labels,) = bitonic_sort(keys, [labels], PAD_KEY, progress)
        if ctx.rank == 0:
            ctx.progress("tie groups and rank sum")
        twice_u, twice_pn = auc_fraction(sorted_keys, sorted_labels)
        defined = bool(reveal_int(twice_pn > 0).item())
        scaled = None
        if defined:
            if ctx.rank == 0:
                ctx.progress(f"exact division to {fraction_bits} bits")
            scaled = int(reveal_int(divide(twice_u, twice_pn, fraction_bits)).item())
        ctx.send("result", {"defined": defined, "scaled": scaled, **traffic_stats()})


# ------------------------------------------------------- coordinator side

def mpc_exact_auc(datasets, encoder: ScoreEncoder = ScoreEncoder(), provider: str = "TTP",
                  host: str = "127.0.0.1", port=None, timeout_s: float = 20.0, on_progress=None):
    """Run mpc-exact on each dataset in one session of the parties.

    datasets: list of datasets, each a list of (client_id, scores, labels).
    Returns one MpcAucResult per dataset.  Raises InputError for bad input
    (before any party learns anything) and PartyFailure if a role fails.
    """
    if not datasets:
        raise InputError("no dataset to evaluate")
    for clients in datasets:
        if not clients:
            raise InputError("a dataset has no clients")
    results = []
    with Session(_party, (FRACTION_BITS,), provider=provider, host=host, port=port,
                 timeout_s=timeout_s, on_progress=on_progress) as session:
        party_keys = [session.recv(role, "public_key") for role in PARTIES]
        jobs = []
        for clients in datasets:
            start = time.perf_counter()
            bundles = [share_client(c, s, y, encoder, party_keys) for c, s, y in clients]
            jobs.append((bundles, time.perf_counter() - start))
        for (bundles, sharing_s), clients in zip(jobs, datasets):
            start = time.perf_counter()
            for p, role in enumerate(PARTIES):
                session.send(role, "job", [pair[p] for pair in bundles])
            outs = [session.recv(role, "result") for role in PARTIES]
            wall = time.perf_counter() - start
            results.append(_combine(outs, clients, provider, wall, sharing_s, bundles, encoder))
        for role in PARTIES:
            session.send(role, "job", None)
        finals = {role: session.recv(role, "done") for role in session.roles}
    if DEALER in finals:  # the dealer serves all jobs of the session; its total is shared out per job
        for r in results:
            r.traffic[DEALER] = {"bytes_session_total": finals[DEALER]["bytes"],
                                 "rounds_session_total": finals[DEALER]["rounds"]}
    return results


def _combine(outs, clients, provider, wall, sharing_s, bundles, encoder) -> MpcAucResult:
    if outs[0]["defined"] != outs[1]["defined"] or outs[0]["scaled"] != outs[1]["scaled"]:
        raise PartyFailure("P1", f"the parties opened different outputs: {outs[0]} vs {outs[1]}")
    if not outs[0]["defined"]:
        raise InputError("the joint data has no positives or no negatives: the AUC is undefined")
    return MpcAucResult(
        auc=outs[0]["scaled"] / 2 ** FRACTION_BITS,
        m=sum(len(s) for _, s, _ in clients),
        clients=len(clients),
        provider=provider,
        wall_s=wall,
        sharing_s=sharing_s,
        traffic={role: {"bytes": o["bytes"], "rounds": o["rounds"]} for role, o in zip(PARTIES, outs)},
        upload_bytes=sum(len(b.header) + len(b.sealed) for pair in bundles for b in pair),
        exact_encoding=encoder.exact,
    )
