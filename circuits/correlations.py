"""The dealer's correlations as both sides see them: the shuffle's masking steps and the word format of a dealer answer.

Shared by the dealer (protocols.runtime.dealer), which expands them from the parties' streams, and the
parties' circuits (circuits.shuffle, circuits.select, circuits.radix), which consume them.
"""
import numpy as np
import torch

from .bits import words_of
from .streams import MASK_IN, MASK_OUT, KeyStream, permute

RING = np.int32  # destination vectors and their one-hot selections are shared mod 2^32 (positions < 2^31)


def step_plan(inverse_order: bool):
    """(permuting party, other party) for the two steps of a shuffle or its inverse."""
    return ((1, 0), (0, 1)) if inverse_order else ((0, 1), (1, 0))


def mask(x: np.ndarray, a: np.ndarray, xor_from: int) -> np.ndarray:
    """x - a on the additive columns [0, xor_from), x XOR a on the XOR-shared ones (rows are elements)."""
    out = x - a
    out[:, xor_from:] = x[:, xor_from:] ^ a[:, xor_from:]
    return out


def unmask(x: np.ndarray, a: np.ndarray, xor_from: int) -> np.ndarray:
    """x + a on the additive columns, x XOR a on the XOR-shared ones."""
    out = x + a
    out[:, xor_from:] = x[:, xor_from:] ^ a[:, xor_from:]
    return out


def correction(mask_stream: KeyStream, perm: np.ndarray, backwards: bool, mask_index: int, shape,
               xor_from: int, dtype=np.int64) -> np.ndarray:
    """delta = a[perm] - b (or a[perm^-1] - b; XOR columns: a[perm] ^ b) for the masks of ``mask_stream``."""
    a = mask_stream.words(MASK_IN, mask_index, shape, dtype)
    b = mask_stream.words(MASK_OUT, mask_index, shape, dtype)
    return mask(permute(a, perm, backwards), b, xor_from)


def as_words(values: np.ndarray) -> torch.Tensor:
    """An array of any integer dtype as the int64 tensor a dealer request answers with (zero-padded)."""
    return torch.from_numpy(words_of(values))


def from_words(words: np.ndarray, dtype, shape) -> np.ndarray:
    """The inverse of :func:`as_words`."""
    count = int(np.prod(shape, dtype=np.int64))
    return words.view(dtype)[:count].reshape(shape)
