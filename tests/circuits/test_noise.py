"""In-circuit noise gadgets (circuits.noise): exact laws on 10^6 MPC samples, and the stated (eps, delta).

The samples come from P0, P1 and the TTP dealer as processes over TCP;
only the test opens them.  Each law is checked by a chi-square test
(p > 0.001) against the exact pmf of the sampler, and the same checker
must reject a deliberately mis-biased coin.  A law that misses is tested
once more on a fresh MPC run, so a correct sampler fails a check with
probability 1e-6, not 1e-3.
"""
import math

import numpy as np
import pytest
from scipy import stats

from mpc_auc.circuits.noise_laws import ROUNDING_BITS, DiscreteLaplace, RandomizedResponse, coin_threshold
from mpc_auc.protocols.errors import InputError
from mpc_auc.protocols.runtime.session import run_parties
from mpc_auc.protocols.validation import checked

N = 1_000_000
BIAS = 0.3
MISBIASED = 0.3 + 0.004  # a coin that is off by 0.004 (z ~ 8.7 at 10^6 samples)
SMALL = DiscreteLaplace(1.0, 1)  # width 6: support +-64
WIDE = DiscreteLaplace(0.5, 1024)  # width 17: a kernel-scale noise
RR = RandomizedResponse(1.0)


def _party(ctx, n):
    from mpc_auc.circuits import noise
    from mpc_auc.circuits.bits import pack_bits, unpack_bits
    from mpc_auc.circuits.gates import Gates
    from mpc_auc.circuits.shares import public_share

    gates = Gates(ctx.stream_key)
    words = gates.open(noise.joint_random_words((n,)), xor=True)
    coins = gates.open(noise.coins(gates, [coin_threshold(BIAS), coin_threshold(MISBIASED), 0, 2**ROUNDING_BITS], n),
                       xor=True)
    truth = pack_bits(np.arange(n, dtype=np.int64) % 2)
    own = public_share(truth, ctx.rank)  # P0 inputs the bits
    rr = unpack_bits(gates.open(noise.randomized_response(gates, own, RR), xor=True)[None], n)[0]
    out = {"words": words, "coins": coins, "rr": rr,
           "small": gates.open(noise.discrete_laplace(gates, SMALL, n)),
           "wide": gates.open(noise.discrete_laplace(gates, WIDE, n))}
    out["triples left"] = [gates.left("and"), gates.left("mul")]
    return out


def _run() -> dict:
    out = run_parties(_party, (N,), provider="TTP", timeout_s=120)
    for key in out[0]:
        assert np.array_equal(out[0][key], out[1][key])
    assert out[0]["triples left"] == [0, 0]  # each gadget reserved exactly the triples it used
    return out[0]


class Draws(dict):
    """The first MPC run's samples, and a second run made only if a law misses on the first."""

    def p_value(self, statistic) -> float:
        p = statistic(self)
        if p <= 0.001:
            if "fresh" not in self.__dict__:
                self.__dict__["fresh"] = _run()
            p = statistic(self.__dict__["fresh"])
        return p


@pytest.fixture(scope="module")
def samples():
    return Draws(_run())


def coin_p_value(flips: np.ndarray, bias: float) -> float:
    """Chi-square (1 dof) p-value of the 0/1 samples against Bernoulli(bias)."""
    ones = int(flips.sum())
    return stats.chisquare([len(flips) - ones, ones], [len(flips) * (1 - bias), len(flips) * bias]).pvalue


def pmf_p_value(samples: np.ndarray, support: np.ndarray, pmf: np.ndarray, bins: int = 60) -> float:
    """Chi-square p-value of integer samples against an exact pmf, on bins of about equal mass."""
    cdf = np.cumsum(pmf)
    edges = np.unique(np.searchsorted(cdf, np.linspace(0, 1, bins + 1)[1:-1]))  # bin ends (indices)
    cuts = np.concatenate([edges, [len(pmf) - 1]])
    expected = np.diff(np.concatenate([[0.0], cdf[cuts]])) * len(samples)
    index = np.clip(np.searchsorted(support, samples), 0, len(support) - 1)
    assert np.array_equal(support[index], samples), "a sample lies outside the support"
    observed = np.bincount(np.searchsorted(cuts, index), minlength=len(cuts))
    return stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue


def test_joint_random_words_are_uniform(samples):
    def byte_p_value(shift):
        def statistic(draws):
            w = draws["words"].view(np.uint64)
            return stats.chisquare(np.bincount(((w >> np.uint64(shift)) & np.uint64(255)).astype(np.int64),
                                               minlength=256)).pvalue
        return statistic

    for shift in (0, 28, 56):  # low, middle and top byte
        p = samples.p_value(byte_p_value(shift))
        print(f"joint words, byte at bit {shift}: p = {p:.3f}")
        assert p > 0.001


def test_biased_coin_has_its_exact_bias(samples):
    coins = samples["coins"]
    p = samples.p_value(lambda d: coin_p_value(d["coins"][0], coin_threshold(BIAS) / 2**ROUNDING_BITS))
    print(f"coin 0.3 on {N:,}: mean {coins[0].mean():.5f}, p = {p:.3f}")
    assert p > 0.001
    assert coins[2].sum() == 0 and coins[3].sum() == N  # T = 0 and T = 2^L


