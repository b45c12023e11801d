"""The DP ROC and precision-recall curve: cumulative counts at public cuts, released by the binary tree mechanism.

mpc-central's curve release (protocols.mpc.dp_curve runs it inside the MPC).  The K public cuts c_1 < ... <
c_K = M flag the top c_k rows of the oblivious ranking; slice k holds the rows flagged at cut k and not at
cut k - 1 (ties are split by the clients' row order, the stable sort's public rule), and d_k counts its
positives.  The true positives at cut k are the prefix sum TP_k = d_1 + ... + d_k.  One label flip moves one
d_k by 1, hence every TP_k from k on: independent noise per cut would need sensitivity K.  The binary tree
mechanism (Chan, Shi & Song 2011; Dwork et al. 2010) instead releases the sums of the dyadic intervals of
the leaves d (padded with zeros to K' = 2^L), each with discrete Laplace noise at epsilon / (L + 1): a flip
changes one node per level, L + 1 in all, so the release is epsilon-DP (plus the circuit's delta for those
L + 1 draws), and every TP_k is a sum of at most L + 1 noisy nodes, its error's variance at most
(L + 1) Var(Z) = O(log^3 K / epsilon^2) instead of K Var(Z) ~ K^3 / epsilon^2.  Label neighbours only: a
score change would move a row between slices (two leaves).

Post-processing of the nodes only (no privacy cost): TP~_k from the dyadic decomposition of [1, k], P~ =
TP~_K (clamped to [1, M - 1]), TPR = TP~/P~, FPR = (c_k - TP~_k)/(M - P~), each made monotone by
:func:`monotone` (the L2-closest non-decreasing sequence within [0, 1]: noise alone can make a raw curve step
back, as fpr 0, 0.118, 0.049, 0 at epsilon 1 on 285 rows did), precision = TP~_k / c_k clamped to [0, 1]; the
area under the monotone ROC by the trapezoid rule.
"""
import math
from dataclasses import dataclass

import numpy as np

from ...circuits.noise_laws import DiscreteLaplace
from ..clear_metrics import roc_vertices
from ..errors import InputError
from ..metric_catalogue import DEFAULT_POINTS, cut_positions
from ..runtime import wire
from ..runtime.ledger import Release
from .release_noise import ReleaseNoise
from ..validation import checked


@wire.message
@dataclass(frozen=True)
class CurveNoise(ReleaseNoise):
    """The DP curve's parameters: epsilon (label DP), the number of cuts; ``repetitions`` > 1 for experiments.

    A boundary: built from the planner's, the sims' and (decoded) a peer's values, it checks its own."""
    epsilon: float
    points: int = DEFAULT_POINTS
    repetitions: int = 1
    neighbours: str = "label"

    def __post_init__(self):
        checked("epsilon", self.epsilon)
        checked("points", self.points)
        if self.neighbours != "label":
            raise InputError("the DP curve protects labels (neighbours 'label'); a score change moves a row "
                             "between two slices")
        if self.repetitions < 1:
            raise InputError("repetitions must be at least 1")

    def levels(self, m: int) -> int:
        """L + 1: the tree's levels over the cuts' slices (K' = 2^L leaves)."""
        return (1 << max(0, len(cut_positions(m, self.points)) - 1).bit_length()).bit_length()

    def nodes(self, sorted_labels: np.ndarray) -> np.ndarray:
        """(..., 2K' - 1) the tree's nodes over the positives between this release's cuts, from labels (..., M) in
        ascending order of the scores (:func:`slice_counts`, :func:`tree_nodes`); on integers and on shares."""
        return tree_nodes(slice_counts(sorted_labels, cut_positions(np.shape(sorted_labels)[-1], self.points)))

    def node_noise(self, m: int) -> DiscreteLaplace:
        """Each node's discrete Laplace: sensitivity 1 at epsilon / (L + 1)."""
        return DiscreteLaplace(self.epsilon / self.levels(m), 1)

    def delta(self, m: int) -> float:
        """The circuit's delta: a label flip moves L + 1 nodes, each draw adding its own."""
        return self.levels(m) * self.node_noise(m).delta

    def delta_ceiling(self, m: int) -> float:
        """A bound of :meth:`delta` at every M up to ``m``: at most levels(m) nodes (the levels grow with M), each
        drawn at epsilon / L for some L <= levels(m), whose delta ceiling is at most the one at epsilon with the
        width of epsilon / levels(m) (circuits.noise_laws.DiscreteLaplace.delta_ceiling)."""
        levels = self.levels(m)
        widest = DiscreteLaplace(self.epsilon / levels, 1)
        per_coin = 2.0**-widest.bits + 2.0**-52
        return levels * (1.0 + math.exp(self.epsilon)) * (2.0**-widest.bits + (widest.width + 2) * per_coin)

    def release(self, m: int) -> Release:
        """What one job charges to the privacy ledger: one discrete Laplace term per level, and the delta."""
        node = self.node_noise(m)
        return Release("mpc-dp-curve", ((node.rate, 1),) * (self.levels(m) * self.repetitions),
                       self.delta(m) * self.repetitions)

    def opened(self) -> tuple:
        return ("auc", "roc")

    def cuts(self) -> int:
        return self.points

    def drawn(self, m: int) -> str:
        return f"{self.epsilon / self.levels(m):g} on each of the tree's {self.levels(m)} levels"


