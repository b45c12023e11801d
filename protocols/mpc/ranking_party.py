"""The compute parties' loop of mpc-exact and mpc-central: one job after another inside one session.

Runs in P0 and P1 only (it loads CrypTen and the circuits): per job it issues the ticket, charges the release
to this party's ledger (protocols.mpc.accounting: a relayed DP release to the owners of its rows and the
evaluation set before any input moves; a direct evaluation's release, DP or exact (counted and pinned per
client), once the submissions are agreed and checked), admits the clients' submissions
(protocols.inputs.intake), checks every row inside the MPC (circuits.validity: one bit per client opened; a
client that fails is named, and left out if the evaluation says ``exclude_invalid`` and others remain, else the
job is refused), ranks obliviously (circuits.radix or circuits.bitonic), and opens only what the job releases
(docs/protocols/mpc-exact.md and docs/protocols/mpc-central.md state each role's view).  What a job held is
handed back to the system when it ends, refused or not.
"""
import dataclasses
import math
import struct
import time

import numpy as np
import torch

from ...circuits.bitonic import BitonicRanking, layer_count
from ...circuits.comparators import nonnegative
from ...circuits.crypten_compat import crypten
from ...circuits.division import decimal_round, digit_bits_for, fraction_bits as divide
from ...circuits.gates import Gates
from ...circuits.noise import discrete_laplace
from ...circuits.radix import RadixRanking
from ...circuits.rank_auc import auc_fraction, tie_groups
from ...circuits.lockstep import lockstep
from ...circuits.rank_metrics import (auc_halves, curve_points, delong_covariance, delong_variance, group_values,
                                      paired_placement_sums, placement_sums, placements, secret_average_precision,
                                      secret_ks_statistic, secret_partial_area, variance_defined)
from ...circuits.shares import from_share, public_share, reveal_int
from ...circuits.shuffle import Shuffler
from ...circuits.validity import client_verdicts, valid_rows, valid_weights
from ..inputs.bundles import seal_ranks
from ..inputs.encoding import PAD_KEY
from ..inputs.intake import ClientIntake, gather_bytes, refusal
from ..dp.curve_law import CurveNoise
from ..inputs.submission import ReleaseTerms, SharedResult
from ..inputs.weights import TOTAL_BITS, TOTAL_UNITS
from ..metric_catalogue import CI_MAX_ROWS, FPR_BITS, TWO_ROWS, curve_values, cut_positions
from ..refused import Refused
from ..release_spec import MALICIOUS_REFUSAL
from ..runtime.ledger import ACCOUNTING
from ..runtime.metrics import TrafficMeter
from ..runtime.memory import map_large_arrays, release_free_memory, repeated_steps
from ..runtime.control import serves
from . import accounting
from . import malicious
from .held_rows import HeldRows
from .ranking_job import SERVICE

@serves(SERVICE)
def serve_jobs(ctx, fraction_bits: int):
    """The parties' session target: serve jobs until the coordinator sends None."""
    # one sequential stream each per session: the dealer expands the same streams for its correlations
    shuffler, gates = Shuffler(ctx.stream_key), Gates(ctx.stream_key)
    while (job := ctx.recv("job")) is not None:
        _serve_job(ctx, job, fraction_bits, shuffler, gates)
        map_large_arrays(0)  # the next job's rows decide again
        release_free_memory()  # whatever the job held (its submissions, even refused ones) goes back at its end


