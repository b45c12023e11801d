"""``mpc-auc security``: the security evaluation as one command, writing a report a paper can use.

Suites: ``quick`` (minutes on 2 cores) and ``full`` (more draws, larger
sets).  A YAML ``--config`` may override any suite parameter (the keys of
SUITES) and set ``seed``.  Output in ``--out DIR``: ``report.json`` (strict
JSON: checks, version, config, seed, machine), ``report.md``, the tables
``checks.csv``, ``label_inference.csv``, ``top_k.csv``, and the plots
``label_inference.{png,pdf}`` and ``top_k.{png,pdf}``.

Every check: name, kind (attack | audit | view | collusion | control),
protocol, claimed_epsilon, claimed_delta, measured, bound, passed, details.
Controls are deliberately weakened variants; each must *fail* its check
(the check catches the weakness), every other check must pass.
"""
import hashlib
import math
import os
import secrets
import tempfile
import time

import numpy as np

from ...protocols.dp.central_law import CentralNoise
from ...protocols.errors import InputError
from ...protocols.validation import checked
from ...protocols.inputs.encoding import PAD_KEY, ScoreEncoder
from ...protocols.inputs.sharing import split, split_xor
from ...protocols.mpc.exact import exact_result
from ...protocols.mpc.ranking_job import run_ranking_jobs, simulated
from ...protocols.runtime.dealer import Dealer
from ...protocols.runtime.session import Placement, run_parties
from ...results import provenance, strict, write_csv, write_json, write_text
from ...synthetic import synthetic_evalset
from ...version import __version__
from ..config import read_config, write_config
from ..plots import epsilon_ticks, figure, style
from . import flower_oracle, person_ledger
from . import checks as sc
from .dp_audit import clopper_pearson
from .false_alarms import CHECK_ALPHA, FAMILY_ALPHA, MAX_CHECKS, Z_ONE_SIDED, Z_TWO_SIDED
from .collusion import collusion_party, kendall, recovered
from .network import captured_jobs, differences, exposure, observer_view, weakened_link
from .views import (
    VIEW_BITS,
    VIEW_INPUTS,
    aligned,
    as_runs,
    bitonic_layers,
    bitonic_secrets,
    bitonic_tests,
    bitonic_view_party,
    central_noise_party,
    flagged,
    homogeneity,
    job_secrets,
    leaks,
    leaky_bitonic_view_party,
    leaky_noise_party,
    leaky_recording_party,
    leaky_ustat_view_party,
    p_values,
    recording_party,
    ustat_secrets,
    ustat_view_party,
    view_party,
)

SUITES = {
    "quick": {"epsilon": 1.0, "audit_draws": 200_000, "inference_epsilons": [0.5, 1, 2, 4, 8], "inference_m": 200,
              "inference_draws": 200, "top_k_m": 45_840, "top_k": [10, 100, 1000, 10_000], "seed_bits": 14,
              "dealer_trials": 200, "mpc_audit_draws": 20_000, "view_runs": 150,
              "collusion_m": 500, "ustat_view_pairs": 4096, "bitonic_view_m": 1024, "job_view_runs": 30,
              "job_view_m": 1024, "noise_view_draws": 4096, "observer_m": 512},
    "full": {"epsilon": 1.0, "audit_draws": 2_000_000, "inference_epsilons": [0.25, 0.5, 1, 2, 4, 8],
             "inference_m": 1000, "inference_draws": 1000, "top_k_m": 458_407, "top_k": [10, 100, 1000, 10_000],
             "seed_bits": 16, "dealer_trials": 1000, "mpc_audit_draws": 200_000, "view_runs": 1000,
             "collusion_m": 45_840, "ustat_view_pairs": 65_536, "bitonic_view_m": 4096, "job_view_runs": 150,
             "job_view_m": 4096, "noise_view_draws": 65_536, "observer_m": 4096},
}
INFERENCE_MECHANISMS = ("fedauc-vanilla", "fedauc-rr", "fedauc-lap-local", "fedauc-lap-global",
                        "fedauc-gauss-local", "mpc-central")
GAUSS_DELTA = 1e-5


def check(name, kind, protocol, claimed_epsilon, claimed_delta, measured, bound, passed, details=None) -> dict:
    return {"name": name, "kind": kind, "protocol": protocol, "claimed_epsilon": claimed_epsilon,
            "claimed_delta": claimed_delta, "measured": measured, "bound": bound, "passed": bool(passed),
            "details": details or {}}


def settings(suite: str, config_path: str = None) -> dict:
    """The suite's parameters, overridden by the YAML config (unknown keys are an error)."""
    if suite not in SUITES:
        raise InputError(f"unknown suite {suite!r}; choose from {', '.join(SUITES)}")
    chosen = dict(SUITES[suite], suite=suite)
    if config_path:
        config = read_config(config_path)
        unknown = sorted(set(config) - set(chosen) - {"seed"})
        if unknown:
            raise InputError(f"config {config_path}: unknown parameter(s) {', '.join(unknown)}; known: "
                             f"{', '.join(sorted(chosen))}, seed")
        chosen.update(config)
    chosen["epsilon"] = checked("epsilon", chosen["epsilon"])
    m = chosen["bitonic_view_m"]  # the layer messages align with its n/2 lanes only without padding
    if not (isinstance(m, int) and m >= 2 and m & (m - 1) == 0):
        raise InputError(f"bitonic_view_m must be a power of two, not {m!r}")
    return chosen