def tree_nodes(leaves: np.ndarray) -> np.ndarray:
    """(..., 2K' - 1) sums of the dyadic intervals of ``leaves`` (..., K), padded with zeros to K' = 2^L:
    level 0 (the leaves) first, then each level's pair sums, the root last.  Works on integers and on shares."""
    leaves = np.asarray(leaves)
    width = 1 << max(0, leaves.shape[-1] - 1).bit_length()
    level = np.zeros(leaves.shape[:-1] + (width,), dtype=leaves.dtype)
    level[..., :leaves.shape[-1]] = leaves
    out = [level]
    while level.shape[-1] > 1:
        level = level[..., 0::2] + level[..., 1::2]
        out.append(level)
    return np.concatenate(out, axis=-1)


def prefix_sums(nodes: np.ndarray, count: int) -> np.ndarray:
    """(..., count) prefix sums d_1 + ... + d_k, k = 1..count, each from at most L + 1 nodes of
    :func:`tree_nodes` (the dyadic decomposition of [0, k))."""
    nodes = np.asarray(nodes)
    width = (nodes.shape[-1] + 1) // 2
    starts, size = [], width
    while size:  # the offset of each level in the node vector
        starts.append(sum(width >> i for i in range(len(starts))))
        size >>= 1
    out = np.zeros(nodes.shape[:-1] + (count,), dtype=nodes.dtype)
    for k in range(1, count + 1):
        offset, total = 0, 0
        for level in reversed(range(len(starts))):
            if k - offset >= 1 << level:
                total = total + nodes[..., starts[level] + (offset >> level)]
                offset += 1 << level
        out[..., k - 1] = total
    return out


def slice_counts(sorted_labels: np.ndarray, flagged: np.ndarray) -> np.ndarray:
    """d_k: the positives among the rows flagged at cut k and not at cut k - 1 (ascending sorted labels; works
    on shares, a local prefix sum)."""
    sorted_labels = np.asarray(sorted_labels)
    m = sorted_labels.shape[-1]
    below = np.concatenate([np.zeros(sorted_labels.shape[:-1] + (1,), dtype=sorted_labels.dtype),
                            np.cumsum(sorted_labels, axis=-1)], axis=-1)  # below[j]: positives at positions < j
    at_or_above = below[..., -1:] - below[..., m - np.asarray(flagged)]  # TP at each cut
    return np.diff(at_or_above, axis=-1, prepend=0)