def _serve_job(ctx, job, fraction_bits: int, shuffler, gates) -> None:
    """One job: ticket, charge, intake, the in-MPC check of every row, the ranking and what it opens."""
    terms = _terms(ctx, job)
    intake = ClientIntake(ctx, job, terms, lambda member: ctx.ledger.standing(accounting.key_account(member), job.budget))
    intake.problem = intake.problem or accounting.job_refusal(job) or _security_refusal(job)
    charge = None
    if job.central is not None and not job.evaluation.direct and not intake.problem:  # before any input moves
        charge = _charge(ctx, accounting.charge(job, sum(job.rows)))
        intake.problem = charge.reason if isinstance(charge, Refused) else ""
    ctx.send("ticket", Refused(refusal(intake.problem)) if intake.problem else intake.ticket)
    if intake.problem:
        return
    admitted = intake.collect()
    map_large_arrays(sum(a.rows for a in admitted))
    if job.evaluation.spec.malicious and not intake.problem:
        intake.problem = malicious.rows_refusal(sum(a.rows for a in admitted), job.central)
    if intake.problem:
        return _refuse(ctx, intake, intake.problem)
    meter = TrafficMeter(phases=ctx.rank == 0)
    opened = [a.opened for a in admitted]
    admitted = [dataclasses.replace(a, opened=None) for a in admitted]
    checking = time.perf_counter()
    if job.evaluation.spec.malicious:  # entered under MACs and checked (the bundles' buffers go)
        held = malicious.AuthenticatedRows.enter(ctx, job, opened)
        invalid = held.invalid
    else:
        held = HeldRows.take(opened, job.evaluation.weight_bits is not None)  # the bundles' buffers go
        invalid = _invalid_clients(ctx, job, gates, held)
    release_free_memory()  # the check's AND trees: the sort's arrays are of other sizes
    check_s = f"{time.perf_counter() - checking:015.6f}"  # fixed width: record lengths never follow timing
    excluded = invalid if job.evaluation.exclude_invalid and len(invalid) < len(held.owners) else []
    if invalid and not excluded:
        if charge is not None and "entry" in charge:  # only validity bits were opened
            ctx.ledger.void(charge["entry"], "the job stopped on invalid inputs before any release")
        return _refuse(ctx, intake, invalid_inputs(invalid), invalid=invalid)
    if excluded:  # their rows go; nothing of them was charged yet (only a relayed job charges first)
        held, admitted = held.without(set(excluded)), [a for a in admitted if a.client not in excluded]
        if ctx.rank == 0:
            ctx.progress(f"left out {', '.join(map(repr, excluded))}: rows outside the domain")
    if held.weights is not None and not _total_fits(gates, held.weights):  # before anything is charged
        return _refuse(ctx, intake, TOTAL_REFUSAL)
    if job.evaluation.direct:  # the clients and M are known only now
        problem = accounting.direct_refusal(job, terms, admitted)
        if not problem:
            charge = _charge(ctx, accounting.charge(job, sum(a.rows for a in admitted), admitted))
            problem = charge.reason if isinstance(charge, Refused) else ""
        if problem:
            return _refuse(ctx, intake, problem)
    if job.evaluation.spec.malicious:
        result = {**malicious.compute(ctx, job, held, fraction_bits, shuffler), **meter.read()}
        if "rank_shares" in result:
            result["rank_bundles"] = _rank_bundles(ctx, intake.ticket.job, held.owners, result.pop("rank_shares"),
                                                   sum(held.rows))
    else:
        held = [held]  # _compute takes the rows out of this list: freed there, once the sorts hold copies
        result = _compute(ctx, job, intake, held, fraction_bits, shuffler, gates, meter)
    result.update(clients=[a.client for a in admitted], rows=[a.rows for a in admitted], missing=intake.missing,
                  excluded=excluded, check_s=check_s)
    if charge is not None and "charged" in charge:
        result["ledger"] = {k: v for k, v in charge.items() if k != "entry"}
    bundles = result.pop("rank_bundles", None) or {}
    shared = shared_result(job, intake.ticket, result) if job.evaluation.share_result else None
    left_out = refusal(invalid_inputs(excluded)) + "; the evaluation leaves such clients out: released over the others"
    intake.finish(lambda name: ("ranks", bundles[name]) if name in bundles else
                  ("done", "computed") if name in result["clients"] else
                  ("refused", left_out) if name in excluded else
                  ("done", "the other party holds no submission from you: left out"),
                  shared, result["clients"])
    if not job.evaluation.direct:
        result["rank_bundles"] = bundles or None
    ctx.send("result", result)


def _security_refusal(job) -> str:
    """Why a job of an evaluation under security with abort cannot run as asked (what the mode does not build
    yet: protocols.release_spec.MALICIOUS_REFUSAL; more rows than it takes, when the job announces them), or ""."""
    if not job.evaluation.spec.malicious:
        return ""
    what = f"method {job.method}" if job.method != "radix" else ""
    return MALICIOUS_REFUSAL.format(what=what) if what else malicious.rows_refusal(sum(job.rows or ()), job.central)


def _refuse(ctx, intake, problem: str, invalid: list = ()) -> None:
    """End the job refused, before any release: every direct client and the coordinator are told why."""
    problem = refusal(problem)
    intake.finish(lambda _: ("refused", problem))
    ctx.send("result", Refused(problem, tuple(intake.missing), tuple(invalid)))


SHARED_OPENINGS = ("defined", "scaled", "metrics", "others", "covariance", "central", "positives")


