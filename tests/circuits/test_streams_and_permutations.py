"""The keyed streams and the shuffles' permutations (circuits.streams), and the division's digit width
(circuits.division): no MPC."""
import itertools
import secrets
import struct
from collections import Counter

import numpy as np
import pytest
from scipy.stats import chisquare

from mpc_auc.circuits.division import MAX_DIGIT_BITS, digit_bits_for
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from mpc_auc.circuits.streams import MASK_IN, PERMUTATION, STREAM_LIMIT, KeyStream


@pytest.mark.parametrize("n", [1, 2, 3, 7, 1000, 65537])
def test_a_permutation_holds_every_index_once_and_every_holder_derives_the_same(n):
    key = secrets.token_bytes(32)
    perm = KeyStream(key).permutation(4, n)
    assert np.array_equal(np.sort(perm), np.arange(n))
    assert np.array_equal(perm, KeyStream(key).permutation(4, n))


class _FewRandomBits(KeyStream):
    """Permutation words with only 2 random bits: nearly every pair ties on the first words."""

    def words(self, purpose, index, shape, dtype=np.int64):
        words = super().words(purpose, index, shape, dtype)
        return words & 3 if purpose == PERMUTATION else words


@pytest.mark.parametrize("stream", [KeyStream, _FewRandomBits])
def test_permutations_are_uniform_including_the_tie_path(stream):
    """All 24 permutations of 4 elements, chi-square p > 1e-4 over 12,000 draws; with two random high bits
    the order comes from the second words (a tie-break by position would make this fail at once)."""
    source = stream(secrets.token_bytes(32))
    counts = Counter(tuple(source.permutation(i, 4)) for i in range(12_000))
    assert len(counts) == 24
    assert chisquare(list(counts.values())).pvalue > 1e-4


class _TiesByPosition(_FewRandomBits):
    """A deliberately weakened variant: equal random keys keep their input order (no second words)."""

    def permutation(self, index, n):
        return np.argsort(self.words(PERMUTATION, index, (n,), np.int32), kind="stable")


def test_the_uniformity_check_flags_ties_broken_by_position():
    source = _TiesByPosition(secrets.token_bytes(32))
    counts = Counter(tuple(source.permutation(i, 4)) for i in range(12_000))
    assert chisquare([counts.get(p, 0) for p in itertools.permutations(range(4))]).pvalue < 1e-6


