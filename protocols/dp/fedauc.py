"""FedAUC label-DP mechanisms (the vFL rank-sum paper, fedauc) on global ranks from a clear sort or from MPC.

Every mechanism takes ``RankedClients`` -- each sample's owning client, its
global 0-based mid-rank and its label -- and returns an ``Estimate`` holding
one AUC per noise draw (vectorised over draws), the privacy spent and what
the server received.  Ranks come either from the clear sort of the papers'
vanilla setting (``RankedClients.from_clear_scores``: the server sees every
score) or from mpc-exact's rank delivery (``RankedClients.from_delivered``:
each client learns only its own samples' ranks); given the same generator
state both give the same estimates.

Noise is drawn from a numpy Generator; ``generator()`` seeds one from the OS
CSPRNG unless a seed is given for a reproducible experiment.  These are
floating-point simulations of the papers' mechanisms; the in-MPC discrete
noise of mpc-central and ustat-2pc is exact.
Each mechanism trusts its epsilon: protocols.dp.suite.run_mechanism, their boundary, checked it.
"""
import secrets
from dataclasses import dataclass

import numpy as np

from ..clear_auc import twice_mid_ranks
from ..errors import InputError


def generator(seed=None) -> np.random.Generator:
    """A numpy Generator seeded by ``seed``, or from the OS CSPRNG (128 bits) when None."""
    return np.random.default_rng(secrets.randbits(128) if seed is None else seed)


@dataclass(frozen=True)
class RankedClients:
    """Per sample: owning client (0..K-1), global 0-based mid-rank, label."""

    client: np.ndarray
    rank: np.ndarray
    label: np.ndarray
    clients: int
    source: str  # "clear sort" or "MPC rank delivery"

    @classmethod
    def from_clear_scores(cls, clients) -> "RankedClients":
        """The papers' vanilla step 2: the server sorts all clients' clear scores."""
        owner, scores, labels = _stack(clients)
        return cls(owner, twice_mid_ranks(scores) / 2, labels, len(clients), "clear sort")

    @classmethod
    def from_delivered(cls, clients, ranks: dict) -> "RankedClients":
        """Ranks each client received from mpc-exact (``MpcAucResult.ranks``, 1-based), in its row order; kept
        0-based here, as fedauc's eq. (1)."""
        owner, _, labels = _stack(clients)
        rank = np.concatenate([np.asarray(ranks[c], dtype=np.float64) for c, _, _ in clients]) - 1
        return cls(owner, rank, labels, len(clients), "MPC rank delivery")


def _stack(clients):
    if not clients:
        raise InputError("no clients")
    owner = np.concatenate([np.full(len(s), k) for k, (_, s, _) in enumerate(clients)])
    scores = np.concatenate([np.asarray(s, dtype=np.float64) for _, s, _ in clients])
    labels = np.concatenate([np.asarray(y, dtype=np.int64) for _, _, y in clients])
    if labels.min() == labels.max():
        raise InputError("the joint data has no positives or no negatives: the AUC is undefined")
    return owner, scores, labels


@dataclass
class Estimate:
    auc: np.ndarray  # one value per noise draw
    epsilon: float  # privacy spent per sample's label (label DP)
    accounting: str
    server_received: str


def eq1_auc(global_sum, positives, negatives):
    """fedauc eq. (1): AUC = (sum_i r_i y_i - P(P-1)/2) / (P N), element-wise."""
    positives = np.asarray(positives, dtype=np.float64)
    return (global_sum - positives * (positives - 1) / 2) / (positives * np.asarray(negatives, dtype=np.float64))


def vanilla(ranked: RankedClients) -> Estimate:
    """fedauc §4.2 without noise: clients send exact localSum, localP, localN."""
    y = ranked.label
    auc = eq1_auc((ranked.rank * y).sum(), y.sum(), len(y) - y.sum())
    return Estimate(np.array([auc]), np.inf, "no privacy: exact local sums",
                    f"{ranked.source}; per client exact localSum, localP, localN")


def flip_probability(epsilon: float) -> float:
    """Randomized response on a binary label (fedauc eq. 2): flip with q = 1 / (1 + e^eps)."""
    return 1.0 / (1.0 + np.exp(epsilon))


def flip_labels(labels: np.ndarray, q: float, draws: int, rng: np.random.Generator) -> np.ndarray:
    """(draws, M) randomized responses: each label flipped independently with probability q."""
    return labels.astype(bool) ^ (rng.random((draws, len(labels))) < q)


