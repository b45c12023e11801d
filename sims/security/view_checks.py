"""The view steps of ``mpc-auc security`` (sims.security.suite): what each compute party receives in the radix
sort, the bitonic sort, ustat-2pc, whole mpc-central and mpc-exact --ranks jobs (semi-honest and under security with
abort) and mpc-central's noise gadgets, each against a deliberately leaky control; the recording parties are
sims.security.view_parties, the tests view_distributions and view_leaks, the records sims.security.report.check.
"""
import tempfile

import numpy as np

from ...protocols.dp.central_law import CentralNoise
from ...protocols.inputs.encoding import KEY_OFFSET, PAD_KEY, ScoreEncoder
from ...protocols.inputs.sharing import split
from ...protocols.mpc.exact import exact_result
from ...protocols.mpc.ranking_job import run_ranking_jobs, simulated
from ...protocols.release_spec import ReleaseSpec
from ...protocols.runtime.session import Placement, run_parties
from .false_alarms import CHECK_ALPHA
from .report import check
from .view_distributions import as_runs, homogeneity, p_values
from .view_leaks import (aligned, bitonic_layers, bitonic_secrets, bitonic_tests, flagged, job_secrets, leaks,
                         ustat_secrets)
from .view_parties import (VIEW_BITS, VIEW_INPUTS, bitonic_view_party, central_noise_party, leaky_bitonic_view_party,
                           leaky_metrics_party, leaky_noise_party, leaky_recording_party, leaky_ustat_view_party,
                           recording_party, ustat_view_party, view_party)


def views(cfg: dict, rng) -> list:
    """Transcript tests of the radix sort at both parties (sims.security.view_parties), with the open-sigma control."""

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
                              "measured": "smallest chi-square p-value"}, pass_if=">"))
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
                     "bitonic sort (weakened: sims.security.view_parties.leaky_bitonic_view_party)", None, None,
                     len(found), 0, not found, {"carried": sorted({n for _, n in found})}))
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
                     "ustat-2pc (weakened: sims.security.view_parties.leaky_ustat_view_party)", None, None, len(found),
                     0, not found, {"carried": sorted({n for _, n in found})}))
    return out


JOB_A = (np.array([0.9, 0.1, 0.5, 0.3, 0.2, 0.8, 0.6, 0.4]), np.array([1, 1, 1, 0, 0, 0, 0, 1]))  # AUC 0.5
JOB_B = (np.full(8, 0.5), np.array([0, 1, 0, 1, 1, 0, 1, 0]))  # all tied: AUC 0.5; same M, clients, positives
MALICIOUS_JOBS = "mpc-exact --security malicious --ranks --metrics auc,ap,roc,pr --max-fpr 0.4 --points 1"
MALICIOUS_SPEC = ReleaseSpec("auc,ap,roc,pr", 1, max_fpr=0.4, security="malicious")  # AP's, the partial AUC's and
#                    the curves' steps run; the curves' one point (every row flagged: TPR 1, FPR 1, the share of
#                    positives) is the same for any inputs, AUC, floor(AP 2^52) and the partial AUC's integer for these
MALICIOUS_A = (np.arange(1, 9) / 10, np.array([0, 0, 0, 1, 1, 0, 1, 0]))  # distinct scores: AUC 2/3
MALICIOUS_B = (np.array([0.1, 0.1, 0.1, 0.2, 0.4, 0.4, 0.4, 0.6]), np.array([0, 0, 0, 1, 0, 1, 1, 0]))  # a tie group
#     of one class and one of both classes with two tied positives, which the line FPR = 0.4 crosses: the same AUC,
#     floor(AP 2^52) = 2401919801251157 (AP 0.533) and partial AUC's integer 73300775184 (found by a search over
#     every labelling of 8 rows and every tie pattern of up to 5 groups)


FULL_REPORT = "mpc-exact --metrics auc,ap,roc,pr,ks --max-fpr 0.4 --points 1"  # semi-honest, its metrics'
#     circuits side by side (circuits.lockstep: their gates merged into shared rounds) on MALICIOUS_A and _B, whose
#     releases are the same (and their KS, 0.6); DeLong's variance is not among them (0.0489 against 0.0456)
FULL_SPEC = ReleaseSpec("auc,ap,roc,pr,ks", 1, max_fpr=0.4)