def shared_result(job, ticket, result: dict) -> SharedResult:
    """Every released field of ``result``, as this party sends it to each client that took part."""
    return SharedResult(ticket.nonce, tuple(result["clients"]), tuple(result["rows"]), tuple(result["missing"]),
                        job.method, {k: result[k] for k in SHARED_OPENINGS if k in result}, job.central,
                        tuple(result["excluded"]))


def _terms(ctx, job) -> ReleaseTerms:
    """What the job releases, for the clients' tickets; the budget is the tighter of the two parties'."""
    evaluation, central = job.evaluation, job.central
    own = ctx.ledger.effective_budget(accounting.sets(job), job.budget) if central is not None else None
    mine = struct.pack(">dd", *(own.epsilon, own.delta) if own else (math.inf, math.inf))
    both = [struct.unpack(">dd", b) for b in gather_bytes(mine)]
    tightest = (min(e for e, _ in both), min(d for _, d in both))
    budget = tightest if math.isfinite(tightest[0]) else None
    common = dict(budget=budget, allow_missing=evaluation.allow_missing, ranks=job.ranks,
                  share_result=evaluation.share_result, exclude_invalid=evaluation.exclude_invalid)
    if central is None:
        spec = evaluation.spec
        return ReleaseTerms("mpc-exact", decimals=spec.decimals, metrics=spec.metrics,
                            points=spec.points if spec.curves else None, max_fpr=spec.max_fpr,
                            weight_bits=evaluation.weight_bits, security=spec.security, **common)
    # relayed: M is announced; direct: at most every rostered client's largest submission, and the total
    m = sum(job.rows) if job.rows is not None else \
        min(evaluation.max_rows * len(evaluation.roster.members), evaluation.max_total_rows)
    try:
        delta = (central.delta(m) if job.rows is not None else central.delta_ceiling(m)) * central.repetitions
    except ValueError:  # no circuit draws this noise at the largest M admitted: the actual M decides, at the charge
        delta = None
    return ReleaseTerms("mpc-central", central.epsilon * central.repetitions, delta, central.neighbours,
                        metrics=central.opened(), points=central.cuts(), noise=central,
                        security=evaluation.spec.security, **common)


def _compute(ctx, job, intake, held: list, fraction_bits: int, shuffler, gates, meter) -> dict:
    """The oblivious ranking and the opened outputs of one job, on the agreed and checked rows (the HeldRows
    that ``held`` holds; the list is emptied): one sort per score column, the AUC and the job's metrics of each,
    and with several columns and ``ci`` DeLong's covariances."""
    rows = held.pop()
    keys = rows.keys if job.method != "radix" else None  # the radix sort reads the XOR shares only
    key_xor, labels, weights, owners = list(rows.key_xor), rows.labels, rows.weights, rows.owners
    del rows
    weighted = weights is not None
    metrics = job.evaluation.spec.metrics if job.central is None else ("auc",)
    paired = job.evaluation.columns > 1 and "ci" in metrics
    flags = job.ranks or paired or bool(FLAGGED & set(metrics))
    done, rank_bundles, defined, m = [], None, False, len(labels)
    for k in range(job.evaluation.columns):
        ranking = _ranking(ctx, job, m, shuffler, gates)
        column_keys = None if keys is None else from_share(keys[k])
        moving = [labels] + ([] if weights is None else [weights])  # emptied by the sort once in its move's words
        if k == job.evaluation.columns - 1:  # the inputs in input order go in the last column's move
            keys = weights = None
            labels = labels if paired or job.central is not None else None  # (the covariances, a DP release)
        starts, (sorted_labels, *sorted_weights) = ranking.sort(column_keys, key_xor.pop(0), moving)
        release_free_memory()  # the sort's 32-bit steps
        if isinstance(job.central, CurveNoise):  # the DP curve needs the sorted labels only
            return {"central": _curve_release(ctx, job.central, sorted_labels, gates), **meter.read()}
        if ctx.rank == 0:
            ctx.progress("tie groups and rank sum" + (f" of score column {k + 1}" if k else ""))
        ranked = [starts, sorted_labels, *sorted_weights]  # emptied by tie_groups as it goes
        del starts, sorted_weights
        if "ap" not in metrics:  # only the average precision reads the sorted labels again
            sorted_labels = None
        groups = tie_groups(shuffler, gates, ranked, flags)
        twice_u, twice_pn, twice_rank = auc_fraction(shuffler, gates, groups, mid_ranks=job.ranks and k == 0)
        if job.central is not None:
            release = _central_release(ctx, job.central, from_share(twice_u), from_share(labels), gates)
            return {"central": release, **meter.read()}
        if k == 0:
            defined = bool(reveal_int(from_share(nonnegative(gates, twice_pn - public_share(1, ctx.rank)))).item())
            if not defined:
                break
        column = {"scaled": _opened_auc(ctx, job, gates, m, twice_u, twice_pn, fraction_bits, weighted),
                  "metrics": _metrics(ctx, job, shuffler, gates, groups, twice_u, sorted_labels)
                  if len(metrics) > 1 else {}}
        if paired:  # each row's placement values of this column, in input order, for the covariances
            column.update(groups=groups, halves=auc_halves(gates, groups, twice_u),
                          rows=ranking.to_input_order(placements(shuffler, gates, groups)))
        if k == 0 and job.ranks:
            if ctx.rank == 0:
                ctx.progress("ranks back to input order")
            rank_bundles = _rank_bundles(ctx, intake.ticket.job, owners, ranking.to_input_order(twice_rank))
        done.append(column)
    first = done[0] if done else {"scaled": None, "metrics": {}}
    out = {"defined": defined, "scaled": first["scaled"], "metrics": first["metrics"],
           "others": [{"scaled": c["scaled"], "metrics": c["metrics"]} for c in done[1:]]}
    if paired and defined and isinstance(first["metrics"].get("ci"), dict):
        out["covariance"] = _covariances(ctx, gates, labels, done)
    return {**out, "rank_bundles": rank_bundles, **meter.read()}


