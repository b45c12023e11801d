"""Ranking metrics beyond the AUC from the same compacted tie groups (circuits.rank_auc.TieGroups).

The metrics of a private evaluation (docs/protocols/mpc-exact.md, "Metrics").  Slot t < G of the compaction
holds group t's start a_t and the positives below it Pex_t; Nex_t = a_t - Pex_t; the group's positives
p_t = Pex_{t+1} - Pex_t and negatives n_t likewise; every slot from G on holds (M, P) and adds nothing.  Each
function returns this party's int64 shares of integers whose ratio, or whose value over a public power of two, is
the metric; only the caller opens anything.

* DeLong's variance (DeLong1988; placement values with ties counted one half, Sun2014).  A positive of group
  t has 2N V10 = Nex_t + Nex_{t+1} =: A_t, a negative 2P V01 = 2P - Pex_t - Pex_{t+1} =: B_t, so the classes'
  sums of squares are Q10 = sum_t p_t A_t^2 = 4N^2 sum V10^2 and Q01 = sum_t n_t B_t^2 = 4P^2 sum V01^2 (two
  rounds of 2M products).  Var = s10 / (P - 1) + s01 / (N - 1) with s10 = Q10 / (4N^2 P) - AUC^2 the
  placement values' population variance (and s01 likewise) is then found by exact long divisions
  (circuits.division) in fixed point: each mean to 2^-40, AUC^2 to 2^-40 from AUC = h 2^-20 + l 2^-40 as
  h^2 + floor(2hl / 2^20) (its error below 2^-39), and Var to 2^-54.  Two models on the same rows
  (DeLong's test): each sort's A and B reach its elements (rank_auc.to_members) and go back to input order
  by the inverse of the sort's permutation, so that row i's values of both models meet:
  R10 = sum_i y_i A_a(i) A_b(i), R01 = sum_i (1 - y_i) B_a(i) B_b(i), and the covariance follows as the
  variance does, with AUC_a AUC_b for AUC^2 and a sign (a covariance may be negative).  Everything stays below
  2^62 while M <= 2^20 (4 N^2 P < 2^60; the parties check it: protocols.metric_catalogue.CI_MAX_ROWS).
* Average precision with scikit-learn's semantics: AP = (1/P) sum_t p_t (P - Pex_t) / (M - a_t), the precision
  at each threshold (descending) weighted by its recall step.  The group sizes are secret, but moved back to
  its start's sorted position j = a_t (Shuffler.unapply_shares) each term's divisor M - j is public.  The
  numerator TP_j = P - Pex_j is split into its bits (comparators.bit_decompose, one adder; a block of 2^20
  positions at a time, so that the bits held and the dealer's conversion words stay bounded) and the precision
  taken as sum_b t_b floor(2^(36+b) / (M - j)), linear in the bits with public weights: below the true
  precision by less than log2(2M) units of 2^-36.  Then one product round and one division: AP's error
  below 21 x 2^-36 = 3.1e-10 at M <= 2^20.
* Curve points at public cut positions: with c elements flagged (the top c of the sort), the cut falls in the
  group g holding sorted position j = M - c, whose rows are counted in proportion (sklearn's curve is linear
  inside a tie group): s TP = s (P - Pex_g) - p_g (j - a_g) with s the group's size.  The group's values reach
  the cut positions by rank_auc.to_members, two counts below 2^31 to a word: a + 2^32 Pex, which needs the flags'
  products, and the next group's a' + 2^32 Pex', which is (M, P) from the last group on and needs none
  (s = a' - a, p_g = Pex' - Pex); at the K cuts a bit decomposition splits the words.  TPR = s TP / (s P),
  FPR = (c s - s TP) / (s N) and precision = s TP / (c s), by long division.
* KS = max_t |P Nex_t - N Pex_t| / (P N) (the largest |TPR - FPR| over thresholds): one product round and an
  oblivious maximum of |gap| as max(max gap, -min gap): a min-max pass over pairs, then two tournaments side by
  side, ceil(log2 2M) comparison rounds and 3M/2 comparisons.

``secret_average_precision``, ``secret_ks_statistic`` and ``secret_partial_area`` are the shared counterparts
of protocols.clear_metrics' ``average_precision``, ``ks_statistic`` and ``partial_area`` (the clear references).
"""
import numpy as np

from .comparators import bit_decompose, comparison_ands, nonnegative
from .correlations import row_blocks
from .division import digit_bits_for, fraction_bits
from .rank_auc import TieGroups, next_slot, to_members
from .scales import CURVE_DIGIT_BITS, MEAN_BITS, OPEN_BITS, PRECISION_BITS, VARIANCE_BITS
from .shares import public_share


