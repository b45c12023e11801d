"""The U-statistic baselines: all-pairs 2PC (§6), quantized LDP (§3, Alg. 1), hierarchical histograms (§4)."""
import math

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from mpc_auc.sims.papers import ustat_data
from mpc_auc.protocols.ustat.auc_hh import hierarchical_auc, level_histograms, popcount_parity, walsh_hadamard
from mpc_auc.protocols.ustat.two_party import Sample, simulate
from mpc_auc.protocols.ustat.baselines import (advanced_per_pair, all_pairs, complete_ustat, composition_epsilon,
                                               k_ary_rr, per_pair_epsilon, pld_epsilon, quantized_kernel,
                                               quantized_ldp)


def test_complete_ustat_matches_brute_force():
    rng = np.random.default_rng(1)
    x = rng.random(60)
    i, j = np.triu_indices(60, 1)
    assert math.isclose(complete_ustat("gini", Sample(x)), np.abs(x[i] - x[j]).mean(), rel_tol=1e-12)
    r = rng.integers(1, 6, (60, 2))
    tau = (np.sign(r[i, 0] - r[j, 0]) * np.sign(r[i, 1] - r[j, 1])).mean()
    assert math.isclose(complete_ustat("kendall", Sample(r)), tau, rel_tol=1e-12)
    y = rng.integers(0, 2, 60)
    assert complete_ustat("auc", Sample(x.round(1), y)) == pytest.approx(roc_auc_score(y, x.round(1)), abs=1e-15)


def test_advanced_composition_is_inverted():
    for eps, m in [(0.1, 999), (1.0, 249_999), (10.0, 5000)]:
        e0 = advanced_per_pair(eps, m, 1e-6)
        assert composition_epsilon(e0, m, 1e-6) == pytest.approx(eps, rel=1e-9)
        assert e0 < eps / math.sqrt(m)  # composition over m pairs costs at least sqrt(m)


@pytest.mark.parametrize("eps", [0.1, 1.0, 10.0])
def test_the_pld_accountant_is_valid_tight_and_chosen_where_it_allows_less_noise(eps):
    """At m = 2000 pairs per user the PLD accountant allows 1.2-1.5x the advanced eps0 (less noise), its
    composed epsilon stays at or below the budget and within 2% of it; basic wins at m = 2."""
    m = 2000
    e0, how = per_pair_epsilon(eps, m)
    advanced = advanced_per_pair(eps, m, 1e-6)
    assert how == "pld" and 1.2 < e0 / advanced < 1.5
    assert 0.98 * eps < pld_epsilon(e0, m, 1e-6) <= eps
    assert pld_epsilon(advanced, m, 1e-6) < 0.9 * eps  # the closed form wastes budget
    assert per_pair_epsilon(eps, m, accountants=("advanced",)) == (advanced, "advanced")
    assert per_pair_epsilon(eps, 2)[1] == "basic"


