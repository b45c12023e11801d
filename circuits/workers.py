"""A role's worker threads for its local work on long vectors (``mpc-auc --threads N``).

A compute party's time between messages goes to expanding its dealer streams (AES-CTR, circuits.streams),
gathering and scattering by permutations, and masking and unmasking shares: element-wise work on vectors of
M words, which numpy and ``cryptography``'s AES-CTR do without holding Python's GIL.  :func:`each` cuts
such a vector into one range per thread and works the ranges at once; below :data:`MIN_RANGE` elements a
range is not worth a thread.  The result is the same whatever the number of threads (every range is a
disjoint slice of one output).  Sealing a link's records (AES-GCM) holds the GIL in ``cryptography`` 50
and stays on each link's own I/O thread, beside the computation.
"""
import os
from concurrent.futures import ThreadPoolExecutor

MIN_RANGE = 1 << 17  # elements per thread at least
ENV = "MPC_AUC_THREADS"  # how a command hands its --threads to the roles it starts

_pool = {"threads": 1, "executor": None}


def available_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def set_threads(n: int) -> None:
    """Use n worker threads from now on (1: everything on the calling thread)."""
    if n < 1:
        raise ValueError(f"a role needs at least one thread, not {n}")
    if _pool["executor"] is not None:
        _pool["executor"].shutdown(wait=True)
    _pool.update(threads=n, executor=ThreadPoolExecutor(n, thread_name_prefix="worker") if n > 1 else None)


def threads() -> int:
    return _pool["threads"]


def each(work, n: int, align: int = 1) -> None:
    """Call work(start, stop) over consecutive ranges covering range(n), at once on the worker threads; the
    ranges start at multiples of ``align``.  work must write disjoint parts of its output per range."""
    count = min(_pool["threads"], n // MIN_RANGE)
    if count <= 1:
        work(0, n)
        return
    step = -(-n // count // align) * align
    futures = [_pool["executor"].submit(work, start, min(n, start + step)) for start in range(0, n, step)]
    for future in futures:
        future.result()
