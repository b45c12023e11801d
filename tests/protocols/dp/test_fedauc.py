"""FedAUC mechanisms against sklearn, against the papers' formulas, and clear ranks against MPC ranks."""
import numpy as np
import pytest
from scipy.stats import chi2
from sklearn.metrics import roc_auc_score

from mpc_auc.protocols.dp import fedauc
from mpc_auc.protocols.inputs.encoding import ScoreEncoder
from mpc_auc.protocols.mpc.exact import mpc_exact_auc
from mpc_auc.synthetic import synthetic_evalset


@pytest.fixture(scope="module")
def tied():
    return synthetic_evalset(m=2000, clients=20, decimals=2, seed=21)


def test_vanilla_equals_sklearn(tied):
    ranked = fedauc.RankedClients.from_clear_scores(tied.clients())
    estimate = fedauc.vanilla(ranked)
    assert abs(estimate.auc[0] - roc_auc_score(tied.label, tied.score)) < 1e-12


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_flip_noise_has_the_variance_of_eq_7(tied, epsilon):
    """Var(sum_i r_i y'_i) = q (1 - q) sum_i r_i^2 (fedauc eq. 7 with exact P, N); 99% chi-square interval."""
    ranked = fedauc.RankedClients.from_clear_scores(tied.clients())
    q = fedauc.flip_probability(epsilon)
    draws = 3000
    sums = fedauc.flip_labels(ranked.label, q, draws, fedauc.generator(int(10 * epsilon))) @ ranked.rank
    expected = q * (1 - q) * (ranked.rank ** 2).sum()
    ratio = sums.var(ddof=1) / expected
    low, high = chi2.ppf([0.005, 0.995], draws - 1) / (draws - 1)
    assert low < ratio < high, (ratio, low, high)


@pytest.fixture(scope="module")
def larger():
    return synthetic_evalset(m=20000, clients=50, decimals=3, seed=22)


@pytest.mark.parametrize("epsilon", [1.0, 3.0])
def test_rr_debiased_auc_is_unbiased_over_draws(larger, epsilon):
    """Mean of 1000 draws within the 99% interval of the true AUC.

    The debias (a ratio of noisy counts) is unbiased to O(1/M): at M = 2,000
    and eps = 1 its bias (+0.002) is already visible over 4,000 draws, so
    this runs at M = 20,000.
    """
    ranked = fedauc.RankedClients.from_clear_scores(larger.clients())
    estimate = fedauc.randomized_response_auc(ranked, epsilon, 1000, fedauc.generator(100 + int(epsilon)))
    truth = roc_auc_score(larger.label, larger.score)
    half_width = 2.576 * estimate.auc.std(ddof=1) / np.sqrt(len(estimate.auc))
    assert abs(estimate.auc.mean() - truth) < half_width, (estimate.auc.mean(), truth, half_width)
    noisy_only = fedauc.eq1_auc(*_noisy_statistics(ranked, epsilon))
    assert abs(noisy_only.mean() - truth) > 5 * half_width  # without the debias step the estimate is biased


def _noisy_statistics(ranked, epsilon):
    flipped = fedauc.flip_labels(ranked.label, fedauc.flip_probability(epsilon), 500, fedauc.generator(1))
    positives = flipped.sum(axis=1)
    return flipped @ ranked.rank, positives, len(ranked.label) - positives


def test_clear_ranks_and_mpc_ranks_give_identical_estimates():
    evalset = synthetic_evalset(m=300, clients=6, decimals=2, seed=5)
    (result,) = mpc_exact_auc([evalset.clients()], ScoreEncoder(), ranks=True, timeout_s=30)
    clear = fedauc.RankedClients.from_clear_scores(evalset.clients())
    delivered = fedauc.RankedClients.from_delivered(evalset.clients(), result.ranks)
    assert np.array_equal(clear.rank, delivered.rank)
    a = fedauc.randomized_response_auc(clear, 1.0, 50, fedauc.generator(42))
    b = fedauc.randomized_response_auc(delivered, 1.0, 50, fedauc.generator(42))
    assert np.array_equal(a.auc, b.auc)
    assert "MPC rank delivery" in b.server_received and "clear sort" in a.server_received


