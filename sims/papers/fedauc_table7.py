"""Reproduction of fedauc Table 7 (std of the AUC over noise draws) on a Criteo-shaped synthetic set.

M = 458,407, P = 117,317 binormal scores with AUC 0.77; clients 10 ... 458,407,
IID (uniform random client per sample) and non-IID (contiguous blocks of the
score order); alpha = 0.5 for the Laplace rows as in the paper.  Prints, per
cell, our std, the paper's, and their ratio, then min / median / max of the
ratio per row.

One more row, ours: mpc-central (label DP, alpha = 0.5), run through the MPC
(P0, P1 and the dealer over TCP, 10 clients) with ``--draws`` independent
in-circuit noise draws per epsilon.  Its released value does not depend on
the client partition (the parties compute the global statistics), so one
run per epsilon fills the row; it is compared with the smallest paper std
of each column (``min paper``) and with its analytic std.  The paper's values are facts quoted from
fedauc Table 7 (docs/references.md).

``mpc-auc table7 [--config FILE.yaml] [flags]`` writes table7.md, table7.csv and table7.json
(strict, with provenance) and config.yaml into ``out``; the Markdown table goes to stdout too.
"""
import os
import secrets
import tempfile
import time

import numpy as np

from ... import progress
from ...protocols.dp import fedauc
from ...protocols.dp.central_law import CentralNoise, analytic_std
from ...protocols.mpc.central import mpc_central_auc
from ...protocols.clear_auc import rank_sum_auc, twice_mid_ranks
from ...protocols.runtime.session import Placement
from ...results import provenance, write_csv, write_json, write_text
from ...synthetic import CRITEO_AUC, CRITEO_M, CRITEO_P, binormal_scores, partition
from ..config import Param, write_config

CLIENTS = (10, 458, 1000, 4584, 45840, 100000, 458407)
EPSILONS = (1.0, 2.0, 4.0, 8.0)
_ = None
PAPER = {  # (row, epsilon) -> std per client count (None: not reported)
    ("RR", 1.0): [2.17e-3] * 7, ("RR", 2.0): [1.02e-3] * 7, ("RR", 4.0): [3.49e-4] * 7, ("RR", 8.0): [4.41e-5] * 7,
    ("GlobalLaplace", 1.0): [1.22e-4, 8.48e-4, 1.24e-3, 2.39e-3, 8.08e-3, 1.24e-2, 2.77e-2],
    ("GlobalLaplace", 2.0): [5.85e-5, 4.15e-4, 5.62e-4, 1.28e-3, 3.95e-3, 5.21e-3, 1.32e-2],
    ("GlobalLaplace", 4.0): [2.92e-5, 2.09e-4, 3.26e-4, 6.58e-4, 1.88e-3, 3.22e-3, 7.02e-3],
    ("GlobalLaplace", 8.0): [1.54e-5, 9.82e-5, 1.53e-4, 3.31e-4, 1.05e-3, 1.58e-3, 2.99e-3],
    ("LocalLaplace (IID)", 1.0): [1.13e-4, 9.64e-4, 1.26e-3, 2.26e-3, 7.39e-3, 1.10e-2, 1.99e-2],
    ("LocalLaplace (IID)", 2.0): [5.74e-5, 4.72e-4, 5.78e-4, 1.21e-3, 4.09e-3, 5.24e-3, 8.86e-3],
    ("LocalLaplace (IID)", 4.0): [3.11e-5, 1.94e-4, 3.00e-4, 5.80e-4, 1.86e-3, 2.40e-3, 4.38e-3],
    ("LocalLaplace (IID)", 8.0): [1.51e-5, 1.06e-4, 1.40e-4, 3.27e-4, 8.52e-4, 1.35e-3, 2.29e-3],
    ("LocalLaplace (Non-IID)", 1.0): [8.98e-5, 5.29e-4, 8.49e-4, 1.86e-3, 5.45e-3, 8.33e-3, 1.81e-2],
    ("LocalLaplace (Non-IID)", 2.0): [4.59e-5, 2.91e-4, 4.93e-4, 9.45e-4, 3.09e-3, 4.38e-3, 9.96e-3],
    ("LocalLaplace (Non-IID)", 4.0): [2.49e-5, 1.48e-4, 2.05e-4, 4.44e-4, 1.53e-3, 2.26e-3, 4.39e-3],
    ("LocalLaplace (Non-IID)", 8.0): [1.06e-5, 6.99e-5, 1.14e-4, 2.19e-4, 7.50e-4, 1.16e-3, 2.22e-3],
    ("adaptive (IID)", 1.0): [5.15e-5, 3.92e-4, _, 1.22e-3, 3.80e-3, _, _],
    ("adaptive (IID)", 2.0): [2.60e-5, 1.84e-4, _, 6.48e-4, 1.66e-3, _, _],
    ("adaptive (IID)", 4.0): [1.36e-5, 8.20e-5, _, 2.87e-4, 9.08e-4, _, _],
    ("adaptive (IID)", 8.0): [7.01e-6, 4.55e-5, _, 1.37e-4, 4.61e-4, _, _],
    ("adaptive (non-IID)", 1.0): [2.93e-5, 1.22e-4, _, 3.92e-4, 1.03e-3, _, _],
    ("adaptive (non-IID)", 2.0): [1.59e-5, 6.01e-5, _, 1.52e-4, 5.54e-4, _, _],
    ("adaptive (non-IID)", 4.0): [7.80e-6, 2.81e-5, _, 8.72e-5, 2.77e-4, _, _],
    ("adaptive (non-IID)", 8.0): [3.89e-6, 1.36e-5, _, 4.34e-5, 1.38e-4, _, _],
}
ROWS = {  # row -> (partition scheme, statistics function)
    "GlobalLaplace": ("iid", lambda r, e, n, g: fedauc.laplace_statistics(r, e, n, g, "global", 0.5)),
    "LocalLaplace (IID)": ("iid", lambda r, e, n, g: fedauc.laplace_statistics(r, e, n, g, "local", 0.5)),
    "LocalLaplace (Non-IID)": ("non-iid", lambda r, e, n, g: fedauc.laplace_statistics(r, e, n, g, "local", 0.5)),
    "adaptive (IID)": ("iid", fedauc.adaptive_statistics),
    "adaptive (non-IID)": ("non-iid", fedauc.adaptive_statistics),
}


