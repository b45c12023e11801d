"""What a client checks before it submits: its rows (its name: protocols.runtime.identity.check_client_id)."""
import numpy as np

from .encoding import ScoreEncoder
from ..errors import InputError


def check_client(client: str, scores, labels, encoder: ScoreEncoder, locate=None, columns: int = 1,
                 declared_by: str = None) -> None:
    """Raise InputError naming the problem with one client's rows.

    ``locate(i)`` names row i in messages (default: the client and row index); ``columns``: score columns per
    row (scores then of shape (rows, columns)); ``declared_by``: who declared the encoder's range, when the
    client cannot change it (ScoreEncoder.check).
    """
    locate = locate or (lambda i: f"client {client!r} row {i}")
    scores, labels = np.asarray(scores), np.asarray(labels)
    if columns > 1:
        if scores.ndim != 2 or scores.shape[1] != columns:
            raise InputError(f"client {client!r}: scores must have {columns} columns (one per model), not the "
                             f"shape {scores.shape}")
        for column in scores.T:
            check_client(client, column, labels, encoder, locate, declared_by=declared_by)
        return
    if scores.ndim != 1 or labels.ndim != 1:
        raise InputError(f"client {client!r}: scores and labels must be one-dimensional")
    if len(scores) != len(labels):
        raise InputError(f"client {client!r}: {len(scores)} scores but {len(labels)} labels")
    if len(scores) == 0:
        raise InputError(f"client {client!r} has no rows")
    encoder.check(scores, locate, declared_by)
    bad = ~np.isin(labels, (0, 1))
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(f"{locate(i)}: label {np.asarray(labels[i]).item()!r} is not 0 or 1")
