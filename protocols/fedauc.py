"""FedAUC label-DP mechanisms (fedauc-vfl-ranksum.md) on global ranks from a clear sort or from MPC.

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
noise of issue 5 is exact.
"""
import secrets
from dataclasses import dataclass

import numpy as np

from .clear_auc import twice_mid_ranks
from .errors import InputError


def generator(seed=None) -> np.random.Generator:
    """A numpy Generator seeded by ``seed``, or from the OS CSPRNG (128 bits) when None."""
    return np.random.default_rng(secrets.randbits(128) if seed is None else seed)


def check_epsilon(epsilon: float) -> float:
    if not (np.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"epsilon must be a positive finite number, not {epsilon!r}")
    return float(epsilon)


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
        """Ranks each client received from mpc-exact (``MpcAucResult.ranks``), in its row order."""
        owner, _, labels = _stack(clients)
        rank = np.concatenate([np.asarray(ranks[c], dtype=np.float64) for c, _, _ in clients])
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
    return 1.0 / (1.0 + np.exp(check_epsilon(epsilon)))


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


def randomized_response(ranked: RankedClients, epsilon: float, draws: int, rng: np.random.Generator,
                        chunk: int = 16) -> Estimate:
    """FedAUC_RR (fedauc §4): labels flipped with q = 1/(1+e^eps), noisy AUC by eq. (1), debiased by eqs. 3, 4, 11.

    Each label is released once through randomized response: eps-label-DP.
    """
    q = flip_probability(epsilon)
    m = len(ranked.label)
    out = []
    for start in range(0, draws, chunk):
        flipped = flip_labels(ranked.label, q, min(chunk, draws - start), rng)
        global_sum = flipped @ ranked.rank
        p_bar = flipped.sum(axis=1)
        noisy = eq1_auc(global_sum, p_bar, m - p_bar)
        out.append(rr_debias(noisy, p_bar, m - p_bar, q, q))
    return Estimate(np.concatenate(out), epsilon, "randomized response on each label (eps-label-DP)",
                    f"{ranked.source}; per client localSum, localP, localN of flipped labels")
