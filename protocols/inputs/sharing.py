"""Two-party secret sharing (additive mod 2^64, or XOR) with CSPRNG masks."""
import secrets

import numpy as np


def csprng_uint64(n: int) -> np.ndarray:
    """n uniform 64-bit words from the operating system's CSPRNG (``secrets``)."""
    return np.frombuffer(secrets.token_bytes(8 * n), dtype=np.uint64).copy()


def split(values: np.ndarray):
    """Shares (s0, s1) with s0 + s1 = values mod 2^64; each share alone is uniform."""
    values = np.asarray(values, dtype=np.int64).view(np.uint64)
    s0 = csprng_uint64(values.size).reshape(values.shape)
    s1 = values - s0  # wraps mod 2^64
    return s0.view(np.int64), s1.view(np.int64)


def split_xor(values: np.ndarray):
    """Shares (s0, s1) with s0 XOR s1 = values; each share alone is uniform."""
    values = np.asarray(values, dtype=np.int64)
    s0 = csprng_uint64(values.size).reshape(values.shape).view(np.int64)
    return s0, values ^ s0


def combine(s0: np.ndarray, s1: np.ndarray) -> np.ndarray:
    return (np.asarray(s0).view(np.uint64) + np.asarray(s1).view(np.uint64)).view(np.int64)
