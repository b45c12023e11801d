"""Scale benchmark of ``mpc-auc run``: 458,407, 4,584,062, 9,168,124 and 45,840,617 float64 scores, each role's memory
and bytes.

For each M a Criteo-shaped CSV (sims.bench.e2e.dataset: 100 IID clients, binormal scores, AUC 0.77) is
written first (not timed); then ``mpc-auc --quiet run`` runs as a fresh process, as a user types it (P0,
P1 and the dealer local processes over mutually authenticated TLS 1.3, the command the coordinator and
every client).  Measured per M: end-to-end and protocol seconds, the peak RSS of each of the four
processes (the coordinator's ru_maxrss, the others' as their run records state them) and their sum per
score, P0's bytes sent in all and per score per key bit, P0's hops, the high-water of P0's RSS at the end
of each of its phases (where its memory grows: the memory model's "phase"), and |AUC - clear| where the
clear AUC is the mid-rank (Mann-Whitney) AUC of the same file computed by :func:`streaming_auc`, which
reads the CSV in batches (pyarrow) and keeps one count of positives and negatives per distinct score.

A size whose projected peak (each role's peak growing linearly from the two largest sizes measured so far:
:func:`projected`) exceeds the memory this machine has available is not run: the row says so, with the
projection.  ``--doc FILE`` replaces the section between the bench-scale markers of FILE.

Usage: python -m mpc_auc.sims.bench.scale [--sizes M ...] [--data DIR] [--timeout S] [--doc FILE]
"""
import argparse
import os
import re
import sys
import tempfile

import numpy as np

from ...protocols.inputs.encoding import ScoreEncoder
from ..host import machine
from .e2e import CRITEO_FULL_M, GB, dataset, run_ours, write_doc

CRITEO_LOG_M = 45_840_617  # the whole click log the Criteo test sets are drawn from (about 100x 458,407)
# 2 x 4,584,062: the first size past protocols.runtime.memory.LARGE_ROWS (whole vectors mapped apart), from which
# the largest size is projected
SIZES = (458_407, CRITEO_FULL_M, 2 * CRITEO_FULL_M, CRITEO_LOG_M)
MARKERS = ("<!-- bench-scale:start -->", "<!-- bench-scale:end -->")
ROLES = ("coordinator", "P0", "P1", "dealer")
BATCH_ROWS = 1 << 22  # rows per batch of the streaming reference
FIXED_M = 2_000  # rows of the run that measures each role's fixed memory


def streaming_auc(path: str) -> float:
    """The mid-rank AUC of the CSV's (score, label) rows, read in batches of BATCH_ROWS: per batch the distinct
    scores with their positives and negatives, merged into one running table; then AUC = sum over distinct
    scores of pos * (negatives below + neg / 2) / (P N), exact in integers up to the final division."""
    import pyarrow.csv as pacsv  # lazily: only this benchmark reads CSV files with pyarrow

    scores, positives, negatives = np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64)
    reader = pacsv.open_csv(path, read_options=pacsv.ReadOptions(block_size=BATCH_ROWS * 32),
                            convert_options=pacsv.ConvertOptions(include_columns=["score", "label"]))
    for batch in reader:
        s = np.concatenate([scores, batch.column("score").to_numpy()])
        y = batch.column("label").to_numpy().astype(np.int64)
        pos = np.concatenate([positives, y])
        neg = np.concatenate([negatives, 1 - y])
        scores, where = np.unique(s, return_inverse=True)
        positives, negatives = np.bincount(where, pos, len(scores)), np.bincount(where, neg, len(scores))
        positives, negatives = positives.astype(np.int64), negatives.astype(np.int64)
    below = np.cumsum(negatives) - negatives
    twice_u = int(np.sum(positives * (2 * below + negatives), dtype=object))
    return twice_u / (2 * int(positives.sum()) * int(negatives.sum()))


def available_bytes() -> int:
    """MemAvailable of this machine."""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def projected(rows: list, m: int, fixed: dict) -> dict:
    """Each role's peak at M projected linearly from the two largest measured rows (their peaks' growth per added
    score, at least 0), or, with one row, from it and ``fixed`` (each role's peak in a run of FIXED_M rows:
    interpreter, libraries, buffers).  Per added score, not per score: what is fixed or made in chunks (the input
    check's 2^21 rows) does not grow with M."""
    last, *before = sorted(rows, key=lambda r: r["m"], reverse=True)
    base = {"m": FIXED_M, "peaks": fixed} if not before else before[0]
    return {role: last["peaks"][role] + max(0.0, (last["peaks"][role] - base["peaks"][role])
                                            / (last["m"] - base["m"])) * (m - last["m"]) for role in ROLES}


