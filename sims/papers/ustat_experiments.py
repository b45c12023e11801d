"""MSE against epsilon for the U-statistic protocols of ustats (§3, §4, §5, §6) on synthetic data.

Panels: the App. D.1 AUC sets (auc_one, uniform, ith_digit; --n per class,
classes public) and Kendall's tau on correlated 1-5 ratings
(--kendall-n users, TripAdvisor-sized).  Protocols:

* ustat-2pc with k = 1, 2, 5 (AUC: randomized response at eps/k, Kendall:
  discrete Laplace of scale k/eps), the 2PC replaced by the clear kernel
  and the circuit's exact noise law (protocols.ustat.two_party.simulate; the
  MPC run itself is checked against the same formula by
  tests/protocols/ustat/test_two_party.py);
* all-pairs 2PC (delta = 1e-6), accounted with the best of basic, advanced
  and dp-accounting's PLD composition, and dashed beside it the paper's
  advanced composition alone (the noise the paper's accounting needs);
* the quantized LDP protocol (Alg. 1; Kendall: 25-ary RR, no quantization);
* the hierarchical-histogram AUC (§4; AUC panels only).

The MSE is against the sample's own statistic (fixed data per panel),
over ``draws`` runs of each protocol, with its 95% bootstrap interval.
``mpc-auc ustat-experiment [--config FILE.yaml] [flags]`` writes mse.csv,
mse.json (strict, with provenance and the findings), mse.png, mse.pdf and
config.yaml into ``out`` and prints, per panel and epsilon <= 1, the ratio of
the best LDP protocol's MSE to the best 2PC-subsampling MSE.
"""
import os
import secrets
import time

import numpy as np

from ... import progress
from ...protocols.ustat.auc_hh import hierarchical_auc
from ...protocols.dp.fedauc import generator
from ...protocols.ustat.two_party import Sample, simulate
from ...protocols.ustat.baselines import ACCOUNTANTS, all_pairs, all_pairs_variance, complete_ustat, quantized_ldp
from ...results import provenance, write_csv, write_json
from ...protocols.dp.grid import mean_interval
from ..config import Param, all_positive, positive, write_config
from ..plots import error_lines
from . import ustat_data

EPSILONS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
KS = (1, 2, 5)
LDP = ("quantized-ldp", "hierarchical-histogram")
PAPER_ACCOUNTING = "all-pairs 2pc (advanced only)"
PARAMS = (
    Param("out", str, "results/ustat", "directory for the results (created)"),
    Param("n", int, 10_000, "users per class in the AUC panels", positive),
    Param("kendall_n", int, 250_000, "users of the Kendall panel", lambda v: None if v >= 2 else "must be >= 2"),
    Param("draws", int, 50, "runs of each protocol per epsilon", lambda v: None if v >= 2 else "must be >= 2"),
    Param("epsilons", list, list(EPSILONS), "the epsilon grid (per user)", all_positive),
    Param("seed", int, None, "seed of the data and the simulated noise (none: drawn and recorded)"),
)


def panels(n: int, kendall_n: int, rng) -> dict:
    pop = ustat_data.ratings()
    return {"auc_one": ("auc", Sample(*ustat_data.auc_one(n))),
            "uniform": ("auc", Sample(*ustat_data.uniform(n, rng))),
            "ith_digit (i=10)": ("auc", Sample(*ustat_data.ith_digit(n, 10))),
            "kendall (ratings)": ("kendall", Sample(pop.sample(kendall_n, rng)))}


def protocols(kernel: str) -> dict:
    out = {f"ustat-2pc k={k}": (lambda s, e, r, k=k: simulate(kernel, s, e, k, r)) for k in KS}
    out["all-pairs 2pc"] = lambda s, e, r: all_pairs(kernel, s, e, r)
    out[PAPER_ACCOUNTING] = lambda s, e, r: all_pairs(kernel, s, e, r, accountants=("advanced",))
    out["quantized-ldp"] = lambda s, e, r: quantized_ldp(kernel, s, e, r)
    if kernel == "auc":
        out["hierarchical-histogram"] = lambda s, e, r: hierarchical_auc(s.values, s.labels, e, r)
    return out


def run_grid(n, kendall_n, epsilons, draws, seed) -> tuple:
    """The MSE rows, and the panels' (kernel, sample)."""
    rng = generator(seed)
    rows = []
    samples = panels(n, kendall_n, rng)
    cells = [(panel, kernel, sample, name, protocol, eps) for panel, (kernel, sample) in
             samples.items() for name, protocol in protocols(kernel).items() for eps in epsilons]
    truths = {}
    for panel, kernel, sample, name, protocol, eps in progress.bar(cells, desc="ustat experiment", unit="cell"):
        truth = truths.setdefault(panel, complete_ustat(kernel, sample))
        start = time.perf_counter()
        est = np.array([protocol(sample, eps, rng) for _ in range(draws)])
        lo, hi = mean_interval((est - truth) ** 2, rng)
        rows.append({"panel": panel, "protocol": name, "epsilon": eps, "truth": truth,
                     "mse": float(np.mean((est - truth) ** 2)), "mse_lo": lo, "mse_hi": hi,
                     "bias": float(est.mean() - truth), "draws": draws,
                     "seconds_per_run": (time.perf_counter() - start) / draws})
        progress.detail(f"{panel:18s} {name:30s} eps={eps:<5g} mse={rows[-1]['mse']:.2e}")
    return rows, samples