PARAMS = (
    Param("out", str, "results/table7", "directory for the results (created)"),
    Param("draws", int, 100, "noise draws per cell", lambda v: None if v >= 2 else "must be >= 2"),
    Param("seed", int, None, "seed of the synthetic set and the simulated noise (none: drawn and recorded)"),
    Param("central", bool, True, "also run the mpc-central row through the MPC (P0, P1, dealer over TCP)"),
)


def table(draws: int, seed: int, central: bool = True) -> list:
    """One row per (mechanism, epsilon, client count): our std over ``draws``, the paper's, their ratio."""
    rng = fedauc.generator(seed)
    scores, labels = binormal_scores(CRITEO_M, CRITEO_P, CRITEO_AUC, rng)
    ranks = twice_mid_ranks(scores) / 2
    cells = [(row, eps) for eps in EPSILONS for row in ["RR", *ROWS]]
    rows = []
    for row, eps in progress.bar(cells, desc="table 7", unit="row"):
        if row == "RR":
            whole = fedauc.RankedClients(np.zeros(CRITEO_M, dtype=np.int64), ranks, labels, 1, "clear sort")
            rr = fedauc.randomized_response_auc(whole, eps, draws, rng).auc.std(ddof=1)
            stds = [rr] * len(CLIENTS)
        else:
            scheme, mechanism = ROWS[row]
            stds = []
            for k, paper in zip(CLIENTS, PAPER[(row, eps)]):
                if paper is None:
                    stds.append(None)
                    continue
                owner = partition(CRITEO_M, k, scheme, rng, scores)
                ranked = fedauc.RankedClients(owner, ranks, labels, int(owner.max()) + 1, "clear sort")
                stds.append(fedauc.statistics_auc(mechanism(ranked, eps, draws, rng)).std(ddof=1))
        for k, ours, paper in zip(CLIENTS, stds, PAPER[(row, eps)]):
            if ours is not None and paper is not None:
                rows.append({"row": row, "epsilon": eps, "clients": k, "std": float(ours), "paper_std": paper,
                             "ratio": float(ours) / paper, "analytic_std": None, "draws": draws})
    if central:
        rows += _central_rows(scores, labels, draws)
    return rows