def measure(path: str, directory: str, timeout_s: float) -> dict:
    row = run_ours(path, directory, timeout_s, "float64")
    row["clear_auc"] = streaming_auc(path)
    row["error"] = abs(row["auc"] - row["clear_auc"])
    return row


def table(rows: list, skipped: list, fixed: dict) -> list:
    bits = ScoreEncoder(0.0, 1.0, "float64").key_bits
    lines = ["| M | end to end s | protocol s | peak RSS MB: coordinator / P0 / P1 / dealer | sum B per score "
             "| P0 sent GB | P0 B per score per key bit | P0 hops | abs(AUC - streaming clear) | load |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        p = r["peaks"]
        lines.append(f"| {r['m']:,} | {r['total']:.1f} | {r['protocol']:.1f} "
                     f"| {' / '.join(f'{p[role] / 1e6:,.0f}' for role in ROLES)} "
                     f"| **{sum(p.values()) / r['m']:,.0f}** | {r['sent'] / GB:.2f} | {r['sent'] / r['m'] / bits:.2f} "
                     f"| {r['hops']} | {r['error']:.1e} | {r['load']:.2f} |")
    for m, projection, available in skipped:
        lines.append(f"| {m:,} | not run: projected peak {sum(projection.values()) / GB:.1f} GB "
                     f"({' / '.join(f'{projection[role] / GB:.1f}' for role in ROLES)} GB) > {available / GB:.1f} GB "
                     "available | | | | | | | | |")
    lines += ["", f"Fixed memory (a run of {FIXED_M:,} rows), MB: "
              + " / ".join(f"{fixed[role] / 1e6:,.0f}" for role in ROLES) + "."]
    lines += ["", "P0's peak RSS by the end of each phase (MB; the phase where it rises is where P0's memory peaks):",
              "", "| M | " + " | ".join(re.sub(r"\d{4,}", "M", p["phase"]) for p in rows[0]["p0_phases"]) + " |",
              "|---|" + "---|" * len(rows[0]["p0_phases"])] if rows else []
    for r in rows:
        lines.append(f"| {r['m']:,} | " + " | ".join(f"{p.get('peak_rss', 0) / 1e6:,.0f}" for p in r["p0_phases"])
                     + " |")
    return lines


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="rows of each run (float64)")
    parser.add_argument("--data", help="directory for the generated CSV files (default: a temporary one)")
    parser.add_argument("--timeout", type=float, default=600.0, help="the roles' silence limit (mpc-auc --timeout)")
    parser.add_argument("--doc", help="write the results into this markdown file, between the bench-scale markers")
    args = parser.parse_args(argv)
    print(f"machine: {machine()}", flush=True)
    rows, skipped = [], []
    with tempfile.TemporaryDirectory() as tmp:
        directory = args.data or tmp
        os.makedirs(directory, exist_ok=True)
        fixed = run_ours(dataset(directory, FIXED_M), tmp, args.timeout, "float64")["peaks"]
        print(f"  fixed memory ({FIXED_M:,} rows): "
              + ", ".join(f"{role} {fixed[role] / 1e6:,.0f} MB" for role in ROLES), file=sys.stderr, flush=True)
        for m in sorted(args.sizes):
            if rows:
                projection, available = projected(rows, m, fixed), available_bytes()
                if sum(projection.values()) > available:
                    skipped.append((m, projection, available))
                    print(f"  skipped: M={m:,}: projected peak {sum(projection.values()) / GB:.1f} GB > "
                          f"{available / GB:.1f} GB available", file=sys.stderr, flush=True)
                    continue
            row = measure(dataset(directory, m), tmp, args.timeout)
            rows.append(row)
            print(f"  done: M={m:,}: end to end {row['total']:.1f} s, protocol {row['protocol']:.1f} s, "
                  f"peak RSS {sum(row['peaks'].values()) / m:,.0f} B per score", file=sys.stderr, flush=True)
    lines = table(rows, skipped, fixed)
    print("\n".join(lines))
    if args.doc:
        write_doc(args.doc, lines, argv, MARKERS, "scale", "make bench-scale")
    return 0


if __name__ == "__main__":
    sys.exit(main())
