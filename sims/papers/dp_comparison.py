"""Compare the plain-DP AUC mechanisms on one evaluation set over an epsilon grid.

``mpc-auc compare [--config FILE.yaml] [flags]`` writes, into ``out``: compare.json (strict JSON:
rows, exact AUC, shape and provenance), compare.csv (per protocol and epsilon: mean, std, bias,
RMSE and its 95% bootstrap interval over the draws, runtime, the budget accounting and what the
server received), rmse.png and rmse.pdf (RMSE against epsilon, shaded intervals) and config.yaml
(the effective parameters).  The same table is :func:`mpc_auc.compare` as a DataFrame.  With ``curves``
(default), the DP ROC curves too (protocols.dp.curve_grid): curves.csv (per mechanism and epsilon: the mean
|TPR~ - TPR| over an FPR grid with its interval, and the RMSE of the area under the released curve),
curve_error.png/pdf, and curve_example.png/pdf (one DP curve at the grid's middle epsilon beside the
clear curve at the same cuts).
"""
import os
import secrets
import time

import numpy as np

from ... import progress
from ...figures import curves
from ...protocols.clear_metrics import curve_at_cuts
from ...protocols.dp.curve_grid import CURVE_FIELDS, curve_grid
from ...protocols.dp.curve_law import CurveNoise, curve_area, simulate_curves
from ...protocols.dp.fedauc import generator
from ...protocols.dp.grid import unit_scores
from ...csv_io import Columns, read_evalset
from ...protocols.dp.grid import FIELDS, grid
from ...protocols.dp.suite import MECHANISMS
from ...protocols.inputs.encoding import ScoreEncoder
from ...results import provenance, write_csv, write_json
from ...synthetic import CRITEO_M, synthetic_evalset
from ..config import Param, all_positive, positive, probability, write_config
from ..plots import error_lines

PARAMS = (
    Param("out", str, "results/compare", "directory for the results (created)"),
    Param("input", str, None, "a prediction file (CSV-like text, gzip or not, or Parquet) with a client, a score "
                              "and a label per row; none: a synthetic Criteo-shaped set"),
    Param("sep", str, None, "input: the field separator (default: sniffed, the one of , ; tab | that splits the "
                            "header into the columns named)"),
    Param("client_col", str, "client", "input: the column naming each row's client"),
    Param("score_col", str, "score", "input: the score column"),
    Param("label_col", str, "label", "input: the label column"),
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
    Param("curves", bool, True, "also compare the DP ROC curves (mpc-central's tree mechanism against DPAUC's "
                                "threshold ROC) on the same epsilon grid"),
    Param("curve_points", int, 100, "the DP curve's cuts and DPAUC's thresholds", positive),
)


def plot(rows, stem: str, title: str) -> None:
    error_lines(stem, [("", rows)], "rmse", "RMSE of the AUC",
                "epsilon (label DP; score-dp: LDP per score; score-cldp: alpha per grid step)", title)


def _curves(cfg: dict, clients, name: str, m: int) -> list:
    """The DP curve comparison's rows, written as curves.csv with its figures (module docstring)."""
    progress.detail("DP ROC curves: mpc-dp-curve, dpauc-threshold-roc, dpauc-histogram-roc")
    rows = curve_grid(clients, cfg["epsilons"], cfg["draws"], cfg["seed"], cfg["score_range"], cfg["curve_points"])
    write_csv(os.path.join(cfg["out"], "curves.csv"), [{k: r[k] for k in CURVE_FIELDS} for r in rows])
    error_lines(os.path.join(cfg["out"], "curve_error"), [("", rows)], "curve_error",
                "mean |TPR~ - TPR| over the FPR grid", "epsilon (label DP)",
                f"{name}: M = {m:,}, {len(clients)} clients; {cfg['curve_points']} cuts / thresholds; "
                f"{cfg['draws']} draws per point, shaded: 95% bootstrap interval")
    scores = np.concatenate([s for _, s, _ in unit_scores(clients, cfg["score_range"])])
    labels = np.concatenate([y for _, _, y in clients])
    epsilon = sorted(cfg["epsilons"])[len(cfg["epsilons"]) // 2]
    (private,) = simulate_curves(scores, labels, CurveNoise(epsilon, cfg["curve_points"]), 1, generator(cfg["seed"]))
    clear = curve_at_cuts(scores, labels, private["flagged"])
    as_report = {"auc": private["auc"], "roc": {"fpr": private["fpr"], "tpr": private["tpr"]},
                 "pr": {"recall": private["recall"], "precision": private["precision"]}}
    reference = {"auc": curve_area(clear["fpr"], clear["tpr"]), "roc": {"fpr": clear["fpr"], "tpr": clear["tpr"]},
                 "pr": {"recall": clear["tpr"], "precision": clear["precision"]}}
    curves(as_report, os.path.join(cfg["out"], "curve_example"),
           f"mpc-central's DP curve at epsilon {epsilon:g} (label DP, {cfg['curve_points']} cuts) beside the clear "
           f"curve; {name}", reference, label=f"DP curve, epsilon {epsilon:g}")
    return rows


def _evaluation_clients(cfg: dict):

    encoder = ScoreEncoder(*cfg["score_range"])
    if cfg["input"]:
        evalset = read_evalset(cfg["input"], encoder, sep=cfg["sep"], positive_label=cfg["positive_label"],
                               columns=Columns(cfg["client_col"], (cfg["score_col"],), cfg["label_col"]))
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
    rows, truth = grid(clients, cfg["protocols"], cfg["epsilons"], cfg["delta"], cfg["draws"], cfg["seed"],
                       cfg["score_range"], lambda cells: progress.bar(cells, desc="compare", unit="cell"),
                       lambda row: progress.detail(f"{row['protocol']:22s} eps={row['epsilon']:<5g} "
                                                   f"rmse={row['rmse']:.2e}"))
    m = sum(len(s) for _, s, _ in clients)
    result = {"exact_auc": truth, "m": m, "clients": len(clients), "draws": cfg["draws"], "rows": rows,
              "seconds": time.perf_counter() - start, "provenance": provenance(arguments or cfg, cfg["seed"])}
    os.makedirs(cfg["out"], exist_ok=True)
    write_config(os.path.join(cfg["out"], "config.yaml"), cfg)
    write_csv(os.path.join(cfg["out"], "compare.csv"), [{k: r[k] for k in FIELDS} for r in rows])
    if cfg["curves"]:
        result["curves"] = _curves(cfg, clients, name, m)
    write_json(os.path.join(cfg["out"], "compare.json"), result)
    plot(rows, os.path.join(cfg["out"], "rmse"),
         f"{name}: M = {m:,}, {len(clients)} clients, AUC {truth:.4f}; delta = {cfg['delta']:g} for the "
         f"(eps, delta) mechanisms; {cfg['draws']} draws per point, shaded: 95% bootstrap interval of the RMSE"
         + ("; fedauc-vanilla is exact (RMSE 0) and not drawn" if "fedauc-vanilla" in cfg["protocols"] else ""))
    return result

