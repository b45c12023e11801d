"""Benchmark of the exact private AUC with the radix and the bitonic oblivious ranking.

For each M: one session of P0, P1 and the TTP dealer (three processes over
loopback TCP) per method, on a Criteo-shaped synthetic set (AUC 0.77,
P/M as Criteo's, 10 IID clients).  Measured: wall time from sending the
sealed bundles to both parties' results (share -> rank -> AUC -> reveal),
bytes each role wrote to its sockets, CrypTen rounds, peak RSS of each
process, and |AUC - clear AUC|.  Bitonic runs only up to --bitonic-max
(its M log^2 M network is extrapolated past 15 minutes beyond 2^19).
Scores are float64 (62-bit radix keys); rows marked float32 round the same
scores to float32 first and declare that dtype (30-bit keys), as a model
that outputs float32 probabilities would.  Bitonic's cost does not depend on
the key width.  Prints a markdown table, the bitonic/radix ratio (against
the float64 bitonic row of the same M), and the growth exponent b of
wall ~ M^b fitted over the float64 radix rows, beside the exponent that
M log M itself shows over the same sizes.

Usage: python -m mpc_auc.sims.bench.ranking [--sizes M ...] [--float32-sizes M ...] [--bitonic-max M] [--ranks]
"""
import argparse
import math
import platform
import sys
import time

import numpy as np

from ...dataset import EvalSet
from ...protocols.clear_auc import rank_sum_auc
from ...protocols.inputs.encoding import ScoreEncoder
from ...protocols.mpc.exact import mpc_exact_auc
from ...synthetic import CRITEO_M, synthetic_evalset

CRITEO_FULL_M = 4_584_062  # the large Criteo evaluation set (fedauc Table 4)
SIZES = (2 ** 12, 2 ** 14, 2 ** 16, 2 ** 18, CRITEO_M, CRITEO_FULL_M)
BITONIC_MAX = CRITEO_M
GB, MB = 1e9, 1e6


def run(m: int, method: str, ranks: bool, dtype: str = "float64") -> dict:
    evalset = synthetic_evalset(m=m, clients=10, seed=m)
    encoder = ScoreEncoder(dtype=dtype)
    if dtype == "float32":
        scores = evalset.score.astype(np.float32).astype(np.float64)
        evalset = EvalSet.build(evalset.client, scores, evalset.label, encoder)
    (result,) = mpc_exact_auc([evalset.clients()], encoder, method=method, ranks=ranks, timeout_s=300)
    t = result.traffic
    return {
        "m": m, "method": method, "dtype": dtype, "key_bits": encoder.key_bits, "wall": result.wall_s,
        "sent": [t["P0"]["sent_bytes"], t["P1"]["sent_bytes"], t["dealer"]["sent_bytes_session_total"]],
        "rounds": [t["P0"]["rounds"], t["P1"]["rounds"]],
        "rss": [t["P0"]["peak_rss"], t["P1"]["peak_rss"], t["dealer"]["peak_rss_session_total"]],
        "error": abs(result.auc - rank_sum_auc(evalset.score, evalset.label)),
    }


def fitted_exponent(ms, values) -> float:
    """Least-squares slope of log(value) against log(M)."""
    return float(np.polyfit(np.log(ms), np.log(values), 1)[0])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--float32-sizes", type=int, nargs="*", default=[CRITEO_M, CRITEO_FULL_M])
    parser.add_argument("--bitonic-max", type=int, default=BITONIC_MAX)
    parser.add_argument("--ranks", action="store_true", help="also deliver every client its rows' ranks")
    args = parser.parse_args(argv)
    print(f"machine: {platform.machine()}, {platform.processor() or 'cpu'}, python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d')}; ranks delivered: {args.ranks}", flush=True)
    rows = []
    for m in args.sizes:
        for method in ("radix", "bitonic"):
            if method == "bitonic" and m > args.bitonic_max:
                continue
            rows.append(run(m, method, args.ranks))
            print(f"  done: M={m} {method} {rows[-1]['wall']:.1f} s", file=sys.stderr, flush=True)
    for m in args.float32_sizes:
        rows.append(run(m, "radix", args.ranks, "float32"))
        print(f"  done: M={m} radix float32 {rows[-1]['wall']:.1f} s", file=sys.stderr, flush=True)
    print("| M | method | keys | wall s | bitonic / radix | sent MB P0 / P1 / dealer | rounds P0 / P1 "
          "| peak RSS GB P0 / P1 / dealer (sum) | abs(AUC - clear) |")
    print("|---|---|---|---|---|---|---|---|---|")
    radix = {r["m"]: r for r in rows if r["method"] == "radix" and r["dtype"] == "float64"}
    bitonic = {r["m"]: r for r in rows if r["method"] == "bitonic"}
    for r in rows:
        ratio = f"{bitonic[r['m']]['wall'] / r['wall']:.1f}x" if r["method"] == "radix" and r["m"] in bitonic else ""
        sent = " / ".join(f"{b / MB:,.0f}" for b in r["sent"])
        rss = " / ".join(f"{b / GB:.2f}" for b in r["rss"]) + f" ({sum(r['rss']) / GB:.2f})"
        print(f"| {r['m']:,} | {r['method']} | {r['dtype']} ({r['key_bits']} bits) | {r['wall']:.2f} | {ratio} | "
              f"{sent} | {r['rounds'][0]} / {r['rounds'][1]} | {rss} | {r['error']:.1e} |")
    ms = sorted(radix)
    if len(ms) >= 2:
        walls = [radix[m]["wall"] for m in ms]
        reference = [m * math.log2(m) for m in ms]
        print(f"\nradix wall ~ M^b over M = {ms[0]:,} .. {ms[-1]:,}: b = {fitted_exponent(ms, walls):.2f} "
              f"(M log2 M over the same sizes: b = {fitted_exponent(ms, reference):.2f})")
        for lo, hi in zip(ms, ms[1:]):
            step = math.log(radix[hi]["wall"] / radix[lo]["wall"]) / math.log(hi / lo)
            ref = math.log(hi * math.log2(hi) / (lo * math.log2(lo))) / math.log(hi / lo)
            print(f"  {lo:,} -> {hi:,}: b = {step:.2f} (M log2 M: {ref:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