def rr_debias(noisy_auc, noisy_positives, noisy_negatives, rho_pos: float, rho_neg: float):
    """fedauc eqs. (3), (4) and (11): the clean AUC from the noisy one.

    P' = (P̄(1 - rho-) - N̄ rho-) / (1 - rho+ - rho-), pi = P' / (P̄ + N̄);
    alpha, beta of Menon et al. (eq. 4); AUC = (AUC_noisy - (alpha+beta)/2) / (1 - alpha - beta).
    """
    total = noisy_positives + noisy_negatives
    clean_positives = (noisy_positives * (1 - rho_neg) - noisy_negatives * rho_neg) / (1 - rho_pos - rho_neg)
    pi = clean_positives / total
    alpha = (1 - pi) * rho_neg / (pi * (1 - rho_pos) + (1 - pi) * rho_neg)
    beta = pi * rho_pos / (pi * rho_pos + (1 - pi) * (1 - rho_neg))
    return (noisy_auc - (alpha + beta) / 2) / (1 - alpha - beta)


def debiased_auc(responses: np.ndarray, rank: np.ndarray, q: float) -> np.ndarray:
    """Server side of fedauc-rr per draw: eq. (1) on the randomized labels (draws, M), then the debias."""
    p_bar = responses.sum(axis=1)
    m = responses.shape[1]
    return rr_debias(eq1_auc(responses @ rank, p_bar, m - p_bar), p_bar, m - p_bar, q, q)


def randomized_response_auc(ranked: RankedClients, epsilon: float, draws: int, rng: np.random.Generator,
                            chunk: int = 16) -> Estimate:
    """FedAUC_RR (fedauc §4): labels flipped with q = 1/(1+e^eps), noisy AUC by eq. (1), debiased by eqs. 3, 4, 11.

    Each label is released once through randomized response: eps-label-DP.
    """
    q = flip_probability(epsilon)
    out = [debiased_auc(flip_labels(ranked.label, q, min(chunk, draws - start), rng), ranked.rank, q)
           for start in range(0, draws, chunk)]
    return Estimate(np.concatenate(out), epsilon, "randomized response on each label (eps-label-DP)",
                    f"{ranked.source}; per client localSum, localP, localN of flipped labels")


@dataclass
class ClientStatistics:
    """Per client: exact and released localSum and localP (released: one row per noise draw)."""

    local_sum: np.ndarray  # (K,)
    local_p: np.ndarray  # (K,)
    sizes: np.ndarray  # (K,) |Y_k|
    released_sum: np.ndarray  # (draws, K)
    released_p: np.ndarray  # (draws, K)
    noise: dict  # term name -> (its draws (draws, K), its stated Laplace scale (K,))


def exact_client_statistics(ranked: RankedClients):
    """(localSum_k, localP_k, |Y_k|) of fedauc §4.2 step 3 for every client."""
    k = ranked.clients
    local_sum = np.bincount(ranked.client, weights=ranked.rank * ranked.label, minlength=k)
    local_p = np.bincount(ranked.client, weights=ranked.label, minlength=k)
    return local_sum, local_p, np.bincount(ranked.client, minlength=k)


def _sensitivity(ranked: RankedClients, sensitivity: str) -> np.ndarray:
    """Per client: the largest change one label makes to localSum -- its largest rank ("local") or M - 1 ("global")."""
    if sensitivity == "local":
        delta = np.zeros(ranked.clients)
        np.maximum.at(delta, ranked.client, ranked.rank)
        return delta
    if sensitivity == "global":
        return np.full(ranked.clients, len(ranked.rank) - 1.0)
    raise InputError(f"sensitivity must be 'local' or 'global', not {sensitivity!r}")


def _check_split(alpha: float) -> float:
    if not 0 < alpha < 1:
        raise InputError(f"the budget split alpha must lie in (0, 1), not {alpha!r}")
    return alpha


def _perturbed(ranked, sum_noise, sum_scale, p_noise, p_scale) -> ClientStatistics:
    local_sum, local_p, sizes = exact_client_statistics(ranked)
    return ClientStatistics(local_sum, local_p, sizes, local_sum + sum_noise, local_p + p_noise,
                            {"localSum": (sum_noise, sum_scale), "localP": (p_noise, p_scale)})


