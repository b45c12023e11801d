"""Sealing a byte string for one role: X25519 + HKDF-SHA256 + ChaCha20-Poly1305.

The recipient is a compute party (a client's shares), the dealer (a client's
MAC keys under security with abort) or a client (its ranks, under its reply
key).  A fresh ephemeral X25519 key per message is agreed with the recipient's static
public key; HKDF over the shared secret and both public keys gives the AEAD
key.  The associated data (clear but authenticated) binds the header, so a
relay can route but neither read nor alter a bundle, and a bundle sealed for
one party cannot be opened by the other.
"""
import secrets

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

from ..errors import BundleIntegrityError

_INFO = b"mpc-auc sealed bundle v1"
_NONCE = 12
_PUB = 32
_TAG = 16  # ChaCha20-Poly1305's tag


def _raw(public_key: X25519PublicKey) -> bytes:
    return public_key.public_bytes(Encoding.Raw, PublicFormat.Raw)


def _aead_key(shared: bytes, ephemeral_pub: bytes, recipient_pub: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                info=_INFO + ephemeral_pub + recipient_pub).derive(shared)


class KeyPair:
    """A static X25519 key pair (a compute party's, or a client's for its replies); the private half stays with its owner."""

    def __init__(self, private: X25519PrivateKey = None):
        self._private = private or X25519PrivateKey.generate()
        self.public = _raw(self._private.public_key())

    def private_pem(self) -> bytes:
        """The private half as PKCS#8 PEM, for its owner's key file (protocols.runtime.identity)."""
        return self._private.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())

    def derived(self, label: bytes, length: int = 32) -> bytes:
        """``length`` bytes derived from the private half (HKDF-SHA256, ``label`` as its info): its owner's secrets
        bound to this key, which it need not store (a client's MAC keys for its ranks: protocols.inputs.bundles)."""
        raw = self._private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        return HKDF(algorithm=hashes.SHA256(), length=length, salt=None, info=label).derive(raw)

    def open(self, sealed: bytes, aad: bytes) -> bytes:
        if len(sealed) < sealed_size(0):
            raise BundleIntegrityError("sealed bundle is truncated")
        ephemeral_pub, nonce, body = sealed[:_PUB], sealed[_PUB:_PUB + _NONCE], sealed[_PUB + _NONCE:]
        shared = self._private.exchange(X25519PublicKey.from_public_bytes(ephemeral_pub))
        try:
            return ChaCha20Poly1305(_aead_key(shared, ephemeral_pub, self.public)).decrypt(nonce, body, aad)
        except InvalidTag:
            raise BundleIntegrityError(
                "bundle failed authentication: it was modified or sealed for another party") from None


def sealed_size(plaintext_bytes: int) -> int:
    """The bytes :func:`seal` makes of ``plaintext_bytes``: the ephemeral key, the nonce, the text and its tag."""
    return _PUB + _NONCE + plaintext_bytes + _TAG


def seal(recipient_pub: bytes, plaintext: bytes, aad: bytes) -> bytes:
    ephemeral = X25519PrivateKey.generate()
    ephemeral_pub = _raw(ephemeral.public_key())
    shared = ephemeral.exchange(X25519PublicKey.from_public_bytes(recipient_pub))
    nonce = secrets.token_bytes(_NONCE)
    body = ChaCha20Poly1305(_aead_key(shared, ephemeral_pub, recipient_pub)).encrypt(nonce, plaintext, aad)
    return ephemeral_pub + nonce + body
