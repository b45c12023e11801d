"""Reading evaluation rows (mpc_auc.csv_io): seconds per file, Criteo-scale, each format.

Writes the synthetic Criteo-shaped sets (100 clients) as CSV, CSV.gz, TSV and Parquet into a temporary
directory, then times ``read_evalset`` (read, parse, every check, the frozen EvalSet) on each: the best
of ``--repeat`` runs, rows per second, and the ratio to the product-surface issue's targets
(458,407 rows <= 0.5 s; 4,584,062 rows <= 5 s).

    python -m mpc_auc.sims.bench.read [--sizes 458407 4584062] [--repeat 3]
"""
import argparse
import gzip
import os
import platform
import shutil
import tempfile
import time

import pyarrow as pa
import pyarrow.parquet as pq

from ...csv_io import read_evalset, write_evalset
from ...synthetic import synthetic_evalset

TARGET_S_PER_ROW = 0.5 / 458_407


def _files(directory: str, m: int) -> dict:
    evalset = synthetic_evalset(m=m, clients=100, seed=1)
    csv_path = os.path.join(directory, f"{m}.csv")
    write_evalset(csv_path, evalset)
    with open(csv_path, "rb") as src, gzip.open(csv_path + ".gz", "wb", compresslevel=6) as dst:
        shutil.copyfileobj(src, dst)
    with open(csv_path) as src, open(os.path.join(directory, f"{m}.tsv"), "w") as dst:
        for line in src:
            dst.write(line.replace(",", "\t"))
    pq.write_table(pa.table({"client": evalset.client, "score": evalset.score, "label": evalset.label}),
                   os.path.join(directory, f"{m}.parquet"))
    return {kind: os.path.join(directory, f"{m}.{kind}") for kind in ("csv", "csv.gz", "tsv", "parquet")}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[458_407, 4_584_062], help="rows per file")
    parser.add_argument("--repeat", type=int, default=3, help="runs per file; the best counts")
    args = parser.parse_args(argv)
    print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"pyarrow {pa.__version__}")
    print(f"{'rows':>10} {'format':>8} {'MB':>7} {'best s':>8} {'rows/s':>12} {'target s':>9} {'ratio':>6}")
    with tempfile.TemporaryDirectory(prefix="mpc-auc-bench-read-") as directory:
        for m in args.sizes:
            for kind, path in _files(directory, m).items():
                times = []
                for _ in range(args.repeat):
                    start = time.perf_counter()
                    evalset = read_evalset(path)
                    times.append(time.perf_counter() - start)
                    assert evalset.m == m
                best, target = min(times), m * TARGET_S_PER_ROW
                print(f"{m:>10} {kind:>8} {os.path.getsize(path) / 1e6:>7.1f} {best:>8.3f} {m / best:>12,.0f} "
                      f"{target:>9.2f} {best / target:>6.2f}")


if __name__ == "__main__":
    main()
