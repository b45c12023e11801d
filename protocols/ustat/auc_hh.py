"""Locally private AUC from hierarchical histograms (ustats §4, App. B), classes public.

Our copy of the paper has lost most of §4's formulas; this is our
reconstruction from its text, with every choice stated.

Domain.  Scores in [0, 1] are quantized to D = 2^d leaves (leaf
floor(x D), D - 1 for x = 1); depth d = 16 by default.  A node at level
l (0 = root) is a prefix v of l bits; its interval holds the leaves that
start with v.

Histograms.  For each class separately, every user is assigned to one level
l in 1..d uniformly at random by the aggregator ("splitting users across
levels", App. B.2.2, the variant with pure eps-LDP and one report per
user).  At level l the user reports its node with the frequency oracle of
Kulkarni et al. (2019) tweaked as App. B.2.1 describes (Hadamard response,
one bit): it picks j uniform in [0, 2^l), computes b = H[j, v] = (-1)^popcount(j & v)
and sends (j, b') with b' = b with probability e^eps/(1 + e^eps), else -b.
The server's count estimate for node v is

    H^(v) = (n / n_l) (1/c) sum_{users at l} b'_u H[j_u, v],   c = (e^eps - 1)/(e^eps + 1),

unbiased for the class's count in v (scaled from the n_l users at level l
to the class size n), and pairwise independent across nodes (Lemma 6).
All 2^l estimates come from one fast Walsh-Hadamard transform.  The root
counts are the public class sizes P and N.

AUC.  UAUC(v) = H+(v1) H-(v0) + UAUC(v0) + UAUC(v1), UAUC(leaf) = H+ H- / 2
(ties), and AUC = UAUC(root)/(P N).  Private version (eq. 10, our
reading): the server recurses into a node only while both noisy counts
exceed ``threshold`` times their noise std at that level,
sigma_l = (n / n_l) sqrt(n_l) / c; a discarded node contributes
H^+(v) H^-(v) / 2 (counts clipped at 0), i.e. its pairs count as ties.  The
threshold 2 is ours (the paper balances it against the oracle's error;
that formula is missing from our copy).
"""
import math

import numpy as np

DEPTH = 16
THRESHOLD = 2.0


def walsh_hadamard(values: np.ndarray) -> np.ndarray:
    """H x for the 2^l x 2^l Sylvester-Hadamard matrix H[j, v] = (-1)^popcount(j & v)."""
    out = values.astype(np.float64).copy()
    h = 1
    while h < len(out):
        out = out.reshape(-1, 2, h)
        out = np.stack([out[:, 0] + out[:, 1], out[:, 0] - out[:, 1]], axis=1).reshape(-1)
        h *= 2
    return out


def popcount_parity(x: np.ndarray) -> np.ndarray:
    """(-1)^popcount(x) for non-negative integers below 2^32."""
    x = x.astype(np.uint64)
    for shift in (16, 8, 4, 2, 1):
        x ^= x >> np.uint64(shift)
    return 1 - 2 * (x & np.uint64(1)).astype(np.int64)


def level_histograms(leaves: np.ndarray, depth: int, epsilon: float, rng: np.random.Generator) -> list:
    """[H^ of level l for l = 0..depth] for one class (level 0: the exact count); and the per-level noise std."""
    n = len(leaves)
    c = math.expm1(epsilon) / (math.exp(epsilon) + 1)
    level_of = rng.integers(1, depth + 1, size=n)
    hists, sigmas = [np.array([float(n)])], [0.0]
    keep = math.exp(epsilon) / (1 + math.exp(epsilon))
    for level in range(1, depth + 1):
        users = leaves[level_of == level] >> (depth - level)  # node index at this level
        size = 2**level
        j = rng.integers(0, size, size=len(users))
        bit = popcount_parity(j & users)
        reported = np.where(rng.random(len(users)) < keep, bit, -bit)
        sums = np.bincount(j, weights=reported, minlength=size)
        scale = n / max(len(users), 1) / c
        hists.append(walsh_hadamard(sums) * scale)
        sigmas.append(scale * math.sqrt(max(len(users), 1)))
    return hists, sigmas


def _uauc(pos, neg, pos_sigma, neg_sigma, level, node, depth, threshold) -> float:
    hp, hn = max(pos[level][node], 0.0), max(neg[level][node], 0.0)
    if level == depth:
        return hp * hn / 2
    if level > 0 and (hp <= threshold * pos_sigma[level] or hn <= threshold * neg_sigma[level]):
        return hp * hn / 2  # discarded: its pairs count as ties
    left, right = 2 * node, 2 * node + 1
    cross = max(pos[level + 1][right], 0.0) * max(neg[level + 1][left], 0.0)
    return (cross + _uauc(pos, neg, pos_sigma, neg_sigma, level + 1, left, depth, threshold)
            + _uauc(pos, neg, pos_sigma, neg_sigma, level + 1, right, depth, threshold))


def hierarchical_auc(scores, labels, epsilon: float, rng: np.random.Generator, depth: int = DEPTH,
                     threshold: float = THRESHOLD) -> float:
    """eps-LDP AUC estimate from the two classes' hierarchical histograms (classes public)."""
    scores, labels = np.asarray(scores, dtype=np.float64), np.asarray(labels)
    leaves = np.minimum((scores * 2**depth).astype(np.int64), 2**depth - 1)
    pos, pos_sigma = level_histograms(leaves[labels == 1], depth, epsilon, rng)
    neg, neg_sigma = level_histograms(leaves[labels == 0], depth, epsilon, rng)
    p, n = int(labels.sum()), int((1 - labels).sum())
    return _uauc(pos, neg, pos_sigma, neg_sigma, 0, 0, depth, threshold) / (p * n)