# ----------------------------------------------------------------- checks

def audits(cfg: dict, rng) -> list:
    """Every audit and its controls (sims.security.checks), at the suite's epsilon."""
    with tempfile.TemporaryDirectory(prefix="mpc-auc-audit-ledger-") as ledger:  # repetitions: no real release
        return _audits(cfg, rng, ledger)


def _audits(cfg: dict, rng, ledger: str) -> list:
    eps, n = cfg["epsilon"], cfg["audit_draws"]
    runs = [
        ("audit", "fedauc-rr", "label flip at K = M", lambda: sc.audit_rr(eps, n, rng)),
        ("audit", "fedauc-lap-local", "label flip of the top-ranked sample", lambda: sc.audit_laplace("local", eps, n, rng)),
        ("audit", "fedauc-lap-global", "label flip of the top-ranked sample",
         lambda: sc.audit_laplace("global", eps, n, rng)),
        ("audit", "fedauc-gauss-local", "label flip of the top-ranked sample",
         lambda: sc.audit_gaussian(eps, GAUSS_DELTA, n, rng)),
        ("audit", "fedauc-lap-adaptive", "label flip of the top-ranked sample",
         lambda: sc.audit_adaptive(eps, n, rng)),
        ("audit", "fedauc-gauss-adaptive", "label flip of the top-ranked sample",
         lambda: sc.audit_adaptive(eps, n, rng, GAUSS_DELTA)),
        ("audit", "label-rr-onehot", "label flip at K = M", lambda: sc.audit_k_ary(eps, n, rng)),
        ("audit", "dpauc-rr", "label flip of the top sample (one client)", lambda: sc.audit_dpauc_rr(eps, n, rng)),
        ("audit", "score-cldp (adjacent levels, d = 1)", "one score moved by one grid step",
         lambda: sc.audit_cldp(eps, n, rng)),
        ("audit", "score-dp", "one score moved across [0, 1]", lambda: sc.audit_score_dp(eps, n, rng)),
        ("audit", "dpauc-histogram", "label flip of the top sample (one client)",
         lambda: sc.audit_dpauc("histogram", eps, n, rng)),
        ("audit", "dpauc-threshold", "label flip of the top sample (one client)",
         lambda: sc.audit_dpauc("threshold", eps, n, rng)),
        ("audit", "mpc-central (label DP, circuit's noise law)", "label flip of the top-ranked sample",
         lambda: sc.audit_central("label", eps, n, rng)),
        ("audit", "mpc-central (record DP, circuit's noise law)", "one record replaced",
         lambda: sc.audit_central("record", eps, n, rng)),
        ("audit", "mpc-central (label DP, through the real MPC)", "label flip of the top-ranked sample",
         lambda: sc.audit_central_mpc(eps, cfg["mpc_audit_draws"], rng, ledger)),
        ("audit", "mpc-central DP curve (tree mechanism, circuit's noise law)", "label flip of the top-ranked sample",
         lambda: sc.audit_curve(eps, n, rng)),
        ("audit", "mpc-central DP curve (through the real MPC)", "label flip of the top-ranked sample",
         lambda: sc.audit_curve_mpc(eps, cfg["mpc_audit_draws"], rng, ledger)),
        ("control", "DP curve with each node's noise for one level, not L + 1", "label flip of the top-ranked sample",
         lambda: sc.audit_curve(eps, n, rng, calibrated_levels=1)),
        ("control", "fedauc-rr with the flip probability of 2 eps", "label flip at K = M",
         lambda: sc.audit_rr(eps, n, rng, flip_epsilon=2 * eps)),
        ("control", "fedauc-lap-local with its noise scale halved", "label flip of the top-ranked sample",
         lambda: sc.audit_laplace("local", eps, n, rng, noise_epsilon=2 * eps)),
        ("control", "mpc-central record DP with the label sensitivity", "one record replaced",
         lambda: sc.audit_central("record", eps, n, rng, calibrated_for="label")),
    ]
    out = []
    for kernel in ("auc", "auc-private", "gini", "kendall"):
        for k in (1, 2):
            result, claimed, delta = sc.audit_ustat(kernel, eps, k, n, rng)
            allowed = claimed * (1 + sc.AUDIT_MARGIN)
            out.append(check(f"DP audit: ustat-2pc {kernel}, k = {k} (per user)", "audit", f"ustat-2pc {kernel}",
                             claimed, delta, result.epsilon_lb, allowed, result.epsilon_lb <= allowed,
                             {"neighbours": "one user's value moved across its range (all its k pairs change)",
                              "requested_epsilon": eps, **result.as_dict()}))
    for kind, protocol, neighbours, run in runs:
        result, delta = run()
        allowed = eps * (1 + sc.AUDIT_MARGIN)
        out.append(check(f"DP audit: {protocol}", kind, protocol, eps, delta, result.epsilon_lb, allowed,
                         result.epsilon_lb <= allowed, {"neighbours": neighbours, **result.as_dict()}))
    return out


