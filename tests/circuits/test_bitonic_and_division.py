"""Circuit gadgets against plain computations (P0, P1 and the dealer as processes over TCP)."""
import numpy as np
import pytest

from mpc_auc.protocols.inputs.encoding import PAD_KEY
from mpc_auc.protocols.runtime.session import run_parties

SIZES = [1, 2, 3, 5, 17, 64, 100]


def _cases():
    rng = np.random.default_rng(11)
    cases = []
    for m in SIZES:
        keys = rng.integers(-5, 6, size=m) * (2**58)  # many ties and large magnitudes
        keys[:1] = -(2**61)
        keys[-1:] = 2**61 - 1
        labels = rng.integers(0, 2, size=m)
        cases.append((keys.astype(np.int64), labels.astype(np.int64)))
    return cases


def _fractions():
    rng = np.random.default_rng(5)
    den = rng.integers(1, 2**44, size=30)
    num = (den * rng.random(30)).astype(np.int64)
    num[:3] = [0, den[1], den[2] - 1]
    return num.astype(np.int64), den.astype(np.int64)


def _party(ctx, cases, fractions):
    import torch

    from mpc_auc.circuits.bitonic import bitonic_sort
    from mpc_auc.circuits.division import decimal_round, fraction_bits
    from mpc_auc.circuits.gates import Gates
    from mpc_auc.circuits.shares import public, public_share, reveal_int

    def share(x):  # inputs enter as P0's public values; the circuits see only shares
        return public(torch.from_numpy(x))

    out = {"sorted": []}
    for keys, labels in cases:
        k, (y, idx) = bitonic_sort(share(keys), [share(labels), share(np.arange(len(keys)))], PAD_KEY)
        out["sorted"].append([reveal_int(t).numpy() for t in (k, y, idx)])
    num, den = fractions
    gates = Gates(ctx.stream_key)
    out["fraction"] = {d: gates.open(fraction_bits(gates, public_share(num, ctx.rank), public_share(den, ctx.rank),
                                                   52, d))
                       for d in (1, 4, 13)}
    halves = np.array([1, 3, 7, 5], dtype=np.int64), np.array([4, 8, 8, 1000], dtype=np.int64)  # x.5 at 1..3 decimals
    out["rounded"] = {k: gates.open(decimal_round(gates, public_share(np.concatenate([num, halves[0]]), ctx.rank),
                                                  public_share(np.concatenate([den, halves[1]]), ctx.rank), k))
                      for k in (1, 3, 6)}
    return out


@pytest.fixture(scope="module")
def outputs():
    cases, fractions = _cases(), _fractions()
    results = run_parties(_party, (cases, fractions), provider="TTP", timeout_s=60)
    assert all(np.array_equal(results[0]["fraction"][d], results[1]["fraction"][d]) for d in results[0]["fraction"])
    return cases, fractions, results[0]


@pytest.mark.parametrize("i", range(len(SIZES)))
def test_bitonic_sorts_keys_and_carries_payloads(outputs, i):
    cases, _, out = outputs
    keys, labels = cases[i]
    sorted_keys, sorted_labels, origin = out["sorted"][i]
    assert np.array_equal(sorted_keys, np.sort(keys))
    assert sorted(origin.tolist()) == list(range(len(keys)))  # a permutation, no pad leaked in
    assert np.array_equal(keys[origin], sorted_keys) and np.array_equal(labels[origin], sorted_labels)


def test_exact_division_bits(outputs):
    _, (num, den), out = outputs
    expected = [(int(a) << 52) // int(b) for a, b in zip(num, den)]
    for digit_bits, fraction in out["fraction"].items():  # 52 rounds of 1 bit, 13 of 4, 4 of 13
        assert fraction.tolist() == expected, digit_bits


def test_decimal_rounding_is_exact_with_halves_up(outputs):
    from fractions import Fraction

    _, (num, den), out = outputs
    pairs = list(zip(num.tolist(), den.tolist())) + [(1, 4), (3, 8), (7, 8), (5, 1000)]
    for k, rounded in out["rounded"].items():
        expected = [int(Fraction(a * 10**k, b) + Fraction(1, 2)) for a, b in pairs]  # floor(x + 1/2)
        assert rounded.tolist() == expected, k