def job_views(cfg: dict, rng) -> list:
    """Views of whole jobs through the real party loop: mpc-central, and mpc-exact delivering ranks."""
    return _jobs_views(cfg, rng, (
        ("mpc-central", CentralNoise(cfg["epsilon"]), False, ReleaseSpec(), (JOB_A, JOB_B),
         "opens the labels before the sort", leaky_recording_party),
        ("mpc-exact --ranks", None, True, ReleaseSpec(), (JOB_A, JOB_B), "opens the labels before the sort",
         leaky_recording_party)))


def full_report_views(cfg: dict, rng) -> list:
    """Views of whole mpc-exact jobs with AP, the partial AUC, the curves and KS side by side (:data:`FULL_REPORT`),
    the control a party whose average precision circuit opens the sorted labels with the results."""
    return _jobs_views(cfg, rng, ((FULL_REPORT, None, False, FULL_SPEC, (MALICIOUS_A, MALICIOUS_B),
                                   "opens the sorted labels with the metrics' results (its average precision circuit "
                                   "returns them)", leaky_metrics_party),))


def _jobs_views(cfg: dict, rng, protocols) -> list:
    """:func:`_whole_job_views` of each (protocol, central noise, ranks, spec, the two small inputs, the weakened
    party's mistake, the weakened party) on the same large job's rows."""
    encoder, scores, labels = _job_data(cfg, rng)
    runs = cfg["job_view_runs"]
    secrets_ = job_secrets(encoder.encode(scores), labels)
    out = []
    for protocol, central, ranks, spec, inputs, mistake, weakened in protocols:
        requests = _job_requests(scores, labels, encoder, runs, spec, inputs)
        out += _whole_job_views(protocol, requests, central, ranks, secrets_, runs, mistake, weakened)
    return out


def malicious_job_views(cfg: dict, rng) -> list:
    """Views of whole mpc-exact --ranks jobs under security with abort, opening AP, the partial AUC and the curves at
    one cut (their zero tests, comparisons, partitions, bits and divisions run; the releases are the same for both
    inputs: distinct scores, and tie groups, one of both classes with two tied positives crossed by the partial
    AUC's line), through the real party loop, the key's 2-bit digits and the clients' MAC words among the secrets (the
    MAC words from both parties' shares of the large job's bundles)."""

    encoder, scores, labels = _job_data(cfg, rng, "malicious_job_view_m", cfg["malicious_job_view_dtype"])
    runs = cfg["malicious_job_view_runs"]
    requests = _job_requests(scores, labels, encoder, runs, MALICIOUS_SPEC, (MALICIOUS_A, MALICIOUS_B))
    keys = encoder.encode(scores)
    digits = encoder.key_digits(keys + KEY_OFFSET)
    secrets_ = {**job_secrets(keys, labels), **{f"key digit {t}": digit for t, digit in enumerate(digits)}}
    return _whole_job_views(MALICIOUS_JOBS, requests, None, True, secrets_, runs,
                            "opens the labels and the key's digits (Authenticator.open, unmasked) before the sort",
                            recorded_secrets=_client_mac_words)


def _job_data(cfg: dict, rng, size: str = "job_view_m", dtype: str = "float64") -> tuple:
    """(the encoder of scores in [0, 1] as ``dtype``, the large job's scores and labels: cfg[size] random rows,
    2-decimal scores)."""
    m = cfg[size]
    return ScoreEncoder(dtype=dtype), rng.integers(0, 100, m) / 100, rng.integers(0, 2, m)


