"""SecretFlow SPU's exact AUC, the side-by-side reference of ``make bench-e2e`` (never imported by mpc-auc).

Runs in its own virtual environment with ``spu==0.9.5`` (the Makefile makes
``.venv-spu``); SPU is not a dependency of the project.  Two processes, one
per SPU party, SEMI2K over 64-bit rings, linked by brpc over loopback; the
beaver triples come from SPU's TrustedFirstParty provider, the best one this
wheel can run (its TrustedThirdParty provider needs a separate beaver server
that the wheel does not ship).  The input is the same CSV the mpc-auc run
reads; the parent makes the secret shares (as the clients would) and is not
timed.

The AUC is the exact, tie-aware Mann-Whitney fraction (fedauc eq. 1 with
mid-ranks) from two oblivious sorts (``jax.lax.sort`` -> SPU's radix sort
for secret keys):
    U = sum over positives i of (N_le(i) + N_lt(i)) / 2,
where N_le counts the negatives whose score is <= s_i (sorted by 2 key + y,
negatives first in a tie) and N_lt those whose score is < s_i (sorted by
2 key + 1 - y, positives first).  The keys are the scores' float64 bit
patterns, order-preserving for the scores in [0, 1].  Only 2U and PN are
opened; the parent divides.

Usage (from the spu environment): python sims/bench/spu_reference.py --input FILE.csv [--sorts 1|2]
``--sorts 1`` times one sort only (N_le: exact when no score repeats), the
lower bound of any sort-based AUC in SPU.  Prints one JSON line.
"""
import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time

import numpy as np


def read_csv(path: str):
    """(keys, labels) of a client,score,label CSV (header on the first line)."""
    data = np.loadtxt(path, delimiter=",", skiprows=1, usecols=(1, 2), dtype=np.float64)
    scores, labels = data[:, 0], data[:, 1].astype(np.int64)
    if scores.min() < 0:
        raise SystemExit("the SPU reference takes scores in [0, 1] (non-negative float64 bit patterns)")
    return scores.view(np.int64).copy(), labels


def auc_function(sorts: int):
    import jax.numpy as jnp  # lazily: jax and spu exist only in the SPU venv
    from jax import lax  # lazily, as above

    def counts(composite, labels):
        _, y = lax.sort((composite, labels), num_keys=1)
        negatives = lax.associative_scan(jnp.add, 1 - y)  # jnp.cumsum lowers to an O(M^2) reduce_window
        return jnp.sum(y * negatives)  # sum over positives of the negatives sorted before them

    def twice_u_and_pn(keys, labels):
        le = counts(keys * 2 + labels, labels)
        lt = counts(keys * 2 + 1 - labels, labels) if sorts == 2 else le
        positives = jnp.sum(labels)
        return le + lt, positives * (labels.shape[0] - positives)

    return twice_u_and_pn


def config():
    import spu  # lazily: only in the SPU venv

    cfg = spu.RuntimeConfig(protocol=spu.ProtocolKind.SEMI2K, field=spu.FieldType.FM64)
    cfg.beaver_type = spu.RuntimeConfig.BeaverType.TrustedFirstParty
    cfg.sort_method = spu.RuntimeConfig.SortMethod.SORT_RADIX
    return cfg


def party(job_file: str, rank: int) -> None:
    """One SPU party: link up, take its shares, run, write its output shares."""
    import spu  # lazily: only in the SPU venv

    with open(job_file, "rb") as f:
        job = pickle.load(f)
    desc = spu.link.Desc()
    for r, port in enumerate(job["ports"]):
        desc.add_party(f"party{r}", f"127.0.0.1:{port}")
    desc.recv_timeout_ms = 600_000
    link = spu.link.create_brpc(desc, rank)
    runtime = spu.Runtime(link, config())
    executable = spu.libspu.Executable()
    executable.ParseFromString(job["executable"])
    for name, (meta, chunks) in zip(job["inputs"], job["shares"][rank]):
        share = spu.libspu.Share()
        share.meta, share.share_chunks = meta, chunks
        runtime.set_var(name, share)
    link.barrier()
    start = time.perf_counter()
    runtime.run(executable)
    outputs = [runtime.get_var(name) for name in job["outputs"]]
    wall = time.perf_counter() - start
    with open(f"{job_file}.{rank}", "wb") as f:
        pickle.dump({"wall": wall, "outputs": [(o.meta, list(o.share_chunks)) for o in outputs]}, f)
    link.stop_link()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True, help="client,score,label CSV")
    parser.add_argument("--sorts", type=int, choices=(1, 2), default=2, help="2: exact tie-aware AUC; 1: one sort")
    parser.add_argument("--ports", type=int, nargs=2, default=(61920, 61921), help="loopback ports of the parties")
    parser.add_argument("--party", nargs=2, metavar=("JOB", "RANK"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.party:
        party(args.party[0], int(args.party[1]))
        return 0
    import jax  # lazily: only in the SPU venv
    import spu  # lazily, as above
    import spu.utils.frontend as frontend  # lazily, as above

    jax.config.update("jax_enable_x64", True)
    keys, labels = read_csv(args.input)
    executable, _ = frontend.compile(frontend.Kind.JAX, auc_function(args.sorts), (keys, labels), {},
                                     ["keys", "labels"], [spu.Visibility.VIS_SECRET] * 2,
                                     lambda out: [f"out{i}" for i in range(len(out))])
    io = spu.Io(2, config())
    shares = [io.make_shares(x, spu.Visibility.VIS_SECRET) for x in (keys, labels)]
    job = {"ports": list(args.ports), "executable": executable.SerializeToString(), "inputs": ["keys", "labels"],
           "outputs": list(executable.output_names),
           "shares": [[(s[r].meta, list(s[r].share_chunks)) for s in shares] for r in range(2)]}
    with tempfile.TemporaryDirectory() as tmp:
        job_file = os.path.join(tmp, "job.pkl")
        with open(job_file, "wb") as f:
            pickle.dump(job, f)
        start = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, __file__, "--input", args.input, "--party", job_file, str(r)])
                 for r in range(2)]
        if any(p.wait() != 0 for p in procs):
            raise SystemExit("an SPU party failed")
        wall = time.perf_counter() - start
        results = []
        for r in range(2):
            with open(f"{job_file}.{r}", "rb") as f:
                results.append(pickle.load(f))
    opened = []
    for i in range(len(job["outputs"])):
        parts = []
        for r in range(2):
            share = spu.libspu.Share()
            share.meta, share.share_chunks = results[r]["outputs"][i]
            parts.append(share)
        opened.append(int(io.reconstruct(parts)))
    twice_u, pn = opened
    print(json.dumps({"m": int(keys.size), "sorts": args.sorts, "auc": twice_u / (2 * pn),
                      "run_s": max(r["wall"] for r in results), "processes_s": wall,
                      "spu": spu.__version__, "protocol": "SEMI2K FM64", "beaver": "TrustedFirstParty"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
