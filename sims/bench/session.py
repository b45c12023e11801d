"""Warm sessions (mpc_auc.Session): seconds per API call, first and later calls, with and without one.

Each (rows, mode) runs in a fresh interpreter, so that its first call pays what a user's first call pays (the fork
server's start, CrypTen's import, the roles' keys). A call is ``roc_auc_score(y, s, ci=False)``'s path
(mpc_auc.planner.execute, protocol mpc-exact, one client); per call it prints the wall time, the job's time (from
the job's sending to the parties' results: protocols.mpc.ranking_job.JobRun.wall_s) and within it the computation's
(the sum of P0's phases: the input check, the sort, the ties, the division); the wall time less the job's is
starting or reaching the roles, the control links and the close, the job's less the computation's is the roles'
per-session set-up (mesh links, crypten.init, the dealer's keys) and the sharing of the rows. Modes: ``cold``
(Session(keep=False): every call starts and stops its roles) and ``warm`` (one Session for all calls).

    python -m mpc_auc.sims.bench.session [--sizes 1000 100000] [--calls 5]
"""
import argparse
import json
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

from ...planner import execute, plan
from ...warm import Session

MODES = ("cold", "warm")
TARGET_S = 0.3  # the target per call at 10^3 rows after the first


def _calls(m: int, mode: str, calls: int) -> dict:
    """{"calls": [(wall s, job s, computation s)] of ``calls`` calls on ``m`` rows in ``mode``, in this interpreter;
    "phases": P0's seconds per phase in the last call, "hops": its hops (message chains, a round trip two)}."""
    rng = np.random.default_rng(m)
    clients = [("c0", rng.random(m), rng.integers(0, 2, m))]
    request = plan()
    out = []
    with Session(keep=mode == "warm"):
        for _ in range(calls):
            start = time.perf_counter()
            release = execute(request, clients).release
            wall = time.perf_counter() - start
            out.append((wall, release.wall_s, sum(p["s"] for p in release.traffic["P0"]["phases"])))
    return {"calls": out, "phases": {p["phase"]: p["s"] for p in release.traffic["P0"]["phases"]},
            "hops": release.traffic["P0"]["hops"]}


def _measured(m: int, mode: str, calls: int) -> dict:
    """``_calls`` in a fresh interpreter."""
    command = [sys.executable, "-m", "mpc_auc.sims.bench.session", "--one", str(m), mode, str(calls)]
    return json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout.splitlines()[-1])


def _row(m: int, mode: str, measured: dict) -> dict:
    times = measured["calls"]
    later = times[1:]
    return {"rows": m, "mode": mode, "first_s": times[0][0], "first_job_s": times[0][1],
            "later_s": statistics.median(w for w, _, _ in later),
            "later_job_s": statistics.median(j for _, j, _ in later),
            "later_mpc_s": statistics.median(c for _, _, c in later), "later_min_s": min(w for w, _, _ in later),
            "phases": measured["phases"], "hops": measured["hops"]}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m mpc_auc.sims.bench.session", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000])
    parser.add_argument("--calls", type=int, default=5, help="calls per (rows, mode), the first included (>= 2)")
    parser.add_argument("--one", nargs=3, metavar=("ROWS", "MODE", "CALLS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(_calls(int(args.one[0]), args.one[1], int(args.one[2]))))
        return
    if args.calls < 2:
        parser.error("--calls must be at least 2 (the first call and later ones)")
    print(f"# {platform.processor() or platform.machine()}, Python {platform.python_version()}, {args.calls} calls "
          "per row, later = median of calls 2..n")
    print(f"{'rows':>8} {'mode':>5} {'first s':>8} {'(job s)':>8} {'later s':>8} {'(job s)':>8} {'(mpc s)':>8} "
          f"{'min s':>7}")
    rows = {}
    for m in args.sizes:
        for mode in MODES:
            r = rows[m, mode] = _row(m, mode, _measured(m, mode, args.calls))
            print(f"{m:>8} {mode:>5} {r['first_s']:>8.3f} {r['first_job_s']:>8.3f} {r['later_s']:>8.3f} "
                  f"{r['later_job_s']:>8.3f} {r['later_mpc_s']:>8.3f} {r['later_min_s']:>7.3f}")
    for m in args.sizes:
        cold, warm = rows[m, "cold"], rows[m, "warm"]
        print(f"{m} rows: later calls cold/warm {cold['later_s'] / warm['later_s']:.2f}x; outside the computation "
              f"{cold['later_s'] - cold['later_mpc_s']:.3f} s cold, {warm['later_s'] - warm['later_mpc_s']:.3f} s "
              f"warm; first call's start-up (first - later, warm) {warm['first_s'] - warm['later_s']:.2f} s"
              + (f"; target {TARGET_S} s per later call: {'met' if warm['later_s'] <= TARGET_S else 'not met'}"
                 if m == 1000 else ""))
        print(f"  warm, last call, P0's computation: {warm['hops']:.0f} hops; "
              + "; ".join(f"{name} {s:.3f} s" for name, s in warm["phases"].items() if name != "start"))


if __name__ == "__main__":
    main()
