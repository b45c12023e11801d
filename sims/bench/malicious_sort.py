"""The radix sort under security with abort (circuits.auth_radix) beside the semi-honest one (circuits.radix).

One session of P0, P1 and the dealer over loopback TCP per size; in it, on the same random keys (bits per
key as given: 62 for float64 scores, 30 for float32), first the semi-honest ranking (the sort and the move of one
column, circuits.radix.RadixRanking.sort), then the authenticated one (the keys' digits entered as P0's
authenticated input, the sort, the move of one column, the last MAC check).  Per mode: seconds, bytes P0 and
P1 wrote, hops (message chains) and the ratios; the model of the message sizes beside (docs/BENCHMARKS.md).

    python -m mpc_auc.sims.bench.malicious_sort [--sizes 100000 458407] [--bits 62]
"""
import argparse
import platform
import time

import numpy as np

from ...circuits.correlations import position_bits
from ...protocols.runtime.session import run_parties

MODES = ("semi-honest", "malicious")


def _party(ctx, m: int, bits: int) -> dict:
    from ...circuits.auth_radix import AuthRadixRanking  # lazily: CrypTen only in the role processes
    from ...circuits.gates import Gates  # lazily: CrypTen only in the role processes
    from ...circuits.macs import Authenticator, value_bits  # lazily: CrypTen only in the role processes
    from ...circuits.radix import RadixRanking  # lazily: CrypTen only in the role processes
    from ...circuits.shares import public_share  # lazily: CrypTen only in the role processes
    from ...circuits.shuffle import Shuffler  # lazily: CrypTen only in the role processes
    from ...protocols.runtime.link import HOPS  # lazily: CrypTen only in the role processes

    keys = np.random.default_rng(m).integers(0, 2 ** bits, m, dtype=np.int64)  # a benchmark's public input
    shuffler, gates = Shuffler(ctx.stream_key), Gates(ctx.stream_key)
    comm, out = shuffler.comm, {}

    def measured(mode, work):
        sent, hops, start = comm.bytes_sent(), HOPS.value, time.perf_counter()
        work()
        out[mode] = {"s": time.perf_counter() - start, "bytes": comm.bytes_sent() - sent, "hops": HOPS.value - hops}

    own = public_share(keys, ctx.rank)
    measured("semi-honest", lambda: RadixRanking(shuffler, gates, bits).sort(None, own, [own]))
    auth = Authenticator(ctx.stream_key, value_bits(m))
    digits = [(keys >> t) & 3 for t in range(0, bits, 2)]

    def authenticated():
        entered = np.stack([auth.input(d if ctx.rank == 0 else None, 0, (m,)) for d in digits])
        ranking = AuthRadixRanking(shuffler, auth)
        ranking.apply(ranking.permutation(entered), entered[:1])
        auth.check("the sort")

    measured("malicious", authenticated)
    out["s"] = auth.s
    return out


def model(m: int, bits: int) -> dict:
    """Bytes each party sends per element in the sort, from the message sizes: semi-honest (6w + 4) / 8 per digit, w = position_bits(M)
    (circuits.radix), authenticated 88 per digit (a 4-row 64-bit shuffle step, the destinations, the digit, three
    products, a 2-row unshuffle step) plus 8 for its input per digit and 32 + 8 for the move of one column."""
    digits = -(-bits // 2)
    w = position_bits(m)
    return {"semi-honest": digits * (6 * w + 4) / 8, "malicious": digits * 96 + 40}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 458_407], help="rows per run")
    parser.add_argument("--bits", type=int, default=62, help="bits per key (62: float64 scores, 30: float32)")
    args = parser.parse_args(argv)
    print(f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}")
    print("| M | mode | s | P0 MB | P1 MB | P0 B/row/key bit | hops | s x | P0 bytes x | hops x | model bytes x | s bits |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for m in args.sizes:
        p0, p1 = run_parties(_party, (m, args.bits), timeout_s=1800)
        expected = model(m, args.bits)
        base = p0["semi-honest"]
        for mode in MODES:
            r = p0[mode]
            print(f"| {m:,} | {mode} | {r['s']:.2f} | {r['bytes'] / 1e6:.1f} | {p1[mode]['bytes'] / 1e6:.1f} "
                  f"| {r['bytes'] / m / args.bits:.2f} | {r['hops']} | {r['s'] / base['s']:.2f} "
                  f"| {r['bytes'] / base['bytes']:.2f} | {r['hops'] / base['hops']:.2f} "
                  f"| {expected[mode] / expected['semi-honest']:.2f} | {p0['s'] if mode == 'malicious' else ''} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
