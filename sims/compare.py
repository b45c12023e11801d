"""Compare the plain-DP AUC mechanisms on one evaluation set over an epsilon grid.

``mpc-auc compare [--config FILE.yaml] [flags]`` writes, into ``out``: compare.json (strict JSON:
rows, exact AUC, shape and provenance), compare.csv (per protocol and epsilon: mean, std, bias,
RMSE and its 95% bootstrap interval over the draws, runtime, the budget accounting and what the
server received), rmse.png and rmse.pdf (RMSE against epsilon, shaded intervals) and config.yaml
(the effective parameters).  The same table is :func:`mpc_auc.compare` as a DataFrame.
"""
import os
import secrets
import time

import numpy as np

from .. import progress
from ..experiment_config import Param, all_positive, positive, probability, write_config
from ..protocols.clear_auc import rank_sum_auc
from ..protocols.dp.dp_suite import MECHANISMS, Budget, evaluate
from ..protocols.dp.fedauc import generator
from ..results import provenance, write_csv, write_json
from ..synthetic import CRITEO_M
from .plots import error_lines, mean_interval

FIELDS = ("protocol", "epsilon", "delta", "mean", "std", "bias", "rmse", "rmse_lo", "rmse_hi", "draws", "seconds",
          "accounting", "server_received")
PARAMS = (
    Param("out", str, "results/compare", "directory for the results (created)"),
    Param("input", str, None, "client,score,label file (CSV, TSV, gzip or Parquet); none: a synthetic "
                              "Criteo-shaped set"),
    Param("sep", str, None, "input: the field separator (default: a tab if the header has one, else a comma)"),
    Param("positive_label", str, None, "input: the label value that is positive when labels are not 0/1, e.g. "
                                       "True or +1 (quote it in YAML)"),
    Param("score_range", list, [0.0, 1.0], "the public range LO HI every score lies in (checked); the mechanisms "
                                           "that perturb or bin score values see them mapped to [0, 1]",
          lambda v: None if len(v) == 2 and v[0] < v[1] else "must be two numbers LO < HI"),
    Param("m", int, CRITEO_M, "synthetic set: rows", positive),
    Param("clients", int, 100, "synthetic set: clients", positive),
    Param("partition", str, "iid", "synthetic set: how rows are spread over clients", choices=("iid", "non-iid")),
    Param("protocols", list, list(MECHANISMS), "mechanisms to compare", item=str, choices=tuple(MECHANISMS)),
    Param("epsilons", list, [0.5, 1.0, 2.0, 4.0, 8.0], "the epsilon grid", all_positive),
    Param("delta", float, 1e-6, "delta of the (epsilon, delta) mechanisms", probability),
    Param("draws", int, 100, "noise draws per protocol and epsilon", lambda v: None if v >= 2 else "must be >= 2"),
    Param("seed", int, None, "seed of the simulated noise and the synthetic set (none: drawn and recorded)"),
)


def unit_scores(clients, score_range) -> list:
    """The clients' scores mapped from the public [lo, hi] to [0, 1] by (s - lo) / (hi - lo).

    The map keeps the order, so the AUC is unchanged, and a mechanism whose sensitivity is 1 on [0, 1]
    scores (DP on scores, condensed LDP's grid, dpauc's thresholds) is then calibrated to the declared
    range.  Scores closer than float64 resolution after the map could tie; [0, 1] maps to itself.
    """
    lo, hi = (float(v) for v in score_range)
    if (lo, hi) == (0.0, 1.0):
        return list(clients)
    return [(c, (np.asarray(s, dtype=np.float64) - lo) / (hi - lo), y) for c, s, y in clients]


