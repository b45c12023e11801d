"""Throughput of the in-circuit noisy kernels of ustat-2pc: pairs per second through the MPC.

P0 and P1 (the two users of every pair, vectorised) and the dealer run as
processes over loopback TCP (protocols.ustat.two_party).  Timed from sending the
job to both parties until both output shares are back at the aggregator:
inputs, kernel, noise generation in circuit and the output, not the
process start.  Kernels: AUC with randomized response (eps/k per pair) and
Gini mean difference with discrete Laplace of scale k/eps.

Usage: python -m mpc_auc.sims.bench.ustat [--pairs 100000 1000000 3000000] [--epsilon 1] [--k 1]
"""
import argparse
import platform
import sys

import numpy as np

from ...protocols.ustat.two_party import Sample, pair_noise, ustat_2pc


def _sample(kernel: str, pairs: int, k: int, rng) -> Sample:
    if kernel == "auc":  # k rounds of m positive/negative pairs
        m = -(-pairs // k)
        return Sample(rng.random(2 * m), np.repeat([1, 0], m))
    return Sample(rng.random(-(-2 * pairs // k)))  # k permutations of n users: k n / 2 pairs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, nargs="+", default=[100_000, 1_000_000, 3_000_000])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--k", type=int, default=1)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"machine: {platform.processor() or platform.machine()}, {platform.python_version()}; "
          f"eps = {args.epsilon}, k = {args.k}")
    print("| kernel | noise | pairs | wall s | pairs/s | P0 sent MB | rounds (P0) | bytes/pair (P0) |")
    print("|---|---|---|---|---|---|---|---|")
    for kernel in ("auc", "gini"):
        noise = pair_noise(kernel, args.epsilon, args.k)
        label = (f"RR q~={noise.flip:.3f}" if kernel == "auc"
                 else f"discrete Laplace, {noise.width + 2} coins, delta={noise.delta:.1e}")
        for pairs in args.pairs:
            out = ustat_2pc(kernel, [_sample(kernel, pairs, args.k, rng)], args.epsilon, args.k, timeout_s=300)[0]
            p0 = out.traffic["P0"]
            print(f"| {kernel} | {label} | {out.pairs:,} | {out.wall_s:.2f} | {out.pairs / out.wall_s:,.0f} | "
                  f"{p0['sent_bytes'] / 1e6:,.1f} | {p0['rounds']} | {p0['sent_bytes'] / out.pairs:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
