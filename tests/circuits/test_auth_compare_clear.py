"""circuits.auth_compare, circuits.auth_auc.ks_gap and circuits.auth_curves in the clear (the adversarial review's
sweeps): the real functions run on a clear stand-in for the Authenticator (one row, the value itself, the dealer's
digits law with chosen masks R) and for the sort's moves, so that the ranges and edges can be swept far beyond what
the process tests reach: every width up to the widest comparison, masks at the digit edges, the rounding at every M
up to 2^23 and K up to 12 (halves, AUC 0 and 1), the division by secret divisors up to 2^46, the KS walk against
scikit-learn and the curves' runs against the tie groups on every tie pattern of small sizes."""
import itertools
from fractions import Fraction

import numpy as np
import pytest

from mpc_auc.circuits import auth_ap, auth_curves, auth_pauc
from mpc_auc.circuits.auth_auc import ks_gap
from mpc_auc.circuits.auth_compare import (bits_of, comparison_bits, decimal_round, divide, division_bits, is_zero,
                                           maximum, nonnegative, rounding_bits)
from mpc_auc.circuits.auth_tie_groups import tie_groups
from mpc_auc.circuits.macs import digits_law, statistical_bits, wide_keys
from mpc_auc.circuits.scales import CURVE_DIGIT_BITS, OPEN_BITS
from mpc_auc.protocols.mpc.malicious import MAX_ROWS, release_bits


class ClearAuth:
    """The Authenticator's interface as auth_compare uses it, on clear values (1, ...): products exact mod 2^64,
    openings the values themselves, the digits law's R from ``masks`` (a callable n -> int64 words) or uniform."""

    keys = 0

    def __init__(self, wide_bits: int, masks=None, seed: int = 0, k: int = 24):
        self.wide_bits, self.masks, self.rng, self.k = wide_bits, masks, np.random.default_rng(seed), k
        self.opened = []

    def correlation(self, law, shape, owner=None, wide=False):
        assert law == "digits"
        n = shape[1]
        words = self.masks(n) if self.masks else self.rng.integers(-2 ** 63, 2 ** 63, n, dtype=np.int64)
        return digits_law(np.asarray(words, dtype=np.int64)[None], shape[0])[None], None

    def open(self, x, kind):
        self.opened.append(x[0].copy())
        return x[0].copy()

    def add_public(self, x, c):
        return x + np.asarray(c, dtype=np.int64)

    def multiply(self, x, y, kind="product"):
        return x * y

    def public(self, c, shape, wide=False):
        return np.full((1,) + tuple(shape), c, dtype=np.int64)

    def check(self, phase):
        pass


def _mod(x: np.ndarray, bits: int) -> np.ndarray:
    return np.asarray(x, dtype=np.int64) & np.int64((1 << bits) - 1)


