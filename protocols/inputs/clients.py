"""What a client checks before it submits: its name and its rows."""
import unicodedata

import numpy as np

from .encoding import ScoreEncoder
from ..errors import InputError


MAX_CLIENT_ID = 256


def check_client_id(client: str, where: str = "") -> None:
    """Raise InputError unless ``client`` is 1..256 characters without control characters."""
    where = f"{where}: " if where else ""
    if not client:
        raise InputError(f"{where}empty client id")
    if len(client) > MAX_CLIENT_ID:
        raise InputError(f"{where}client id of {len(client)} characters (at most {MAX_CLIENT_ID}): {client[:40]!r}...")
    bad = [c for c in client if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]
    if bad:
        raise InputError(f"{where}client id {client!r} contains the control character {bad[0]!r}")


def check_client(client: str, scores, labels, encoder: ScoreEncoder, locate=None) -> None:
    """Raise InputError naming the problem with one client's rows.

    ``locate(i)`` names row i in messages (default: the client and row index).
    """
    locate = locate or (lambda i: f"client {client!r} row {i}")
    scores, labels = np.asarray(scores), np.asarray(labels)
    if scores.ndim != 1 or labels.ndim != 1:
        raise InputError(f"client {client!r}: scores and labels must be one-dimensional")
    if len(scores) != len(labels):
        raise InputError(f"client {client!r}: {len(scores)} scores but {len(labels)} labels")
    if len(scores) == 0:
        raise InputError(f"client {client!r} has no rows")
    encoder.check(scores, locate)
    bad = ~np.isin(labels, (0, 1))
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(f"{locate(i)}: label {np.asarray(labels[i]).item()!r} is not 0 or 1")
