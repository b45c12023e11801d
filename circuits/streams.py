"""Keyed pseudo-random streams shared by the dealer and one compute party.

The dealer draws a 256-bit key per compute party with ``secrets`` and gives it
to that party alone.  Both then expand the key with ChaCha20 (via
``cryptography``) at an agreed (purpose, index) nonce, so the bulk
correlated randomness of the oblivious shuffle (masks and permutations)
never crosses the network: only the dealer's corrections do.

A random permutation is the argsort of fresh 64-bit words (ties, if any,
broken by position, so every holder derives the same permutation).  Its
distance from uniform is at most the chance of a repeated word,
M^2 / 2^65 (below 2^-21 for M = 4.6 million).
"""
import struct

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms

KEY_BYTES = 32

# nonce purposes
MASK_IN = 1  # the mask a the sender subtracts before sending
MASK_OUT = 2  # the mask b that becomes the sender's new share
PERMUTATION = 3
DIGIT_MASK = 4  # a party's XOR share of the dealer's random digit r
ONEHOT_SHARE = 5  # P1's shares of the one-hot vector of r
PRODUCT_MASK = 6  # a party's shares of the Beaver masks b
PRODUCT_SHARE = 7  # P1's share of b[r]
BIT_MASK = 8  # a party's XOR share of the dealer's packed random bits r (circuits.bits)
BIT_SHARE = 9  # P1's arithmetic shares of the bits of r


def check_key(key) -> None:
    if not isinstance(key, (bytes, bytearray)) or len(key) != KEY_BYTES:
        raise ValueError(f"a stream key has {KEY_BYTES} bytes")


class KeyStream:
    """ChaCha20 keystream under one key, addressed by (purpose, index)."""

    def __init__(self, key: bytes):
        check_key(key)
        self._key = bytes(key)

    def words(self, purpose: int, index: int, shape) -> np.ndarray:
        """Uniform int64 words (mod 2^64) of ``shape``, the same for every holder of the key."""
        count = int(np.prod(shape, dtype=np.int64))
        nonce = struct.pack("<IIQ", 0, purpose, index)  # ChaCha20: 32-bit block counter, 96-bit nonce
        encryptor = Cipher(algorithms.ChaCha20(self._key, nonce), mode=None).encryptor()
        out = np.empty(count, dtype=np.int64)
        encryptor.update_into(bytes(8 * count), memoryview(out).cast("B"))  # keystream = E(zeros)
        return out.reshape(shape)

    def permutation(self, index: int, n: int) -> np.ndarray:
        """A random permutation of range(n) as an index array (apply as ``x[perm]``)."""
        words = self.words(PERMUTATION, index, (n,)).view(np.uint64)
        perm = np.argsort(words)  # the fast unstable sort is deterministic when no word repeats
        ordered = words[perm]
        if (ordered[1:] == ordered[:-1]).any():
            perm = np.argsort(words, kind="stable")  # the same order on every holder of the key
        return perm


def permute(rows: np.ndarray, perm: np.ndarray, backwards: bool) -> np.ndarray:
    """rows[perm] (forwards), or the y with y[perm] = rows (backwards, i.e. rows[perm^-1]).

    Rows are the first axis, so a multi-column element moves as one
    contiguous record (one cache miss, not one per column).
    """
    if not backwards:
        return rows[perm]
    out = np.empty_like(rows)
    out[perm] = rows
    return out
