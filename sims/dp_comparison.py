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

from .. import progress
from ..csv_io import read_evalset
from ..experiment_config import Param, all_positive, positive, probability, write_config
from ..protocols.dp.grid import FIELDS, grid
from ..protocols.dp.suite import MECHANISMS
from ..protocols.inputs.encoding import ScoreEncoder
from ..results import provenance, write_csv, write_json
from ..synthetic import CRITEO_M, synthetic_evalset
from .plots import error_lines

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


def plot(rows, stem: str, title: str) -> None:
    error_lines(stem, [("", rows)], "rmse", "RMSE of the AUC",
                "epsilon (label DP; score-dp: LDP per score; score-cldp: alpha per grid step)", title)


def _evaluation_clients(cfg: dict):

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
    write_json(os.path.join(cfg["out"], "compare.json"), result)
    plot(rows, os.path.join(cfg["out"], "rmse"),
         f"{name}: M = {m:,}, {len(clients)} clients, AUC {truth:.4f}; delta = {cfg['delta']:g} for the "
         f"(eps, delta) mechanisms; {cfg['draws']} draws per point, shaded: 95% bootstrap interval of the RMSE"
         + ("; fedauc-vanilla is exact (RMSE 0) and not drawn" if "fedauc-vanilla" in cfg["protocols"] else ""))
    return result