def label_inference(cfg: dict, rng) -> tuple:
    rows, out = [], []
    m, draws = cfg["inference_m"], cfg["inference_draws"]
    for mechanism in INFERENCE_MECHANISMS:
        for eps in cfg["inference_epsilons"]:
            delta = GAUSS_DELTA if "gauss" in mechanism else 0.0
            accuracy = sc.label_inference(mechanism, eps, m, draws, rng, delta)
            bound = 1.0 if mechanism == "fedauc-vanilla" else sc.inference_bound(eps, delta)
            slack = Z_ONE_SIDED * math.sqrt(bound * (1 - bound) / (m * draws)) + 1e-12  # binomial standard errors
            lo, hi = clopper_pearson(round(accuracy * m * draws), m * draws, 0.05)
            rows.append({"protocol": mechanism, "epsilon": eps, "accuracy": accuracy, "accuracy_lo": lo,
                         "accuracy_hi": hi, "bound": bound})
            out.append(check(f"label inference at K = M: {mechanism}, eps {eps:g}", "attack", mechanism,
                             None if mechanism == "fedauc-vanilla" else eps, delta, accuracy, bound + slack,
                             accuracy <= bound + slack, {"clients": m, "releases": draws,
                                                         "attacker": "likelihood ratio, all other labels known"}))
    return out, rows


def views(cfg: dict, rng) -> list:
    """Transcript tests of the radix sort at both parties (sims.security.views), with the open-sigma control."""

    parties = run_parties(view_party, (VIEW_INPUTS, VIEW_BITS, cfg["view_runs"]), provider="TTP", timeout_s=120)
    out = []
    for variant, kind, label in (("radix", "view", "radix sort (mpc-exact, mpc-central)"),
                                 ("leaky", "control", "radix sort opening sigma without the shuffle"),
                                 ("reused", "control", "radix sort reusing one digit mask")):
        for role, party in zip(("P0", "P1"), parties):
            found = p_values(party[variant])
            limit = CHECK_ALPHA / len(found)
            out.append(check(f"view of {role}: {label}", kind, label, None, None, min(found), limit,
                             min(found) > limit,
                             {"p_values": dict(zip(("homogeneity A vs B", "uniform sigma[pi] on A",
                                                    "uniform sigma[pi] on B"), found)),
                              "inputs": "4 distinct keys vs 4 tied keys", "runs_per_input": cfg["view_runs"],
                              "measured": "smallest chi-square p-value"}))
    return out