def test_the_division_digit_keeps_every_comparison_exact():
    """D bits per round compare values below 2^D * b: exact while b < 2^(62 - D)."""
    for m in (2, 458_407, 4_584_062, 10 ** 8, 2 ** 28, 2 ** 31 - 1):
        bound = 2 * (m // 2) * (m - m // 2)
        d = digit_bits_for(bound)
        assert 1 <= d <= MAX_DIGIT_BITS and bound < 2 ** (62 - d)
    assert digit_bits_for(2 * 229_203 * 229_204) == MAX_DIGIT_BITS == 13  # 52 bits in 4 rounds at Criteo's M


class _CounterInTheIndex(KeyStream):
    """A deliberately weakened stream layout: the block counter shares the index's bits, so index i's
    stream runs on into index i + 1's (AES-CTR counts the whole 128-bit block)."""

    def words(self, purpose, index, shape, dtype=np.int64):
        count = int(np.prod(shape))
        encryptor = Cipher(algorithms.AES(self._key), modes.CTR(struct.pack(">IIQ", purpose, 0, index))).encryptor()
        out = np.zeros(count, dtype=dtype)
        encryptor.update_into(memoryview(out).cast("B"), memoryview(out).cast("B"))
        return out.reshape(shape)


def _blocks(stream, purpose, index) -> set:
    return {bytes(block) for block in stream.words(purpose, index, (256, 2)).view(np.uint8).reshape(-1, 16)}


@pytest.mark.parametrize("stream, overlaps", [(KeyStream, False), (_CounterInTheIndex, True)])
def test_streams_of_neighbouring_indices_share_no_block(stream, overlaps):
    """Mask streams 2k and 2k + 1 are the two steps of one shuffle: a shared keystream block would hand one
    step's mask to whoever knows the other's."""
    source = stream(secrets.token_bytes(32))
    assert bool(_blocks(source, MASK_IN, 6) & _blocks(source, MASK_IN, 7)) is overlaps


def test_a_stream_refuses_more_than_its_counter_covers():
    with pytest.raises(ValueError, match="at most"):
        KeyStream(secrets.token_bytes(32)).words(MASK_IN, 0, (STREAM_LIMIT // 8 + 1,))


def test_worker_threads_change_no_word():
    """The dealer and each party may run different --threads: streams, gathers, scatters and masks must be the
    same whatever the number of threads (ranges of 16-byte blocks for the keystream, disjoint slices else)."""
    import secrets

    from mpc_auc.circuits import workers
    from mpc_auc.circuits.correlations import mask, unmask
    from mpc_auc.circuits.streams import MASK_IN, KeyStream, move_columns, permute

    stream = KeyStream(secrets.token_bytes(32))
    m = 3 * workers.MIN_RANGE + 5  # three ranges, the last one ragged
    perm = np.random.default_rng(3).permutation(m)

    def work():
        words = stream.words(MASK_IN, 7, (m, 3), np.int32)
        odd = stream.words(MASK_IN, 8, (m + 1,))  # a byte count that is no multiple of the ranges
        return [words, odd, permute(words, perm, False), permute(words, perm, True), mask(words, words[::-1], 2),
                unmask(words, words[::-1], 1), move_columns(words.T, perm, False), move_columns(words.T, perm, True)]

    try:
        workers.set_threads(1)
        one = work()
        workers.set_threads(3)
        three = work()
    finally:
        workers.set_threads(1)
    assert all(np.array_equal(a, b) for a, b in zip(one, three))
    assert not np.array_equal(one[0], one[2])


def test_columns_move_as_numpy_moves_them_and_a_placement_checks_the_permutation():
    """move_columns on the strided columns of element rows is numpy's fancy index along the second axis, both ways;
    placed scatters bytes as numpy does and refuses opened positions that repeat one or fall outside, as the
    radix sort's digit step must when the parties' shares of sigma disagree (it has no check of its own)."""
    from mpc_auc.circuits.shuffle import NOT_A_PERMUTATION, placed
    from mpc_auc.circuits.streams import move_columns

    rng = np.random.default_rng(5)
    m = 1001
    s = rng.permutation(m)
    elements = rng.integers(-2 ** 62, 2 ** 62, (m, 3))
    columns = elements.T  # strided rows
    assert np.array_equal(move_columns(columns, s, False), columns[:, s])
    scattered = np.empty((3, m), dtype=elements.dtype)
    scattered[:, s] = columns
    assert np.array_equal(move_columns(columns, s, True), scattered)
    digits = rng.integers(0, 4, m).astype(np.int32)
    current = np.empty(m, dtype=np.int32)
    current[s] = digits
    assert np.array_equal(placed(s, digits), current)
    repeated, outside = s.copy(), s.copy()
    repeated[7] = repeated[8]
    outside[7] = m
    for wrong in (repeated, outside):
        with pytest.raises(RuntimeError, match=NOT_A_PERMUTATION):
            placed(wrong, digits)


def test_placed_refuses_exactly_what_is_permutation_refuses():
    """Every s in [-1, m]^m for m <= 4 (repeats, negatives, positions outside, empty), with digit shares of any
    sign: placed refuses exactly the s that is_permutation refuses, and places the rest as numpy does."""
    from mpc_auc.circuits.shuffle import NOT_A_PERMUTATION, is_permutation, placed

    rng = np.random.default_rng(3)
    for m in range(5):
        for s in itertools.product(range(-1, m + 1), repeat=m):
            s, values = np.array(s, dtype=np.int64), rng.integers(-2 ** 31, 2 ** 31, m).astype(np.int32) & 3
            if is_permutation(s):
                expected = np.empty(m, dtype=np.int64)
                expected[s] = values
                assert np.array_equal(placed(s, values), expected)
            else:
                with pytest.raises(RuntimeError, match=NOT_A_PERMUTATION):
                    placed(s, values)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
def test_words_from_any_offset_are_the_whole_streams_words(dtype):
    """A block of a long vector's words expanded alone (``first``, aligned to an AES block or not) is that slice of
    the whole stream's words, and ``slots`` the same slice of every row."""
    source = KeyStream(secrets.token_bytes(32))
    whole = source.words(MASK_IN, 3, (3, 1000), dtype)
    for first in (0, 1, 3, 4, 16, 333, 999):
        assert np.array_equal(source.words(MASK_IN, 3, (1,), dtype, first=first)[0], whole.reshape(-1)[first])
    assert np.array_equal(source.words(MASK_IN, 3, (50, 3), dtype, first=33 * 3), whole.reshape(-1, 3)[33:83])
    assert np.array_equal(source.slots(MASK_IN, 3, (3, 1000), 17, 400, dtype), whole[:, 17:400])


def test_messages_made_block_by_block_are_the_whole_vectors_bytes(monkeypatch):
    """circuits.correlations: a narrowed message written block by block (narrow_rows_into) and read back block by
    block (widen_rows) is byte for byte the whole one, and the dealer's correction made in blocks of 48 elements
    equals the one made in one block, for 19-bit and 3-byte positions beside a 2-bit digit and 64-bit words (a
    block of 48 rows starts mid-byte in a column of 19 bits: 48 * 19 / 8 = 114 bytes, whole)."""
    from mpc_auc.circuits import correlations
    from mpc_auc.circuits.correlations import correction, narrow, narrow_rows_into, widen, widen_rows

    m, widths = 1000, (19, 2, 64, 24)
    words = np.random.default_rng(5).integers(-2 ** 62, 2 ** 62, (m, 4))
    whole = narrow(words, widths)
    blocked = np.empty_like(whole)
    for start in range(0, m, 48):
        narrow_rows_into(blocked, words[start:start + 48], widths, m, start)
    assert np.array_equal(blocked, whole)
    assert np.array_equal(np.concatenate([widen_rows(whole, widths, np.int64, m, start, min(m, start + 48))
                                          for start in range(0, m, 48)]), widen(whole, widths, np.int64, m))
    stream, perm = KeyStream(secrets.token_bytes(32)), np.random.default_rng(6).permutation(m)
    made = {}
    for rows in (1 << 20, 48):
        monkeypatch.setattr(correlations, "BLOCK_ROWS", rows)
        made[rows] = [correction(stream, perm, backwards, 7, (m, 4), 2, widths, np.int64, folded, skipped)
                      for backwards in (False, True) for folded in (None, 3) for skipped in (0, 1)]
    assert all(np.array_equal(a, b) for a, b in zip(made[1 << 20], made[48]))