def laplace_statistics(ranked: RankedClients, epsilon: float, draws: int, rng: np.random.Generator,
                       sensitivity: str = "local", alpha: float = 0.5) -> ClientStatistics:
    """FedAUC_Lap (fedauc §5.2, App. N): Laplace noise on each client's localSum and localP.

    localSum' = localSum + Lap(Delta / (alpha eps)) with Delta = the client's largest
    rank ("local") or M - 1 ("global"); localP' = localP + Lap(1 / ((1 - alpha) eps)).
    Changing one label moves localSum by at most Delta and localP by 1, so the
    release is (alpha eps + (1 - alpha) eps) = eps-label-DP.
    """
    alpha = _check_split(alpha)
    k = ranked.clients
    sum_scale = _sensitivity(ranked, sensitivity) / (alpha * epsilon)
    p_scale = np.full(k, 1 / ((1 - alpha) * epsilon))
    return _perturbed(ranked, rng.laplace(0, 1, (draws, k)) * sum_scale, sum_scale,
                      rng.laplace(0, 1, (draws, k)) * p_scale, p_scale)


def gaussian_statistics(ranked: RankedClients, epsilon: float, delta: float, draws: int, rng: np.random.Generator,
                        sensitivity: str = "local", alpha: float = 0.5) -> ClientStatistics:
    """FedAUC with the Gaussian mechanism (fedauc §5: "Gaussian mechanism is applicable too").

    localSum and localP get N(0, sigma^2) noise calibrated by the analytic
    Gaussian mechanism (protocols.dp.calibration) to (alpha eps, delta / 2) and
    ((1 - alpha) eps, delta / 2) at sensitivities Delta and 1: (eps, delta)-label-DP
    by basic composition, valid for every eps > 0.
    """
    from .calibration import analytic_gaussian_sigma  # lazily: dp-accounting takes 0.9 s to import

    alpha = _check_split(alpha)
    k = ranked.clients
    unit = analytic_gaussian_sigma(alpha * epsilon, delta / 2)  # sigma scales linearly with the sensitivity
    sum_scale = _sensitivity(ranked, sensitivity) * unit
    p_scale = np.full(k, analytic_gaussian_sigma((1 - alpha) * epsilon, delta / 2))
    return _perturbed(ranked, rng.standard_normal((draws, k)) * sum_scale, sum_scale,
                      rng.standard_normal((draws, k)) * p_scale, p_scale)