def _job_requests(scores, labels, encoder, runs: int, spec, inputs=(JOB_A, JOB_B)) -> list:
    """``runs`` jobs of input A, ``runs`` of input B (``inputs``: 8 rows, 2 clients of 4), then the large job (2
    clients)."""
    m = len(labels)
    halves = [("c0", scores[:m // 2], labels[:m // 2]), ("c1", scores[m // 2:], labels[m // 2:])]
    small = [[(f"c{i}", s[4 * i:4 * i + 4], y[4 * i:4 * i + 4]) for i in range(2)] for s, y in inputs]
    return [simulated(clients, encoder, spec=spec) for clients in [small[0]] * runs + [small[1]] * runs + [halves]]


def _whole_job_views(protocol, requests, central, ranks, secrets_, runs, mistake: str,
                     weakened=leaky_recording_party, recorded_secrets=None) -> list:
    """The checks of one protocol's whole jobs: each party's view (:func:`_job_view`), the weakened party's
    (``weakened``, by default leaky_recording_party: ``mistake``, and with ranks the opened ranks sealed) and, with
    ranks, the rank delivery.  recorded_secrets: more secrets from both parties' records of the large job, and M."""

    m = len(secrets_["labels"])
    with tempfile.TemporaryDirectory(prefix="mpc-auc-view-ledger-") as ledger:
        done = run_ranking_jobs(requests, "radix", ranks, central, Placement(ledger=ledger), 120, None,
                                party=recording_party)
    parties = [done[0].finals[role] for role in ("P0", "P1")]
    if recorded_secrets is not None:
        secrets_ = {**secrets_, **recorded_secrets([jobs[-1] for jobs in parties], m)}
    out = [_job_view(f"view of {role}: {protocol}, every message of its jobs", "view", protocol,
                     [j["received"] for j in jobs], secrets_, runs) for role, jobs in zip(("P0", "P1"), parties)]
    with tempfile.TemporaryDirectory(prefix="mpc-auc-view-ledger-") as ledger:  # the weakened party, once
        (leaky,) = run_ranking_jobs(requests[-1:], "radix", ranks, central, Placement(ledger=ledger), 120,
                                    None, party=weakened)
    weak = leaky.finals["P0"][-1]
    found = leaks(weak["received"], secrets_, m, CHECK_ALPHA)
    out.append(check(f"view of a party that {mistake}: {protocol}", "control", f"{protocol} (weakened party)",
                     None, None, len(found), 0, not found,
                     {"weakened": f"sims.security.view_parties.{weakened.__name__}: the real loop, {mistake}",
                      "carried": sorted({n for _, n in found})}))
    if ranks:
        shares = [jobs[-1]["sealed ranks"][0] for jobs in parties]
        delivered = exact_result(done[-1], "radix").ranks
        for name, sealed, kind in (("P0's rank share", shares[0], "view"), ("P1's rank share", shares[1], "view"),
                                   ("P0 of a party that seals opened ranks", weak["sealed ranks"][0], "control")):
            found = leaks([sealed], secrets_, m, CHECK_ALPHA)
            out.append(check(f"rank delivery: {name} sealed for the clients: {protocol}", kind, protocol, None,
                             None, len(found), 0, not found, {"carried": sorted({n for _, n in found})}))
        wrong = [c for c, part in (("c0", slice(0, m // 2)), ("c1", slice(m // 2, m)))
                 if not np.array_equal(2 * (delivered[c] - 1), secrets_["doubled ranks"][part])]
        out.append(check(f"rank delivery: each client opens exactly its own rows' ranks: {protocol}", "view",
                         protocol, None, None, len(wrong), 0, not wrong, {"clients": 2, "M": m, "wrong": wrong},
                         chance=False))
    return out


def _client_mac_words(large_jobs: list, m: int) -> dict:
    """The clients' MAC words of the large job under security with abort (beta_0 times each value, beta_i times the
    label), each row of M from both parties' shares of the bundles (recording_party's second input share)."""
    words = sum(job["input shares"][1].reshape(-1, m) for job in large_jobs)
    return {f"clients' MAC words, row {i}": row for i, row in enumerate(words)}


def _job_view(name, kind, protocol, received, secrets_, runs) -> dict:
    """Homogeneity of the small jobs' views (input A vs B) and no secret carried in the large job's view."""

    p = homogeneity(as_runs(received[:runs]), as_runs(received[runs:2 * runs]))
    found = leaks(received[-1], secrets_, len(secrets_["labels"]), CHECK_ALPHA / 2)
    limit = CHECK_ALPHA / 2  # two tests: homogeneity and the carry tests
    return check(name, kind, protocol, None, None, p if not found else 0.0, limit, p > limit and not found,
                 {"homogeneity_p": p, "runs_per_input": runs, "carried": sorted({n for _, n in found}),
                  "inputs": "8 rows, 2 clients: distinct scores vs tied ones, every release the same",
                  "messages_of_the_large_job": len(received[-1]), "M_of_the_large_job": len(secrets_["labels"])},
                 pass_if=">")


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
                     "mpc-central (weakened: sims.security.view_parties.leaky_noise_party)", None, None, len(found), 0,
                     not found, {"carried": sorted({n for _, n in found})}))
    return out