def _opened_auc(ctx, job, gates, m: int, twice_u, twice_pn, fraction_bits: int, weighted: bool = False) -> int:
    """floor(AUC * 2^fraction_bits), or round(AUC, decimals) * 10^decimals, opened."""
    decimals = job.evaluation.spec.decimals
    if ctx.rank == 0:
        ctx.progress(f"exact division to {f'{decimals} decimals' if decimals else f'{fraction_bits} bits'}")
    # 2PN <= 2 floor(M/2) ceil(M/2), or 2 W+ W- <= W^2 / 2 of the weights' units, public
    bound = TOTAL_UNITS ** 2 // 2 if weighted else 2 * (m // 2) * (m - m // 2)
    quotient = decimal_round(gates, twice_u, twice_pn, decimals) if decimals else \
        divide(gates, twice_u, twice_pn, fraction_bits, digit_bits_for(bound))
    return int(reveal_int(from_share(quotient)).item())


def _covariances(ctx, gates, labels, columns) -> dict:
    """"i,j" -> floor(Cov(AUC_i, AUC_j) * 2^54) for every pair of score columns (DeLong1988), opened."""
    if ctx.rank == 0:
        ctx.progress("DeLong covariances of the score columns")
    out = {}
    for a in range(len(columns)):
        for b in range(a + 1, len(columns)):
            sums = paired_placement_sums(gates, labels, columns[a]["rows"], columns[b]["rows"])
            share = delong_covariance(gates, columns[a]["groups"], columns[a]["halves"], columns[b]["halves"], *sums)
            out[f"{a},{b}"] = int(reveal_int(from_share(share)).item())
    return out


FLAGGED = {"roc", "pr"}  # the metrics that need the compaction's flags (rank_metrics.to_members)