def compare(clients, protocols, epsilons, delta, draws, seed, score_range=(0.0, 1.0)) -> tuple:
    """Rows of the comparison (one per protocol and epsilon; fedauc-vanilla once, exact) and the exact AUC.

    ``clients``: [(client id, scores, labels)], scores in the public ``score_range`` (checked by the
    caller; the mechanisms see them through :func:`unit_scores`).  RMSE is against the exact AUC
    over ``draws`` releases; its interval is the percentile bootstrap of the mean squared error,
    square-rooted.
    """
    scores = np.concatenate([np.asarray(s, dtype=np.float64) for _, s, _ in clients])
    labels = np.concatenate([np.asarray(y) for _, _, y in clients])
    truth = rank_sum_auc(scores, labels)
    clients = unit_scores(clients, score_range)
    resample = generator(seed)
    cells = [(name, eps) for name in protocols for eps in ([np.inf] if name == "fedauc-vanilla" else epsilons)]
    rows = []
    for name, eps in progress.bar(cells, desc="compare", unit="cell"):
        release = evaluate(name, clients, Budget(eps, delta), draws, resample.integers(2**63))
        error = release.auc - truth
        lo, hi = mean_interval(error ** 2, resample)
        rows.append({"protocol": name, "epsilon": release.epsilon, "delta": release.delta,
                     "mean": float(release.auc.mean()), "std": float(release.auc.std(ddof=1)),
                     "bias": float(error.mean()), "rmse": float(np.sqrt((error ** 2).mean())),
                     "rmse_lo": float(np.sqrt(lo)), "rmse_hi": float(np.sqrt(hi)), "draws": draws,
                     "seconds": release.seconds, "accounting": release.accounting,
                     "server_received": release.server_received})
        progress.detail(f"{name:22s} eps={eps:<5g} rmse={rows[-1]['rmse']:.2e}")
    return rows, truth


def plot(rows, stem: str, title: str) -> None:
    error_lines(stem, [("", rows)], "rmse", "RMSE of the AUC",
                "epsilon (label DP; score-dp: LDP per score; score-cldp: alpha per grid step)", title)


def _evaluation_clients(cfg: dict):
    from ..csv_io import read_evalset
    from ..protocols.inputs.encoding import ScoreEncoder
    from ..synthetic import synthetic_evalset

    encoder = ScoreEncoder(*cfg["score_range"])
    if cfg["input"]:
        evalset = read_evalset(cfg["input"], encoder, sep=cfg["sep"], positive_label=cfg["positive_label"])
        name = os.path.basename(cfg["input"])
    else:
        evalset = synthetic_evalset(m=cfg["m"], clients=cfg["clients"], scheme=cfg["partition"], seed=cfg["seed"])
        encoder.check(evalset.score)
        name = f"synthetic Criteo-shaped ({cfg['partition']})"
    return evalset.clients(), name


def run(cfg: dict, arguments: dict = None) -> dict:
    """The experiment of ``cfg`` (resolved :data:`PARAMS`): files written into cfg["out"], the result returned."""
    cfg = dict(cfg, seed=secrets.randbits(63) if cfg["seed"] is None else cfg["seed"])
    start = time.perf_counter()
    clients, name = _evaluation_clients(cfg)
    rows, truth = compare(clients, cfg["protocols"], cfg["epsilons"], cfg["delta"], cfg["draws"], cfg["seed"],
                          cfg["score_range"])
    m = sum(len(s) for _, s, _ in clients)
    result = {"exact_auc": truth, "m": m, "clients": len(clients), "draws": cfg["draws"], "rows": rows,
              "seconds": time.perf_counter() - start, "provenance": provenance(arguments or cfg, cfg["seed"])}
    os.makedirs(cfg["out"], exist_ok=True)
    write_config(os.path.join(cfg["out"], "config.yaml"), cfg)
    write_csv(os.path.join(cfg["out"], "compare.csv"), [{k: r[k] for k in FIELDS} for r in rows])
    write_json(os.path.join(cfg["out"], "compare.json"), result)
    plot(rows, os.path.join(cfg["out"], "rmse"),
         f"{name}: M = {m:,}, {len(clients)} clients, AUC {truth:.4f}; delta = {cfg['delta']:g} for the "
         f"(eps, delta) mechanisms; {cfg['draws']} draws per point, shaded: 95% bootstrap interval of the RMSE"
         + ("; fedauc-vanilla is exact (RMSE 0) and not drawn" if "fedauc-vanilla" in cfg["protocols"] else ""))
    return result