def bitonic_views(cfg: dict, rng) -> list:
    """The bitonic sort: no message a party receives carries the keys, the sorted keys, their destinations, or
    (per layer) the compared keys, the comparison bits or the swap bits."""

    m = cfg["bitonic_view_m"]
    keys = rng.integers(0, 2 ** 40, m)
    outs = run_parties(bitonic_view_party, (split(keys),), provider="TTP", timeout_s=120)
    hidden, layers = bitonic_secrets(keys), bitonic_layers(keys, PAD_KEY)
    out = []
    for role, party in zip(("P0", "P1"), outs):
        views, ends = party["views"], party["layer_ends"]
        tested = bitonic_tests(views, ends, hidden, layers, m)
        found = flagged(tested, CHECK_ALPHA)
        checked = sum(1 for a in views if aligned(a, m) or aligned(a, m // 2))
        out.append(check(f"view of {role}: bitonic sort messages", "view", "mpc-exact --method bitonic", None, None,
                         len(found), 0, not found, {
                             "messages": len(views), "M": m, "layers": len(layers),
                             "carried": sorted({n for _, n in found}), "messages_checked": checked,
                             "unchecked_messages": len(views) - checked, "tests": len(tested),
                             "smallest_p_bound": min(p for *_, p in tested), "alpha": CHECK_ALPHA}))
    (leaky, _) = run_parties(leaky_bitonic_view_party, (split(keys),), provider="TTP", timeout_s=120)
    found = leaks(leaky["views"][:leaky["layer_ends"][0]], layers[0], m // 2, CHECK_ALPHA)
    out.append(check("view of P0 of a bitonic sort whose first layer opens its swap bits", "control",
                     "bitonic sort (weakened: sims.security.views.leaky_bitonic_view_party)", None, None, len(found),
                     0, not found, {"carried": sorted({n for _, n in found})}))
    return out


def ustat_views(cfg: dict, rng) -> list:
    """ustat-2pc: no message a pair-party receives carries a kernel value, the noise or the other's input."""

    pairs = cfg["ustat_view_pairs"]
    x, y = rng.integers(0, 4097, pairs), rng.integers(0, 4097, pairs)
    outs = run_parties(ustat_view_party, (x, y), provider="TTP", timeout_s=120)
    secrets_ = ustat_secrets(x, y, outs)
    out = []
    for role, party, other in (("P0", outs[0], y), ("P1", outs[1], x)):
        found = leaks(party["views"], {**secrets_, "other party's input": other}, pairs, CHECK_ALPHA)
        out.append(check(f"view of {role}: ustat-2pc Gini-Laplace and AUC-RR messages", "view", "ustat-2pc", None,
                         None, len(found), 0, not found,
                         {"messages": len(party["views"]), "pairs": pairs, "carried": sorted({n for _, n in found}),
                          "test": "equal positions above independence: Bernstein bound <= alpha / tests"}))
    leaky = run_parties(leaky_ustat_view_party, (x, y), provider="TTP", timeout_s=120)
    found = leaks(leaky[0]["views"], ustat_secrets(x, y, leaky), pairs, CHECK_ALPHA)
    out.append(check("view of P0 of an AUC kernel that opens its kernel bits: ustat-2pc", "control",
                     "ustat-2pc (weakened: sims.security.views.leaky_ustat_view_party)", None, None, len(found), 0,
                     not found, {"carried": sorted({n for _, n in found})}))
    return out


JOB_A = (np.array([0.9, 0.1, 0.5, 0.3, 0.2, 0.8, 0.6, 0.4]), np.array([1, 1, 1, 0, 0, 0, 0, 1]))  # AUC 0.5
JOB_B = (np.full(8, 0.5), np.array([0, 1, 0, 1, 1, 0, 1, 0]))  # all tied: AUC 0.5; same M, clients, positives


def job_views(cfg: dict, rng) -> list:
    """Views of whole jobs through the real party loop: mpc-central, and mpc-exact delivering ranks."""

    encoder, m, runs = ScoreEncoder(), cfg["job_view_m"], cfg["job_view_runs"]
    scores, labels = rng.integers(0, 100, m) / 100, rng.integers(0, 2, m)
    secrets_ = job_secrets(encoder.encode(scores), labels)
    halves = [("c0", scores[:m // 2], labels[:m // 2]), ("c1", scores[m // 2:], labels[m // 2:])]
    small = [[(f"c{i}", s[4 * i:4 * i + 4], y[4 * i:4 * i + 4]) for i in range(2)] for s, y in (JOB_A, JOB_B)]
    requests = [simulated(clients, encoder) for clients in [small[0]] * runs + [small[1]] * runs + [halves]]
    out = []
    for protocol, central, ranks in (("mpc-central", CentralNoise(cfg["epsilon"]), False),
                                     ("mpc-exact --ranks", None, True)):
        with tempfile.TemporaryDirectory(prefix="mpc-auc-view-ledger-") as ledger:
            done = run_ranking_jobs(requests, "radix", ranks, central, Placement(ledger=ledger), 120, None,
                                    party=recording_party)
        parties = [done[0].finals[role] for role in ("P0", "P1")]
        for role, jobs in zip(("P0", "P1"), parties):
            out.append(_job_view(f"view of {role}: {protocol}, every message of its jobs", "view", protocol,
                                 [j["received"] for j in jobs], secrets_, runs))
        with tempfile.TemporaryDirectory(prefix="mpc-auc-view-ledger-") as ledger:  # the weakened party, once
            (leaky,) = run_ranking_jobs(requests[-1:], "radix", ranks, central, Placement(ledger=ledger), 120,
                                        None, party=leaky_recording_party)
        weak = leaky.finals["P0"][-1]
        found = leaks(weak["received"], secrets_, m, CHECK_ALPHA)
        out.append(check(f"view of a party that opens the labels before the sort: {protocol}", "control",
                         f"{protocol} (weakened party)", None, None, len(found), 0, not found,
                         {"weakened": "sims.security.views.leaky_recording_party: the real loop, labels opened",
                          "carried": sorted({n for _, n in found})}))
        if ranks:
            shares = [jobs[-1]["sealed ranks"][0] for jobs in parties]
            delivered = exact_result(done[-1], "radix").ranks
            for name, sealed, kind in (("P0's rank share", shares[0], "view"), ("P1's rank share", shares[1], "view"),
                                       ("P0 of a party that seals opened ranks", weak["sealed ranks"][0],
                                        "control")):
                found = leaks([sealed], secrets_, m, CHECK_ALPHA)
                out.append(check(f"rank delivery: {name} sealed for the clients", kind, protocol, None, None,
                                 len(found), 0, not found, {"carried": sorted({n for _, n in found})}))
            wrong = [c for c, part in (("c0", slice(0, m // 2)), ("c1", slice(m // 2, m)))
                     if not np.array_equal(2 * (delivered[c] - 1), secrets_["doubled ranks"][part])]
            out.append(check("rank delivery: each client opens exactly its own rows' ranks", "view", protocol, None,
                             None, len(wrong), 0, not wrong, {"clients": 2, "M": m, "wrong": wrong}))
    return out


def _job_view(name, kind, protocol, received, secrets_, runs) -> dict:
    """Homogeneity of the small jobs' views (input A vs B) and no secret carried in the large job's view."""

    p = homogeneity(as_runs(received[:runs]), as_runs(received[runs:2 * runs]))
    found = leaks(received[-1], secrets_, len(secrets_["labels"]), CHECK_ALPHA / 2)
    limit = CHECK_ALPHA / 2  # two tests: homogeneity and the carry tests
    return check(name, kind, protocol, None, None, p if not found else 0.0, limit, p > limit and not found,
                 {"homogeneity_p": p, "runs_per_input": runs, "carried": sorted({n for _, n in found}),
                  "inputs": "8 rows, 2 clients: distinct scores vs all tied (same positives, same AUC)",
                  "messages_of_the_large_job": len(received[-1]), "M_of_the_large_job": len(secrets_["labels"])})


def _noise_secrets(draws) -> dict:
    """The noise draws, their signs and supports, named."""
    hidden = {}
    for name, z in zip(("statistic noise Z_T", "count noise Z_P"), draws):
        hidden.update({name: z, f"{name}: sign": np.sign(z), f"{name}: non-zero": (z != 0).astype(np.int64)})
    return hidden


def noise_views(cfg: dict, rng) -> list:
    """mpc-central's noise gadgets at its calibration: no received message carries a draw, its sign or support."""

    draws, m = cfg["noise_view_draws"], cfg["job_view_m"]
    outs = run_parties(central_noise_party, (cfg["epsilon"], m, draws), provider="TTP", timeout_s=120)
    hidden = _noise_secrets(outs[0]["noise"])
    out = []
    for role, party in zip(("P0", "P1"), outs):
        found = leaks(party["views"], hidden, draws, CHECK_ALPHA)
        out.append(check(f"view of {role}: mpc-central's discrete Laplace gadgets", "view", "mpc-central", None, None,
                         len(found), 0, not found, {"messages": len(party["views"]), "draws": draws, "M": m,
                                                    "carried": sorted({n for _, n in found})}))
    leaky = run_parties(leaky_noise_party, (cfg["epsilon"], m, draws), provider="TTP", timeout_s=120)
    found = leaks(leaky[0]["views"], _noise_secrets(leaky[0]["noise"]), draws, CHECK_ALPHA)
    out.append(check("view of P0 of a noise gadget that opens its draws: mpc-central", "control",
                     "mpc-central (weakened: sims.security.views.leaky_noise_party)", None, None, len(found), 0,
                     not found, {"carried": sorted({n for _, n in found})}))
    return out


def collusion(cfg: dict, rng) -> list:
    """What dealer + P0 and P0 alone recover of the radix sort's secret order and labels."""

    m, bits = cfg["collusion_m"], 8
    keys, labels = rng.integers(0, 2 ** bits, m), rng.integers(0, 2, m)
    p0, p1 = run_parties(collusion_party, (split_xor(keys), split(labels), bits), provider="TTP", timeout_s=120)
    truth = np.empty(m, dtype=np.int64)
    truth[np.argsort(keys, kind="stable")] = np.arange(m)
    found = recovered(p0, p1)
    order, guessed = found["dealer + P0"]
    exact, accuracy = bool(np.array_equal(order, truth)), float(np.mean(guessed == labels))
    details = {"M": m, "kendall_tau_of_the_true_order": kendall(truth, keys), "recovered_exactly": exact}
    return [check("collusion: dealer + P0 recover the sorted order (documented as not protected)", "collusion",
                  "mpc-exact, mpc-central", None, None, kendall(order, keys), kendall(truth, keys), exact, details),
            check("collusion: dealer + P0 recover every label (documented as not protected)", "collusion",
                  "mpc-central", None, None, accuracy, 1.0, accuracy == 1.0, {"M": m})
            ] + _no_better_than_chance("collusion: P0 alone", *found["P0 alone"], keys, labels, details)


def network_observer(cfg: dict, rng) -> list:
    """A capture of the links of real role processes (sims.security.network), on two inputs of one shape."""

    m, encoder = cfg["observer_m"], ScoreEncoder()
    inputs = [(rng.integers(0, 100, m) / 100, rng.integers(0, 2, m)) for _ in range(2)]
    captures = captured_jobs([simulated([("c0", s[:m // 2], y[:m // 2]), ("c1", s[m // 2:], y[m // 2:])], encoder)
                              for s, y in inputs])
    clear = [v.tobytes() for s, y in inputs for v in (s, encoder.encode(s), y.astype(np.int64))]
    material = [item for _, items in captures for item in items]  # dealer keys and input shares, both parties
    hidden = clear + material
    streams = [stream for capture, _ in captures for _, up, down in capture for stream in (up, down)]
    outside, found = exposure(streams, hidden)
    clear_outside, clear_found = exposure([weakened_link(clear[2] + material[0])], hidden)
    views = [observer_view(capture) for capture, _ in captures]
    other, timing = differences(*views)
    guess = np.random.default_rng(list(hashlib.sha256(repr(sorted(views[0].items())).encode()).digest()))
    common = {"M": m, "sessions": 2, "links": "coordinator, dealer and P0-P1 links to P0 and P1: TLS 1.3 "
                                                   "handshake, then sealed AES-256-GCM records",
              "captured_bytes": sum(len(s) for s in streams)}
    return [
        check("network observer: the capture holds TLS and sealed records only, no secret in the clear",
              "collusion", "mpc-exact, mpc-central", None, None, outside + found, 0, outside + found == 0,
              {**common, "bytes_outside_records": outside, "secrets_in_the_clear": found,
               "searched_for": "16-byte windows of the scores, keys and labels, both parties' dealer keys and every "
                               "input share they opened"}),
        check("network observer: its view (record types and lengths) is the same for two inputs of one shape",
              "collusion", "mpc-exact, mpc-central", None, None, other, 0, other == 0,
              {**common, "records": sum(views[0].values()), "heartbeat_sized_records_that_differ": timing,
               "note": "records of one bare frame (heartbeats) follow timing, not data"}),
        check("a link whose sealing is weakened to the identity: the same capture checks", "control",
              "weakened link (sims.security.network.weakened_link)", None, None,
              clear_outside + clear_found, 0, clear_outside + clear_found == 0,
              {"bytes_outside_records": clear_outside, "secrets_in_the_clear": clear_found}),
    ] + _no_better_than_chance("network observer", guess.permutation(m), guess.integers(0, 2, m), *inputs[0],
                               {**common, "guess": "a function of its view (the same for both inputs)"})


def _no_better_than_chance(adversary, order, guessed, keys, labels, details) -> list:
    """An adversary's recovered order (Kendall tau against the keys) and labels, against chance."""

    m = len(keys)
    tau = kendall(order, keys)
    tau_chance = Z_TWO_SIDED * math.sqrt(2 * (2 * m + 5) / (9 * m * (m - 1)))  # standard deviations under chance
    base = max(labels.mean(), 1 - labels.mean())  # the majority class: the best guess without information
    accuracy = float(np.mean(guessed == labels))
    label_chance = base + Z_ONE_SIDED * math.sqrt(base * (1 - base) / m)
    return [check(f"{adversary} recovers nothing of the sorted order", "collusion", "mpc-exact, mpc-central", None,
                  None, tau, tau_chance, abs(tau) <= tau_chance, details),
            check(f"{adversary} infers labels no better than the majority class", "collusion", "mpc-central",
                  None, None, accuracy, label_chance, accuracy <= label_chance, {**details, "majority_class_rate": base})]


def release_attacks(cfg: dict, rng) -> list:
    """The enumeration attack on an exact AUC, and threshold differences on dpauc's counts."""
    eps = cfg["epsilon"]
    exact = sc.enumeration_attack(200, 100, rng)
    inferred = sc.threshold_inference(eps, cfg["audit_draws"], rng)
    bound = sc.inference_bound(eps)
    slack = Z_ONE_SIDED * math.sqrt(bound * (1 - bound) / cfg["audit_draws"])
    ustat = []
    for kernel in ("auc", "gini", "kendall"):
        accuracy, bound = sc.ustat_inference(kernel, eps, 1, max(20, cfg["audit_draws"] // 10), rng)
        slack = Z_ONE_SIDED * math.sqrt(bound * (1 - bound) / max(20, cfg["audit_draws"] // 10))
        ustat.append(check(f"ustat-2pc aggregator infers one user's value ({kernel}, k = 1)", "attack",
                           f"ustat-2pc {kernel}", eps, 0.0, accuracy, bound + slack, accuracy <= bound + slack,
                           {"attacker": "likelihood ratio on the user's noisy kernel outputs, two extreme values"}))
    return ustat + [
        check("enumeration attack on the released exact AUC (Stoddard et al. 2014)", "attack", "mpc-exact", None,
              None, exact, 1.0, True, {"note": "mpc-exact claims no DP: an attacker who knows every other label "
                                               "and every score reads the last label off the exact AUC; use "
                                               "mpc-central for label DP", "M": 200, "targets": 100}),
        check("threshold-difference inference on dpauc's per-threshold counts", "attack", "dpauc-threshold", eps,
              0.0, inferred, bound + slack, inferred <= bound + slack,
              {"attacker": "likelihood ratio over every released count, all other samples known"}),
    ]


def across_evaluations(cfg: dict, rng) -> list:
    """An organiser's sequences of evaluations on the same people (sims.security.person_ledger) against the
    parties' accounting and the set-keyed control, and the crafted-model attack on Flower rounds
    (sims.security.flower_oracle) under the DP default and the exact rounds of before."""
    eps, draws = cfg["epsilon"], cfg["audit_draws"]
    out = []
    with tempfile.TemporaryDirectory(prefix="mpc-auc-person-") as directory:
        for kind, charge, what in (("attack", person_ledger.charge_as_parties, "the parties' accounting"),
                                   ("control", person_ledger.charge_by_set, "the set-keyed ledger of before")):
            dp = person_ledger.dp_sequence(os.path.join(directory, f"{kind}-dp"), charge)
            out.append(check(f"an organiser's roster tricks against per-person budgets ({what})", kind,
                             "mpc-central", 1.0, None, dp["epsilon_on_c0"], 1.0, dp["epsilon_on_c0"] <= 1.0,
                             {"attempts": {k: v or "released" for k, v in dp["attempts"].items()},
                              "note": "budget 1, epsilon 1 per release: the epsilon released on c0's rows"}))
            os.makedirs(os.path.join(directory, f"{kind}-exact"))
            exact = person_ledger.exact_sequences(os.path.join(directory, f"{kind}-exact"), charge)
            read = sum(e["labels_read"] for e in exact.values())
            out.append(check(f"sequences of exact evaluations on the same clients ({what})", kind, "mpc-exact",
                             None, None, read, 0, read == 0, {"sequences": exact, "note": "labels read"}))
    rates = flower_oracle.oracle_rates(179, 106, eps, 2 * eps, draws, rng)  # the Flower example's test rows
    slack = Z_ONE_SIDED * math.sqrt(0.25 / draws)
    out.append(check("crafted-model oracle on Flower rounds (DP default)", "attack", "mpc-central (Flower)", eps, 0.0,
                     rates["strongest_per_round"], rates["bound_per_round"] + slack,
                     rates["strongest_per_round"] <= rates["bound_per_round"] + slack, rates))
    out.append(check("crafted-model oracle on Flower rounds (exact rounds of before)", "control", "mpc-exact (Flower)",
                     eps, 0.0, rates["exact_rounds"], rates["bound_per_round"] + slack,
                     rates["exact_rounds"] <= rates["bound_per_round"] + slack,
                     {"note": "an exact round reads the target's label for certain"}))
    return out


def top_k(cfg: dict, rng) -> tuple:
    evalset = synthetic_evalset(m=cfg["top_k_m"], clients=10, seed=int(rng.integers(2 ** 31)))
    base = evalset.positives / evalset.m
    rows, out = [], []
    for view, seen in sc.top_k_views(evalset, cfg["epsilon"], rng).items():
        for k, precision in zip(cfg["top_k"], sc.top_k_precision(seen, evalset.label, cfg["top_k"])):
            lo, hi = clopper_pearson(round(precision * k), k, 0.05)
            rows.append({"exposure": view, "K": k, "precision": precision, "precision_lo": lo, "precision_hi": hi,
                         "base_rate": base})
            if view.startswith("mpc-"):
                slack = Z_ONE_SIDED * math.sqrt(base * (1 - base) / k)
                out.append(check(f"top-{k} score attack: {view}", "attack", "mpc-exact, mpc-central", None, None,
                                 precision, base + slack, precision <= base + slack,
                                 {"base_rate": base, "M": evalset.m}))
    return out, rows


def dealer_keys(cfg: dict, rng) -> list:
    """Stock CrypTen's seeds (a control); the project's Dealer's key set-up under the key-independence check
    (sims.security.checks.key_independence), the same Dealer weakened to derive k_1 from k_0 three ways (the
    controls), and a real session in which each party's triples expand the key the Dealer sent it."""

    bits = cfg["seed_bits"]
    dealer_seed = int(rng.integers(2 ** bits))
    seed0, seed1 = sc.stock_dealer_seeds(dealer_seed)
    recovered = sc.seed_recovery(seed0, sc.stock_share(seed1), bits)
    trials = cfg["dealer_trials"]
    p0, p1 = run_parties(sc.dealer_key_party, (1000,), provider="TTP", timeout_s=120)
    wired = sc.expands_its_key(p0) and sc.expands_its_key(p1) and p0["key"] != p1["key"]
    return [
        check(f"stock CrypTen TTP: P0 rebuilds P1's triples from its seed ({bits}-bit dealer seed)", "control",
              "stock CrypTen TTP", None, None, float(recovered), 0.0, not recovered,
              {"attack": "search dealer seeds for P0's, regenerate P1's triple shares (torch MT19937)"}),
        _independence_check("dealer key independence, our Dealer: no draw moves both P0's and P1's keys",
                            "collusion", "mpc-exact, mpc-central", sc.key_independence(Dealer, trials, rng),
                            {"dealer": "protocols.runtime.dealer.Dealer"}),
        *[_independence_check(f"dealer key independence, a Dealer with {name}", "control",
                              "weakened dealer", sc.key_independence(dealer, trials, rng),
                              {"weakening": f"sims.security.checks.{dealer.__name__}: the project's Dealer with "
                                            f"{name}"})
          for name, dealer in sc.WEAKENED_DEALERS.items()],
        check("our dealer in a real session: each party's triples expand the key the dealer sent it", "collusion",
              "mpc-exact, mpc-central", None, None, float(not wired), 0.0, wired,
              {"session": "P0, P1 and protocols.runtime.dealer.Dealer as processes; the first 1,000 words of "
                          "each party's triple generator against its key under the triples' purpose"}),
    ]


def _independence_check(name: str, kind: str, protocol: str, found: dict, details: dict) -> dict:
    """A check record of sims.security.checks.key_independence: passed when no trial was flagged."""
    return check(f"{name} ({found['trials']} trials)", kind, protocol, None, None, float(found["flagged"]), 0.0,
                 not found["flagged"], dict(details, **found))


# ----------------------------------------------------------------- report

def run(suite: str, out_dir: str, config_path: str = None, seed: int = None, progress=print) -> dict:
    """Run the suite, write the report files into ``out_dir`` (created), return the report."""
    cfg = settings(suite, config_path)
    seed = cfg.pop("seed", None) if seed is None else seed
    seed = secrets.randbits(63) if seed is None else int(seed)
    rng = np.random.default_rng(seed)
    os.makedirs(out_dir, exist_ok=True)
    start = time.perf_counter()
    checks, tables = [], {}
    for title, step in (("views of the radix sort", views), ("views of the bitonic sort", bitonic_views),
                        ("views of whole mpc-central and mpc-exact --ranks jobs", job_views),
                        ("views of mpc-central's noise gadgets", noise_views), ("views of ustat-2pc", ustat_views),
                        ("collusion", collusion), ("the network observer", network_observer),
                        ("DP audits and their controls", audits), ("label inference", label_inference),
                        ("attacks on released AUCs and counts", release_attacks),
                        ("privacy across evaluations", across_evaluations), ("top-K score attack", top_k),
                        ("dealer keys and the stock-CrypTen control", dealer_keys)):
        progress(f"security: {title} ...")
        done = step(cfg, rng)
        if isinstance(done, tuple):
            done, tables[step.__name__] = done
        checks += done
    where = provenance({"suite": suite, "config": config_path, "out": out_dir}, seed)
    report = strict({"checks": checks, "version": __version__, "config": cfg, "seed": seed,
                     "machine": where["machine"], "provenance": where,
                     "summary": summary(checks), "seconds": time.perf_counter() - start})
    write_config(os.path.join(out_dir, "config.yaml"), dict(cfg, seed=seed))
    write_json(os.path.join(out_dir, "report.json"), report, indent=1)
    write_csv(os.path.join(out_dir, "checks.csv"), [{k: v for k, v in c.items() if k != "details"} for c in
                                                    report["checks"]])
    write_csv(os.path.join(out_dir, "label_inference.csv"), tables["label_inference"])
    write_csv(os.path.join(out_dir, "top_k.csv"), tables["top_k"])
    _plot_inference(os.path.join(out_dir, "label_inference"), tables["label_inference"], cfg)
    _plot_top_k(os.path.join(out_dir, "top_k"), tables["top_k"], cfg)
    write_text(os.path.join(out_dir, "report.md"), markdown(report))
    return report


def summary(checks) -> dict:
    """The verdict: every non-control check passed and every control was caught."""
    regular = [c for c in checks if c["kind"] != "control"]
    controls = [c for c in checks if c["kind"] == "control"]
    failed = [c["name"] for c in regular if not c["passed"]]
    missed = [c["name"] for c in controls if c["passed"]]
    if len(regular) > MAX_CHECKS:  # the per-check alpha would no longer keep the stated family-wise rate
        raise RuntimeError(f"{len(regular)} regular checks: more than the {MAX_CHECKS} that the false-alarm budget "
                           "(sims.security.false_alarms) is split over")
    return {"checks": len(regular), "passed": len(regular) - len(failed), "failed": failed,
            "controls": len(controls), "controls_caught": len(controls) - len(missed), "controls_missed": missed,
            "false_alarm_rate": {"family": FAMILY_ALPHA, "per_check": CHECK_ALPHA, "split_over": MAX_CHECKS,
                                 "note": "P(a run fails any regular check while every claim holds) <= family "
                                         "(Bonferroni; sims/security/false_alarms.py)"},
            "verdict": "ok" if not failed and not missed else "problems found"}


def markdown(report: dict) -> str:
    s = report["summary"]
    lines = [f"# mpc-auc security evaluation ({report['config']['suite']} suite)", "",
             f"Version {report['version']}, seed {report['seed']}, {report['machine']['platform']}, "
             f"{report['seconds']:.0f} s.", "",
             f"**Verdict: {s['verdict']}.** {s['passed']} of {s['checks']} checks passed; "
             f"{s['controls_caught']} of {s['controls']} deliberately weakened controls were caught "
             "(a control must fail its check). Family-wise false-alarm rate at most "
             f"{s['false_alarm_rate']['family']:g} per run ({s['false_alarm_rate']['per_check']:g} per check).", ""]
    for name in s["failed"]:
        lines.append(f"* FAILED: {name}")
    for name in s["controls_missed"]:
        lines.append(f"* CONTROL NOT CAUGHT: {name}")
    lines += ["", "| check | kind | claimed eps | measured | bound | result |", "|---|---|---|---|---|---|"]
    for c in report["checks"]:
        verdict = ("caught" if not c["passed"] else "NOT caught") if c["kind"] == "control" else (
            "pass" if c["passed"] else "FAIL")
        claimed = "" if c["claimed_epsilon"] is None else f"{c['claimed_epsilon']:g}"
        lines.append(f"| {c['name']} | {c['kind']} | {claimed} | {_fmt(c['measured'])} | {_fmt(c['bound'])} | "
                     f"{verdict} |")
    lines += ["", "Tables: checks.csv, label_inference.csv, top_k.csv; plots: label_inference.png/pdf, "
                  "top_k.png/pdf. Method: docs/security-evaluation.md.", ""]
    return "\n".join(lines)


def _fmt(value) -> str:
    return "" if value is None else f"{value:.4g}"


def _plot_inference(path: str, rows: list, cfg: dict) -> None:
    epsilons = cfg["inference_epsilons"]

    def draw(ax):
        grid = np.geomspace(min(epsilons), max(epsilons), 100)
        ax.plot(grid, [sc.inference_bound(e) for e in grid], "k-", lw=2, label="bound e^eps/(1+e^eps)")
        ax.plot(grid, [sc.inference_bound(e, GAUSS_DELTA) for e in grid], "k:", lw=1,
                label=f"(eps, delta) bound, delta={GAUSS_DELTA:g}")
        for i, name in enumerate(INFERENCE_MECHANISMS):
            points = [(r["epsilon"], r["accuracy"], r["accuracy_lo"], r["accuracy_hi"]) for r in rows
                      if r["protocol"] == name]
            eps, accuracy, lo, hi = zip(*points)
            ax.plot(eps, accuracy, label=name, alpha=0.85, **dict(style(i), linestyle="--"))
            ax.fill_between(eps, lo, hi, color=style(i)["color"], alpha=0.15, linewidth=0)
        ax.set(xscale="log", xlabel="epsilon", ylabel="attack accuracy (one label, K = M)",
               title=f"Label inference by the likelihood-ratio attacker: M = K = {cfg['inference_m']:,} clients, "
                     f"{cfg['inference_draws']} releases per point;\nGaussian rows at delta = {GAUSS_DELTA:g}; "
                     "shaded: 95% Clopper-Pearson interval")
        epsilon_ticks(ax, epsilons)

    figure(path, draw)


def _plot_top_k(path: str, rows: list, cfg: dict) -> None:
    def draw(ax):
        for i, view in enumerate(dict.fromkeys(r["exposure"] for r in rows)):
            points = [(r["K"], r["precision"], r["precision_lo"], r["precision_hi"]) for r in rows
                      if r["exposure"] == view]
            k, precision, lo, hi = zip(*points)
            ax.plot(k, precision, label=view, **style(i))
            ax.fill_between(k, lo, hi, color=style(i)["color"], alpha=0.15, linewidth=0)
        ax.axhline(rows[0]["base_rate"], color="k", lw=1, linestyle=":", label="base rate P/M")
        ax.set(xscale="log", xlabel="K", ylabel="precision of 'top K are positives'",
               title=f"Top-K score attack (dpauc Table 2): M = {cfg['top_k_m']:,} Criteo-shaped rows, MPC rows at "
                     f"epsilon = {cfg['epsilon']:g} (delta: the circuit's);\nshaded: 95% Clopper-Pearson interval")

    figure(path, draw)