def _metrics(ctx, job, shuffler, gates, groups, twice_u, sorted_labels) -> dict:
    """Open the job's metrics beyond the AUC (circuits.rank_metrics), each as integers over a public power of
    two; nothing else.  One shuffle brings the curves' and the average precision's group values to their places
    (rank_metrics.group_values), then the metrics' circuits run side by side (circuits.lockstep: their rounds
    merged) and their results are opened together.  DeLong's variance and the partial AUC only for M <=
    CI_MAX_ROWS (else a refusal with the reason); the variance opened only when each class has two rows (that
    bit opened with the other results, the variance after it)."""
    spec, refused = job.evaluation.spec, {}
    metrics = spec.metrics
    curves = bool({"roc", "pr"} & set(metrics))
    tasks, phases = {}, []
    if "ci" in metrics:
        if groups.m > CI_MAX_ROWS:
            refused["ci"] = Refused(f"DeLong's variance is computed for at most {CI_MAX_ROWS} rows")
        else:
            tasks["ci"] = lambda engine: (variance_defined(engine, groups),
                                          delong_variance(engine, groups, twice_u, *placement_sums(engine, groups)))
            phases.append("DeLong variance")
    if curves or "ap" in metrics:
        if ctx.rank == 0:
            ctx.progress("group values to the cuts and the group starts")
        members, at_starts = group_values(shuffler, gates, groups, curves, "ap" in metrics)
        if "ap" in metrics:
            tasks["ap"] = lambda engine: secret_average_precision(engine, groups, sorted_labels, at_starts)
            phases.append("average precision")
        if curves:
            flagged = cut_positions(groups.m, spec.points)
            tasks["curve"] = lambda engine: curve_points(engine, groups, flagged, members)
            phases.append(f"curves at {spec.points} cuts")
    if "ks" in metrics:
        tasks["ks"] = lambda engine: secret_ks_statistic(engine, groups)
        phases.append("KS statistic")
    if "pauc" in metrics:
        if groups.m > CI_MAX_ROWS:
            refused["pauc"] = Refused(f"the partial AUC is computed for at most {CI_MAX_ROWS} rows")
        else:
            scaled_fpr = round(spec.max_fpr * 2 ** FPR_BITS)
            tasks["pauc"] = lambda engine: secret_partial_area(engine, groups, scaled_fpr)
            phases.append(f"partial AUC to FPR {spec.max_fpr:g}")
    if ctx.rank == 0 and phases:
        ctx.progress(", ".join(phases) + (" side by side" if len(phases) > 1 else ""))
    shares = dict(zip(tasks, lockstep(gates, list(tasks.values()))))
    opened = {**refused, **_opened_metrics(shares, curve_values(metrics) if curves else (), flagged if curves else None)}
    return {name: opened[name] for name in ("ci", "ap", "curve", "ks", "pauc") if name in opened}


def _opened_metrics(shares: dict, wanted, flagged) -> dict:
    """The metrics' shares (``shares``: name -> what its circuit returned) opened in one exchange, DeLong's
    variance in a second when the first showed it defined (else the refusal with the reason)."""
    parts = [("ci", shares["ci"][0])] if "ci" in shares else []
    parts += [(name, shares[name]) for name in ("ap", "ks", "pauc") if name in shares]
    parts += [(name, shares["curve"][name]) for name in wanted]
    values = iter([int(v) for v in reveal_int(from_share(np.concatenate([v for _, v in parts]))).numpy()]
                  if parts else [])
    opened = {name: [next(values) for _ in range(len(v))] for name, v in parts}
    out = {}
    if "ci" in shares:
        variance = shares["ci"][1]
        out["ci"] = {"scaled": int(reveal_int(from_share(variance)).item())} if opened["ci"][0] else Refused(TWO_ROWS)
    if "ap" in shares:
        out["ap"] = opened["ap"][0]
    if "curve" in shares:
        out["curve"] = {"flagged": flagged.tolist(), **{name: opened[name] for name in wanted}}
    if "ks" in shares:
        out["ks"] = opened["ks"][0]
    if "pauc" in shares:
        out["pauc"] = {"scaled": opened["pauc"][0]}
    return out


def _invalid_clients(ctx, job, gates, held) -> list:
    """The clients with a row outside the domain (a label other than 0 or 1, a key of any score column outside
    the declared encoding's range, in the representation the sort reads, or a weight outside [0, 2^30] units),
    checked inside the MPC (circuits.validity); only one bit per client is opened."""
    if ctx.rank == 0:
        ctx.progress("checking every client's rows inside the MPC")
    key_bits = job.evaluation.encoder.key_bits
    ok = None
    for k in range(len(held.keys)):  # every score column: a row is valid when all its keys are
        column = valid_rows(gates, held.labels, key_bits=key_bits,
                            **({"key_xor": held.key_xor[k]} if job.method == "radix" else {"keys": held.keys[k]}))
        ok = column if ok is None else gates.and_((ok, column))[0]
    if held.weights is not None:
        (ok,) = gates.and_((ok, valid_weights(gates, held.weights, TOTAL_UNITS)))
    verdicts = reveal_int(from_share(client_verdicts(gates, ok, held.rows))).numpy()
    return [client for (client, _, _), good in zip(held.owners, verdicts) if good != 1]


TOTAL_REFUSAL = (f"the sample weights add up to more than 2^{TOTAL_BITS} units of the evaluation's weight_bits "
                 "(checked inside the MPC, one bit opened): declare fewer weight_bits")


def _total_fits(gates, weights) -> bool:
    """Open one bit: do the rows' weight units, each already checked to lie in [0, 2^30], add up to at most
    2^30 (so that the weighted fraction's long division stays exact)?"""
    total = weights.sum(keepdims=True) - public_share(TOTAL_UNITS, gates.rank)
    return bool(reveal_int(from_share(nonnegative(gates, -total))).item())


