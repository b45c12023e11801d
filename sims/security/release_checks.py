"""The steps of ``mpc-auc security`` (sims.security.suite) on what is released: the DP audits and their
controls, label inference, attacks on released AUCs and counts, an organiser's evaluations on the same people and
the crafted-model attack on Flower rounds, and the top-K score attack; each turns the measurements of
sims.security.checks (and person_ledger, flower_oracle) into check records (sims.security.report.check).
"""
import math
import os
import tempfile

from ...synthetic import synthetic_evalset
from . import flower_oracle, person_ledger
from . import checks as sc
from .dp_audit import clopper_pearson
from .false_alarms import Z_ONE_SIDED
from .report import check

INFERENCE_MECHANISMS = ("fedauc-vanilla", "fedauc-rr", "fedauc-lap-local", "fedauc-lap-global",
                        "fedauc-gauss-local", "mpc-central")
GAUSS_DELTA = 1e-5


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
                                               "mpc-central for label DP", "M": 200, "targets": 100},
              pass_if="recorded"),
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
                              "note": "budget 1, epsilon 1 per release: the epsilon released on c0's rows"},
                             chance=False))
            os.makedirs(os.path.join(directory, f"{kind}-exact"))
            exact = person_ledger.exact_sequences(os.path.join(directory, f"{kind}-exact"), charge)
            read = sum(e["labels_read"] for e in exact.values())
            out.append(check(f"sequences of exact evaluations on the same clients ({what})", kind, "mpc-exact",
                             None, None, read, 0, read == 0, {"sequences": exact, "note": "labels read"}, chance=False))
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
