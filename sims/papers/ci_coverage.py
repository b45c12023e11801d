"""Coverage of DeLong's 95% interval (the one mpc-exact opens with ``--metrics ci``) on simulated sets.

Each set draws binormal scores with a known population AUC (mpc_auc.synthetic.binormal_scores, rounded to
create ties); the interval (Wald: AUC +- z_0.975 sqrt(Var_DeLong), or the logit-transformed one, ``--interval``)
is computed by protocols.clear_metrics.delong_interval, whose
private variance equals within 1e-9 (tests/protocols/mpc/test_metrics.py), and the share of sets whose
interval holds the population AUC is reported with its Wilson 95% interval.

Usage: python -m mpc_auc.sims.papers.ci_coverage [--sets 1000] [--m 400] [--positives 120] [--auc 0.77] [--seed 0]
       [--interval wald|logit]
"""
import argparse
import math

import numpy as np

from ...protocols.clear_metrics import INTERVALS, Z_975, delong_auc, delong_interval
from ...synthetic import binormal_scores


def coverage(sets: int, m: int, positives: int, auc: float, seed: int, decimals: int = 2,
             interval: str = "wald") -> dict:
    """The share of ``sets`` simulated sets whose DeLong 95% interval (of kind ``interval``) holds the population
    AUC."""
    rng = np.random.default_rng(seed)
    held = 0
    for _ in range(sets):
        scores, labels = binormal_scores(m, positives, auc, rng, decimals)
        found = delong_auc(scores, labels)
        lo, hi = delong_interval(found.value, found.std, interval)
        held += lo <= auc <= hi
    share = held / sets
    half = Z_975 * math.sqrt(share * (1 - share) / sets + Z_975 ** 2 / (4 * sets ** 2)) / (1 + Z_975 ** 2 / sets)
    centre = (share + Z_975 ** 2 / (2 * sets)) / (1 + Z_975 ** 2 / sets)
    return {"sets": sets, "m": m, "positives": positives, "auc": auc, "interval": interval, "coverage": share,
            "wilson_95": (centre - half, centre + half)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=1000, help="simulated sets")
    parser.add_argument("--m", type=int, default=400, help="rows per set")
    parser.add_argument("--positives", type=int, default=120, help="positives per set")
    parser.add_argument("--auc", type=float, default=0.77, help="the population AUC")
    parser.add_argument("--seed", type=int, default=0, help="seed of the simulation")
    parser.add_argument("--interval", choices=INTERVALS, default="wald", help="the interval's kind")
    args = parser.parse_args(argv)
    found = coverage(args.sets, args.m, args.positives, args.auc, args.seed, interval=args.interval)
    lo, hi = found["wilson_95"]
    print(f"DeLong 95% {args.interval} interval: coverage {found['coverage']:.3f} (Wilson 95% {lo:.3f}-{hi:.3f}) over "
          f"{found['sets']} sets of M={found['m']}, P={found['positives']}, population AUC {found['auc']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
