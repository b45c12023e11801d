"""Benchmark of mpc-exact with the bitonic reference sort (TTP dealer, three processes).

Prints, per M: wall time of the MPC part, client sharing time, bytes and
rounds P0 and P1 sent, and the growth exponent between successive sizes.
Usage: python -m mpc_auc.sims.bench_mpc_exact [M ...]
"""
import math
import platform
import sys

from ..protocols.clear_auc import rank_sum_auc
from ..protocols.encoding import ScoreEncoder
from ..protocols.mpc_exact import mpc_exact_auc
from ..synthetic import synthetic_evalset

DEFAULT_SIZES = (1024, 4096, 16384)


def main(argv=None) -> int:
    sizes = [int(a) for a in (argv if argv is not None else sys.argv[1:])] or list(DEFAULT_SIZES)
    sets = [synthetic_evalset(m=m, clients=10, seed=m) for m in sizes]
    results = mpc_exact_auc([s.clients() for s in sets], ScoreEncoder(), provider="TTP", timeout_s=60)
    print(f"machine: {platform.machine()}, {platform.processor() or 'cpu'}, python {platform.python_version()}")
    print("| M | MPC wall s | sharing s | P0 MB | P1 MB | P0 rounds | growth exp. | abs(AUC - clear) |")
    print("|---|---|---|---|---|---|---|---|")
    previous = None
    for s, r in zip(sets, results):
        exponent = "" if previous is None else f"{math.log(r.wall_s / previous[1]) / math.log(r.m / previous[0]):.2f}"
        err = abs(r.auc - rank_sum_auc(s.score, s.label))
        print(f"| {r.m} | {r.wall_s:.2f} | {r.sharing_s:.3f} | {r.traffic['P0']['bytes'] / 1e6:.1f} | "
              f"{r.traffic['P1']['bytes'] / 1e6:.1f} | {r.traffic['P0']['rounds']} | {exponent} | {err:.1e} |")
        previous = (r.m, r.wall_s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
