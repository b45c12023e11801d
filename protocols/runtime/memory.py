"""The roles' heap (glibc): freed blocks kept for reuse, and handed back between phases.

The roles keep freed blocks in the heap for reuse (``tune_allocator``): inside a
phase the same array sizes come back thousands of times.  Across phases whose arrays differ in size
(opening bundles, the sort's 32-bit steps, the 64-bit moves of the tie groups) the kept blocks would add
up; ``release_free_memory`` at those boundaries returns them (4,584,062 rows: 10.0 GB total peak RSS
without it, 8.7 GB with it, and no slower).
"""
import contextlib
import ctypes


def _glibc():
    """The C library when it is glibc (malloc_trim and mallopt), else None: the heap's settings are then left as
    they are."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        return libc if libc.malloc_trim and libc.mallopt else None
    except (OSError, AttributeError):
        return None


def release_free_memory() -> None:
    """glibc's malloc_trim(0): return every free page of the heap to the system (a no-op elsewhere)."""
    if (libc := _glibc()) is not None:
        libc.malloc_trim(0)


LARGE_ROWS = 1 << 23  # rows from which a job maps its whole vectors apart (map_large_arrays)
MAPPED_BYTES = 32 << 20  # the least array mapped apart then (glibc's greatest mmap threshold)


def map_large_arrays(rows: int) -> None:
    """For a job of at least LARGE_ROWS rows, arrays of MAPPED_BYTES or more (every whole vector there: 4 bytes an
    element make 32 MB at 2^23) each mapped apart and handed back to the system when freed, so that the sizes of
    one phase do not stay in the heap beside the next phase's (at 9,168,124 rows the heap's high-water kept the
    four processes 57 bytes a score above mapping apart); the blocks, of 2^20 elements at most, stay in the heap.
    A smaller job keeps everything in the heap (:func:`tune_allocator`: no page faults per array)."""
    if (libc := _glibc()) is not None:
        libc.mallopt(-4, 1 << 16 if rows >= LARGE_ROWS else 0)  # M_MMAP_MAX
        libc.mallopt(-3, MAPPED_BYTES)  # M_MMAP_THRESHOLD (fixed: glibc's own moves with what is freed)


@contextlib.contextmanager
def repeated_steps(rows: int):
    """Around steps that make the same array sizes again and again (the radix sort's 32-bit digits): every array
    comes from the heap whatever the job's size, so the blocks one step frees serve the next without their pages
    faulting in again; at the end the heap's free pages go back and a job of ``rows`` rows maps its large arrays
    apart again (:func:`map_large_arrays`).  On this VM a page that comes back from the system costs about 2.6 us
    (0.7 s a GB), and a digit at 45,840,617 rows makes some GB of whole vectors at each role: the protocol took
    788 s there with every large array mapped apart, 612 s with the dealer's 32-bit steps in the heap, 471 s with the
    parties' too, for 467 bytes per score over the four processes instead of 417 (the heap's high-water of one
    digit, and the dealer's answers for the next digit held sooner: docs/BENCHMARKS.md)."""
    map_large_arrays(0)
    try:
        yield
    finally:
        release_free_memory()
        map_large_arrays(rows)


def tune_allocator() -> None:
    """Keep freed memory in the heap for reuse (glibc): no mmap per large array, no trimming.

    The MPC phases allocate and free arrays of tens of MB thousands of times;
    with glibc's defaults each one is a fresh mmap whose pages fault in again.
    Measured at M = 4.6 million: 6 radix key bits took 35 s with the defaults, 21 s this way.
    One arena for all threads: a link's I/O thread (protocols.runtime.link) otherwise allocates each
    message in a heap of its own arena, which glibc unmaps once the message is freed, so every message
    faulted its pages in again (P0 of a 3M-pair Gini run: 1.0 s for 1.5 GB received, 0.2 s this way).
    """
    if (libc := _glibc()) is not None:
        libc.mallopt(-4, 0)  # M_MMAP_MAX: serve large blocks from the heap
        libc.mallopt(-1, 2 ** 31 - 1)  # M_TRIM_THRESHOLD: do not hand freed heap back
        libc.mallopt(-2, 256 << 20)  # M_TOP_PAD: grow the heap in 256 MB steps
        libc.mallopt(-8, 1)  # M_ARENA_MAX: the links' I/O threads allocate from the same heap
