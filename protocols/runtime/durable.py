"""State files that survive a crash: written atomically and durably, read and changed under an exclusive lock.

A client's own ledger (protocols.inputs.own_ledger) keeps its state this way: a temporary file beside the target,
fsync, rename over it, fsync of the directory, so a process killed mid-write leaves the previous state; changes
are decided and written under one ``flock``, so concurrent processes on one file are serialised.
"""
import fcntl
import os
import tempfile
from contextlib import contextmanager


@contextmanager
def locked(path: str):
    """Hold an exclusive lock on the file ``path`` (made if absent) for the block."""
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def write_durably(path: str, text: str) -> None:
    """Replace ``path`` by ``text``: the old content or the new, never a part of either, whatever stops us."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".ledger-", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
