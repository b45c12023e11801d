"""Built-in data: Criteo-shaped synthetic evaluation sets and the papers' partitions.

Binormal model: the logit of a negative is N(0, 1), of a positive N(mu, 1),
so AUC = Phi(mu / sqrt(2)) and mu = sqrt(2) Phi^-1(AUC); scores are the
sigmoid of the logit shifted to CTR-like values.  The Criteo evaluation set of
both fedauc papers has M = 458,407 and P = 117,317 (fedauc §6, dpauc; docs/references.md).
"""
from statistics import NormalDist

import numpy as np

from .dataset import EvalSet

CRITEO_M = 458_407
CRITEO_P = 117_317
CRITEO_AUC = 0.77


def binormal_scores(m: int, positives: int, auc: float, rng, decimals=None):
    """(scores in (0, 1), labels) with exactly ``positives`` positives and population AUC ``auc``."""
    if not (0 < positives < m):
        raise ValueError(f"need 0 < positives < m, got positives={positives}, m={m}")
    if not (0.5 <= auc < 1):
        raise ValueError(f"target AUC must lie in [0.5, 1), got {auc}")
    labels = np.zeros(m, dtype=np.int64)
    labels[rng.permutation(m)[:positives]] = 1
    mu = np.sqrt(2.0) * NormalDist().inv_cdf(auc)
    logits = rng.standard_normal(m) + mu * labels - 1.5
    scores = 1.0 / (1.0 + np.exp(-logits))
    if decimals is not None:
        scores = np.round(scores, decimals)
    return scores, labels


def partition(m: int, k: int, scheme: str, rng, scores=None) -> np.ndarray:
    """Client index per sample (as the dpauc authors' public code does: docs/experiments.md).

    iid: each sample to a uniform random client (empty clients dropped);
    non-iid: contiguous blocks of the score order.  With k >= m every
    sample is its own client.
    """
    if k < 1:
        raise ValueError("need at least one client")
    if k >= m:
        return np.arange(m)
    if scheme == "iid":
        raw = rng.integers(0, k, size=m)
        return np.unique(raw, return_inverse=True)[1]
    if scheme == "non-iid":
        owner = np.empty(m, dtype=np.int64)
        for c, block in enumerate(np.array_split(np.argsort(scores, kind="stable"), k)):
            owner[block] = c
        return owner
    raise ValueError(f"partition scheme must be 'iid' or 'non-iid', not {scheme!r}")


def synthetic_evalset(m: int = 3000, positives=None, auc: float = CRITEO_AUC, clients: int = 10,
                      scheme: str = "iid", seed: int = 0, decimals=None, dtype: str = "float64") -> EvalSet:
    """A Criteo-shaped evaluation set (P/M as Criteo's unless given) split over clients.

    dtype "float32": every score is rounded to the nearest float32, as a model
    computing in float32 outputs it (declare it with ``--score-dtype float32``).
    """
    rng = np.random.default_rng(seed)
    positives = round(m * CRITEO_P / CRITEO_M) if positives is None else positives
    scores, labels = binormal_scores(m, positives, auc, rng, decimals)
    scores = scores.astype(dtype).astype(np.float64)
    owner = partition(m, clients, scheme, rng, scores)
    return EvalSet.build([f"c{o}" for o in owner], scores, labels)
