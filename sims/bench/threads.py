"""The local work of one compute party's radix digit on 1..N worker threads (``mpc-auc --threads``).

One digit of the sort costs a party, besides waiting for messages: expanding its dealer streams (masks,
its next permutation, the one-hot shares), gathering and scattering by permutations, and masking and
unmasking shares (circuits.streams, circuits.correlations).  This runs that work alone, on this machine's
cores, with 1, 2, ... threads (circuits.workers), and prints seconds per digit and the speed-up over one
thread.  It measures the part ``--threads`` splits; the messages and the parts on one thread (packing
narrowed words, the digit selection's arithmetic) stay as they are.

Usage: python -m mpc_auc.sims.bench.threads [--m M] [--threads 1 2 ...] [--repeat R]
"""
import argparse
import secrets
import time

import numpy as np
import torch

from ...circuits import workers
from ...circuits.correlations import RING, mask, unmask
from ...circuits.streams import MASK_IN, MASK_OUT, ONEHOT_SHARE, KeyStream, permute
from ..host import machine


def digit_work(stream: KeyStream, m: int, step: int) -> None:
    """A party's local work of one digit at m rows (both shuffles' steps, its next permutation, the one-hot
    shares): the same calls the sort makes, on random shares."""
    shares = stream.words(MASK_OUT, 10 ** 6 + step, (m, 2), RING)
    own = stream.permutation(step, m)
    for index in (4 * step, 4 * step + 1):  # the shuffle (2 columns) and the unshuffle (1 column)
        a = stream.words(MASK_IN, index, (m, 2), RING)
        masked = mask(shares, a, 1)
        moved = unmask(permute(unmask(shares, masked, 1), own, index % 2 == 1), a, 1)
        shares = stream.words(MASK_OUT, index, (m, 2), RING) + moved
    stream.words(ONEHOT_SHARE, step, (3, m), RING)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=4_584_062, help="rows (default: the large Criteo set's)")
    parser.add_argument("--threads", type=int, nargs="+", default=None,
                        help="thread counts to run (default: 1 up to this machine's cores)")
    parser.add_argument("--repeat", type=int, default=5, help="digits timed per thread count (the median is kept)")
    args = parser.parse_args(argv)
    counts = args.threads or list(range(1, workers.available_cores() + 1))
    stream = KeyStream(secrets.token_bytes(32))
    print(f"machine: {machine()}; M = {args.m:,}")
    print("| threads | s per digit (median) | speed-up over 1 thread |")
    print("|---|---|---|")
    base = None
    for count in counts:
        workers.set_threads(count)
        torch.set_num_threads(count)  # the permutation's sort, as a role sets it (protocols.runtime.roles)
        digit_work(stream, args.m, 0)  # warm-up: pages, the pool
        times = []
        for step in range(1, args.repeat + 1):
            began = time.perf_counter()
            digit_work(stream, args.m, step)
            times.append(time.perf_counter() - began)
        median = float(np.median(times))
        base = base or median
        print(f"| {count} | {median:.3f} | {base / median:.2f}x |", flush=True)
    workers.set_threads(1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