def curve_from_nodes(nodes: np.ndarray, flagged: np.ndarray, m: int) -> dict:
    """The aggregator's curve from one release's noisy nodes (module docstring's post-processing)."""
    flagged = np.asarray(flagged, dtype=np.float64)
    tp = prefix_sums(np.asarray(nodes, dtype=np.float64), len(flagged))
    p = min(max(tp[-1], 1.0), m - 1.0)
    tpr = monotone(tp / p)
    fpr = monotone((flagged - tp) / (m - p))
    precision = np.clip(tp / flagged, 0, 1)
    area = curve_area(fpr, tpr)
    return {"flagged": flagged.astype(np.int64).tolist(), "fpr": fpr.tolist(), "tpr": tpr.tolist(),
            "recall": tpr.tolist(), "precision": precision.tolist(), "auc": area, "positives": p}


def monotone(values) -> np.ndarray:
    """The non-decreasing sequence within [0, 1] closest to ``values`` in L2: the isotonic regression (pool
    adjacent violators: each run of values that steps back replaced by its mean) clipped to [0, 1], which is the
    projection onto the monotone sequences in [0, 1] (clipping keeps the order and is the box's projection).
    Post-processing of a released DP curve's points (free in DP): each cut's point is pulled to its neighbours'."""
    means, sizes = [], []
    for value in np.asarray(values, dtype=np.float64):
        means.append(value)
        sizes.append(1)
        while len(means) > 1 and means[-2] > means[-1]:
            size = sizes[-2] + sizes[-1]
            means[-2] = (means[-2] * sizes[-2] + means[-1] * sizes[-1]) / size
            sizes[-2] = size
            del means[-1], sizes[-1]
    return np.clip(np.repeat(means, sizes), 0.0, 1.0)


def curve_area(fpr, tpr) -> float:
    """The trapezoid area under ROC points sorted by FPR, with (0, 0) and (1, 1) added (as DPAUC integrates)."""
    order = np.argsort(fpr, kind="stable")
    x, y = np.r_[0.0, np.asarray(fpr)[order], 1.0], np.r_[0.0, np.asarray(tpr)[order], 1.0]
    return float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2))


def curve_error(fpr, tpr, scores, labels, grid: int = 100) -> float:
    """The mean |TPR~ - TPR| over ``grid`` FPR values (the midpoints of equal steps), both curves read as
    piecewise linear through their points sorted by FPR with (0, 0) and (1, 1) added: how far a released curve
    lies from the data's ROC, whatever points it was released at."""
    true_positives, counts = roc_vertices(scores, labels)
    at = (np.arange(grid) + 0.5) / grid
    order = np.argsort(fpr, kind="stable")
    noisy = np.interp(at, np.r_[0.0, np.asarray(fpr)[order], 1.0], np.r_[0.0, np.asarray(tpr)[order], 1.0])
    p, n = true_positives[-1], counts[-1] - true_positives[-1]
    exact = np.interp(at, np.r_[0.0, (counts - true_positives) / n], np.r_[0.0, true_positives / p])
    return float(np.mean(np.abs(noisy - exact)))


def simulate_curves(scores, labels, noise: CurveNoise, draws: int, rng: np.random.Generator) -> list:
    """``draws`` curves with the release law of the circuit (the same discrete Laplace), sampled in the clear,
    for the plain-DP comparison (sims.papers.dp_comparison); ties split by row order as the stable sort does."""
    scores, labels = np.asarray(scores, dtype=np.float64), np.asarray(labels, dtype=np.int64)
    m = len(labels)
    flagged = cut_positions(m, noise.points)
    nodes = noise.nodes(labels[np.argsort(scores, kind="stable")])
    noisy = nodes + noise.node_noise(m).sample(rng, draws * len(nodes)).reshape(draws, len(nodes))
    return [curve_from_nodes(n, flagged, m) for n in noisy]
