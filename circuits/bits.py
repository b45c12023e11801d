"""Bit packing: 64 lanes per int64 word, bit planes, and arrays of any integer type as words.

Lane l of word w holds element 64 w + l (numpy's little-endian bit order
within each byte).  Used by the gates' bit conversions (circuits.gates), the
bit-sliced comparisons (circuits.comparators), the dealer's correlations and
the kernels; numpy only.
"""
import numpy as np

LANES = 64


def pack_bits(bits: np.ndarray) -> np.ndarray:
    """(..., n) 0/1 values -> (..., ceil(n/64)) int64 words, lane l of word w = element 64 w + l."""
    bits = np.asarray(bits)
    n = bits.shape[-1]
    words = -(-n // LANES)
    padded = np.zeros(bits.shape[:-1] + (words * LANES,), dtype=np.uint8)
    padded[..., :n] = bits
    return np.packbits(padded, axis=-1, bitorder="little").view(np.int64)


def planes(values: np.ndarray, bits: int) -> np.ndarray:
    """(..., n) integers in [0, 2^bits) -> (bits, ..., ceil(n/64)) int64 bit planes, the highest bit first.

    Byte by byte: each byte column is copied out once and its 8 bits packed straight from it (numpy's packbits
    counts any non-zero byte as a 1), 15x faster than unpacking whole words and transposing.
    """
    values = np.asarray(values, dtype=np.int64)
    lead, n = values.shape[:-1], values.shape[-1]
    words = -(-n // LANES)
    padded = np.zeros(lead + (words * LANES,), dtype=np.int64)
    padded[..., :n] = values
    octets = padded.view(np.uint8).reshape(lead + (words * LANES, 8))  # little-endian: byte k holds bits 8k..8k+7
    out = np.empty((bits,) + lead + (words,), dtype=np.int64)
    for k in range(-(-bits // 8)):
        column = np.ascontiguousarray(octets[..., k])
        for b in range(min(8, bits - 8 * k)):
            packed = np.packbits(column & np.uint8(1 << b), axis=-1, bitorder="little")
            out[bits - 1 - 8 * k - b] = packed.view(np.int64)
    return out


def words_of(values: np.ndarray) -> np.ndarray:
    """The bytes of an array of any integer dtype as int64 words, the last zero-padded."""
    raw = np.ascontiguousarray(values).view(np.uint8).reshape(-1)
    padded = np.zeros(-(-raw.size // 8) * 8, dtype=np.uint8)
    padded[:raw.size] = raw
    return padded.view(np.int64)


def unpack_bits(words: np.ndarray, count: int, dtype=np.int64) -> np.ndarray:
    """(R, W) int64 words -> (R, count) 0/1 values of ``dtype``: lane l of word w is bit 64 w + l."""
    bits = np.unpackbits(words.view(np.uint8).reshape(words.shape[0], -1), axis=1, bitorder="little")
    return bits[:, :count].astype(dtype, copy=False)