def finding(rows, epsilons) -> list:
    """Per panel and eps <= 1: (panel, eps, best 2PC-subsampling MSE, best LDP MSE, ratio LDP / 2PC)."""
    out = []
    for panel in dict.fromkeys(r["panel"] for r in rows):
        for eps in (e for e in epsilons if e <= 1):
            cell = [r for r in rows if r["panel"] == panel and r["epsilon"] == eps]
            two_pc = min(r["mse"] for r in cell if r["protocol"].startswith("ustat-2pc"))
            others = [r["mse"] for r in cell if not r["protocol"].startswith("ustat-2pc")
                      and r["protocol"] != PAPER_ACCOUNTING]
            ldp = min(r["mse"] for r in cell if r["protocol"] in LDP)
            out.append((panel, eps, two_pc, ldp, ldp / two_pc, two_pc < min(others)))
    return out


def accounting_change(rows, samples: dict) -> list:
    """Per panel and epsilon: the all-pairs MSE under the paper's advanced composition and under the best
    accountant, measured over the draws and exact (the release's variance), and their ratios."""
    out = []
    for panel in dict.fromkeys(r["panel"] for r in rows):
        kernel, sample = samples[panel]
        for eps in dict.fromkeys(r["epsilon"] for r in rows):
            cell = {r["protocol"]: r["mse"] for r in rows if r["panel"] == panel and r["epsilon"] == eps}
            exact = [all_pairs_variance(kernel, sample, eps, accountants=a) for a in (("advanced",), ACCOUNTANTS)]
            out.append({"panel": panel, "epsilon": eps, "advanced_mse": cell[PAPER_ACCOUNTING],
                        "best_mse": cell["all-pairs 2pc"], "ratio": cell[PAPER_ACCOUNTING] / cell["all-pairs 2pc"],
                        "advanced_exact": exact[0], "best_exact": exact[1], "exact_ratio": exact[0] / exact[1]})
    return out


def plot(rows, stem: str, title: str) -> None:
    panels = [(p, [r for r in rows if r["panel"] == p]) for p in dict.fromkeys(r["panel"] for r in rows)]
    error_lines(stem, panels, "mse", "MSE", "epsilon (per user)", title, grid=(2, 2), size=(11, 8),
                dashed=LDP + (PAPER_ACCOUNTING,))


def markdown(findings, change) -> str:
    lines = ["| panel | eps | best ustat-2pc MSE | best LDP MSE | LDP / 2PC | 2PC lowest of all |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {panel} | {eps:g} | {two_pc:.2e} | {ldp:.2e} | {ratio:.0f}x | {'yes' if lowest else 'NO'} |"
              for panel, eps, two_pc, ldp, ratio, lowest in findings]
    lines += ["", "All-pairs MSE: the paper's advanced composition alone vs the best of basic, advanced and PLD "
                  "(measured over the draws; exact: the release's variance)", "",
              "| panel | eps | advanced, measured | best, measured | ratio | advanced, exact | best, exact | ratio |",
              "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {c['panel']} | {c['epsilon']:g} | {c['advanced_mse']:.2e} | {c['best_mse']:.2e} | "
              f"{c['ratio']:.2f} | {c['advanced_exact']:.2e} | {c['best_exact']:.2e} | {c['exact_ratio']:.2f} |"
              for c in change]
    return "\n".join(lines) + "\n"


def run(cfg: dict, arguments: dict = None) -> dict:
    """The experiment of ``cfg`` (resolved :data:`PARAMS`): files written into cfg["out"], the result returned."""
    cfg = dict(cfg, seed=secrets.randbits(63) if cfg["seed"] is None else cfg["seed"])
    start = time.perf_counter()
    rows, samples = run_grid(cfg["n"], cfg["kendall_n"], cfg["epsilons"], cfg["draws"], cfg["seed"])
    findings, change = finding(rows, cfg["epsilons"]), accounting_change(rows, samples)
    result = {"rows": rows, "ldp_over_2pc": [dict(zip(("panel", "epsilon", "best_2pc_mse", "best_ldp_mse", "ratio",
                                                       "two_pc_lowest"), f)) for f in findings],
              "all_pairs_accounting": change, "seconds": time.perf_counter() - start,
              "provenance": provenance(arguments or cfg, cfg["seed"])}
    os.makedirs(cfg["out"], exist_ok=True)
    write_config(os.path.join(cfg["out"], "config.yaml"), cfg)
    write_csv(os.path.join(cfg["out"], "mse.csv"), rows)
    write_json(os.path.join(cfg["out"], "mse.json"), result)
    plot(rows, os.path.join(cfg["out"], "mse"),
         f"U-statistics: MSE against the sample's statistic over {cfg['draws']} draws (shaded: 95% bootstrap "
         f"interval); AUC panels n = {cfg['n']:,} per class, Kendall n = {cfg['kendall_n']:,}; all-pairs "
         f"delta = 1e-6")
    result["markdown"] = markdown(findings, change)
    return result
