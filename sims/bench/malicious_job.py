"""mpc-exact's AUC (or mpc-central's release) under security with abort (``--security malicious``) beside the
semi-honest job, end to end.

One session of P0, P1 and the dealer over loopback TLS per size; in it two jobs on the same rows (float64 scores
on [0, 1], or float32 with ``--dtype``; Criteo-shaped (mpc_auc.synthetic), ten clients relayed by the
coordinator): the semi-honest one, then the one under security with abort (protocols.mpc.malicious).  Per mode:
the job's seconds (intake to result), the clients' upload, P0's bytes and hops, each party's peak RSS, and the
ratios; both AUCs and metrics must be equal (mpc-exact; ``--protocol mpc-central``: one label-DP release at epsilon 1 each,
whose noise differs).

    python -m mpc_auc.sims.bench.malicious_job [--sizes 100000 458407] [--dtype float32] [--protocol mpc-central]
                                               [--metrics auc,ci] [--max-fpr 0.3]
"""
import argparse
import platform

import numpy as np

from ...protocols.dp.central_law import CentralNoise
from ...protocols.inputs.encoding import ScoreEncoder
from ...protocols.mpc.central import central_release
from ...protocols.mpc.exact import exact_result
from ...protocols.mpc.ranking_job import run_ranking_jobs, simulated
from ...protocols.release_spec import ReleaseSpec
from ...protocols.runtime.session import LOCAL
from ...synthetic import synthetic_evalset

MODES = ("semi-honest", "malicious")


def measure(m: int, dtype: str = "float64", noise: CentralNoise = None, metrics: str = "auc",
            max_fpr: float = None) -> dict:
    """mode -> {"s", "upload", "bytes", "hops", "rss", "auc", "metrics"} of the two jobs on ``m`` rows of ``dtype`` scores,
    in one session (mpc-central's release with ``noise``; else mpc-exact opening ``metrics``, the partial AUC up to
    ``max_fpr``)."""
    clients = synthetic_evalset(m=m, seed=m, dtype=dtype).clients()
    encoder = ScoreEncoder(dtype=dtype)
    requests = [simulated(clients, encoder, spec=ReleaseSpec(metrics, max_fpr=max_fpr, security=mode))
                for mode in MODES]
    runs = run_ranking_jobs(requests, "radix", False, noise, LOCAL, 600.0, None)
    out = {}
    for mode, run in zip(MODES, runs):
        result = exact_result(run, "radix") if noise is None else central_release(run, noise)
        auc = result.auc if noise is None else result.aucs[0]
        traffic = run.traffic()
        out[mode] = {"s": run.wall_s, "upload": run.upload_bytes, "bytes": traffic["P0"]["sent_bytes"],
                     "hops": traffic["P0"]["hops"], "rss": [traffic[r].get("peak_rss", 0) for r in ("P0", "P1")],
                     "auc": auc, "metrics": result.metrics if noise is None else None}
    if noise is None and any(out["malicious"][k] != out["semi-honest"][k] for k in ("auc", "metrics")):
        raise AssertionError(f"the two modes released different values: {out}")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 458_407], help="rows per run")
    parser.add_argument("--dtype", choices=("float64", "float32"), default="float64",
                        help="the scores' precision: float64 (62-bit keys, 31 digits) or float32 (30 bits, 15)")
    parser.add_argument("--protocol", choices=("mpc-exact", "mpc-central"), default="mpc-exact",
                        help="the exact AUC, or mpc-central's label-DP release at epsilon 1")
    parser.add_argument("--metrics", default="auc",
                        help="mpc-exact: what the jobs open besides the AUC (auc; ci: DeLong's interval; roc, pr: "
                             "the curves at 100 cuts; ks: the KS statistic; e.g. auc,roc,pr,ks)")
    parser.add_argument("--max-fpr", type=float, default=None,
                        help="mpc-exact: the partial AUC up to this FPR too (0 < F < 1)")
    args = parser.parse_args(argv)
    noise = CentralNoise(1.0) if args.protocol == "mpc-central" else None
    print(f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}")
    print("| M | mode | job s | upload MB | P0 MB | P0 B/row/key bit | hops | peak RSS P0/P1 MB | s x | P0 bytes x "
          "| hops x |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    bits = ScoreEncoder(dtype=args.dtype).key_bits
    for m in args.sizes:
        found = measure(m, args.dtype, noise, args.metrics, args.max_fpr)
        base = found["semi-honest"]
        for mode in MODES:
            r = found[mode]
            print(f"| {m:,} | {mode} | {r['s']:.1f} | {r['upload'] / 1e6:.1f} | {r['bytes'] / 1e6:.1f} "
                  f"| {r['bytes'] / m / bits:.2f} | {r['hops']} | {r['rss'][0] / 1e6:.0f}/{r['rss'][1] / 1e6:.0f} "
                  f"| {r['s'] / base['s']:.2f} | {r['bytes'] / base['bytes']:.2f} | {r['hops'] / base['hops']:.2f} |",
                  flush=True)
        print(f"AUC and metrics (equal in both modes): {found['malicious']['auc']!r} {found['malicious']['metrics']}"
              if noise is None else
              f"released AUCs (each its own draw): {found['semi-honest']['auc']!r}, {found['malicious']['auc']!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
