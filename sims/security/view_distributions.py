"""The distribution tests of the view (transcript) tests: whether two inputs of the same public shape give one
distribution of opened values, and whether opened destinations and masked words are uniform.

Over many runs on two inputs of the same public shape (distinct keys vs all
tied; sims.security.view_parties), every opened value must follow one
distribution (chi-square homogeneity over the cells below) and every opened
destination vector must be a uniform permutation (chi-square goodness of
fit); the low bits of the shuffle's corrections and the one-hot words must be
uniform (:func:`word_uniformity`, and the controls of
sims.security.weakened_shuffles).  The controls of the radix sort (sigma
opened without the shuffle, one digit mask reused) must be rejected.
"""
import itertools

import numpy as np
from scipy.stats import chi2, chisquare

PERMUTATIONS = [tuple(p) for p in itertools.permutations(range(4))]


def _cells(run):
    """The cells one run's opened values fall in: (kind, which, position..., value)."""
    seen = {}
    for kind, opened in run:
        j = seen[kind] = seen.get(kind, -1) + 1
        if kind == "destinations":
            yield kind, j, tuple(opened.tolist())  # the whole permutation
        elif kind == "digit":
            yield from ((kind, j, i, int(v)) for i, v in enumerate(opened))
        else:  # masked Beaver differences, received messages: two bits per slot
            yield from ((kind, j, i, u, bucket(v)) for i, row in enumerate(opened) for u, v in enumerate(row))


def bucket(value) -> int:
    """Two bits of a 64-bit word by multiplicative hashing (the top bits of value * 0x9E3779B97F4A7C15 mod
    2^64): uniform for a uniform word, and two different fixed words (say two opened outputs) fall in
    different buckets with probability about 3/4, where their lowest bits often agree."""
    return ((int(value) * 0x9E3779B97F4A7C15) % 2 ** 64) >> 62


def table(views) -> dict:
    cells = {}
    for run in views:
        for cell in _cells(run):
            cells[cell] = cells.get(cell, 0) + 1
    return cells


def homogeneity(views_a, views_b) -> float:
    """p-value of a chi-square test that two inputs' opened values follow one distribution.

    One 2 x k contingency table per opened element (k: the values seen there), its Pearson statistic
    scaled by (N - 1)/N (N: the element's runs), which makes its null mean exactly the degrees of freedom
    under fixed margins.  Two tests, each at half the level: the statistics summed (many small
    differences; elements fixed by the public shape add nothing) and the smallest per-element p-value,
    Bonferroni-corrected (one element that differs).  An element opened in a different share of the runs
    of the two inputs (a schedule that depends on the data) gives p = 0.

    When every run of both inputs opens the same messages in the same shapes (the protocols' public
    schedule), the word-valued messages are counted with numpy per element (:func:`_word_tables`); the
    same statistics as the general path (:func:`_cell_tables`), which any other schedule takes.
    """
    shapes = {_schedule(run) for run in list(views_a) + list(views_b)}
    tables = _word_tables(views_a, views_b) if len(shapes) == 1 else _cell_tables(views_a, views_b)
    if tables is None:
        return 0.0
    statistics, dfs = [], []
    for counts in tables:  # (elements, values, 2 inputs)
        n = counts.sum(1)
        total = n.sum(1)
        rows = counts.sum(2)
        seen = rows > 0
        expected = rows[:, :, None] * n[:, None, :] / total[:, None, None]
        cells = np.where(seen[:, :, None], (counts - expected) ** 2 / np.where(expected > 0, expected, 1), 0.0)
        df = seen.sum(1) - 1
        keep = df > 0
        statistics.extend((cells.sum((1, 2)) * (total - 1) / total)[keep].tolist())
        dfs.extend(df[keep].tolist())
    if not dfs:
        return 1.0
    summed = chi2.sf(sum(statistics), sum(dfs))
    single = chi2.sf(statistics, dfs).min() * len(dfs)
    return float(min(1.0, 2 * min(summed, single)))


