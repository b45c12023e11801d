"""Hostile input files against the readers' limits (mpc_auc.csv_io.ReadLimits), at full size.

Writes each file of :data:`HOSTILE` into a temporary directory, then reads it with ``mpc-auc run`` (the default
limits) in a child process of its own: its exit status, its one-line error and its peak RSS above a child that
reads a small good file (the baseline: Python, pyarrow and the command's imports).  Each is refused but one,
``parquet-long-dictionary-value``, which is within the limits and read.  docs/api.md, "Reading limits", records
a run.

    python -m mpc_auc.sims.security.hostile_inputs [--only NAME ...]
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ...cli import main as cli

HEADER = b"client,score,label\n"
GOOD = "client,score,label\na,0.9,1\na,0.2,0\nb,0.4,0\nb,0.7,1\n"  # the baseline's file: 4 rows
BLOCK = 1 << 20


def parquet_bomb(path, rows: int, group: int = 10_000_000) -> None:
    """``rows`` identical rows (a dictionary-encoded client, score 0.5, label 1) in row groups of ``group``: each
    column's pages run-length encoded, a few bytes for millions of rows."""
    schema = pa.schema({"client": pa.dictionary(pa.int32(), pa.string()), "score": pa.float64(), "label": pa.int8()})
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        for start in range(0, rows, group):
            n = min(group, rows - start)
            client = pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array(["c" * 64]))
            writer.write_table(pa.table({"client": client, "score": np.full(n, 0.5), "label": np.ones(n, np.int8)},
                                        schema=schema))


def long_dictionary_value(path, rows: int, length: int = 250) -> None:
    """``rows`` rows of two clients whose ids have ``length`` characters (a client id may have 256), each id
    stored once in the Parquet dictionary; scores spread over [0, 1] to 2 decimals, labels alternating.  Within
    the limits: it is read, a pointer a row for its ids (main widened every row to the longest id: 1,000 bytes)."""
    codes = np.arange(rows, dtype=np.int32) % 2
    client = pa.DictionaryArray.from_arrays(pa.array(codes), pa.array(["a" * length, "b" * length]))
    scores = np.round(np.linspace(0, 1, rows), 2)
    pq.write_table(pa.table({"client": client, "score": scores, "label": codes.astype(np.int8)}), path,
                   compression="zstd")


def gzip_bomb(path, rows: int) -> None:
    """A header and ``rows`` short rows (``a,0.5,1``), gzip at level 9 from one repeated block."""
    row = b"a,0.5,1\n"
    per_block = BLOCK // len(row)
    block = row * per_block
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: the gzip container
    with open(path, "wb") as out:
        out.write(packer.compress(HEADER))
        for _ in range(rows // per_block):
            out.write(packer.compress(block))
        out.write(packer.compress(row * (rows % per_block)))
        out.write(packer.flush())


def long_header(path, length: int) -> None:
    """A gzip file whose header line is ``length`` bytes: the wanted columns, then one long column name."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    with open(path, "wb") as out:
        out.write(packer.compress(HEADER.rstrip(b"\n") + b","))
        block = b"x" * BLOCK
        for _ in range(length // BLOCK):
            out.write(packer.compress(block))
        out.write(packer.compress(b"\na,0.5,1,\nb,0.2,0,\n"))
        out.write(packer.flush())


def wide_header(path, columns: int) -> None:
    """A header of ``columns`` one-letter names before the wanted ones, and one row."""
    with open(path, "wb") as out:
        out.write(b"x," * columns + HEADER + b"0," * columns + b"a,0.5,1\n")


def nested_scores(path, kind: str) -> None:
    """A Parquet file whose score column holds a list (``kind`` "list") or a struct of numbers a row."""
    score = [[0.1], [0.9]] if kind == "list" else [{"p": 0.1}, {"p": 0.9}]
    pq.write_table(pa.table({"client": ["a", "b"], "score": score, "label": [0, 1]}), path)


def odd_number(path, text: str) -> None:
    """A CSV whose second row's score is ``text``."""
    with open(path, "w", encoding="utf-8") as out:
        out.write(f"client,score,label\na,0.5,1\nb,{text},0\n")


HOSTILE = {  # name: (writer, its argument at full size)
    "parquet-bomb": (parquet_bomb, 250_000_000),
    "parquet-long-dictionary-value": (long_dictionary_value, 5_000_000),
    "gzip-bomb": (gzip_bomb, 210_000_000),
    "gzip-1GB-header": (long_header, 1 << 30),
    "header-1e6-columns": (wide_header, 1_000_000),
    "parquet-list-score": (nested_scores, "list"),
    "parquet-struct-score": (nested_scores, "struct"),
    "score-0.5_1": (odd_number, "0.5_1"),
    "score-arabic-indic-comma": (odd_number, "\u0660\u066b\u0665"),
    "score-arabic-indic-point": (odd_number, "\u0660.\u0665"),
    "score-1e-400": (odd_number, "1e-400"),
    "score-1e400": (odd_number, "1e400"),
}


def _child(path: str, out: str) -> None:
    """Read ``path`` as ``mpc-auc run`` does; print the exit status and this process's peak RSS as JSON (VmHWM:
    ru_maxrss would count the parent's RSS at the fork)."""
    code = cli(["--quiet", "run", "--input", path, "--protocol", "clear", "--out", out])
    with open("/proc/self/status") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    print(json.dumps({"exit": code, "peak_bytes": peak * 1024}))


def measure(path: str, directory: str) -> dict:
    """{exit, peak_bytes, error (the first line of stderr), lines (of stderr), seconds} of reading ``path``."""
    start = time.perf_counter()
    out = os.path.join(directory, "o.json")
    done = subprocess.run([sys.executable, "-m", f"{__package__}.hostile_inputs", "--child", path, out],
                          capture_output=True, text=True, check=True)
    record = json.loads(done.stdout.strip().splitlines()[-1])
    errors = done.stderr.strip().splitlines()
    return {**record, "error": errors[0] if errors else "", "lines": len(errors),
            "seconds": time.perf_counter() - start}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=sorted(HOSTILE), help="these files only (default: all)")
    parser.add_argument("--child", nargs=2, metavar=("PATH", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child(*args.child)
    print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"pyarrow {pa.__version__}")
    with tempfile.TemporaryDirectory(prefix="mpc-auc-hostile-") as directory:
        good = os.path.join(directory, "good.csv")
        with open(good, "w") as f:
            f.write(GOOD)
        baseline = measure(good, directory)
        print(f"baseline (a 4-row CSV): exit {baseline['exit']}, peak RSS {baseline['peak_bytes'] / 2**20:.0f} MiB")
        print("| file | size on disk | exit | peak RSS above baseline | s | message |\n|---|---|---|---|---|---|")
        for name in args.only or HOSTILE:
            writer, size = HOSTILE[name]
            path = os.path.join(directory, name)
            writer(path, size)
            got = measure(path, directory)
            above = (got["peak_bytes"] - baseline["peak_bytes"]) / 2**20
            message = got["error"].replace(path, name).replace("|", "\\|")
            print(f"| {name} | {os.path.getsize(path):,} B | {got['exit']} | {above:+.0f} MiB | {got['seconds']:.1f} | "
                  f"{message} |", flush=True)
            os.remove(path)


if __name__ == "__main__":
    main()