@pytest.mark.parametrize("bits", range(1, 51))
def test_nonnegative_at_the_range_edges_and_mask_edges(bits):
    """|x| < 2^bits (L = bits rounded up to even): x in {0, +-1, +-(2^bits - 1), +-2^(bits-1)} against masks R whose
    low L bits are 0, all ones, 2^(L-1), and random, with either bit L and random high bits."""
    top = 2 * -(-bits // 2)
    edge = (1 << bits) - 1
    xs = np.array(sorted({0, 1, -1, edge, -edge, 1 << (bits - 1), -(1 << (bits - 1)), 2, -2}), dtype=np.int64)
    lows = [0, (1 << top) - 1, 1 << (top - 1), 1, (1 << top) - 2]
    rng = np.random.default_rng(bits)
    for low, above in itertools.product(lows, (0, 1, 2, 3, int(rng.integers(0, 2 ** 20)))):
        r = np.int64((low + (above << top)) & ((1 << 63) - 1))
        auth = ClearAuth(comparison_bits(bits), masks=lambda n: np.full(n, r))
        got = nonnegative(auth, xs[None], bits)[0]
        assert np.array_equal(got, (xs >= 0).astype(np.int64)), (bits, low, above)
    auth = ClearAuth(comparison_bits(bits), seed=bits)
    xs = rng.integers(-edge, edge + 1, 2000)
    assert np.array_equal(nonnegative(auth, xs[None], bits)[0], (xs >= 0).astype(np.int64))


def test_every_comparison_fits_the_wide_values_for_every_m_and_decimals():
    """For every M the mode takes (2 .. 2^23, the bit-length edges and a sweep), decimals None and 1..12: the KS
    tournament's comparison (ks_gap's width) and the rounding's fit release_bits, the KS P N and 10^K fit the release,
    and wide_keys does not refuse; with the curves their comparisons and divisions fit, and the points' halves; with AP
    its widths and its even k."""
    ms = sorted({2, 3, 4, 5, 6, 7, MAX_ROWS, MAX_ROWS - 1}
                | {v + d for e in range(2, 24) for v in (1 << e,) for d in (-1, 0, 1) if 2 <= v + d <= MAX_ROWS}
                | set(range(2, 5000)))
    for m in ms:
        ks_bits = (2 * (m * m // 4)).bit_length()
        pn_max = (m // 2) * (m - m // 2)
        for decimals in (None,) + tuple(range(1, 13)):
            w = release_bits(m, decimals=decimals)
            wide_keys(w)
            assert comparison_bits(ks_bits) <= w, (m, decimals)
            assert pn_max < 1 << w
            assert 2 * pn_max <= m * m // 2
            if decimals:
                assert comparison_bits((10 * 2 * pn_max).bit_length()) <= w
                assert 10 ** decimals < 1 << w
        ap = release_bits(m, metrics=("ap",))  # its divisions, sums and bits fit, and its k (rounded up to even)
        wide_keys(ap)
        assert statistical_bits((2 * m - 1).bit_length() + (2 * m - 1).bit_length() % 2) >= 40
        curves = release_bits(m, metrics=("roc",))  # the run starts' comparisons, the divisions, the points' halves
        wide_keys(curves)
        assert max(comparison_bits(m.bit_length()), division_bits(m * m, CURVE_DIGIT_BITS)) <= curves
        assert 1 << (OPEN_BITS - auth_curves.LOW_BITS) < 1 << curves


def _clear_rounding(a: int, b: int, decimals: int) -> int:
    """round(a / b 10^K), halves up, exactly."""
    q = Fraction(a, b) * 10 ** decimals
    return int(q + Fraction(1, 2)) if q >= 0 else None


@pytest.mark.parametrize("decimals", [*range(1, 7), *(pytest.param(k, marks=pytest.mark.slow) for k in range(7, 13))])
def test_decimal_round_equals_the_exact_rounding_at_halves_0_and_1(decimals):
    """a / b at 0, 1, exact halves at the K-th decimal (b = 2 10^K t, a odd multiple of t), one below and above,
    and random, for divisors up to the mode's widest 2PN (2^45)."""
    rng = np.random.default_rng(decimals)
    biggest = (1 << 22) * (1 << 23)  # 2PN at M = 2^23
    cases = []
    for b in [2, 3, 4, 6, 10, 2 * 10 ** decimals, 2 * 10 ** decimals * 7, biggest, biggest - 2,
              *(int(v) for v in rng.integers(2, biggest, 8))]:
        cases += [(0, b), (b, b), (b - 1, b), (1, b), (b // 2, b)]
        if b % (2 * 10 ** decimals) == 0:  # exact halves at the K-th decimal
            t = b // (2 * 10 ** decimals)
            for k in (1, 3, 2 * 10 ** decimals - 1):
                cases += [(k * t, b), (k * t - 1, b), (k * t + 1, b)]
        cases += [(int(v), b) for v in rng.integers(0, b + 1, 6)]
    for a, b in cases:
        auth = ClearAuth(rounding_bits(b, decimals), seed=a % 1000)
        got = int(decimal_round(auth, np.array([[a]], dtype=np.int64), b, decimals)[0, 0])
        assert got == _clear_rounding(a, b, decimals), (a, b, decimals)


def _orders(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The moved labels of both_orders' sort, in the clear: the rows stably by (key, y), then the reversed rows
    stably by (key, 1 - y)."""
    m = len(labels)
    first = np.lexsort((labels, scores))
    back = np.arange(m)[::-1]
    second = back[np.lexsort((1 - labels[back], scores[back]))]
    return np.concatenate([labels[first], labels[second]])[None].astype(np.int64)


def _sklearn_ks_pn(scores, labels) -> Fraction:
    from sklearn.metrics import roc_curve
    fpr, tpr, _ = roc_curve(labels, scores, drop_intermediate=False)
    p, n = int(labels.sum()), int(len(labels) - labels.sum())
    return max(abs(round(t * p) * n - round(f * n) * p) for f, t in zip(fpr, tpr))


def _walk_ks(scores, labels) -> int:
    moved = _orders(scores, labels)
    m = len(labels)
    auth = ClearAuth(64)
    auth.wide_bits = comparison_bits((2 * (m * m // 4)).bit_length())
    return int(ks_gap(auth, moved, np.array([labels.sum()], dtype=np.int64))[0])


def _boundary_ks_pn(scores, labels) -> int:
    """max over the tie groups' boundaries t of |N pos(<t) - P neg(<t)|, by the definition."""
    p, n = int(labels.sum()), int(len(labels) - labels.sum())
    return max(abs(n * int(labels[scores < t].sum()) - p * int((1 - labels[scores < t]).sum()))
               for t in list(np.unique(scores)) + [np.inf])


@pytest.mark.parametrize("m", [2, 3, 4, *(pytest.param(m, marks=pytest.mark.slow) for m in (5, 6))])
def test_ks_walk_equals_the_boundary_definition_on_every_tie_pattern(m):
    """Every labelling (both classes) and every assignment of up to 3 (m <= 4: m) score values to m rows."""
    for scores, labels in _tie_patterns(m):
        assert _walk_ks(scores, labels) == _boundary_ks_pn(scores, labels), (scores, labels)


def _tie_patterns(m: int):
    """(scores, labels) of every labelling of m rows with both classes and every assignment of up to 3 (m <= 4: m)
    score values to them."""
    for labels in itertools.product((0, 1), repeat=m):
        labels = np.array(labels)
        if 0 < labels.sum() < m:
            for scores in itertools.product(range(m if m <= 4 else 3), repeat=m):
                yield np.array(scores, dtype=np.float64), labels


def test_ks_walk_equals_sklearn_on_random_tie_heavy_sets():
    for scores, labels, _ in _tie_heavy_sets(3, 100, 400, 6):
        assert _walk_ks(scores, labels) == _sklearn_ks_pn(scores, labels)


def _tie_heavy_sets(seed: int, count: int, rows: int, values: int):
    """(scores, labels, rng) of ``count`` random sets of 2 to ``rows`` rows, both classes, scores among fewer than
    ``values`` values."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        m = int(rng.integers(2, rows))
        labels = rng.integers(0, 2, m)
        labels[:2] = (0, 1)
        yield rng.integers(0, int(rng.integers(1, values)), m).astype(np.float64), labels, rng


def test_maximum_of_the_extreme_ks_candidates():
    """The tournament on candidates at +-PN (M = 2^23: PN = 2^44), the widest gaps ks_gap allows."""
    m = 1 << 23
    bits = (2 * (m * m // 4)).bit_length()
    pn = (m // 2) * (m - m // 2)
    rng = np.random.default_rng(9)
    for trial in range(20):
        values = rng.integers(-pn, pn + 1, 37)
        values[rng.integers(0, 37)] = pn if trial % 2 else -pn
        auth = ClearAuth(comparison_bits(bits), seed=trial)
        assert int(maximum(auth, values[None].astype(np.int64), bits)[0, 0]) == values.max()


@pytest.mark.slow  # every M from 2 to 2^23 at once (about 1 GB of numpy temporaries)
def test_every_m_up_to_2_to_23_fits_vectorized():
    def bit_length(x):
        return np.frexp(x.astype(np.float64))[1].astype(np.int64) * (x > 0)  # exact below 2^53

    m = np.arange(2, MAX_ROWS + 1, dtype=np.int64)
    wide = bit_length(2 * m * m)  # circuits.auth_auc.wide_bits
    ks = bit_length(2 * (m * m // 4))
    assert not (2 * ((ks + 1) // 2) + 1 > wide).any()  # comparison_bits of ks_gap's gaps within W's width


@pytest.mark.parametrize("digit_bits", [1, 4, pytest.param(13, marks=pytest.mark.slow)])
def test_divide_is_the_exact_floor_for_secret_divisors_up_to_the_widest(digit_bits):
    """floor(a 2^52 / b) for 0 <= a <= b at 0, 1, b - 1, b, b / 2 and random, b from 1 to the curves' widest divisor
    (M^2 at M = 2^23), several lanes at once, each with its own divisor."""
    rng = np.random.default_rng(digit_bits)
    bound = 1 << 46
    bs = [1, 2, 3, 7, bound, bound - 1, *(int(v) for v in rng.integers(1, bound, 6))]
    a, b = zip(*[(x, d) for d in bs for x in {0, 1 % (d + 1), d - 1, d, d // 2, int(rng.integers(0, d + 1))}])
    auth = ClearAuth(division_bits(bound, digit_bits), seed=digit_bits)
    got, rest = divide(auth, np.array([a], dtype=np.int64), np.array([b], dtype=np.int64), OPEN_BITS, digit_bits,
                       bound)
    assert [int(q) for q in got[0]] == [(x << OPEN_BITS) // d for x, d in zip(a, b)]
    assert [int(r) for r in rest[0]] == [(x << OPEN_BITS) % d for x, d in zip(a, b)]


class ClearRanking:
    """AuthRadixRanking's interface in the clear (the stable sort by the digits, the moves by sigma), on ClearAuth."""

    def __init__(self, shuffler, auth, progress=None, label=""):
        self.shuffler, self.auth = shuffler, auth

    def permutation(self, digits: np.ndarray) -> np.ndarray:
        keys = sum(d[0] << (2 * t) for t, d in enumerate(digits))
        sigma = np.empty_like(keys)
        sigma[np.argsort(keys, kind="stable")] = np.arange(len(keys))
        return sigma[None]

    def apply(self, sigma, columns):
        out = np.empty_like(columns)
        out[..., sigma[0]] = columns
        return out

    def gather(self, sigma, columns):
        return columns[..., sigma[0]]


def _exact_points(scores, labels, flagged) -> dict:
    """floor(value 2^52) of TPR, FPR and precision at each cut, the tie group a cut falls in counted in proportion
    (circuits.rank_metrics.curve_points' definition, with the tie groups of the keys), exactly."""
    p, m = int(labels.sum()), len(labels)
    order = np.argsort(scores, kind="stable")
    keys, ys = scores[order], labels[order]
    out = {"tpr": [], "fpr": [], "precision": []}
    for c in flagged:
        j = m - int(c)
        start, end = (int(np.searchsorted(keys, keys[j], side)) for side in ("left", "right"))
        tp = p - int(ys[:start].sum()) - Fraction(int(ys[start:end].sum()) * (j - start), end - start)
        for name, value in (("tpr", tp / p), ("fpr", (int(c) - tp) / (m - p)), ("precision", tp / int(c))):
            out[name].append(int(value * 2 ** OPEN_BITS))
    return out


def _run_points(scores, labels, flagged, monkeypatch) -> dict:
    monkeypatch.setattr(auth_curves, "AuthRadixRanking", ClearRanking)
    m = len(labels)
    auth = ClearAuth(release_bits(m, metrics=("roc",)))
    points = auth_curves.curve_points(ClearRanking(None, auth), _orders(scores, labels), int(labels.sum()),
                                      np.asarray(flagged), ["tpr", "fpr", "precision"])
    return {name: [int(v) for v in auth_curves.joined(values[0].astype(object))] for name, values in points.items()}


@pytest.mark.parametrize("m", [2, 3, *(pytest.param(m, marks=pytest.mark.slow) for m in (4, 5))])
def test_curve_points_from_runs_equal_the_tie_groups_on_every_tie_pattern(m, monkeypatch):
    """circuits.auth_curves.curve_points (runs from the sort of both orders, their compaction, the long divisions) on
    every labelling with both classes and every assignment of up to 3 (m <= 4: m) score values to m rows, at every
    cut: the tie groups' exact floor(value 2^52)."""
    flagged = np.arange(1, m + 1)
    for scores, labels in _tie_patterns(m):
        assert _run_points(scores, labels, flagged, monkeypatch) == _exact_points(scores, labels, flagged), (
            scores, labels)


def test_curve_points_equal_the_tie_groups_on_random_tie_heavy_sets(monkeypatch):
    for scores, labels, rng in _tie_heavy_sets(4, 30, 300, 8):
        flagged = np.unique(rng.integers(1, len(labels) + 1, 9))
        assert _run_points(scores, labels, flagged, monkeypatch) == _exact_points(scores, labels, flagged)


def _edge_masks(top: int, seed: int) -> list:
    """Masks R whose low ``top`` bits are 0, all ones, 2^(top-1), 1, all ones less one, with high bits 0..3 and
    random."""
    rng = np.random.default_rng(seed)
    lows = [0, (1 << top) - 1, 1 << (top - 1), 1, (1 << top) - 2]
    return [np.int64((low + (above << top)) & ((1 << 63) - 1))
            for low, above in itertools.product(lows, (0, 1, 2, 3, int(rng.integers(0, 2 ** 20))))]


@pytest.mark.parametrize("k", [2, 4, 10, 18, 24])
def test_is_zero_at_the_range_edges_and_mask_edges(k):
    """|x| < 2^k, k the positions' (even) bits: x in {0, +-1, +-2, +-(2^k - 1), +-2^(k-1)} and random, against masks
    at the digit edges and random: [x = 0]."""
    edge = (1 << k) - 1
    rng = np.random.default_rng(k)
    xs = np.array(sorted({0, 1, -1, 2, -2, edge, -edge, 1 << (k - 1), -(1 << (k - 1))})
                  + list(rng.integers(-edge, edge + 1, 300)), dtype=np.int64)
    for r in _edge_masks(k, k):
        auth = ClearAuth(40, masks=lambda n: np.full(n, r), k=k)
        assert np.array_equal(is_zero(auth, xs[None])[0], (xs == 0).astype(np.int64)), (k, r)


@pytest.mark.parametrize("bits", [1, 2, 3, 7, 8, 19, 24, 25])
def test_bits_of_at_the_range_edges_and_mask_edges(bits):
    """0 <= x < 2^bits at 0, 1, 2^bits - 1, 2^(bits-1) and random, against masks at the digit edges (every borrow
    pattern: R's low digits all 0, all 3, ...) and random: the bits, least significant first."""
    top = 2 * -(-bits // 2)
    rng = np.random.default_rng(bits)
    xs = np.array(sorted({0, 1 % (1 << bits), (1 << bits) - 1, 1 << (bits - 1)}) +
                  list(rng.integers(0, 1 << bits, 300)), dtype=np.int64)
    expected = (xs[None] >> np.arange(bits)[:, None]) & 1
    for r in _edge_masks(top, bits):
        auth = ClearAuth(top + 1, masks=lambda n: np.full(n, r))
        assert np.array_equal(bits_of(auth, xs[None], bits)[0], expected), (bits, r)


def _semi_honest_ap(scores, labels) -> int:
    """circuits.rank_metrics.secret_average_precision's integer in the clear: S = sum over tie groups of p_t times
    sum_b bit_b(P - Pex_t) floor(2^(36+b) / (M - a_t)), floor(S 2^52 / (P 2^36))."""
    m, p = len(labels), int(labels.sum())
    order = np.argsort(scores, kind="stable")
    keys, ys = scores[order], labels[order]
    bits = m.bit_length()
    total = 0
    for key in np.unique(keys):
        a = int(np.searchsorted(keys, key, "left"))
        group = ys[a:int(np.searchsorted(keys, key, "right"))]
        tp, top = p - int(ys[:a].sum()), (1 << (36 + bits - 1)) // (m - a)
        total += int(group.sum()) * sum(((tp >> b) & 1) * (top >> (bits - 1 - b)) for b in range(bits))
    return (total << 52) // (p << 36)


def _ap_in_the_clear(scores, labels, monkeypatch) -> int:
    """circuits.auth_ap.average_precision on the clear stand-ins, joined: floor(AP 2^52)."""
    return auth_ap.joined(_ap_quotients(scores, labels, monkeypatch))


def _ap_quotients(scores, labels, monkeypatch) -> list:
    """The words circuits.auth_ap.average_precision releases, on the clear stand-ins."""
    auth, groups = _tie_groups(scores, labels, ("ap",), monkeypatch)
    return [int(q) for q in auth_ap.average_precision(ClearRanking(None, auth), groups, int(labels.sum()))[0]]


def _tie_groups(scores, labels, metrics, monkeypatch) -> tuple:
    """(a ClearAuth as wide as ``metrics`` need, circuits.auth_tie_groups.tie_groups on the clear stand-ins: the
    moved labels and partners of both orders)."""
    monkeypatch.setattr(auth_curves, "AuthRadixRanking", ClearRanking)
    m = len(labels)
    first = np.lexsort((labels, scores))
    back = np.arange(m)[::-1]
    second = back[np.lexsort((1 - labels[back], scores[back]))]
    place = np.empty(m, dtype=np.int64)
    place[second] = np.arange(m)
    partners = np.concatenate([place[first] + m, np.zeros(m, dtype=np.int64)])[None]
    k = (2 * m - 1).bit_length()
    auth = ClearAuth(release_bits(m, metrics=metrics), k=max(2, k + k % 2))
    return auth, tie_groups(ClearRanking(None, auth), _orders(scores, labels), partners, int(labels.sum()), "groups")


@pytest.mark.parametrize("m", [2, 3, *(pytest.param(m, marks=pytest.mark.slow) for m in (4, 5))])
def test_average_precision_equals_the_semi_honest_integer_on_every_tie_pattern(m, monkeypatch):
    """circuits.auth_ap.average_precision (the true tie groups from the rows' two destinations, their compaction,
    the bits of TP, the three divisions by P) on every tie pattern: the semi-honest circuit's floor(AP 2^52)."""
    for scores, labels in _tie_patterns(m):
        assert _ap_in_the_clear(scores, labels, monkeypatch) == _semi_honest_ap(scores, labels), (scores, labels)


def test_average_precision_equals_the_semi_honest_integer_and_sklearn_on_random_tie_heavy_sets(monkeypatch):
    from sklearn.metrics import average_precision_score
    for scores, labels, _ in _tie_heavy_sets(5, 30, 300, 8):
        got = _ap_in_the_clear(scores, labels, monkeypatch)
        assert got == _semi_honest_ap(scores, labels)
        assert abs(got / 2 ** 52 - average_precision_score(labels, scores)) < 1e-9


def test_average_precision_releases_the_base_2_16_digits_of_the_semi_honest_integer_nothing_more(monkeypatch):
    """The released words are a function of floor(AP 2^52) alone (its digits V >> 32, (V >> 16) mod 2^16 and
    V mod 2^16), so they open nothing the semi-honest job does not: two labellings of 12 distinct scores with the
    same P and the same floor(AP 2^52) (found by a search over every labelling) release the same words, where
    releasing floor(T / P) for T = r1 2^16 + S_l (up to P (1 + bits(M)) 2^16) told them apart; and on random
    tie-heavy sets."""
    scores = np.arange(12, dtype=np.float64)
    first, second = (np.array(y) for y in ([1, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0], [1, 0, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0]))
    assert _semi_honest_ap(scores, first) == _semi_honest_ap(scores, second)
    assert _ap_quotients(scores, first, monkeypatch) == _ap_quotients(scores, second, monkeypatch)
    for scores, labels, _ in _tie_heavy_sets(6, 20, 300, 8):
        v = _semi_honest_ap(scores, labels)
        assert _ap_quotients(scores, labels, monkeypatch) == [v >> 32, (v >> 16) & 0xFFFF, v & 0xFFFF]


def _semi_honest_pauc(scores, labels, fpr_scaled: int) -> int:
    """circuits.rank_metrics.secret_partial_area's integer in the clear, step by step (each of its long divisions an
    exact floor): the groups inside the line, the crossing group's terms, the halves and their product."""
    m, p = len(labels), int(labels.sum())
    n, unit = m - p, 1 << 40
    order = np.argsort(scores, kind="stable")
    keys, ys = scores[order], labels[order]
    starts = [int(np.searchsorted(keys, key, "left")) for key in np.unique(keys)] + [m]
    pex = [int(ys[:a].sum()) for a in starts]
    nex = [a - q for a, q in zip(starts, pex)]
    line = n * fpr_scaled
    inside = [int(line - (n - nex[t]) * unit >= 0) for t in range(len(starts) - 1)] + [1]
    whole = fp_before = tp_before = p_star = n_star = crosses = 0
    for t in range(len(starts) - 1):
        crossing = inside[t + 1] - inside[t]
        whole += inside[t] * (nex[t + 1] - nex[t]) * (2 * p - pex[t] - pex[t + 1])
        fp_before += crossing * (n - nex[t + 1])
        tp_before += crossing * (p - pex[t + 1])
        p_star += crossing * (pex[t + 1] - pex[t])
        n_star += crossing * (nex[t + 1] - nex[t])
        crosses += crossing
    width = crosses * (line - fp_before * unit)
    ratio = (width << 40) // (n_star * unit + 1 - crosses)
    y_num = 2 * tp_before * unit + p_star * ratio
    hx, fx = (width << 20) // (n * unit), (width << 40) // (n * unit)
    hy, fy = (y_num << 20) // (2 * p * unit), (y_num << 40) // (2 * p * unit)
    lx, ly = fx - (hx << 20), fy - (hy << 20)
    full = (whole << 40) // (2 * p * n)
    return full + hx * hy + ((hx * ly + lx * hy) << 22) // (1 << 42)


def _pauc_in_the_clear(scores, labels, fpr_scaled: int, monkeypatch) -> int:
    """circuits.auth_pauc.partial_area on the clear stand-ins."""
    auth, groups = _tie_groups(scores, labels, ("pauc",), monkeypatch)
    return int(auth_pauc.partial_area(auth, groups, int(labels.sum()), fpr_scaled)[0, 0])


FPRS = [1, 1 << 20, (1 << 40) // 3, 1 << 39, (1 << 40) - 1, 1 << 40]  # f near 0, a third, a half, near 1 and 1


@pytest.mark.parametrize("m", [2, 3, *(pytest.param(m, marks=pytest.mark.slow) for m in (4, 5))])
def test_partial_area_equals_the_semi_honest_integer_on_every_tie_pattern(m, monkeypatch):
    """circuits.auth_pauc.partial_area (the true tie groups, the line's public bound, the fed divisions, y from r's
    digits, the product's floor from its bits) on every tie pattern and at FPRs where the line falls on and between
    groups' ends: the semi-honest circuit's integer."""
    for scores, labels in _tie_patterns(m):
        n = m - int(labels.sum())
        for fpr in FPRS + [(k << 40) // n for k in range(1, n)]:
            assert _pauc_in_the_clear(scores, labels, fpr, monkeypatch) == _semi_honest_pauc(scores, labels, fpr), (
                scores, labels, fpr)


def test_partial_area_equals_the_semi_honest_integer_and_sklearn_on_random_tie_heavy_sets(monkeypatch):
    from sklearn.metrics import roc_auc_score

    from mpc_auc.protocols.clear_metrics import mcclish, partial_area

    for scores, labels, rng in _tie_heavy_sets(7, 30, 300, 8):
        fpr = int(rng.integers(1, 1 << 40))
        got = _pauc_in_the_clear(scores, labels, fpr, monkeypatch)
        assert got == _semi_honest_pauc(scores, labels, fpr)
        assert abs(got / 2 ** 40 - partial_area(scores, labels, fpr / 2 ** 40)) < 1e-10
        assert abs(mcclish(got / 2 ** 40, fpr / 2 ** 40) - roc_auc_score(labels, scores, max_fpr=fpr / 2 ** 40)) < 1e-9


def test_partial_area_fits_the_wide_values_and_keeps_two_to_four_keys_up_to_2_to_20_rows():
    """Every width the partial AUC's steps need (its comparisons, the bits of the product, the released integer) is
    within its release_width, which keeps s >= 40 with at most 4 MAC keys up to the 2^20 rows it is computed for."""
    for m in [2, 3, 60, 1000, 100_000, 458_407, 1 << 20]:
        width = release_bits(m, metrics=("pauc",))
        assert width >= auth_pauc.release_width(m) >= 42
        assert wide_keys(width) <= 4
