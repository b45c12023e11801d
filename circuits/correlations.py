"""The dealer's correlations as both sides see them: the shuffle's masking steps and the word format of a dealer answer.

Shared by the dealer (protocols.runtime.dealer), which expands them from the parties' streams, and the
parties' circuits (circuits.shuffle, circuits.select, circuits.radix), which consume them.
"""
import numpy as np
import torch

from .bits import words_of
from .workers import each
from .streams import MASK_IN, MASK_OUT, KeyStream, permute

RING = np.int32  # destination vectors and their one-hot selections are shared mod 2^32 (positions < 2^31)


def step_plan(inverse_order: bool):
    """(permuting party, other party) for the two steps of a shuffle or its inverse."""
    return ((1, 0), (0, 1)) if inverse_order else ((0, 1), (1, 0))


def mask(x: np.ndarray, a: np.ndarray, xor_from: int) -> np.ndarray:
    """x - a on the additive columns [0, xor_from), x XOR a on the XOR-shared ones (rows are elements)."""
    return _combine(x, a, xor_from, np.subtract)


def unmask(x: np.ndarray, a: np.ndarray, xor_from: int) -> np.ndarray:
    """x + a on the additive columns, x XOR a on the XOR-shared ones."""
    return _combine(x, a, xor_from, np.add)


def _combine(x: np.ndarray, a: np.ndarray, xor_from: int, additive) -> np.ndarray:
    out = np.empty(np.broadcast_shapes(x.shape, a.shape), dtype=np.result_type(x, a))

    def rows(start: int, stop: int) -> None:  # by elements, on the worker threads
        additive(x[start:stop, :xor_from], a[start:stop, :xor_from], out=out[start:stop, :xor_from])
        np.bitwise_xor(x[start:stop, xor_from:], a[start:stop, xor_from:], out=out[start:stop, xor_from:])

    each(rows, len(out))
    return out


def correction(mask_stream: KeyStream, perm: np.ndarray, backwards: bool, mask_index: int, shape,
               xor_from: int, dtype=np.int64, folded: int = None) -> np.ndarray:
    """delta = a[perm] - b (or a[perm^-1] - b; XOR columns: a[perm] ^ b) for the masks of ``mask_stream``;
    folded: column 0's a is that party's MASK_OUT words of this stream index instead (its share there, which
    it then need not send: circuits.shuffle.Shuffler.shuffle)."""
    a = mask_stream.words(MASK_IN, mask_index, shape, dtype)
    if folded is not None:
        a[:, 0] = mask_stream.words(MASK_OUT, folded, (shape[0],), dtype)
    b = mask_stream.words(MASK_OUT, mask_index, shape, dtype)
    return mask(permute(a, perm, backwards), b, xor_from)


def position_bytes(m: int) -> int:
    """Bytes of a word that hold every position 0..m-1: a sharing of positions is needed only mod 2^(8 bytes),
    so only that many low bytes of each share word travel (:func:`narrow`)."""
    return max(1, -(-(m - 1).bit_length() // 8))


def packed_size(m: int, widths) -> int:
    """Bytes :func:`narrow` makes of m rows whose column j keeps ``widths[j]`` bytes."""
    return m * sum(widths)


def narrow(words: np.ndarray, widths) -> np.ndarray:
    """The low ``widths[j]`` bytes of every word of column j of ``words`` (M, c), column after column, as one
    uint8 array of :func:`packed_size` bytes: what travels of a sharing needed only mod 2^(8 widths[j]) (masked
    words are uniform modulo that too).  Little-endian words, as on every platform the roles run on."""
    words = np.asarray(words)
    return np.concatenate([_pack(words[:, j], w) for j, w in enumerate(widths)]) if len(widths) else \
        np.zeros(0, dtype=np.uint8)


def widen(packed: np.ndarray, widths, dtype, m: int) -> np.ndarray:
    """The words (m, c) of ``dtype`` that :func:`narrow` packed, the bytes above each column's width zero."""
    out = np.empty((m, len(widths)), dtype=dtype)
    packed, at = np.asarray(packed).view(np.uint8).reshape(-1), 0
    for j, w in enumerate(widths):
        size = packed_size(m, (w,))
        out[:, j] = _unpack(packed[at:at + size], w, m, out.dtype)
        at += size
    return out


def _pack(column: np.ndarray, w: int) -> np.ndarray:
    """A column's low w bytes; 3-byte words as the block of their low 16 bits, then the block of their third
    bytes (contiguous blocks: several times faster than interleaving them)."""
    if w == column.dtype.itemsize:
        return np.ascontiguousarray(column).view(np.uint8)
    if w in (1, 2, 4):
        return column.astype(f"uint{8 * w}").view(np.uint8)
    if w != 3:
        raise ValueError(f"a narrowed word keeps 1, 2, 3, 4 or all of its bytes, not {w}")
    n = len(column)
    out = np.empty(3 * n, dtype=np.uint8)
    np.copyto(out[:2 * n].view(np.uint16), column, casting="unsafe")  # the low 16 bits (unsafe: wraps)
    np.copyto(out[2 * n:], column >> 16, casting="unsafe")
    return out


def _unpack(raw: np.ndarray, w: int, m: int, dtype) -> np.ndarray:
    if w == np.dtype(dtype).itemsize:
        return raw.view(dtype)
    if w != 3:
        return raw.view(f"uint{8 * w}")
    out = raw[2 * m:].astype(dtype)
    out <<= 16
    out |= raw[:2 * m].view(np.uint16)
    return out


def as_words(values: np.ndarray) -> torch.Tensor:
    """An array of any integer dtype as the int64 tensor a dealer request answers with (zero-padded)."""
    return torch.from_numpy(words_of(values))


def from_words(words: np.ndarray, dtype, shape) -> np.ndarray:
    """The inverse of :func:`as_words`."""
    count = int(np.prod(shape, dtype=np.int64))
    return words.view(dtype)[:count].reshape(shape)