def placement_sums(gates, groups: TieGroups) -> tuple:
    """Shares (1,) of Q10 = 4N^2 sum_pos V10^2 and Q01 = 4P^2 sum_neg V01^2 (module docstring)."""
    scaled_v10 = groups.nex + groups.nex_next
    scaled_v01 = 2 * groups.positives - groups.pex - groups.pex_next
    gates.reserve("mul", 4 * groups.m)
    pa, nb = gates.multiply((groups.group_positives, scaled_v10), (groups.group_negatives, scaled_v01))
    qa, qb = gates.multiply((pa, scaled_v10), (nb, scaled_v01))
    return qa.sum(keepdims=True), qb.sum(keepdims=True)


def variance_defined(gates, groups: TieGroups) -> np.ndarray:
    """Shares (1,) of [P >= 2 and N >= 2]: DeLong's sample variances need two rows of each class."""
    two = public_share(2, groups.rank)
    bits = nonnegative(gates, np.concatenate([groups.positives - two, groups.negatives - two]))
    return gates.multiply((bits[:1], bits[1:]))[0]


def auc_halves(gates, groups: TieGroups, twice_u: np.ndarray) -> tuple:
    """Shares (1,) of (h, l) with AUC = h 2^-20 + l 2^-40 up to 2^-40 (two long divisions of 2U by 2PN)."""
    return _halves(gates, twice_u, 2 * groups.pn, groups.m * groups.m // 2)  # 2PN <= M^2 / 2


def paired_placement_sums(gates, labels: np.ndarray, rows_a: np.ndarray, rows_b: np.ndarray) -> tuple:
    """Shares (1,) of R10 = sum_pos A_a A_b = 4N^2 sum_pos V10_a V10_b and R01 = sum_neg B_a B_b of two score
    columns of the same rows; rows_*: (2, M) shares of each row's (A, B) in input order (:func:`placements`);
    labels: the rows' label shares in the same order.  Two rounds of 2M products."""
    one = public_share(1, gates.rank)
    gates.reserve("mul", 4 * len(labels))
    aa, bb = gates.multiply((rows_a[0], rows_b[0]), (rows_a[1], rows_b[1]))
    pos, neg = gates.multiply((labels, aa), (one - labels, bb))
    return pos.sum(keepdims=True), neg.sum(keepdims=True)


def placements(shuffler, gates, groups: TieGroups) -> np.ndarray:
    """Shares (2, M) in sorted order of each element's A = 2N V10 and B = 2P V01, its group's values (the
    placement value of the element's own class is the one that counts; ``groups`` with flags)."""
    scaled_v10 = groups.nex + groups.nex_next
    scaled_v01 = 2 * groups.positives - groups.pex - groups.pex_next
    return to_members(shuffler, gates, groups, [scaled_v10, scaled_v01])


def delong_covariance(gates, groups: TieGroups, halves_a: tuple, halves_b: tuple, q10: np.ndarray,
                      q01: np.ndarray) -> np.ndarray:
    """Shares (1,) of floor(Cov * 2^54) up to 2 units (signed), Cov = c10 / (P - 1) + c01 / (N - 1) with
    c10 = Q10 / (4N^2 P) - AUC_a AUC_b (DeLong1988); the variance when a and b are one column (q10, q01 from
    :func:`placement_sums`), the covariance of two columns (from :func:`paired_placement_sums`).  For P, N >= 2
    and M <= 2^20."""
    m, rank, p, n = groups.m, groups.rank, groups.positives, groups.negatives
    pp, nn = gates.multiply((p, p), (n, n))
    squares_p, squares_n = gates.multiply((4 * nn, p), (4 * pp, n))
    auc_product = _product(gates, halves_a, halves_b)  # AUC_a AUC_b * 2^40
    means = fraction_bits(gates, np.concatenate([q10, q01]), np.concatenate([squares_p, squares_n]), MEAN_BITS,
                          digit_bits_for(16 * m ** 3 // 27 + 1))  # max over P + N = M of 4 N^2 P
    spread = means - auc_product  # c10, c01 in units of 2^-40, |c| <= 1/4
    sign = nonnegative(gates, spread)
    signs = 2 * sign - public_share(1, rank)
    (size,) = gates.multiply((signs, spread))
    one = public_share(1, rank)
    scale = np.int64(1 << (MEAN_BITS - 2))  # |c| 2^40 <= (count - 1) 2^38
    denominators = np.concatenate([p - one, n - one]) * scale
    terms = fraction_bits(gates, size, denominators, VARIANCE_BITS - 2, digit_bits_for(m << (MEAN_BITS - 2)))
    (signed,) = gates.multiply((signs, terms))
    return signed.sum(keepdims=True)


def _halves(gates, numerator: np.ndarray, denominator: np.ndarray, bound: int) -> tuple:
    """Shares of (h, l) with a / b = h 2^-20 + l 2^-40 up to 2^-40, for 0 <= a <= b <= bound."""
    digits = digit_bits_for(bound)
    fine = fraction_bits(gates, numerator, denominator, MEAN_BITS, digits)
    coarse = fraction_bits(gates, numerator, denominator, MEAN_BITS // 2, digits)
    return coarse, fine - coarse * np.int64(1 << (MEAN_BITS // 2))


def _product(gates, halves_a: tuple, halves_b: tuple) -> np.ndarray:
    """Shares of about a b 2^40 (error below 2^-38 in a b) from both fractions' halves: h_a h_b + floor((h_a l_b +
    l_a h_b) / 2^20), the term l_a l_b / 2^40 < 1 dropped; one product round and one division by 2^20."""
    (ha, la), (hb, lb) = halves_a, halves_b
    hh, ab, ba = gates.multiply((ha, hb), (ha, lb), (la, hb))
    bound = public_share(np.full(len(hh), 1 << (MEAN_BITS + 2), dtype=np.int64), gates.rank)
    cross = fraction_bits(gates, ab + ba, bound, MEAN_BITS // 2 + 2, digit_bits_for(1 << (MEAN_BITS + 2)))
    return hh + cross


def secret_partial_area(gates, groups: TieGroups, fpr_scaled: int) -> np.ndarray:
    """Shares (1,) of about floor(A * 2^40), A the area under the ROC curve from FPR 0 to f = fpr_scaled / 2^40
    (scikit-learn's partial AUC before McClish's standardisation), for M <= 2^20.

    With L = f N negatives' worth of the curve (in units of 2^-40: N fpr_scaled, local), a group whose
    negatives all lie before L adds its whole trapezoid n_t B_t / (2PN) (B_t as in the variance); the one
    group the line FP = L crosses (a one-hot selection from the comparisons [FP_end(t) <= L], one batch of M)
    adds w (2 TP_before + p r) / (2PN) with w = L - FP_before and r = w / n, found by divisions of the selected
    scalars and a product of two fractions to 2^-40 (:func:`_product`).
    """
    m, rank, p, n = groups.m, groups.rank, groups.positives, groups.negatives
    unit = np.int64(1 << MEAN_BITS)
    line = n * np.int64(fpr_scaled)  # L 2^40
    scaled_v01 = 2 * p - groups.pex - groups.pex_next  # B_t = 2 TP_before + p_t
    fp_end = (n - groups.nex) * unit  # negatives at or above group t, times 2^40
    inside = nonnegative(gates, line - fp_end, MEAN_BITS + 22)  # c_t = [FP_end(t) <= L]
    crossing = next_slot(inside, public_share(1, rank)) - inside  # one-hot: c_{t+1} - c_t
    gates.reserve("mul", 6 * m)
    (trapezoids,) = gates.multiply((groups.group_negatives, scaled_v01))
    columns = [trapezoids, n - groups.nex_next, p - groups.pex_next, groups.group_positives, groups.group_negatives]
    whole, fp_before, tp_before, p_star, n_star = (v.sum(keepdims=True) for v in gates.multiply(
        (inside, columns[0]), *[(crossing, c) for c in columns[1:]]))
    crosses = crossing.sum(keepdims=True)  # 0 when L falls on a group's end (or f = 1)
    (width,) = gates.multiply((crosses, line - fp_before * unit))  # w 2^40, 0 <= w <= n*
    none_crosses = public_share(1, rank) - crosses
    (n_scaled,) = gates.multiply((n_star, public_share(np.array([1], dtype=np.int64), rank) * unit))
    ratio = fraction_bits(gates, width, n_scaled + none_crosses, MEAN_BITS, 1)  # r = w / n* to 2^-40
    (pr,) = gates.multiply((p_star, ratio))
    bound = (m << (MEAN_BITS + 1)) + 1
    x = _halves(gates, width, n * unit, m << MEAN_BITS)  # w / N
    y = _halves(gates, 2 * tp_before * unit + pr, 2 * p * unit, bound)  # (2 TP_before + p r) / (2P)
    full = fraction_bits(gates, whole, 2 * groups.pn, MEAN_BITS, digit_bits_for(m * m // 2))
    return full + _product(gates, x, y)


def delong_variance(gates, groups: TieGroups, twice_u: np.ndarray, q10: np.ndarray, q01: np.ndarray) -> np.ndarray:
    """Shares (1,) of floor(Var * 2^54) up to 2 units: :func:`delong_covariance` of a column with itself."""
    halves = auc_halves(gates, groups, twice_u)
    return delong_covariance(gates, groups, halves, halves, q10, q01)


def secret_average_precision(gates, groups: TieGroups, sorted_labels: np.ndarray, at_starts: np.ndarray) -> np.ndarray:
    """Shares (1,) of floor(AP * 2^52), AP as scikit-learn's average_precision_score (module docstring), for
    P >= 1; ``at_starts``: each group's positive count at its start's place in the sorted order, zero elsewhere
    (:func:`group_values`).

    There the count of rows at or above is public, M - j: the precision of every sorted position,
    (P - Pex_j) / (M - j) with Pex_j a local prefix sum, is linear in the bits of P - Pex_j with public weights
    (module docstring)."""
    m = groups.m
    below = np.cumsum(np.asarray(sorted_labels, dtype=np.int64)) - sorted_labels  # Pex_j
    bits = m.bit_length()  # TP_j = P - Pex_j <= M < 2^bits
    numerators = groups.positives - below
    precision = np.zeros(m, dtype=np.int64)
    for start, stop in row_blocks(m):  # the bits of one block of numerators held at a time (correlations.BLOCK_ROWS)
        divisors = m - np.arange(start, stop, dtype=np.int64)  # rows at or above sorted position j: public
        top = (np.int64(1) << np.int64(PRECISION_BITS + bits - 1)) // divisors  # floor(2^(36+bits-1) / (M - j))
        block = precision[start:stop]
        for b, bit in enumerate(bit_decompose(gates, numerators[start:stop], bits)):  # + t_b floor(2^(36+b) / (M - j))
            block += bit * (top >> np.int64(bits - 1 - b))  # each weight a shift of the top one
    gates.reserve("mul", m)
    (weighted,) = gates.multiply((at_starts, precision))
    return fraction_bits(gates, weighted.sum(keepdims=True), groups.positives * np.int64(1 << PRECISION_BITS),
                         OPEN_BITS, digit_bits_for(m << PRECISION_BITS))


PACKED_SHIFT = 32  # the curves' group values travel two to a word: low + 2^32 high, both below 2^31


def curve_columns(groups: TieGroups) -> tuple:
    """([each slot's group start and positives below, a + 2^32 Pex], [the next group's, a' + 2^32 Pex']): what
    :func:`curve_points` reads of the group each cut falls in; the second list is rank_auc.to_members' ``settled``
    (from the last group on, every slot's next group is (M, P))."""
    if groups.total is not None:  # masses (weighted groups) would not fit two to a word; the job refuses them
        raise ValueError("the curve points are computed for unweighted rows only")
    shift = np.int64(1 << PACKED_SHIFT)
    return [groups.a + shift * groups.pex], [groups.a_next + shift * groups.pex_next]


def group_values(shuffler, gates, groups: TieGroups, curves: bool, precision: bool) -> tuple:
    """(the packed :func:`curve_columns` at every sorted position, (2, M), or None; each group's positive count at
    its start, zero elsewhere, (M,), or None): what the curve points and the average precision read, moved in one
    shuffle (rank_auc.to_members)."""
    columns, settled = curve_columns(groups) if curves else ([], [])
    moved = to_members(shuffler, gates, groups, columns, [groups.group_positives] if precision else [], settled)
    return (moved[:2] if curves else None), (moved[-1] if precision else None)


def _unpacked(gates, words: np.ndarray) -> tuple:
    """Shares (n,), (n,) of low and high of words low + 2^32 high (0 <= low < 2^32, 0 <= high < 2^31): their 63
    bits (comparators.bit_decompose) summed with public weights."""
    bits = bit_decompose(gates, words, 2 * PACKED_SHIFT - 1)
    bits <<= (np.arange(len(bits), dtype=np.int64) % PACKED_SHIFT)[:, None]
    return bits[:PACKED_SHIFT].sum(axis=0), bits[PACKED_SHIFT:].sum(axis=0)


def curve_points(gates, groups: TieGroups, flagged: np.ndarray, members: np.ndarray) -> dict:
    """Shares (K,) of floor(value * 2^52) of "tpr", "fpr" and "precision" at each public cut (``flagged``: c_k
    rows flagged, 1 <= c_k <= M), the tie group the cut falls in counted in proportion; needs ``groups`` with
    flags, P, N >= 1 and M < 2^31; ``members``: the packed :func:`curve_columns` at every sorted position
    (:func:`group_values`)."""
    m, rank = groups.m, groups.rank
    k = len(flagged)
    low, high = _unpacked(gates, members[:, m - flagged].reshape(-1))
    (start, end), (below, below_next) = np.split(low, 2), np.split(high, 2)
    size, group_pos = end - start, below_next - below
    positives, negatives = np.repeat(groups.positives, k), np.repeat(groups.negatives, k)
    position = public_share(m - flagged, rank)
    gates.reserve("mul", 4 * k)
    scaled_above, inside, size_p, size_n = gates.multiply(
        (size, positives - below), (group_pos, position - start), (size, positives), (size, negatives))
    scaled_tp = scaled_above - inside  # s TP
    quotients = fraction_bits(gates, np.concatenate([scaled_tp, flagged * size - scaled_tp, scaled_tp]),
                              np.concatenate([size_p, size_n, flagged * size]), OPEN_BITS, CURVE_DIGIT_BITS,
                              bound=m * m)
    return dict(zip(("tpr", "fpr", "precision"), np.split(quotients, 3)))


def _tournament(rows: int, n: int) -> list:
    """The comparisons of each level of a tournament over ``rows`` rows of ``n`` values side by side."""
    levels = []
    while n > 1:
        n = -(-n // 2)
        levels.append(rows * n)
    return levels


def _reserve_comparisons(gates, levels, bits: int) -> None:
    """Reserve the triples of ``levels`` (each a count) of comparisons and products, ahead of their use."""
    gates.reserve("and", sum(comparison_ands((count,), bits) for count in levels))
    gates.reserve("mul", sum(levels))


def maximum(gates, values: np.ndarray, bits: int = 63, reserved: bool = False) -> np.ndarray:
    """Shares (..., 1) of the largest of ``values`` along their last axis (additive shares, pairwise differences
    below 2^bits in magnitude; the rows' tournaments in the same rounds): each level one comparison and one
    product per pair, the next level's triples reserved as a level starts, so that the dealer makes them while the
    parties run this one (``reserved``: the caller reserved the first level's)."""
    values = np.asarray(values, dtype=np.int64)
    levels = _tournament(values.size // values.shape[-1], values.shape[-1])
    for i in range(len(levels)):
        _reserve_comparisons(gates, levels[i + (1 if i or reserved else 0):i + 2], bits)
        if values.shape[-1] % 2:
            values = np.concatenate([values, values[..., -1:]], axis=-1)
        gap = values[..., 0::2] - values[..., 1::2]
        (taken,) = gates.multiply((nonnegative(gates, gap.ravel(), bits, True).reshape(gap.shape), gap))
        values = values[..., 1::2] + taken
    return values


def secret_ks_statistic(gates, groups: TieGroups) -> np.ndarray:
    """Shares (1,) of floor(KS * 2^52), KS = max_t |P Nex_t - N Pex_t| / (P N) (module docstring); P, N >= 1.

    max |gap| = max(max gap, -min gap): one comparison per pair of slots gives the pair's larger and smaller
    (the min-max pass, 3M/2 comparisons in all instead of the 2M of a tournament over gap and -gap), then a
    tournament over the larger and one over the negated smaller in the same rounds, and one comparison more."""
    m = groups.m
    half = -(-m // 2)
    bits = (m * m // 2 + 1).bit_length()  # |gap| <= P N <= M^2 / 4: any two differ by at most M^2 / 2
    gates.reserve("mul", 2 * m)
    _reserve_comparisons(gates, [half, *_tournament(2, half)[:1]], bits)  # the min-max pass and the next level
    scaled_n, scaled_p = gates.multiply((np.repeat(groups.positives, m), groups.nex),
                                        (np.repeat(groups.negatives, m), groups.pex))
    gap = scaled_n - scaled_p  # P N (FPR - TPR) at the threshold just above group t, up to sign
    if m % 2:
        gap = np.append(gap, gap[-1:])
    first, second = gap[0::2], gap[1::2]
    difference = first - second
    (above,) = gates.multiply((nonnegative(gates, difference, bits, True), difference))  # max(first - second, 0)
    extremes = maximum(gates, np.stack([second + above, above - first]), bits, True)  # max gap, -min gap
    largest = maximum(gates, extremes[:, 0], bits)
    return fraction_bits(gates, largest, groups.pn, OPEN_BITS, digit_bits_for(m * m // 4))