MECHANISMS = {
    "local": lambda r, e, n, g: fedauc.laplace_statistics(r, e, n, g, "local", 0.6),
    "global": lambda r, e, n, g: fedauc.laplace_statistics(r, e, n, g, "global", 0.5),
    "adaptive": fedauc.adaptive_statistics,
    "adaptive, fixed beta": lambda r, e, n, g: fedauc.adaptive_statistics(r, e, n, g, beta=0.3),
}


@pytest.mark.parametrize("name", sorted(MECHANISMS))
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_each_laplace_noise_term_has_its_stated_scale(tied, name, epsilon):
    """(noise / scale)^2 averages 2 for Laplace; its standard error is sqrt(20 / n) (E X^4 = 24)."""
    ranked = fedauc.RankedClients.from_clear_scores(tied.clients())
    stats = MECHANISMS[name](ranked, epsilon, 400, fedauc.generator(7))
    for term, (noise, scale) in stats.noise.items():
        used = scale > 0
        squares = (noise[:, used] / scale[used]) ** 2
        assert abs(squares.mean() - 2) < 2.576 * np.sqrt(20 / squares.size), (term, squares.mean())


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_laplace_estimates_center_on_the_auc(tied, name):
    ranked = fedauc.RankedClients.from_clear_scores(tied.clients())
    auc = fedauc.statistics_auc(MECHANISMS[name](ranked, 8.0, 2000, fedauc.generator(3)))
    truth = roc_auc_score(tied.label, tied.score)
    assert abs(np.median(auc) - truth) < 0.01


def test_adaptive_split_is_the_closed_form_minimum():
    a, b = 300.0, 120.0
    betas = np.linspace(0.01, 0.99, 9801)
    variance = a ** 2 / betas ** 2 + b ** 2 / (1 - betas) ** 2
    assert abs(fedauc.adaptive_split(np.array([a]), np.array([b]))[0] - betas[variance.argmin()]) < 1e-3
    assert fedauc.adaptive_split(np.array([5.0]), np.array([0.0]))[0] == 1.0  # one sample: all on localP


def test_adaptive_beats_local_laplace(tied):
    ranked = fedauc.RankedClients.from_clear_scores(tied.clients())
    local = fedauc.statistics_auc(fedauc.laplace_statistics(ranked, 1.0, 2000, fedauc.generator(4)))
    adaptive = fedauc.statistics_auc(fedauc.adaptive_statistics(ranked, 1.0, 2000, fedauc.generator(4)))
    assert adaptive.std() < local.std()


def test_a_slice_of_table_7_is_reproduced_within_30_percent():
    """eps = 2, K = 10 and 4,584 on the Criteo-shaped set (the full table: sims/papers/fedauc_table7.py)."""
    from mpc_auc.protocols.clear_auc import twice_mid_ranks
    from mpc_auc.sims.papers.fedauc_table7 import CLIENTS, PAPER, ROWS
    from mpc_auc.synthetic import CRITEO_AUC, CRITEO_M, CRITEO_P, binormal_scores, partition

    rng = fedauc.generator(11)
    scores, labels = binormal_scores(CRITEO_M, CRITEO_P, CRITEO_AUC, rng)
    ranks = twice_mid_ranks(scores) / 2
    for row in ("LocalLaplace (IID)", "LocalLaplace (Non-IID)", "adaptive (non-IID)"):
        scheme, mechanism = ROWS[row]
        for k in (10, 4584):
            owner = partition(CRITEO_M, k, scheme, rng, scores)
            ranked = fedauc.RankedClients(owner, ranks, labels, int(owner.max()) + 1, "clear sort")
            ours = fedauc.statistics_auc(mechanism(ranked, 2.0, 100, rng)).std(ddof=1)
            paper = PAPER[(row, 2.0)][CLIENTS.index(k)]
            assert 0.7 < ours / paper < 1.3, (row, k, ours, paper)


