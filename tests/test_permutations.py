"""The shuffles' permutations (circuits.streams) and the division's digit width (circuits.division): no MPC."""
import itertools
import secrets
from collections import Counter

import numpy as np
import pytest
from scipy.stats import chisquare

from mpc_auc.circuits.division import digit_bits_for
from mpc_auc.circuits.streams import PERMUTATION, KeyStream


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
        assert 1 <= d <= 8 and bound < 2 ** (62 - d)
    assert digit_bits_for(2 * 229_203 * 229_204) == 8