def adaptive_split(mean_rank: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """beta minimising Var(a s1 + b s2), s1 ~ Lap(1/(beta eps)), s2 ~ Lap(1/((1-beta) eps)).

    Var = 2 (a^2 / beta^2 + b^2 / (1 - beta)^2) / eps^2 with a = ||u'||_inf, b = ||v'||_inf;
    setting its derivative to zero gives ((1 - beta) / beta)^3 = (b / a)^2, i.e.
    beta = a^(2/3) / (a^(2/3) + b^(2/3))  (beta = 1 when b = 0: all budget on localP).
    """
    a, b = np.abs(mean_rank) ** (2 / 3), np.abs(spread) ** (2 / 3)
    return np.where(b == 0, 1.0, a / np.maximum(a + b, np.finfo(float).tiny))


def _orthogonal_split(ranked: RankedClients):
    """Per client: mean rank (u' = mean 1), ||v'||_inf and <v', y> of the split r = u' + v' (fedauc §5.3)."""
    k = ranked.clients
    sizes = np.bincount(ranked.client, minlength=k)
    mean_rank = np.bincount(ranked.client, weights=ranked.rank, minlength=k) / sizes
    centred = ranked.rank - mean_rank[ranked.client]  # v'
    spread = np.zeros(k)
    np.maximum.at(spread, ranked.client, np.abs(centred))
    return mean_rank, spread, np.bincount(ranked.client, weights=centred * ranked.label, minlength=k)


def _split_release(ranked, s1, s1_scale, spread_noise, spread_scale) -> ClientStatistics:
    """localP' = <1, y> + s1 and localSum' = mean(r) localP' + <v', y> + ||v'||_inf s2 (fedauc §5.3)."""
    local_sum, local_p, sizes = exact_client_statistics(ranked)
    mean_rank, _, orthogonal_part = _orthogonal_split(ranked)
    released_p = local_p + s1
    return ClientStatistics(local_sum, local_p, sizes, mean_rank * released_p + orthogonal_part + spread_noise,
                            released_p, {"s1 (localP)": (s1, s1_scale), "||v'|| s2": (spread_noise, spread_scale)})


def adaptive_statistics(ranked: RankedClients, epsilon: float, draws: int, rng: np.random.Generator,
                        beta=None) -> ClientStatistics:
    """Adaptive FedAUC_Lap (fedauc §5.3): r = u' + v', u' = mean(r) 1, v' = r - u' (orthogonal to 1).

    localP' = <1, y> + s1 and localSum' = mean(r) localP' + <v', y> + ||v'||_inf s2 with
    s1 ~ Lap(1/(beta eps)), s2 ~ Lap(1/((1-beta) eps)), beta from ``adaptive_split``
    per client unless a fixed ``beta`` is given.  <1, y> has sensitivity 1 and
    <v', y> sensitivity ||v'||_inf, so the release is eps-label-DP; beta depends on
    the ranks only.
    """
    k = ranked.clients
    mean_rank, spread, _ = _orthogonal_split(ranked)
    beta = adaptive_split(mean_rank, spread) if beta is None else np.full(k, _check_split(beta))
    s1_scale = 1 / (beta * epsilon)
    s2_scale = np.divide(spread, (1 - beta) * epsilon, out=np.zeros(k), where=beta < 1)  # ||v'|| / ((1-beta) eps)
    return _split_release(ranked, rng.laplace(0, 1, (draws, k)) * s1_scale, s1_scale,
                          rng.laplace(0, 1, (draws, k)) * s2_scale, s2_scale)


def adaptive_gaussian_statistics(ranked: RankedClients, epsilon: float, delta: float, draws: int,
                                 rng: np.random.Generator, grid: int = 199) -> ClientStatistics:
    """The adaptive split with Gaussian noise: s1 ~ N(0, sigma(beta eps)^2), s2 ~ N(0, sigma((1-beta) eps)^2).

    sigma(e) is the analytic Gaussian sigma for (e, delta / 2) at sensitivity 1
    (protocols.dp.calibration), so the pair is (eps, delta)-label-DP by basic
    composition.  With no closed form for the best beta, each client takes the
    beta on a grid of ``grid`` values in (0, 1) that minimises
    a^2 sigma(beta eps)^2 + b^2 sigma((1 - beta) eps)^2, a = |mean rank|, b = ||v'||_inf.
    """
    from .calibration import analytic_gaussian_sigma  # lazily: dp-accounting takes 0.9 s to import

    k = ranked.clients
    mean_rank, spread, _ = _orthogonal_split(ranked)
    betas = np.arange(1, grid + 1) / (grid + 1)
    sigma = np.array([analytic_gaussian_sigma(b * epsilon, delta / 2) for b in betas])
    sigma_rest = sigma[::-1]  # sigma((1 - beta) eps): the grid is symmetric
    best = np.empty(k, dtype=np.int64)
    for start in range(0, k, 4096):
        a, b = mean_rank[start:start + 4096, None], spread[start:start + 4096, None]
        best[start:start + 4096] = np.argmin(a ** 2 * sigma ** 2 + b ** 2 * sigma_rest ** 2, axis=1)
    s1_scale, s2_scale = sigma[best], spread * sigma_rest[best]
    return _split_release(ranked, rng.standard_normal((draws, k)) * s1_scale, s1_scale,
                          rng.standard_normal((draws, k)) * s2_scale, s2_scale)


def statistics_auc(stats: ClientStatistics) -> np.ndarray:
    """The server's step 4: global sums of the released statistics, then eq. (1); one AUC per draw."""
    p_bar = stats.released_p.sum(axis=1)
    return eq1_auc(stats.released_sum.sum(axis=1), p_bar, stats.sizes.sum() - p_bar)


def k_ary_randomized_response(labels: np.ndarray, classes: int, epsilon: float, draws: int,
                              rng: np.random.Generator) -> np.ndarray:
    """(draws, M) k-ary randomized response (mindspore-label-dp, one-hot case).

    Keep the label with p1 = e^eps / (n - 1 + e^eps), else move to each other
    class with p2 = 1 / (n - 1 + e^eps): p1 / p2 = e^eps, so eps-label-DP.  For
    n = 2 this is the binary flip with q = 1 / (1 + e^eps).
    """
    if classes < 2:
        raise InputError(f"k-ary randomized response needs at least 2 classes, not {classes}")
    keep = np.exp(epsilon) / (classes - 1 + np.exp(epsilon))
    moved = rng.random((draws, len(labels))) >= keep
    shift = rng.integers(1, classes, (draws, len(labels)))  # uniform over the other classes
    return np.where(moved, (labels[None, :] + shift) % classes, labels[None, :])
