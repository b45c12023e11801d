"""Result files: strict JSON with provenance, CSV tables, all written only when complete.

Every result JSON the commands write is strict (RFC 8259: no NaN or Infinity; a non-finite number
becomes ``null``, e.g. the epsilon of an exact release) and carries a ``provenance`` block: the
package version, the git commit of the checkout if there is one, the arguments, the seed and a UTC
timestamp.
"""
import csv
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np

from .protocols.refused import Refused
from .version import __version__


def strict(value):
    """JSON-safe copy: non-finite floats become None, numpy scalars and arrays plain Python values."""
    if isinstance(value, Refused):
        return value.as_json()
    if isinstance(value, dict):
        return {str(k): strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [strict(v) for v in value]
    if isinstance(value, (np.floating, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, (np.integer, np.bool_)):
        return value.item()
    return value


def git_commit() -> str:
    """The commit of the checkout this package runs from (``+dirty`` with local changes); None outside git."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5)
        if commit.returncode != 0:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                               capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return commit.stdout.strip() + ("+dirty" if dirty else "")


def provenance(arguments: dict, seed=None) -> dict:
    """Who made a result and how: version, commit, arguments, seed, UTC time, machine."""
    return strict({"version": __version__, "git_commit": git_commit(), "arguments": arguments, "seed": seed,
                   "created_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                   "command": " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]),
                   "machine": {"platform": platform.platform(), "python": platform.python_version(),
                               "cpus": os.cpu_count()}})


def write_atomically(path: str, write) -> None:
    """Call ``write(tmp_path)`` on a temporary file beside ``path``, then rename it into place."""
    fd, tmp = tempfile.mkstemp(prefix=".mpc-auc-", dir=os.path.dirname(os.path.abspath(path)))
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def write_json(path: str, payload: dict, indent: int = 2) -> None:
    """Strict JSON (a non-finite number left in ``payload`` is an error), written atomically."""
    text = json.dumps(strict(payload), indent=indent, allow_nan=False) + "\n"

    def write(tmp):
        with open(tmp, "w") as f:
            f.write(text)

    write_atomically(path, write)


def write_text(path: str, text: str) -> None:
    def write(tmp):
        with open(tmp, "w") as f:
            f.write(text)

    write_atomically(path, write)


def write_csv(path: str, rows: list) -> None:
    """One row per dict, columns in the first row's order; non-finite numbers as empty cells."""
    def write(tmp):
        with open(tmp, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(strict(rows))

    write_atomically(path, write)


def read_strict_json(path: str):
    """Parse a result file, refusing NaN and Infinity as RFC 8259 does."""
    def refuse(token):
        raise ValueError(f"{path}: non-standard JSON number {token}")

    with open(path) as f:
        return json.load(f, parse_constant=refuse)