@pytest.mark.parametrize("classes, epsilon", [(2, 1.0), (5, 2.0)])
def test_k_ary_rr_has_the_stated_transition_probabilities(classes, epsilon):
    from scipy.stats import chisquare

    labels = np.repeat(np.arange(classes), 2000)
    out = fedauc.k_ary_randomized_response(labels, classes, epsilon, 5, fedauc.generator(8))
    keep = np.exp(epsilon) / (classes - 1 + np.exp(epsilon))
    for c in range(classes):
        observed = np.bincount(out[:, labels == c].ravel(), minlength=classes)
        expected = np.full(classes, (1 - keep) / (classes - 1))
        expected[c] = keep
        assert chisquare(observed, expected * observed.sum()).pvalue > 0.001


def test_score_dp_destroys_the_ranking_at_small_epsilon(tied):
    """fedauc Table 9: with Lap(1/eps) on scores in [0, 1], eps <= 10 leaves little of the AUC."""
    truth = roc_auc_score(tied.label, tied.score)
    from mpc_auc.protocols.dp.score_ldp import score_laplace

    low = score_laplace(tied.score, tied.label, 1.0, 20, fedauc.generator(2))
    high = score_laplace(tied.score, tied.label, 1000.0, 20, fedauc.generator(2))
    assert abs(low.mean() - 0.5) < abs(truth - 0.5) / 3  # pulled most of the way to 0.5
    assert abs(high.mean() - truth) < 0.01


def test_score_cldp_keeps_the_exponential_mechanism_probabilities():
    """Report frequencies against exp(-alpha |i - j| / 2) / Z_i (chi-square), and no ranking from equal scores."""
    from scipy.stats import chisquare

    from mpc_auc.protocols.dp.score_ldp import score_cldp

    scores = np.full(4000, 0.3)  # level 3 of 11
    labels = np.r_[np.ones(2000), np.zeros(2000)].astype(np.int64)
    rng = fedauc.generator(3)
    auc = score_cldp(scores, labels, 0.8, 3, rng, levels=11)
    assert np.allclose(auc, 0.5, atol=0.05)  # all scores equal: the reports carry no ranking
    from mpc_auc.protocols.dp.score_ldp import cldp_reports

    for level in (0, 3, 10):  # an edge, the middle, the other edge: the normalisation differs
        weights = np.exp(-0.8 * np.abs(np.arange(11) - level) / 2)
        expected = weights / weights.sum()
        reported = cldp_reports(np.full(20000, level), 11, 0.8, fedauc.generator(4 + level))
        assert chisquare(np.bincount(reported, minlength=11), expected * 20000).pvalue > 0.001


def test_score_cldp_approaches_the_quantized_auc_at_large_alpha(tied):
    from mpc_auc.protocols.dp.score_ldp import score_cldp

    truth = roc_auc_score(tied.label, np.rint(tied.score * 99))
    auc = score_cldp(tied.score, tied.label, 50.0, 5, fedauc.generator(6))
    assert abs(auc.mean() - truth) < 1e-3


def test_gaussian_adaptive_terms_have_their_sigma_and_beat_gaussian_local(tied):
    ranked = fedauc.RankedClients.from_clear_scores(tied.clients())
    stats = fedauc.adaptive_gaussian_statistics(ranked, 2.0, 1e-6, 400, fedauc.generator(10))
    for term, (noise, scale) in stats.noise.items():
        used = scale > 0
        squares = (noise[:, used] / scale[used]) ** 2
        assert abs(squares.mean() - 1) < 2.576 * np.sqrt(2 / squares.size), term
    adaptive = fedauc.statistics_auc(stats)
    local = fedauc.statistics_auc(fedauc.gaussian_statistics(ranked, 2.0, 1e-6, 400, fedauc.generator(10)))
    assert adaptive.std() < local.std()


def test_score_dp_noise_has_scale_1_over_eps():
    from mpc_auc.protocols.dp.score_ldp import laplace_scores

    noise = laplace_scores(np.zeros(20000), 0.5, fedauc.generator(16))
    squares = (noise / 2.0) ** 2  # Lap(1/eps) = Lap(2): (X / b)^2 averages 2, variance 20
    assert abs(squares.mean() - 2) < 2.576 * np.sqrt(20 / squares.size)
