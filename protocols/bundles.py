"""A client's input for one compute party: its additive shares, sealed for that party.

Header (clear, authenticated as AEAD associated data): format tag, party
index, row count and client id.  Body: the party's shares mod 2^64 of the
integer score keys and of the labels.  The header is what a relay and the
receiving party learn about a client besides its shares: who it is and how
many rows it holds.
"""
import struct
from dataclasses import dataclass

import numpy as np

from . import sealing, sharing
from .errors import BundleIntegrityError

_TAG = b"MPCAUC1"
_FIXED = struct.Struct(">7sBQH")  # tag, party, rows, client-id length


@dataclass(frozen=True)
class SealedBundle:
    header: bytes
    sealed: bytes

    def fields(self):
        """(party, rows, client) from the header; raises on a malformed header."""
        if len(self.header) < _FIXED.size:
            raise BundleIntegrityError("bundle header is truncated")
        tag, party, rows, id_len = _FIXED.unpack_from(self.header)
        client = self.header[_FIXED.size:]
        if tag != _TAG or len(client) != id_len:
            raise BundleIntegrityError("bundle header is malformed")
        return party, rows, client.decode("utf-8")


def seal_client(client: str, keys: np.ndarray, labels: np.ndarray, party_keys) -> list:
    """Split one client's keys and labels into two sharings and seal share p for party p."""
    key_shares = sharing.split(keys)
    label_shares = sharing.split(labels)
    ident = client.encode("utf-8")
    bundles = []
    for p, recipient in enumerate(party_keys):
        header = _FIXED.pack(_TAG, p, len(keys), len(ident)) + ident
        body = key_shares[p].tobytes() + label_shares[p].tobytes()
        bundles.append(SealedBundle(header, sealing.seal(recipient, body, header)))
    return bundles


def open_bundle(key: sealing.PartyKey, party: int, bundle: SealedBundle):
    """(client, key shares, label shares) of a bundle sealed for this party."""
    addressed, rows, client = bundle.fields()
    if addressed != party:
        raise BundleIntegrityError(f"bundle of client {client!r} is addressed to P{addressed}, not P{party}")
    body = key.open(bundle.sealed, bundle.header)
    if len(body) != 16 * rows:
        raise BundleIntegrityError(f"bundle of client {client!r} does not hold {rows} rows")
    shares = np.frombuffer(body, dtype=np.int64)
    return client, shares[:rows].copy(), shares[rows:].copy()