def _schedule(run) -> tuple:
    return tuple((kind, np.shape(opened)) for kind, opened in run)


def _word_tables(views_a, views_b) -> list:
    """Per message of the common schedule: counts (elements, values, 2) over the runs of each input; the
    word-valued messages over whole arrays, each word in one of four buckets (the top two bits of a multiplicative
    hash, or the word itself where every word of the message is below 4: the hash would merge 0 and 2), the
    others (digits, destination vectors) by cell."""
    tables, other = [], []
    for index, (kind, opened) in enumerate(views_a[0]):
        if kind in ("destinations", "digit"):
            other.append(index)
            continue
        counts = np.zeros((np.size(opened), 4, 2))
        sides = [np.stack([np.asarray(run[index][1]).reshape(-1) for run in views]).astype(np.int64)
                 for views in (views_a, views_b)]
        small = all(((words >= 0) & (words < 4)).all() for words in sides)  # 2-bit values (positions of 4 rows)
        for side, words in enumerate(sides):
            buckets = words if small else (words.view(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(62)
            for value in range(4):
                counts[:, value, side] = (buckets == value).sum(0)
        tables.append(counts)
    if other:
        rest = _cell_tables([[run[i] for i in other] for run in views_a], [[run[i] for i in other] for run in views_b])
        if rest is None:
            return None
        tables.extend(rest)
    return tables


def _cell_tables(views_a, views_b):
    """The general path: every opened value as a cell (:func:`_cells`); None when an element is opened in a
    different share of the two inputs' runs."""
    a, b = table(views_a), table(views_b)
    elements = {}
    for cell in set(a) | set(b):
        elements.setdefault(cell[:-1], []).append((a.get(cell, 0), b.get(cell, 0)))
    tables = []
    for counts in elements.values():
        counts = np.array(counts, dtype=float)
        n = counts.sum(0)
        if n[0] * len(views_b) != n[1] * len(views_a):
            return None
        tables.append(counts[None])
    return tables


def uniformity(views) -> float:
    """p-value of a chi-square test that each opened destination vector is a uniform permutation of 4."""
    counts = table(views)
    opened = sum(1 for kind, _ in views[0] if kind == "destinations")
    observed = [counts.get(("destinations", j, p), 0) for j in range(opened) for p in PERMUTATIONS]
    return float(chisquare(observed).pvalue)


def word_uniformity(views, kind: str) -> float:
    """p-value of a chi-square test that the low two bits of every word of ``kind`` (the shuffle's
    "correction", the receiver's "one-hot part") are uniform, as the low bits of a word under a uniform mask
    are.  One goodness-of-fit test per element (its occurrence in a run, row, column) over the runs; the
    statistics summed and the smallest p-value (Bonferroni), each at half the level, as in :func:`homogeneity`."""
    counts = {}
    for run in views:
        occurrence = 0
        for seen, value in run:
            if seen != kind:
                continue
            low = np.asarray(value).astype(np.int64).reshape(len(value), -1) & 3
            for (i, u), v in np.ndenumerate(low):
                counts.setdefault((occurrence, i, u), np.zeros(4))[v] += 1
            occurrence += 1
    if not counts:
        raise ValueError(f"no {kind!r} in the views")
    statistics = [chisquare(c).statistic for c in counts.values()]
    summed = chi2.sf(sum(statistics), 3 * len(statistics))
    single = chi2.sf(statistics, 3).min() * len(statistics)
    return float(min(1.0, 2 * min(summed, single)))


def p_values(party_views) -> list:
    """[homogeneity, uniformity on input A, uniformity on input B] of one party's views of one variant."""
    return [homogeneity(*party_views), uniformity(party_views[0]), uniformity(party_views[1])]


def as_runs(jobs) -> list:
    """Each job's received arrays as one run of the homogeneity test (cells: message, position, low bits)."""
    return [[("message", np.asarray(a).reshape(1, -1)) for a in job] for job in jobs]
