"""``mpc-auc security``: the security evaluation as one command, writing a report a paper can use.

Suites: ``quick`` (minutes on 2 cores) and ``full`` (more draws, larger
sets).  A YAML ``--config`` may override any suite parameter (the keys of
SUITES) and set ``seed``.  Output in ``--out DIR``: ``report.json`` (strict
JSON: checks, version, config, seed, machine), ``report.md``, the tables
``checks.csv``, ``label_inference.csv``, ``top_k.csv``, and the plots
``label_inference.{png,pdf}`` and ``top_k.{png,pdf}``.

This module holds the suites' parameters, the steps in the order they run and the files they write; the steps
live in ``view_checks`` (transcripts), ``collusion_checks`` (coalitions, the network observer, the dealer's
keys) and ``release_checks`` (DP audits and attacks on what is released), the check record and the verdict in
``report``.
"""
import os
import secrets
import time

import numpy as np

from ...protocols.errors import InputError
from ...protocols.validation import checked
from ...results import provenance, strict, write_csv, write_json, write_text
from ...version import __version__
from ..config import read_config, write_config
from ..plots import epsilon_ticks, figure, styles
from . import checks as sc
from .collusion_checks import collusion, dealer_keys, network_observer
from .deviating_jobs import job_deviation_checks
from .deviating_party import deviation_checks
from .release_checks import (GAUSS_DELTA, INFERENCE_MECHANISMS, across_evaluations, audits, label_inference,
                             release_attacks, top_k)
from .report import markdown, summary
from .view_checks import (bitonic_views, full_report_views, job_views, malicious_job_views, noise_views, ustat_views,
                          views)

SUITES = {
    "quick": {"epsilon": 1.0, "audit_draws": 200_000, "inference_epsilons": [0.5, 1, 2, 4, 8], "inference_m": 200,
              "inference_draws": 200, "top_k_m": 45_840, "top_k": [10, 100, 1000, 10_000], "seed_bits": 14,
              "dealer_trials": 200, "mpc_audit_draws": 20_000, "view_runs": 150,
              "collusion_m": 500, "ustat_view_pairs": 4096, "bitonic_view_m": 1024, "job_view_runs": 30,
              "job_view_m": 1024, "noise_view_draws": 4096, "observer_m": 512, "deviation_runs": 2, "deviation_jobs": 1,
              "malicious_job_view_runs": 10, "malicious_job_view_m": 256, "malicious_job_view_dtype": "float64"},
    "full": {"epsilon": 1.0, "audit_draws": 2_000_000, "inference_epsilons": [0.25, 0.5, 1, 2, 4, 8],
             "inference_m": 1000, "inference_draws": 1000, "top_k_m": 458_407, "top_k": [10, 100, 1000, 10_000],
             "seed_bits": 16, "dealer_trials": 1000, "mpc_audit_draws": 200_000, "view_runs": 1000,
             "collusion_m": 45_840, "ustat_view_pairs": 65_536, "bitonic_view_m": 4096, "job_view_runs": 150,
             "job_view_m": 4096, "noise_view_draws": 65_536, "observer_m": 4096, "deviation_runs": 20, "deviation_jobs": 5,
             "malicious_job_view_runs": 30, "malicious_job_view_m": 1024, "malicious_job_view_dtype": "float64"},
}


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
                        ("views of whole full-report jobs (the metrics side by side)", full_report_views),
                        ("views of whole mpc-exact --ranks jobs under --security malicious", malicious_job_views),
                        ("views of mpc-central's noise gadgets", noise_views), ("views of ustat-2pc", ustat_views),
                        ("collusion", collusion), ("the network observer", network_observer),
                        ("DP audits and their controls", audits), ("label inference", label_inference),
                        ("attacks on released AUCs and counts", release_attacks),
                        ("privacy across evaluations", across_evaluations), ("top-K score attack", top_k),
                        ("dealer keys and the stock-CrypTen control", dealer_keys),
                        ("a deviating compute party (the authenticated sort)", deviation_checks),
                        ("a deviating compute party (whole jobs under --security malicious)", job_deviation_checks)):
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


def _plot_inference(path: str, rows: list, cfg: dict) -> None:
    epsilons = cfg["inference_epsilons"]

    def draw(ax):
        grid = np.geomspace(min(epsilons), max(epsilons), 100)
        ax.plot(grid, [sc.inference_bound(e) for e in grid], "k-", lw=2, label="bound e^eps/(1+e^eps)")
        ax.plot(grid, [sc.inference_bound(e, GAUSS_DELTA) for e in grid], "k:", lw=1,
                label=f"(eps, delta) bound, delta={GAUSS_DELTA:g}")
        for name, look in styles(INFERENCE_MECHANISMS).items():
            points = [(r["epsilon"], r["accuracy"], r["accuracy_lo"], r["accuracy_hi"]) for r in rows
                      if r["protocol"] == name]
            eps, accuracy, lo, hi = zip(*points)
            ax.plot(eps, accuracy, label=name, alpha=0.85, **dict(look, linestyle="--"))
            ax.fill_between(eps, lo, hi, color=look["color"], alpha=0.15, linewidth=0)
        ax.set(xscale="log", xlabel="epsilon", ylabel="attack accuracy (one label, K = M)",
               title=f"Label inference by the likelihood-ratio attacker: M = K = {cfg['inference_m']:,} clients, "
                     f"{cfg['inference_draws']} releases per point;\nGaussian rows at delta = {GAUSS_DELTA:g}; "
                     "shaded: 95% Clopper-Pearson interval")
        epsilon_ticks(ax, epsilons)

    figure(path, draw)


def _plot_top_k(path: str, rows: list, cfg: dict) -> None:
    def draw(ax):
        for view, look in styles(r["exposure"] for r in rows).items():
            points = [(r["K"], r["precision"], r["precision_lo"], r["precision_hi"]) for r in rows
                      if r["exposure"] == view]
            k, precision, lo, hi = zip(*points)
            ax.plot(k, precision, label=view, **look)
            ax.fill_between(k, lo, hi, color=look["color"], alpha=0.15, linewidth=0)
        ax.axhline(rows[0]["base_rate"], color="k", lw=1, linestyle=":", label="base rate P/M")
        ax.set(xscale="log", xlabel="K", ylabel="precision of 'top K are positives'",
               title=f"Top-K score attack (dpauc Table 2): M = {cfg['top_k_m']:,} Criteo-shaped rows, MPC rows at "
                     f"epsilon = {cfg['epsilon']:g} (delta: the circuit's);\nshaded: 95% Clopper-Pearson interval")

    figure(path, draw)