def test_all_pairs_noise_has_its_stated_variance():
    rng = np.random.default_rng(2)
    sample = Sample(rng.random(400))
    truth = complete_ustat("gini", sample)
    est = np.array([all_pairs("gini", sample, 1.0, rng) for _ in range(4000)])
    expected = 2.0 / (per_pair_epsilon(1.0, 399)[0] ** 2 * (400 * 399 // 2))
    lo, hi = stats.chi2.ppf([0.005, 0.995], 4000)
    assert lo / 4000 < ((est - truth) ** 2).mean() / expected < hi / 4000


def test_k_ary_rr_has_the_stated_law():
    rng = np.random.default_rng(3)
    t, eps = 5, 1.0
    out = k_ary_rr(np.zeros(200_000, dtype=np.int64), t, eps, rng)
    keep = math.exp(eps) / (t + math.expm1(eps))
    expected = np.array([keep] + [(1 - keep) / (t - 1)] * (t - 1)) * len(out)
    assert stats.chisquare(np.bincount(out, minlength=t), expected).pvalue > 0.001


@pytest.mark.parametrize("kernel", ["auc", "gini", "kendall"])
def test_quantized_ldp_is_unbiased_for_the_quantized_statistic(kernel):
    """On data whose quantization is exact, the mean over draws is the U-statistic (99.9% interval)."""
    rng = np.random.default_rng(4)
    t = 8
    if kernel == "kendall":
        sample = Sample(ustat_data.ratings().sample(3000, rng))
        truth = complete_ustat("kendall", sample)
    else:
        codes = rng.integers(0, t, 3000)
        labels = rng.integers(0, 2, 3000)
        sample = Sample((codes + 0.5) / t, labels)
        a = quantized_kernel(kernel, t)
        if kernel == "auc":
            truth = np.bincount(codes[labels == 1], minlength=t) @ a @ np.bincount(codes[labels == 0], minlength=t)
            truth /= labels.sum() * (1 - labels).sum()
        else:
            c = np.bincount(codes, minlength=t)
            truth = (c @ a @ c - c @ np.diag(a)) / (3000 * 2999)
    est = np.array([quantized_ldp(kernel, sample, 2.0, rng, t=t) for _ in range(1500)])
    assert abs(est.mean() - truth) < 3.3 * est.std(ddof=1) / math.sqrt(len(est))


def test_walsh_hadamard_and_parity():
    h = np.array([[(-1) ** bin(j & v).count("1") for v in range(16)] for j in range(16)])
    x = np.random.default_rng(5).random(16)
    assert np.allclose(walsh_hadamard(x), h @ x)
    j = np.arange(1 << 12)
    assert np.array_equal(popcount_parity(j), np.array([(-1) ** bin(v).count("1") for v in j]))


def test_frequency_oracle_is_unbiased_with_its_stated_noise():
    """Level-l counts: mean over draws equals the true count per node; spread matches sigma_l."""
    rng = np.random.default_rng(6)
    depth = 3
    leaves = rng.integers(0, 8, 4000)
    truth = np.bincount(leaves >> 1, minlength=4)  # level 2
    draws = np.array([level_histograms(leaves, depth, 1.0, rng)[0][2] for _ in range(600)])
    sigma = draws.std(axis=0, ddof=1)
    assert np.all(np.abs(draws.mean(0) - truth) < 4 * sigma / math.sqrt(600))
    _, sigmas = level_histograms(leaves, depth, 1.0, rng)
    assert 0.7 < sigma.mean() / sigmas[2] < 1.3  # sigma_l ignores the (small) data-dependent part


def test_hierarchical_auc_is_accurate_at_large_epsilon():
    rng = np.random.default_rng(7)
    s, y = ustat_data.uniform(20_000, rng)
    s = np.where(y == 1, s ** 0.5, s)  # AUC 2/3
    est = [hierarchical_auc(s, y, 8.0, rng, depth=8) for _ in range(20)]
    assert abs(np.mean(est) - roc_auc_score(y, s)) < 0.02


def test_two_pc_subsampling_beats_the_ldp_protocols_at_small_epsilon():
    """ustats §6 / our sims: at eps <= 1, ustat-2pc's MSE is about an order of magnitude below LDP's."""
    rng = np.random.default_rng(8)
    kendall = Sample(ustat_data.ratings().sample(20_000, rng))
    auc = Sample(*ustat_data.uniform(5_000, rng))
    for kernel, sample in (("kendall", kendall), ("auc", auc)):
        truth = complete_ustat(kernel, sample)

        def mse(f):
            return np.mean([(f() - truth) ** 2 for _ in range(40)])

        two_pc = mse(lambda: simulate(kernel, sample, 0.5, 1, rng))
        ldp = mse(lambda: quantized_ldp(kernel, sample, 0.5, rng))
        if kernel == "auc":
            ldp = min(ldp, mse(lambda: hierarchical_auc(sample.values, sample.labels, 0.5, rng)))
        assert ldp / two_pc > 5, (kernel, two_pc, ldp)