def invalid_inputs(clients) -> str:
    """The refusal naming the clients whose rows failed the in-MPC check."""
    return (f"client(s) {', '.join(map(repr, clients))} submitted rows outside the protocol's domain (a label "
            f"other than 0 or 1, a score key outside the declared encoding's range, a weight outside [0, "
            f"2^{TOTAL_BITS}] units, or under security with abort MAC keys the dealer could not open; checked inside "
            f"the MPC, only one validity bit per client was opened)")


def _charge(ctx, charge) -> "dict | Refused":
    """Charge the release to this party's ledger if both parties' ledgers admit it; before any MPC work.

    Returns Refused (why), {} (nothing to charge), or what was charged (with ``entry``, for a void).
    """
    if charge is None:
        return {}
    verdict = ctx.ledger.charge(charge)  # decided and recorded under one lock
    votes = crypten.communicator.get().all_gather(torch.tensor([int(verdict["fits"])]))
    if not all(int(v.item()) for v in votes):
        if verdict["fits"]:
            ctx.ledger.void(verdict["entry"], "the other compute party's ledger refused the release")
        return Refused(verdict["message"] or "the other compute party's privacy ledger refused this release")
    if charge.release.exact is not None:
        return {"entry": verdict["entry"]}
    budget, release = verdict["budget"], charge.release
    return {"entry": verdict["entry"], "charged": {"epsilon": release.epsilon, "delta": release.circuit_delta},
            "spent": verdict["after"].as_dict(), "accounting": ACCOUNTING,
            "budget": [budget.epsilon, budget.delta] if budget else None,
            "remaining_epsilon": budget.epsilon - verdict["after"].epsilon if budget else None}


def _central_release(ctx, central, twice_u, labels, gates) -> tuple:
    """Open (2T + Z_T or 2U + Z_U, P + Z_P) per repetition (protocols.mpc.central); nothing else."""
    m = labels.size(0)
    if ctx.rank == 0:
        ctx.progress(f"discrete Laplace in circuit ({central.repetitions} release(s))")
    positives = labels.sum()
    stat = twice_u - positives * (m - positives) if central.neighbours == "label" else twice_u
    noisy_stat = stat + from_share(discrete_laplace(gates, central.statistic_noise(m), central.repetitions))
    noisy_p = positives + from_share(discrete_laplace(gates, central.count_noise(), central.repetitions))
    return reveal_int(noisy_stat).numpy(), reveal_int(noisy_p).numpy()


def _curve_release(ctx, noise, sorted_labels, gates) -> np.ndarray:
    """Open the binary tree's nodes over the positives between the public cuts, each plus its discrete Laplace
    drawn in the circuit (protocols.dp.curve_law), per repetition; nothing else."""
    m = len(sorted_labels)
    if ctx.rank == 0:
        ctx.progress(f"DP curve: tree of the counts at {noise.points} cuts, discrete Laplace in circuit")
    nodes = noise.nodes(sorted_labels)  # local on the shares
    drawn = discrete_laplace(gates, noise.node_noise(m), len(nodes) * noise.repetitions)
    noisy = nodes[None] + drawn.reshape(noise.repetitions, len(nodes))
    return reveal_int(from_share(noisy)).numpy()


def _ranking(ctx, job, m: int, shuffler, gates):
    key_bits = job.evaluation.encoder.key_bits
    total = key_bits if job.method == "radix" else layer_count(m)
    step = max(1, total // 10)

    def progress(done, _total):
        if ctx.rank == 0 and (done % step == 0 or done == total):
            ctx.progress(f"oblivious {job.method} sort of {m} scores: step {done}/{total}")

    if job.method == "radix":
        return RadixRanking(shuffler, gates, key_bits, progress, lambda: repeated_steps(m))
    return BitonicRanking(PAD_KEY, progress)


def _rank_bundles(ctx, job_id, owners, twice_rank, m: int = None) -> dict:
    """Client -> this party's share of its doubled ranks, sealed for that client and signed by this party.
    owners: (client, its key for rank bundles, its row count) in input order; twice_rank: this party's int64
    shares in input order ((M,), or (2, M) and M under security with abort: bundles.seal_ranks)."""
    bundles, start = {}, 0
    for client, reply_to, rows in owners:
        shares = twice_rank[..., start:start + rows]
        bundles[client] = seal_ranks(ctx.rank, job_id, client, reply_to, shares, ctx.sign, m)
        start += rows
    return bundles
