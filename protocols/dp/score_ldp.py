"""Local DP on the prediction scores: the server sorts perturbed scores, labels stay exact.

These hide each score from the server (which in the vanilla protocols sees
every clear score and could infer labels from them), not the labels; the
AUC is eq. (1) of fedauc on the ranks of the perturbed scores (mid-ranks for
ties) with the clients' exact localSum, localP, localN.
Each mechanism trusts its epsilon: protocols.dp.suite.run_mechanism, their boundary, checked it.
"""
import numpy as np

from ..clear_auc import twice_mid_ranks
from ..errors import InputError
from .fedauc import eq1_auc


def _auc_of(scores: np.ndarray, labels: np.ndarray) -> float:
    positives = int(labels.sum())
    return float(eq1_auc(twice_mid_ranks(scores) @ labels / 2, positives, len(labels) - positives))


def score_laplace(scores: np.ndarray, labels: np.ndarray, epsilon: float, draws: int,
                  rng: np.random.Generator) -> np.ndarray:
    """DP on scores (fedauc App. R, Table 9): each score + Lap(1/eps) (sensitivity 1 for scores in [0, 1]).

    The server sorts the noisy scores; the AUC of eq. (1) then uses the
    clients' exact labels, so this hides scores (eps-LDP per score), not labels.
    """
    return np.array([_auc_of(laplace_scores(scores, epsilon, rng), labels) for _ in range(draws)])


def laplace_scores(scores: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """Each score + Lap(1/eps): eps-LDP per score in [0, 1] (sensitivity 1)."""
    return scores + rng.laplace(0, 1 / epsilon, len(scores))


def score_cldp(scores: np.ndarray, labels: np.ndarray, alpha: float, draws: int, rng: np.random.Generator,
               levels: int = 100) -> np.ndarray:
    """alpha-CLDP on quantized scores by the exponential mechanism (ldp-fed-cldp slides).

    Scores in [0, 1] are rounded to the grid i / (levels - 1); a score at level
    i is reported as level j with probability proportional to
    exp(-alpha d(i, j) / 2), d(i, j) = |i - j| in grid steps.  That is
    alpha-CLDP for this d (between two scores l steps apart the output
    probabilities differ by at most e^(alpha l)), hence alpha (levels - 1)-LDP
    in the worst case.
    """
    if levels < 2:
        raise InputError(f"the score grid needs at least 2 levels, not {levels}")
    level = np.rint(np.clip(scores, 0, 1) * (levels - 1)).astype(np.int64)
    return np.array([_auc_of(cldp_reports(level, levels, alpha, rng).astype(np.float64), labels)
                     for _ in range(draws)])


def cldp_reports(level: np.ndarray, levels: int, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """One exponential-mechanism report per sample: level j with probability exp(-alpha |i - j| / 2) / Z_i."""
    grid = np.arange(levels)
    weights = np.exp(-alpha * np.abs(grid[:, None] - grid[None, :]) / 2)
    probabilities = weights / weights.sum(axis=1, keepdims=True)
    reported = np.empty(len(level), dtype=np.int64)
    for i in np.unique(level):
        rows = level == i
        reported[rows] = rng.choice(levels, size=int(rows.sum()), p=probabilities[i])
    return reported