def _central_rows(scores, labels, draws) -> list:
    """mpc-central through the MPC, one session, one job per epsilon; ratio to the best paper std per column."""
    clients = [(f"client{c}", scores[c::10], labels[c::10]) for c in range(10)]
    auc = rank_sum_auc(scores, labels)
    rows = []
    for eps in progress.bar(EPSILONS, desc="table 7: mpc-central", unit="eps"):
        noise = CentralNoise(eps, repetitions=draws)
        with tempfile.TemporaryDirectory() as ledger:  # repeated draws on synthetic data: not the user's ledger
            release = mpc_central_auc([clients], noise, placement=Placement(ledger=ledger), timeout_s=300)[0]
        std = float(np.std(release.aucs, ddof=1))
        for i, k in enumerate(CLIENTS):
            best = min(v[i] for (row, e), v in PAPER.items() if e == eps and v[i] is not None)
            rows.append({"row": "mpc-central (ours, vs best paper row)", "epsilon": eps, "clients": k, "std": std,
                         "paper_std": best, "ratio": std / best,
                         "analytic_std": analytic_std(CRITEO_M, CRITEO_P, auc, noise), "draws": draws})
    return rows


def summary(rows) -> dict:
    """Per row: min / median / max of ours / paper."""
    out = {}
    for name in dict.fromkeys(r["row"] for r in rows):
        ratios = [r["ratio"] for r in rows if r["row"] == name]
        out[name] = {"min": min(ratios), "median": float(np.median(ratios)), "max": max(ratios)}
    return out


def markdown(rows, seconds: float, draws: int, seed: int) -> str:
    lines = ["| row | eps | " + " | ".join(f"K={k:,}" for k in CLIENTS) + " |", "|---|---|" + "---|" * len(CLIENTS)]
    for name in dict.fromkeys(r["row"] for r in rows):
        for eps in EPSILONS:
            cell = {r["clients"]: r for r in rows if r["row"] == name and r["epsilon"] == eps}
            if cell:
                lines.append(f"| {name} | {eps:g} | " + " | ".join(
                    f"{cell[k]['std']:.2e} / {cell[k]['paper_std']:.2e} ({cell[k]['ratio']:.2f})" if k in cell else ""
                    for k in CLIENTS) + " |")
    lines += ["", "Cells: our std / the paper's (ratio). mpc-central: its std against the smallest paper std of the "
                  "column; analytic std in table7.csv.", "", "ratio ours / paper per row: min / median / max"]
    lines += [f"* {name}: {s['min']:.2f} / {s['median']:.2f} / {s['max']:.2f}" for name, s in summary(rows).items()]
    lines.append(f"\n{draws} draws per cell, seed {seed}, {seconds:.0f} s")
    return "\n".join(lines) + "\n"


def run(cfg: dict, arguments: dict = None) -> dict:
    """The reproduction of ``cfg`` (resolved :data:`PARAMS`): files written into cfg["out"], the result returned."""
    cfg = dict(cfg, seed=secrets.randbits(63) if cfg["seed"] is None else cfg["seed"])
    start = time.perf_counter()
    rows = table(cfg["draws"], cfg["seed"], cfg["central"])
    seconds = time.perf_counter() - start
    result = {"rows": rows, "summary": summary(rows), "m": CRITEO_M, "positives": CRITEO_P, "auc": CRITEO_AUC,
              "seconds": seconds, "provenance": provenance(arguments or cfg, cfg["seed"])}
    os.makedirs(cfg["out"], exist_ok=True)
    write_config(os.path.join(cfg["out"], "config.yaml"), cfg)
    write_csv(os.path.join(cfg["out"], "table7.csv"), rows)
    write_json(os.path.join(cfg["out"], "table7.json"), result)
    result["markdown"] = markdown(rows, seconds, cfg["draws"], cfg["seed"])
    write_text(os.path.join(cfg["out"], "table7.md"), result["markdown"])
    return result
