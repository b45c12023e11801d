"""Compare the plain-DP AUC mechanisms on one evaluation set over an epsilon grid.

Writes, into --out-dir: compare.csv and compare.json (per protocol and
epsilon: mean, std, bias and RMSE against the exact AUC, runtime, the
budget accounting and what the server received) and rmse.png (RMSE against
epsilon, log scales, one line per protocol).

Usage: python -m mpc_auc.sims.compare --out-dir DIR [--input CSV | --m M --clients K --partition iid|non-iid]
       [--protocols NAME ...] [--epsilons E ...] [--delta D] [--draws N] [--seed S]
"""
import argparse
import csv
import json
import os
import sys

import numpy as np

from ..csv_io import read_evalset
from ..protocols.clear_auc import rank_sum_auc
from ..protocols.dp_suite import MECHANISMS, Budget, evaluate
from ..protocols.encoding import ScoreEncoder
from ..synthetic import CRITEO_M, synthetic_evalset
from .plots import error_lines

FIELDS = ("protocol", "epsilon", "delta", "mean", "std", "bias", "rmse", "seconds", "accounting", "server_received")


def compare(evalset, protocols, epsilons, delta, draws, seed) -> list:
    truth = rank_sum_auc(evalset.score, evalset.label)
    rows = []
    for name in protocols:
        for eps in ([np.inf] if name == "fedauc-vanilla" else epsilons):
            release = evaluate(name, evalset.clients(), Budget(eps, delta), draws, seed)
            error = release.auc - truth
            rows.append({"protocol": name, "epsilon": release.epsilon, "delta": release.delta,
                         "mean": float(release.auc.mean()), "std": float(release.auc.std(ddof=1)),
                         "bias": float(error.mean()), "rmse": float(np.sqrt((error ** 2).mean())),
                         "seconds": release.seconds, "accounting": release.accounting,
                         "server_received": release.server_received})
            print(f"{name:22s} eps={eps:<5g} rmse={rows[-1]['rmse']:.2e}", file=sys.stderr, flush=True)
    return rows, truth


def plot(rows, path: str, title: str) -> None:
    error_lines(path, [(title, rows)], "rmse", "RMSE of the AUC",
                "epsilon (label DP; score-dp: LDP per score; score-cldp: alpha per grid step)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--input", help="CSV client,score,label (default: a synthetic Criteo-shaped set)")
    parser.add_argument("--m", type=int, default=CRITEO_M)
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--partition", choices=("iid", "non-iid"), default="iid")
    parser.add_argument("--protocols", nargs="+", default=list(MECHANISMS), choices=list(MECHANISMS))
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1, 2, 4, 8])
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.input:
        evalset, title = read_evalset(args.input, ScoreEncoder()), os.path.basename(args.input)
    else:
        evalset = synthetic_evalset(m=args.m, clients=args.clients, scheme=args.partition, seed=args.seed)
        title = f"synthetic M={args.m:,}, {args.clients} clients ({args.partition})"
    rows, truth = compare(evalset, args.protocols, args.epsilons, args.delta, args.draws, args.seed)
    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, "compare.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    with open(os.path.join(args.out_dir, "compare.json"), "w") as f:
        json.dump({"exact_auc": truth, "m": evalset.m, "clients": len(evalset.clients()), "draws": args.draws,
                   "seed": args.seed, "rows": rows}, f, indent=2, default=float)
    plot(rows, os.path.join(args.out_dir, "rmse.png"), title)
    print(f"wrote compare.csv, compare.json, rmse.png to {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
