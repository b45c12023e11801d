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
               xor_from: int, widths, dtype=np.int64, folded: int = None, skipped: int = 0) -> np.ndarray:
    """delta = a[perm] - b (or a[perm^-1] - b; XOR columns: a[perm] ^ b) for the masks of ``mask_stream``, narrowed
    (:func:`narrow`: column j to ``widths[j]`` bytes; the first ``skipped`` columns, which take no correction, left
    out), zero-padded to whole 64-bit words; folded: column 0's a is that party's MASK_OUT words of this stream
    index instead (its share there, which it then need not send: circuits.shuffle.Shuffler.shuffle).  Column by
    column (the masks lie column after column: KeyStream.elements), and only one column's a is a whole vector (and
    a[perm^-1] backwards): a[perm], b and delta are made block by block (:func:`row_blocks`)."""
    m, c = shape
    out, at = np.zeros(-(-packed_size(m, widths[skipped:]) // 8) * 8, dtype=np.uint8), 0
    for j in range(skipped, c):
        a = mask_stream.words(MASK_OUT, folded, (m,), dtype) if j == 0 and folded is not None else \
            mask_stream.words(MASK_IN, mask_index, (m,), dtype, first=j * m)
        if backwards:  # a scatter: whole
            a = permute(a, perm, True)
        combine = np.subtract if j < xor_from else np.bitwise_xor
        size = packed_size(m, (widths[j],))
        for start, stop in row_blocks(m):
            moved = a[start:stop] if backwards else permute(a, perm[start:stop], False)
            combine(moved, mask_stream.words(MASK_OUT, mask_index, (stop - start,), dtype, first=j * m + start),
                    out=moved)
            narrow_rows_into(out[at:at + size], moved[:, None], (widths[j],), m, start)
        at += size
    return out


def position_bits(m: int) -> int:
    """Bits of a word that hold every position 0..m-1, ceil(log2 m) (at least 1): a sharing of positions is needed
    only mod 2^bits, so only that many low bits of each share word travel (:func:`narrow`)."""
    return max(1, (m - 1).bit_length())


def packed_size(m: int, widths) -> int:
    """Bytes :func:`narrow` makes of m rows whose column j keeps its ``widths[j]`` low bits: m widths[j] / 8,
    each bit plane rounded up to a whole byte."""
    return sum(m * (bits // 8) + bits % 8 * -(-m // 8) for bits in widths)


def low_bits(values: np.ndarray, bits: int) -> np.ndarray:
    """values mod 2^bits (of their dtype): what a sharing needed only modulo that opens to."""
    if bits >= 8 * values.dtype.itemsize:
        return values
    return values & values.dtype.type((1 << bits) - 1)


BLOCK_ROWS = 1 << 20  # elements per block of a long vector's local work: bounds its temporaries (a multiple of 16)


def row_blocks(m: int, whole: bool = False) -> list:
    """(start, stop) ranges of at most BLOCK_ROWS elements covering range(m), in order; one range if ``whole``
    (an audit recording whole vectors).  Every start is a multiple of 16, so a block's stream words begin on a
    whole AES block (circuits.streams.KeyStream.words, ``first``)."""
    step = max(m, 1) if whole else BLOCK_ROWS
    return [(start, min(m, start + step)) for start in range(0, m, step)]


def narrow(words: np.ndarray, widths) -> np.ndarray:
    """The low ``widths[j]`` bits of every word of column j of ``words`` (M, c), column after column, as one
    uint8 array of :func:`packed_size` bytes: what travels of a sharing needed only mod 2^widths[j] (masked
    words are uniform modulo that too).  A column of b bits is its words' whole low bytes (b // 8 of them:
    :func:`_pack_bytes`), then the b % 8 bits above those as bit planes, eight words a byte (:func:`_pack_bits`).  Little-endian
    words, as on every platform the roles run on."""
    words = np.asarray(words)
    out = np.empty(packed_size(len(words), widths), dtype=np.uint8)
    narrow_rows_into(out, words, widths, len(words), 0)
    return out


def widen(packed: np.ndarray, widths, dtype, m: int) -> np.ndarray:
    """The words (m, c) of ``dtype`` that :func:`narrow` packed, the bytes above each column's width zero."""
    return widen_rows(packed, widths, dtype, m, 0, m)


def narrow_rows_into(out: np.ndarray, block: np.ndarray, widths, m: int, start: int) -> None:
    """Write rows [start, start + len(block)) of an (m, c) array narrowed by :func:`narrow` into its packed
    bytes ``out``, from those rows alone (``block``; start a multiple of 8 where a width is not whole bytes): a
    message made block by block is byte for byte the whole one."""
    at = 0
    for j, bits in enumerate(widths):
        whole, rest = divmod(bits, 8)
        if whole:
            _pack_bytes(out[at:at + m * whole], block[:, j], whole, m, start)
        if rest:
            _pack_bits(out[at + m * whole:], block[:, j], 8 * whole, rest, m, start)
        at += packed_size(m, (bits,))


def widen_rows(packed: np.ndarray, widths, dtype, m: int, start: int, stop: int) -> np.ndarray:
    """Rows [start, stop) of :func:`widen`'s (m, c) words, read from those rows' bytes alone."""
    out = np.empty((stop - start, len(widths)), dtype=dtype)
    packed, at = np.asarray(packed).view(np.uint8).reshape(-1), 0
    for j, bits in enumerate(widths):  # each column made whole, then written once into its strided place
        whole, rest = divmod(bits, 8)
        column = _unpack_bytes(packed[at:at + m * whole], whole, m, start, stop, out.dtype) if whole else 0
        if rest and whole:  # the high bits shifted into place, then the low bytes added (in the column's place when
            # it is contiguous, the only column; else made whole first: numpy is slower on strided operands)
            target = out[:, 0] if len(widths) == 1 else np.empty(stop - start, dtype=out.dtype)
            np.left_shift(_unpack_bits(packed[at + m * whole:], rest, m, start, stop), 8 * whole, out=target,
                          dtype=out.dtype)
            np.bitwise_or(target, column, out=target)
            if len(widths) > 1:
                out[:, j] = target
        else:
            out[:, j] = column if whole else _unpack_bits(packed[at:], rest, m, start, stop)
        at += packed_size(m, (bits,))
    return out


def _pack_bytes(region: np.ndarray, column: np.ndarray, w: int, m: int, start: int) -> None:
    """Words [start, start + n) of a column of m words, its low w bytes, into the column's packed ``region``; 3-byte
    words as the block of their low 16 bits, then the block of their third bytes (contiguous blocks: several times
    faster than interleaving them)."""
    n = len(column)
    if w in (1, 2, 4, 8) and w <= column.dtype.itemsize:
        np.copyto(region[w * start:w * (start + n)].view(f"uint{8 * w}"), column, casting="unsafe")  # wraps
    elif w == 3:
        np.copyto(region[2 * start:2 * (start + n)].view(np.uint16), column, casting="unsafe")
        np.copyto(region[2 * m + start:2 * m + start + n], column >> 16, casting="unsafe")
    else:
        raise ValueError(f"a narrowed word keeps 1, 2, 3, 4 or all of its whole bytes, not {w}")


def _unpack_bytes(region: np.ndarray, w: int, m: int, start: int, stop: int, dtype) -> np.ndarray:
    if w == np.dtype(dtype).itemsize:
        return region[w * start:w * stop].view(dtype)
    if w != 3:
        return region[w * start:w * stop].view(f"uint{8 * w}")
    out = region[2 * m + start:2 * m + stop].astype(dtype)
    out <<= 16
    out |= region[2 * start:2 * stop].view(np.uint16)
    return out


def _plane_rows(start: int) -> int:
    """The byte where row ``start`` begins in a bit plane (eight rows a byte)."""
    if start % 8:
        raise ValueError(f"packed bits are written and read from a multiple of 8 rows, not from row {start}")
    return start // 8


def _pack_bits(out: np.ndarray, column: np.ndarray, shift: int, bits: int, m: int, start: int) -> None:
    """Bits [shift, shift + bits) of words [start, start + n) of a column of m words (bits < 8) into ``out``, its
    ``bits`` planes: plane j holds bit shift + j of every word, eight words a byte, the first in the lowest bit
    (numpy's packbits, little bit order)."""
    high = np.ascontiguousarray(np.asarray(column)[:, None].view(np.uint8)[:, shift // 8])  # byte shift / 8 of
    # each little-endian word, copied once
    plane, first = -(-m // 8), _plane_rows(start)
    flags = np.empty(len(high), dtype=np.uint8)
    for j in range(bits):
        np.bitwise_and(high, np.uint8(1 << j), out=flags)  # packbits packs any non-zero byte as a one
        packed = np.packbits(flags, bitorder="little")
        out[j * plane + first:j * plane + first + len(packed)] = packed


def _unpack_bits(region: np.ndarray, bits: int, m: int, start: int, stop: int) -> np.ndarray:
    """Rows [start, stop) of the values of ``bits`` bits :func:`_pack_bits` wrote into ``region``, as uint8."""
    plane, first, n = -(-m // 8), _plane_rows(start), stop - start
    out = None
    for j in range(bits):
        ones = np.unpackbits(region[j * plane + first:j * plane + first + -(-n // 8)], count=n, bitorder="little")
        if out is None:
            out = ones
            continue
        ones *= np.uint8(1 << j)  # (a product: numpy shifts bytes without its vector units)
        out |= ones
    return out


def as_words(values: np.ndarray) -> torch.Tensor:
    """An array of any integer dtype as the int64 tensor a dealer request answers with (zero-padded)."""
    return torch.from_numpy(words_of(values))


def from_words(words: np.ndarray, dtype, shape) -> np.ndarray:
    """The inverse of :func:`as_words`."""
    count = int(np.prod(shape, dtype=np.int64))
    return words.view(dtype)[:count].reshape(shape)
