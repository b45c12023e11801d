"""MSE against epsilon for the U-statistic protocols of ustats (§3, §4, §5, §6) on synthetic data.

Panels: the App. D.1 AUC sets (auc_one, uniform, ith_digit; --n per class,
classes public) and Kendall's tau on correlated 1-5 ratings
(--kendall-n users, TripAdvisor-sized).  Protocols:

* ustat-2pc with k = 1, 2, 5 (AUC: randomized response at eps/k, Kendall:
  discrete Laplace of scale k/eps), the 2PC replaced by the clear kernel
  and the circuit's exact noise law (protocols.ustat_2pc.simulate; the
  MPC run itself is checked against the same formula by
  tests/test_ustat_2pc.py);
* all-pairs 2PC with advanced composition (delta = 1e-6);
* the quantized LDP protocol (Alg. 1; Kendall: 25-ary RR, no quantization);
* the hierarchical-histogram AUC (§4; AUC panels only).

The MSE is against the sample's own statistic (fixed data per panel),
over --draws runs of each protocol.  Writes mse.csv and mse.png to
--out-dir and prints, per panel and epsilon <= 1, the ratio of the best
LDP protocol's MSE to the best 2PC-subsampling MSE.

Usage: python -m mpc_auc.sims.ustat_experiments --out-dir DIR [--n 10000] [--kendall-n 250000]
       [--draws 50] [--epsilons ...] [--seed 0]
"""
import argparse
import csv
import os
import sys
import time

import numpy as np

from .. import ustat_data
from ..protocols.auc_hh import hierarchical_auc
from ..protocols.fedauc import generator
from ..protocols.ustat_2pc import Sample, simulate
from ..protocols.ustat_baselines import all_pairs, complete_ustat, quantized_ldp
from .plots import error_lines

EPSILONS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
KS = (1, 2, 5)
LDP = ("quantized-ldp", "hierarchical-histogram")


def panels(n: int, kendall_n: int, rng) -> dict:
    pop = ustat_data.ratings()
    return {"auc_one": ("auc", Sample(*ustat_data.auc_one(n))),
            "uniform": ("auc", Sample(*ustat_data.uniform(n, rng))),
            "ith_digit (i=10)": ("auc", Sample(*ustat_data.ith_digit(n, 10))),
            "kendall (ratings)": ("kendall", Sample(pop.sample(kendall_n, rng)))}


def protocols(kernel: str) -> dict:
    out = {f"ustat-2pc k={k}": (lambda s, e, r, k=k: simulate(kernel, s, e, k, r)) for k in KS}
    out["all-pairs 2pc"] = lambda s, e, r: all_pairs(kernel, s, e, r)
    out["quantized-ldp"] = lambda s, e, r: quantized_ldp(kernel, s, e, r)
    if kernel == "auc":
        out["hierarchical-histogram"] = lambda s, e, r: hierarchical_auc(s.values, s.labels, e, r)
    return out


def run(n, kendall_n, epsilons, draws, seed) -> list:
    rng = generator(seed)
    rows = []
    for panel, (kernel, sample) in panels(n, kendall_n, rng).items():
        truth = complete_ustat(kernel, sample)
        for name, protocol in protocols(kernel).items():
            for eps in epsilons:
                start = time.perf_counter()
                est = np.array([protocol(sample, eps, rng) for _ in range(draws)])
                rows.append({"panel": panel, "protocol": name, "epsilon": eps, "truth": truth,
                             "mse": float(np.mean((est - truth) ** 2)), "bias": float(est.mean() - truth),
                             "draws": draws, "seconds_per_run": (time.perf_counter() - start) / draws})
                print(f"{panel:18s} {name:24s} eps={eps:<5g} mse={rows[-1]['mse']:.2e}", file=sys.stderr, flush=True)
    return rows


def finding(rows, epsilons) -> list:
    """Per panel and eps <= 1: (panel, eps, best 2PC-subsampling MSE, best LDP MSE, ratio LDP / 2PC)."""
    out = []
    for panel in dict.fromkeys(r["panel"] for r in rows):
        for eps in (e for e in epsilons if e <= 1):
            cell = [r for r in rows if r["panel"] == panel and r["epsilon"] == eps]
            two_pc = min(r["mse"] for r in cell if r["protocol"].startswith("ustat-2pc"))
            others = [r["mse"] for r in cell if not r["protocol"].startswith("ustat-2pc")]
            ldp = min(r["mse"] for r in cell if r["protocol"] in LDP)
            out.append((panel, eps, two_pc, ldp, ldp / two_pc, two_pc < min(others)))
    return out


def plot(rows, path: str) -> None:
    panels = [(p, [r for r in rows if r["panel"] == p]) for p in dict.fromkeys(r["panel"] for r in rows)]
    error_lines(path, panels, "mse", "MSE", "epsilon (per user)", grid=(2, 2), size=(11, 8), dashed=LDP)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--n", type=int, default=10_000, help="users per class in the AUC panels")
    parser.add_argument("--kendall-n", type=int, default=250_000)
    parser.add_argument("--draws", type=int, default=50)
    parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = run(args.n, args.kendall_n, args.epsilons, args.draws, args.seed)
    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, "mse.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, os.path.join(args.out_dir, "mse.png"))
    print("| panel | eps | best ustat-2pc MSE | best LDP MSE | LDP / 2PC | 2PC lowest of all |")
    print("|---|---|---|---|---|---|")
    for panel, eps, two_pc, ldp, ratio, lowest in finding(rows, args.epsilons):
        print(f"| {panel} | {eps:g} | {two_pc:.2e} | {ldp:.2e} | {ratio:.0f}x | {'yes' if lowest else 'NO'} |")
    print(f"\nwrote mse.csv, mse.png to {args.out_dir}; {args.draws} draws, seed {args.seed}, "
          f"{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
