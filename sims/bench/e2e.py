"""End-to-end benchmark of ``mpc-auc run``: CSV in, exact private AUC out, with its phases and SPU beside it.

For each M and score precision: a Criteo-shaped CSV (the synthetic set of
``mpc-auc generate``: binormal scores, AUC 0.77, Criteo's positive rate, 100
IID clients) is written first (not timed); then ``mpc-auc --quiet run
--input FILE --score-dtype D`` runs as a fresh process, exactly as a user
types it.  float64 scores on [0, 1] give 62-bit keys (31 radix digits);
float32 scores (the same scores rounded to float32, as a model computing in
float32 outputs them) give 30-bit keys (15 digits).  The command reads and
checks the file, simulates every client (sealed, signed submissions), and
P0, P1 and the dealer run as local processes over mutually authenticated
TLS 1.3.  Measured: the wall time from starting that process to its exit
(the JSON written), its phases from the timings it records, the total peak
RSS (coordinator + P0 + P1 + dealer), |AUC - sklearn|, and the 1-minute
load average before the run.

Phases: "start" = interpreter, imports and parsing until the command begins;
"read" = reading and checking the CSV and grouping it by client (the roles
start up meanwhile); "roles" = waiting for them and opening the session;
"sharing" = the clients' encoding, sharing, sealing and signing; "protocol"
= from sending the submissions to both parties' results (open bundles,
radix sort, tie groups, division, reveal); "finish" = closing the session,
writing the JSON and the process's exit.

With ``--spu-python`` (a Python with ``spu==0.9.5``, see sims/bench/spu_reference.py)
SecretFlow SPU computes the exact AUC of the same file, and the ratio of its
run time to ours is printed.  ``--doc FILE`` replaces the section between
the bench-e2e markers of FILE with the table, command, machine and load.

Usage: python -m mpc_auc.sims.bench.e2e [--sizes M ...] [--dtypes D ...] [--spu-python PY] [--spu-size M]
       [--metrics-size M] [--doc FILE]
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd

from ...csv_io import write_evalset
from ...protocols.inputs.encoding import ScoreEncoder
from ...synthetic import CRITEO_M, synthetic_evalset
from ..host import machine

CRITEO_FULL_M = 4_584_062  # the large Criteo evaluation set (fedauc Table 4)
SIZES = (CRITEO_M, CRITEO_FULL_M)
SPU_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "spu_reference.py")
MARKERS = ("<!-- bench-e2e:start -->", "<!-- bench-e2e:end -->")
COMMAND = [sys.executable, "-m", "mpc_auc"]
GB = 1e9


DTYPES = ("float64", "float32")


def dataset(directory: str, m: int, dtype: str = "float64") -> str:
    """The benchmark's CSV of M rows with scores of the given precision (written once per directory)."""
    path = os.path.join(directory, f"criteo-shaped-{m}.csv" if dtype == "float64" else
                        f"criteo-shaped-{m}-{dtype}.csv")
    if not os.path.exists(path):
        write_evalset(path, synthetic_evalset(m=m, clients=100, seed=m, dtype=dtype))
    return path


def paired_dataset(directory: str, m: int) -> str:
    """The benchmark's rows with a second model's scores beside the first and a sample weight
    (client,score,second,weight,label): the first model's scores plus Gaussian noise (sd 0.1), clipped to [0, 1],
    for DeLong's test; integer weights 1..4, for the weighted AUC."""
    path = os.path.join(directory, f"criteo-shaped-{m}-two-models-weights.csv")
    if not os.path.exists(path):
        table = pd.read_csv(dataset(directory, m), dtype={"client": str})
        rng = np.random.default_rng(m)
        table.insert(2, "second", np.clip(table["score"] + rng.normal(0, 0.1, len(table)), 0, 1))
        table.insert(3, "weight", rng.integers(1, 5, len(table)))
        table.to_csv(path, index=False, float_format="%.17g")
    return path


