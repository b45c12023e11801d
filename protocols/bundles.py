"""Sealed bundles: a client's shares for one compute party, and a party's rank shares for one client.

Header (clear, authenticated as AEAD associated data): format tag, party
index, row count, the client's reply public key and the client id.

* Input bundle (client -> party p): p's shares of the integer score keys
  (additive mod 2^64, and XOR shares of key + 2^61 for the radix sort) and
  its additive shares of the labels.  The header is what a relay and the receiving
  party learn about a client besides its shares: who it is, how many rows it
  holds, and the key under which it accepts its ranks.
* Rank bundle (party p -> client): p's shares of twice the global mid-rank of
  each of the client's rows, in the client's row order, signed by p (Ed25519,
  its identity key pinned in the deployment).  Only the client can open it;
  with both parties' valid bundles it recovers its own ranks, nothing else.
"""
import struct
from dataclasses import dataclass

import numpy as np
from cryptography.exceptions import InvalidSignature

from . import sealing, sharing
from .errors import BundleIntegrityError

INPUT_TAG = b"MPCAUC2"
RANK_TAG = b"MPCRNK1"
_FIXED = struct.Struct(">7sBQ32sH")  # tag, party, rows, reply key, client-id length


@dataclass(frozen=True)
class SealedBundle:
    header: bytes
    sealed: bytes
    signature: bytes = b""  # rank bundles: the making party's Ed25519 signature over header and ciphertext

    @property
    def signed_part(self) -> bytes:
        return len(self.header).to_bytes(4, "big") + self.header + self.sealed

    def fields(self, tag: bytes = INPUT_TAG):
        """(party, rows, reply key, client) from the header; raises on a malformed header."""
        if len(self.header) < _FIXED.size:
            raise BundleIntegrityError("bundle header is truncated")
        got, party, rows, reply_to, id_len = _FIXED.unpack_from(self.header)
        client = self.header[_FIXED.size:]
        if got != tag or len(client) != id_len:
            raise BundleIntegrityError("bundle header is malformed")
        return party, rows, reply_to, client.decode("utf-8")


@dataclass(frozen=True)
class OpenedBundle:
    client: str
    key_shares: np.ndarray
    key_xor_shares: np.ndarray  # of the non-negative radix keys
    label_shares: np.ndarray
    reply_to: bytes  # the client's public key for its rank bundles


def _seal(tag, party, rows, reply_to, client, body, recipient) -> SealedBundle:
    ident = client.encode("utf-8")
    header = _FIXED.pack(tag, party, rows, reply_to, len(ident)) + ident
    return SealedBundle(header, sealing.seal(recipient, body, header))


def _open(key: sealing.KeyPair, tag: bytes, bundle: SealedBundle, words_per_row: int):
    party, rows, reply_to, client = bundle.fields(tag)
    body = key.open(bundle.sealed, bundle.header)
    if len(body) != 8 * words_per_row * rows:
        raise BundleIntegrityError(f"bundle of client {client!r} does not hold {rows} rows")
    return party, client, reply_to, np.frombuffer(body, dtype=np.int64).reshape(words_per_row, rows).copy()


def seal_client(client: str, keys: np.ndarray, radix_keys: np.ndarray, labels: np.ndarray, party_keys,
                reply_to: bytes) -> list:
    """Share one client's keys (additively), radix keys (XOR) and labels; seal share p for party p."""
    shares = [sharing.split(keys), sharing.split_xor(radix_keys), sharing.split(labels)]
    return [_seal(INPUT_TAG, p, len(keys), reply_to, client, b"".join(s[p].tobytes() for s in shares), recipient)
            for p, recipient in enumerate(party_keys)]


def open_bundle(key: sealing.KeyPair, party: int, bundle: SealedBundle) -> OpenedBundle:
    """The content of an input bundle sealed for this party."""
    addressed, _, _, client = bundle.fields(INPUT_TAG)
    if addressed != party:
        raise BundleIntegrityError(f"bundle of client {client!r} is addressed to P{addressed}, not P{party}")
    _, client, reply_to, body = _open(key, INPUT_TAG, bundle, 3)
    return OpenedBundle(client, body[0], body[1], body[2], reply_to)


def seal_ranks(party: int, client: str, reply_to: bytes, twice_rank_shares: np.ndarray, sign) -> SealedBundle:
    """Party ``party``'s shares of a client's doubled mid-ranks, sealed for that client and signed by
    ``sign`` (the party's Ed25519 identity key: bytes -> signature)."""
    shares = np.ascontiguousarray(twice_rank_shares, dtype=np.int64)
    bundle = _seal(RANK_TAG, party, len(shares), reply_to, client, shares.tobytes(), reply_to)
    return SealedBundle(bundle.header, bundle.sealed, sign(bundle.signed_part))


def open_ranks(key: sealing.KeyPair, client: str, bundles, party_keys) -> np.ndarray:
    """The client's global 0-based mid-ranks from the two parties' rank bundles (x.5 for ties).

    party_keys: [P0's, P1's] Ed25519 public keys, pinned in the deployment; a bundle without its
    party's valid signature is refused, so a relay cannot forge ranks.
    """
    parts = {}
    for bundle in bundles:
        claimed = bundle.fields(RANK_TAG)[0]
        if claimed not in (0, 1):
            raise BundleIntegrityError("rank bundle names no compute party")
        try:
            party_keys[claimed].verify(bundle.signature, bundle.signed_part)
        except InvalidSignature:
            raise BundleIntegrityError(f"rank bundle for {client!r} is not signed by P{claimed}") from None
        party, addressed, _, body = _open(key, RANK_TAG, bundle, 1)
        if addressed != client:
            raise BundleIntegrityError(f"rank bundle is addressed to client {addressed!r}, not {client!r}")
        parts[party] = body[0]
    if sorted(parts) != [0, 1] or len(parts[0]) != len(parts[1]):
        raise BundleIntegrityError(f"client {client!r} needs one rank bundle from each of P0 and P1")
    return sharing.combine(parts[0], parts[1]) / 2
