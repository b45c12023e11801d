"""View (transcript) tests of the radix sort: what each compute party opens, run after run, on two inputs.

The radix sort (circuits.radix) opens, per digit, the masked digit and
Beaver differences, and per stable partition the destinations sigma[pi]
under a fresh joint shuffle pi.  Over many runs on two inputs of the same
public shape (distinct keys vs all tied), every opened value must follow
one distribution (chi-square homogeneity over the cells below) and every
opened destination vector must be a uniform permutation (chi-square
goodness of fit).  The control opens sigma itself, without the shuffle: the
same tests must reject it.
"""
import itertools

import numpy as np
from scipy.stats import chi2_contingency, chisquare

from ..circuits.shuffle import Shuffler

VIEW_INPUTS = (np.array([7, 2, 5, 0]), np.array([3, 3, 3, 3]))  # distinct keys vs all tied; same shape
VIEW_BITS = 3
PERMUTATIONS = [tuple(p) for p in itertools.permutations(range(4))]


class OpenSigma(Shuffler):
    """A deliberately leaky variant: opens sigma itself instead of sigma[pi]."""

    def open_shuffled(self, sigma, columns, xor_columns=0):
        return self.open(sigma), None, columns

    def gather_back(self, s, pi, rows):
        return rows[:, s]


def radix_views(ctx, shuffler, inputs, bits: int, runs: int) -> dict:
    """In a party: every (kind, value) it opens in ``runs`` radix sorts of each input, for the real sort
    ("radix") and for the leaky control ("leaky"), which shares the dealer streams."""
    from ..circuits.radix import RadixRanking

    leaky = OpenSigma.__new__(OpenSigma)
    leaky.__dict__ = shuffler.__dict__
    out = {}
    for name, service in (("radix", shuffler), ("leaky", leaky)):
        views = []
        for keys in inputs:
            seen = []
            for _ in range(runs):
                service.view = []
                RadixRanking(service, bits).sort(None, keys if ctx.rank == 0 else np.zeros_like(keys), [])
                seen.append(service.view)
            views.append(seen)
        out[name] = views
    shuffler.view = None
    return out


def view_party(ctx, inputs, bits: int, runs: int) -> dict:
    """The session target of the view experiment."""
    return radix_views(ctx, Shuffler(ctx.stream_key), inputs, bits, runs)


def _cells(run):
    """The cells one run's opened values fall in: (kind, which, position..., value)."""
    seen = {}
    for kind, opened in run:
        j = seen[kind] = seen.get(kind, -1) + 1
        if kind == "destinations":
            yield kind, j, tuple(opened.tolist())  # the whole permutation
        elif kind == "digit":
            yield from ((kind, j, i, int(v)) for i, v in enumerate(opened))
        else:  # masked Beaver differences: their two lowest bits per slot
            yield from ((kind, j, i, u, int(v) & 3) for i, row in enumerate(opened) for u, v in enumerate(row))


def table(views) -> dict:
    cells = {}
    for run in views:
        for cell in _cells(run):
            cells[cell] = cells.get(cell, 0) + 1
    return cells


def homogeneity(views_a, views_b) -> float:
    """p-value of a chi-square test that two inputs' opened values follow one distribution."""
    a, b = table(views_a), table(views_b)
    cells = sorted(set(a) | set(b))
    return float(chi2_contingency(np.array([[a.get(c, 0) for c in cells], [b.get(c, 0) for c in cells]]))[1])


def uniformity(views) -> float:
    """p-value of a chi-square test that each opened destination vector is a uniform permutation of 4."""
    counts = table(views)
    opened = sum(1 for kind, _ in views[0] if kind == "destinations")
    observed = [counts.get(("destinations", j, p), 0) for j in range(opened) for p in PERMUTATIONS]
    return float(chisquare(observed).pvalue)


def p_values(party_views) -> list:
    """[homogeneity, uniformity on input A, uniformity on input B] of one party's views of one variant."""
    return [homogeneity(*party_views), uniformity(party_views[0]), uniformity(party_views[1])]