METRIC_JOBS = (("full report: --metrics auc,ci,ap,roc,ks", [], ["--metrics", "auc,ci,ap,roc,ks"]),
               ("two-model DeLong test: --score-col score,second --metrics auc,ci", ["two"],
                ["--score-col", "score,second", "--metrics", "auc,ci"]),
               ("weighted AUC: --weight-col weight", ["two"], ["--weight-col", "weight"]),
               ("security with abort: --security malicious", [], ["--security", "malicious"]))


def metric_rows(directory: str, tmp: str, m: int, timeout_s: float, repeat: int, alone: dict) -> list:
    """The metrics' rows at M (float64), and the AUC under security with abort: each job's median protocol time,
    P0's bytes and hops against the AUC alone's (the semi-honest job of the same rows)."""
    lines = ["| M | job | runs | protocol s (median) | x AUC alone | P0 sent GB | x | P0 hops | x |",
             "|---|---|---|---|---|---|---|---|---|",
             f"| {m:,} | AUC alone | {len(alone['runs'])} | {alone['protocol']:.2f} | 1.00 "
             f"| {alone['sent'] / GB:.2f} | 1.00 | {alone['hops']} | 1.00 |"]
    for name, files, options in METRIC_JOBS:
        path = paired_dataset(directory, m) if files else dataset(directory, m)
        runs = sorted((run_ours(path, tmp, timeout_s, "float64", options) for _ in range(repeat)),
                      key=lambda r: r["protocol"])
        row = runs[len(runs) // 2]
        lines.append(f"| {m:,} | {name} | {repeat} | **{row['protocol']:.2f}** "
                     f"| **{row['protocol'] / alone['protocol']:.2f}** | {row['sent'] / GB:.2f} "
                     f"| {row['sent'] / alone['sent']:.2f} | {row['hops']} | {row['hops'] / alone['hops']:.2f} |")
        print(f"  done: M={m:,} {name}: protocol {row['protocol']:.2f} s", file=sys.stderr, flush=True)
    return lines


def reference_auc(path: str) -> float:
    from sklearn.metrics import roc_auc_score  # lazily: scikit-learn is a test extra, needed only here

    table = pd.read_csv(path)
    return float(roc_auc_score(table["label"], table["score"]))


def run_ours(path: str, directory: str, timeout_s: float, dtype: str = "float64", options=()) -> dict:
    out = os.path.join(directory, f"result-{time.monotonic_ns()}.json")
    load = os.getloadavg()[0]
    began, began_unix = time.perf_counter(), time.time()
    # output to a file, not a pipe: the fork server inherits it and a pipe would stay open until that
    # server has also exited, after the command (a terminal's prompt returns when the command exits)
    with tempfile.TemporaryFile("w+") as errors:
        code = subprocess.run(COMMAND + ["--quiet", "run", "--input", path, "--out", out, "--timeout",
                                         str(timeout_s), "--score-dtype", dtype, *options],
                              stdout=subprocess.DEVNULL, stderr=errors).returncode
        total = time.perf_counter() - began
        errors.seek(0)
        if code != 0:
            raise SystemExit(f"mpc-auc run failed ({code}): {errors.read().strip()}")
    with open(out) as f:
        record = json.load(f)
    os.remove(out)
    timings = record["timings_s"]
    protocol = record["mpc_wall_s"] - record["sharing_s"]
    phases = {
        "start": timings["entered_unix"] - began_unix,
        "read": timings["read_and_check"],
        "roles": record["wall_s"] - record["mpc_wall_s"],
        "sharing": record["sharing_s"],
        "protocol": protocol,
    }
    phases["finish"] = total - sum(phases.values())
    traffic = record["traffic"]
    peaks = {"coordinator": record["coordinator_peak_rss"],
             **{role: traffic[role].get("peak_rss", 0) or traffic[role].get("peak_rss_session_total", 0)
                for role in ("P0", "P1", "dealer")}}
    return {"m": record["input_summary"]["M"], "dtype": dtype, "total": total, "phases": phases, "protocol": protocol,
            "check": record["input_check_s"], "rss": sum(peaks.values()), "peaks": peaks, "auc": record["auc"],
            "load": load,
            "sent": record["traffic"]["P0"]["sent_bytes"], "hops": record["traffic"]["P0"].get("hops"),
            "sent_to": record["traffic"]["P0"].get("sent_to", {}), "messages": record["traffic"]["P0"]["rounds"],
            "p0_phases": record["traffic"]["P0"].get("phases", [])}


def phase_table(rows) -> list:
    """P0's bytes and hops per phase of each row's median run (protocols.runtime.metrics): where a network's
    bandwidth and latency would go."""
    lines = ["| M | scores | P0's phase | s | MB to P1 | MB to the dealer | hops | B per score per key bit |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        bits = ScoreEncoder(0.0, 1.0, r["dtype"]).key_bits
        for p in r["p0_phases"] + [{"phase": "**all**", "s": r["protocol"], "hops": r["hops"],
                                    "sent_bytes": r["sent_to"]}]:
            sent = p["sent_bytes"]
            total = sum(sent.values())
            if p["phase"] == "start" and not total:
                continue
            lines.append(f"| {r['m']:,} | {r['dtype']} | {p['phase']} | {p['s']:.2f} | {sent.get('P1', 0) / 1e6:.1f} "
                         f"| {sent.get('dealer', 0) / 1e6:.1f} | {p['hops']} | {total / r['m'] / bits:.2f} |")
    return lines


def run_spu(python: str, path: str) -> dict:
    load = os.getloadavg()[0]
    done = subprocess.run([python, SPU_SCRIPT, "--input", path], capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"the SPU reference failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return {**json.loads(lines[-1]), "load": load}


def growth(rows) -> str:
    """Exponent b of time ~ M^b between the smallest and largest M, beside M log2 M's over the same M."""
    if len(rows) < 2:
        return ""
    lo, hi = rows[0], rows[-1]
    span = math.log(hi["m"] / lo["m"])
    reference = math.log(hi["m"] * math.log2(hi["m"]) / (lo["m"] * math.log2(lo["m"]))) / span
    return (f"growth {lo['m']:,} -> {hi['m']:,} ({lo['dtype']}): "
            f"end to end M^{math.log(hi['total'] / lo['total']) / span:.2f}, "
            f"protocol M^{math.log(hi['protocol'] / lo['protocol']) / span:.2f} (M log2 M: M^{reference:.2f})")


def table(rows, spu) -> list:
    lines = ["| M | scores (key bits) | runs | end to end s (median) | range s | start | read | roles | sharing "
             "| protocol | of it: input check (share) | finish | peak RSS GB (all) | abs(AUC - sklearn) | load |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        p = r["phases"]
        spread = f"{r['runs'][0]:.2f}-{r['runs'][-1]:.2f}" if len(r["runs"]) > 1 else ""
        key_bits = ScoreEncoder(0.0, 1.0, r["dtype"]).key_bits
        lines.append(f"| {r['m']:,} | {r['dtype']} ({key_bits}) | {len(r['runs'])} | **{r['total']:.2f}** "
                     f"| {spread} | {p['start']:.2f} | {p['read']:.2f} | {p['roles']:.2f} | {p['sharing']:.2f} "
                     f"| **{p['protocol']:.2f}** | {r['check']:.2f} ({r['check'] / p['protocol']:.1%}) "
                     f"| {p['finish']:.2f} | {r['rss'] / GB:.2f} | {r['error']:.1e} | {r['load']:.2f} |")
    if spu:
        ours = next(r for r in rows if r["m"] == spu["m"] and r["dtype"] == "float64")
        lines += ["", "| M (float64) | SPU 0.9.5 exact AUC s (run only) | SPU processes s | mpc-auc protocol s "
                      "| mpc-auc end to end s | SPU / protocol | SPU / end to end | abs(AUC_SPU - sklearn) | load |",
                  "|---|---|---|---|---|---|---|---|---|",
                  f"| {spu['m']:,} | {spu['run_s']:.2f} | {spu['processes_s']:.2f} | {ours['protocol']:.2f} "
                  f"| {ours['total']:.2f} | **{spu['run_s'] / ours['protocol']:.1f}x** "
                  f"| {spu['run_s'] / ours['total']:.1f}x | {spu['error']:.1e} | {spu['load']:.2f} |"]
    return lines


def write_doc(path: str, lines, argv, markers=MARKERS, module: str = "e2e",
              target: str = "make bench-e2e") -> None:
    """Replace the block between ``markers`` in the markdown file with the table, its command and machine."""
    with open(path) as f:
        text = f.read()
    begin, end = (text.index(m) for m in markers)
    command = f"python -m mpc_auc.sims.bench.{module} " + " ".join(argv)
    block = [markers[0], "", f"Command: `{command.strip()}` (`{target}`). Machine: {machine()}. "
             f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; the load column is the 1-minute "
             "load average just before each run.", "", *lines, ""]
    with open(path, "w") as f:
        f.write(text[:begin] + "\n".join(block) + text[end:])


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="rows of each run")
    parser.add_argument("--dtypes", nargs="+", choices=DTYPES, default=list(DTYPES),
                        help="score precisions to run (--score-dtype of mpc-auc run); SPU runs on float64")
    parser.add_argument("--spu-python", help="a Python with spu==0.9.5 installed: run SPU's exact AUC beside ours")
    parser.add_argument("--spu-size", type=int, default=CRITEO_M, help="M of the SPU row (one of --sizes)")
    parser.add_argument("--metrics-size", type=int, default=CRITEO_M,
                        help="M of the metrics rows (one of --sizes, float64): the full report and DeLong's test")
    parser.add_argument("--repeat", type=int, default=3, help="runs per M up to 1,000,000 rows; the median run "
                                                              "(by end-to-end time) is reported, with the range")
    parser.add_argument("--data", help="directory for the generated CSV files (default: a temporary one)")
    parser.add_argument("--timeout", type=float, default=120.0, help="the roles' silence limit (mpc-auc --timeout)")
    parser.add_argument("--doc", help="write the results into this markdown file, between the bench-e2e markers")
    args = parser.parse_args(argv)
    print(f"machine: {machine()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        directory = args.data or tmp
        os.makedirs(directory, exist_ok=True)
        rows, spu = [], None
        for dtype, m in ((d, m) for d in args.dtypes for m in sorted(args.sizes)):
            path = dataset(directory, m, dtype)
            runs = sorted((run_ours(path, tmp, args.timeout, dtype)
                           for _ in range(args.repeat if m <= 10 ** 6 else 1)), key=lambda r: r["total"])
            row = dict(runs[len(runs) // 2], runs=[r["total"] for r in runs])
            row["error"] = abs(row["auc"] - reference_auc(path))
            rows.append(row)
            print(f"  done: M={m:,} {dtype} end to end {row['total']:.2f} s, protocol {row['protocol']:.2f} s "
                  f"(input check {row['check']:.2f} s)",
                  file=sys.stderr, flush=True)
            if args.spu_python and m == args.spu_size and dtype == "float64":
                spu = run_spu(args.spu_python, path)
                spu["error"] = abs(spu["auc"] - reference_auc(path))
                print(f"  done: SPU M={m:,} {spu['run_s']:.2f} s", file=sys.stderr, flush=True)
        alone = next((r for r in rows if r["m"] == args.metrics_size and r["dtype"] == "float64"), None)
        metrics = metric_rows(directory, tmp, args.metrics_size, args.timeout, args.repeat, alone) if alone else []
    lines = table(rows, spu)
    lines += ["", "P0's traffic per phase (the median run of each row; **all**: every byte P0 sent, to P1 and the "
                  "dealer, over the whole protocol; hops: protocols.runtime.link.HopClock, a round trip is two):", "",
              *phase_table(rows)]
    if metrics:
        lines += ["", "Metrics from the same sort (docs/protocols/mpc-exact.md) and the AUC under security with abort "
                      "(docs/protocols/malicious-security.md), float64, P0's protocol time:", "", *metrics]
    for dtype in args.dtypes:
        summary = growth([r for r in rows if r["dtype"] == dtype])
        if summary:
            lines += ["", summary]
    print("\n".join(lines))
    if args.doc:
        write_doc(args.doc, lines, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
