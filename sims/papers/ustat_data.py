"""Synthetic data for the U-statistic experiments (ustats §6 and App. D.1, in their spirit).

* Discrete populations with exact moments (protocols.ustat.theory):
  scores uniform on the Gini grid {0, 1/2^12, ..., 1}, and correlated 1-5
  ratings shaped like the TripAdvisor (room, cleanliness) pairs: mostly high
  ratings, strongly but not perfectly concordant.  Our copy of the paper
  gives neither the data nor its tau, so the table below is ours.
* The App. D.1 AUC sets, n positives and n negatives each:
  ``auc_one`` (all positives at 0.75, all negatives at 0.25: AUC 1),
  ``uniform`` (every score uniform on [0, 1], whatever the class: AUC ~ 0.5),
  ``ith_digit`` (positives at 1/2 + 2^-i, negatives at 1/2: AUC 1, but only
  a quantization finer than 2^-i can tell them apart).
"""
from dataclasses import dataclass

import numpy as np

# P(room = a, cleanliness = b), a, b = 1..5 (rows a, columns b), sums to 1
RATINGS_PMF = np.array([
    [0.030, 0.008, 0.004, 0.002, 0.001],
    [0.008, 0.030, 0.012, 0.006, 0.002],
    [0.004, 0.012, 0.070, 0.040, 0.014],
    [0.002, 0.006, 0.040, 0.180, 0.090],
    [0.001, 0.002, 0.014, 0.090, 0.434],
])


@dataclass(frozen=True)
class Population:
    """A discrete distribution: ``support`` rows (values or (a, b) pairs) with probabilities ``pmf``."""
    support: np.ndarray
    pmf: np.ndarray

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.support[rng.choice(len(self.pmf), size=n, p=self.pmf)]


def gini_grid(bits: int = 12) -> Population:
    """Uniform on {0, 1, ..., 2^bits} / 2^bits (the Gini circuit's input grid)."""
    size = 2**bits + 1
    return Population(np.arange(size) / 2.0**bits, np.full(size, 1.0 / size))


def ratings() -> Population:
    """Correlated (a, b) ratings in 1..5 with the joint pmf RATINGS_PMF."""
    a, b = np.meshgrid(np.arange(1, 6), np.arange(1, 6), indexing="ij")
    pmf = RATINGS_PMF.ravel() / RATINGS_PMF.sum()
    return Population(np.stack([a.ravel(), b.ravel()], axis=1), pmf)


def auc_one(n: int) -> tuple:
    """(scores, labels): n positives at 0.75, n negatives at 0.25."""
    return np.repeat([0.75, 0.25], n), np.repeat([1, 0], n)


def uniform(n: int, rng: np.random.Generator) -> tuple:
    return rng.random(2 * n), np.repeat([1, 0], n)


def ith_digit(n: int, i: int = 10) -> tuple:
    """(scores, labels): n positives at 1/2 + 2^-i, n negatives at 1/2."""
    return np.repeat([0.5 + 2.0**-i, 0.5], n), np.repeat([1, 0], n)