def test_checker_rejects_a_misbiased_coin(samples):
    """The coin drawn with threshold 0.304 fails the test for its claimed 0.3."""
    p = coin_p_value(samples["coins"][1], coin_threshold(BIAS) / 2**ROUNDING_BITS)
    print(f"coin 0.304 tested as 0.3: p = {p:.1e}")
    assert p < 0.001
    assert samples.p_value(lambda d: coin_p_value(d["coins"][1], coin_threshold(MISBIASED) / 2**ROUNDING_BITS)) > 0.001


def test_randomized_response_flips_with_q_independently_of_the_bit(samples):
    truth = np.arange(N) % 2
    flipped = samples["rr"] != truth
    for b in (0, 1):
        p = samples.p_value(lambda d, b=b: coin_p_value((d["rr"] != truth)[truth == b], RR.flip))
        print(f"RR eps=1 on bit {b}: flip rate {flipped[truth == b].mean():.5f} (q~ {RR.flip:.5f}), p = {p:.3f}")
        assert p > 0.001
    assert RR.flip >= 1 / (1 + math.e) and RR.effective_epsilon <= 1.0
    assert RR.effective_epsilon > 1.0 - 1e-12


@pytest.mark.parametrize("name, noise", [("small", SMALL), ("wide", WIDE)])
def test_discrete_laplace_matches_its_exact_pmf(samples, name, noise):
    support, pmf = noise.pmf()
    assert abs(pmf.sum() - 1) < 1e-12
    p = samples.p_value(lambda d: pmf_p_value(d[name], support, pmf))
    print(f"discrete Laplace {name} (eps={noise.epsilon}, Delta={noise.sensitivity}, B={noise.width}): p = {p:.3f}, "
          f"var/exact = {samples[name].var() / noise.variance:.4f}, delta = {noise.delta:.1e}")
    assert p > 0.001
    # the variance formula: within 1% (the sample variance's std at 10^6 draws is ~0.25%)
    assert abs(samples[name].var() / noise.variance - 1) < 0.01


def test_checker_rejects_the_wrong_scale(samples):
    support, pmf = DiscreteLaplace(1.05, 1).pmf()
    p = pmf_p_value(samples["small"], support, pmf)
    print(f"eps=1 samples tested as eps=1.05: p = {p:.1e}")
    assert p < 0.001


def hockey_stick(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    return float(np.maximum(p - math.exp(eps) * q, 0).sum())


@pytest.mark.parametrize("eps, sensitivity, bits", [(1.0, 1, 12), (0.5, 3, 10), (2.0, 2, 16), (1.0, 1, 48)])
def test_stated_delta_bounds_the_exact_privacy_loss(eps, sensitivity, bits):
    """delta(eps) of the sampled pmf, computed exactly for every shift up to the sensitivity, <= stated delta."""
    noise = DiscreteLaplace(eps, sensitivity, bits)
    _, pmf = noise.pmf()
    worst = 0.0
    for s in range(1, sensitivity + 1):
        shifted = np.concatenate([np.zeros(s), pmf, np.zeros(0)])[:len(pmf) + s]
        padded = np.concatenate([pmf, np.zeros(s)])
        worst = max(worst, hockey_stick(padded, shifted, eps), hockey_stick(shifted, padded, eps))
    assert worst <= noise.delta
    assert noise.delta < 1e-2 if bits < 20 else noise.delta < 1e-12


def test_variance_is_close_to_the_continuous_laplace():
    """Var of the discrete Laplace = 2 lam / (1 - lam)^2 ~ 2 (Delta/eps)^2 for large Delta/eps."""
    noise = DiscreteLaplace(0.5, 1024)
    lam = noise.lam
    assert abs(noise.variance / (2 * lam / (1 - lam) ** 2) - 1) < 1e-9
    assert abs(noise.variance / (2 * (1024 / 0.5) ** 2) - 1) < 1e-6


@pytest.mark.parametrize("bad", [0, 0.0, -1.0, float("nan"), float("inf"), float("-inf"), True, "1"])
def test_bad_epsilon_is_refused_in_the_words_of_protocols_validation(bad):
    """The noise laws guard epsilon themselves (circuits import no protocol), with checked's very words."""
    with pytest.raises(InputError) as boundary:
        checked("epsilon", bad)
    for law in (lambda: DiscreteLaplace(bad, 1), lambda: RandomizedResponse(bad)):
        with pytest.raises(ValueError) as refused:
            law()
        assert str(refused.value) == str(boundary.value)


@pytest.mark.parametrize("sensitivity", [0, -3, 1.5, float("inf"), float("nan")])
def test_bad_sensitivity_is_refused(sensitivity):
    with pytest.raises(ValueError, match=r"^sensitivity must be a sensitivity in integer units: an integer, finite, "
                                         r">= 1; not "):
        DiscreteLaplace(1.0, sensitivity)


@pytest.mark.parametrize("p", [1.5, -0.1, float("nan"), float("inf")])
def test_bad_bias_is_refused(p):
    with pytest.raises(ValueError, match=r"^p must be a coin's bias: a number, finite, >= 0 and <= 1; not "):
        coin_threshold(p)
