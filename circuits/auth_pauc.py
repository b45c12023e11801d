"""The partial AUC on authenticated shares (security with abort), as circuits.rank_metrics.secret_partial_area.

The semi-honest circuit opens about floor(A 2^40), A the area under the ROC curve from FPR 0 to f = F / 2^40
(scikit-learn's partial AUC before McClish's standardisation), from the tie groups t in ascending order of the keys
(slot t: Nex_t, Pex_t the negatives and positives below the group, n_t, p_t its own, slots from G on (N, P)).  With
the line L = N F (in units of 2^-40 negatives) and FP_end(t) = N - Nex_t:

    c_t = [L - FP_end(t) 2^40 >= 0],  the one group the line crosses: the one-hot c_(t+1) - c_t (c_G = 1),
    whole = sum_t c_t n_t B_t  (B_t = 2P - Pex_t - Pex_(t+1)),  and of the crossing group FP_before = N - Nex_(t+1),
    TP_before = P - Pex_(t+1), p*, n*; crosses = 1 - c_0 (0 when the line falls on a group's end);
    W = crosses (L - FP_before 2^40),  r = floor(W / n*)  (w / n* to 2^-40),
    full = floor(whole 2^40 / 2PN),  x = floor(W / N),  y = floor((2 TP_before 2^40 + p* r) / 2P),
    x and y split at 2^20 as h 2^20 + l, and A 2^40 about full + h_x h_y + floor((h_x l_y + l_x h_y) / 2^20).

Its W reaches N 2^40 and p* r P 2^40: wider than MACs in Z_2^64 allow (circuits.macs: the values' bits and the
slack share 64).  Under the mode the same integer, bit for bit, on values that stay narrow:

* **The true tie groups** (circuits.auth_tie_groups, as AP's: the crossing group's terms are rounded in steps that
  depend on the group, so the curves' runs would not give its integer).
* **The line's public bound.**  N is public (P is opened before), so L = B 2^40 + R0 with B and R0 public, and as
  FP_end is an integer c_t = [FP_end(t) <= B] = [Nex_t - (N - B) >= 0]: one comparison of position-sized values a
  slot.  Two rounds of products (n_t B_t, then the one-hots and c_t times the slots' columns) give the sums, Q =
  crosses (B - FP_before) among them: W = Q 2^40 + crosses R0, with 0 <= Q < n* when the line crosses.
* **Divisions with the numerator fed in** (circuits.auth_compare.fed_division): x and r start from the remainder Q
  (below N and n*) and take R0's radix-16 digits in round by round (times crosses: linear), so no value wider than
  16 n* exists; full's division by 2PN runs beside them (three lanes, ten rounds of 15 comparisons, the divisor
  n* + 1 - crosses never 0).  x's digits give its halves directly.
* **y from r's digits.**  y's numerator is 2 TP_before 2^40 + p* sum_i r_i 16^(9-i) (r_i: r's radix-16 digits): the
  division by the public 2P takes p* r_i in at round i (ten products first).  Fed values up to 15P make digits up to
  23 rather than 15; the quotient stays exact, and its low half, up to 1.54 2^20, is carried into the high one by
  one comparison.
* **The product's floor by 2^20**: h_x l_y + l_x h_y < 2^41 split into its bits (circuits.auth_compare.bits_of), the
  floor linear in them.

The integer leaves through circuits.macs.Authenticator.release (one word below 2^41) and is the semi-honest job's: it
opens nothing more (P and N are already public under the mode; which group the line crosses, its counts and the
sums stay inside).  What each role sees beyond the groups': the masked openings of the comparisons, the products and
the bits (uniform).  Cost: M comparisons of log2 M bits and 6M products (checked batches), then one-lane steps:
about 25 rounds of comparisons and a ripple of 20 products.
"""
import numpy as np

from .auth_compare import (bits_of, comparison_bits, fed_division, fed_division_bits, in_batches, nonnegative,
                           signs)
from .auth_curves import next_slot
from .auth_tie_groups import TieGroups
from .scales import CURVE_DIGIT_BITS, MEAN_BITS

PHASE = "the partial AUC"
HALF = MEAN_BITS // 2  # x and y split as h 2^20 + l, as circuits.rank_metrics' _halves
ROUNDS = MEAN_BITS // CURVE_DIGIT_BITS  # radix-16 digits of the 40 fraction bits
RADIX = 1 << CURVE_DIGIT_BITS
MOST = 2 * RADIX - 9  # y's digits: floor((16 (2P - 1) + 15 P) / 2P) <= 23
PRODUCT_BITS = 2 * HALF + 1  # h_x l_y + l_x h_y < 2^41


def partial_area(auth, groups: TieGroups, n1: int, fpr_scaled: int) -> np.ndarray:
    """[the semi-honest integer, about floor(A 2^40)] (1 + keys, 1) of the partial area up to FPR ``fpr_scaled`` /
    2^40 (module docstring), from the true tie groups (circuits.auth_tie_groups.tie_groups) and the opened count of
    positives ``n1`` (1 <= n1 < M)."""
    m = groups.start.shape[-1]
    p, n = n1, m - n1
    line = n * fpr_scaled
    bound, rest = line >> MEAN_BITS, line & ((1 << MEAN_BITS) - 1)  # L = B 2^40 + R0
    auth.phase = PHASE
    (whole, q, tp, p_star, n_star), crosses = _sums(auth, groups, p, n, bound)
    tops = nonnegative(auth, auth.add_public(np.concatenate([whole, 2 * tp], axis=-1), [-2 * p * n, -2 * p]),
                       (2 * p * n).bit_length() + 1, PHASE)  # [whole >= 2PN], [2 TP_before >= 2P]
    fed = [np.concatenate([np.zeros_like(crosses), crosses * np.int64(d), crosses * np.int64(d)], axis=-1)
           for d in _digits(rest)]  # crosses R0's digits into x's and r's lanes
    divisors = np.concatenate([auth.public(2 * p * n, (1,), wide=True), auth.public(n, (1,), wide=True),
                               auth.add_public(n_star - crosses, 1)], axis=-1)  # 2PN, N, n* + 1 - crosses
    start = np.concatenate([whole - tops[:, :1] * np.int64(2 * p * n), q, q], axis=-1)
    digits, _ = fed_division(auth, start, divisors, fed, RADIX - 1, 2 * p * n, PHASE)  # (10, 1 + keys, 3)
    full = tops[:, :1] * np.int64(1 << MEAN_BITS) + _joined(digits[:, :, :1])
    x = _halves(digits[:, :, 1:2])
    fed = auth.multiply(np.repeat(p_star, ROUNDS, axis=-1), digits[:, :, 2].T, PHASE)  # p* r_i
    y_digits, _ = fed_division(auth, 2 * tp - tops[:, 1:] * np.int64(2 * p), 2 * p, list(fed.T[:, :, None]), MOST,
                               2 * p, PHASE)
    high, low = _halves(y_digits)
    carry = nonnegative(auth, auth.add_public(low, -(1 << HALF)), HALF + 1, PHASE)  # low < 1.54 2^20
    y = (high + tops[:, 1:] * np.int64(1 << HALF) + carry, low - carry * np.int64(1 << HALF))
    return full + _product(auth, x, y)


def release_width(m: int) -> int:
    """The wide values' bits the partial AUC of ``m`` rows needs (2PN <= M^2 / 2): full's division (values below
    16 2PN), y's (below 24 2P), the product's bits (41) and the released integer (below 2^41), the slots'
    comparisons (below M)."""
    return max(fed_division_bits(m * m // 2, RADIX - 1), fed_division_bits(2 * m, MOST), 2 * -(-PRODUCT_BITS // 2),
               comparison_bits(m.bit_length()))


def _sums(auth, groups: TieGroups, p: int, n: int, bound: int) -> tuple:
    """([whole], [Q], [TP_before], [p*], [n*]) and [crosses] (1 + keys, 1) each (module docstring), from the
    compacted slots: c_t by one comparison a slot, the rest by two rounds of products, in checked batches."""
    m = groups.start.shape[-1]
    nex = groups.start - groups.pex
    nex_next, pex_next = next_slot(auth, nex, n), next_slot(auth, groups.pex, p)
    inside = signs(auth, auth.add_public(nex, bound - n), m.bit_length(), PHASE)  # [Nex_t - (N - B) >= 0]
    crossing = next_slot(auth, inside, 1) - inside
    columns = np.stack([inside, crossing, nex_next - nex, auth.add_public(-groups.pex - pex_next, 2 * p),
                        auth.add_public(nex_next, bound - n), auth.add_public(-pex_next, p),
                        pex_next - groups.pex], axis=1)  # c, one-hot, n_t, B_t, Q_t, TP_t, p_t

    def terms(part: np.ndarray, _) -> np.ndarray:  # (1 + keys, 5, n): c_t n_t B_t and the one-hot's four products
        c, one_hot, negatives, twice_v, q, tp, positives = part.transpose(1, 0, 2)
        trapezoid = auth.multiply(negatives, twice_v, PHASE)
        return auth.multiply(np.stack([c] + [one_hot] * 4, axis=1),
                             np.stack([trapezoid, q, tp, positives, negatives], axis=1), PHASE)

    sums = in_batches(auth, terms, columns, PHASE).sum(axis=-1)  # (1 + keys, 5)
    return np.split(sums, 5, axis=-1), auth.add_public(-inside[:, :1], 1)


def _digits(value: int) -> list:
    """The radix-16 digits of a public 0 <= value < 2^40, most significant first."""
    return [(value >> (CURVE_DIGIT_BITS * (ROUNDS - 1 - i))) & (RADIX - 1) for i in range(ROUNDS)]


def _joined(digits: np.ndarray) -> np.ndarray:
    """sum_i d_i 16^(R-1-i) of a division's digits (R, 1 + keys, n) (digits may exceed 15)."""
    weights = np.int64(RADIX) ** np.arange(len(digits) - 1, -1, -1, dtype=np.int64)
    return np.einsum("r,rkn->kn", weights, digits)


def _halves(digits: np.ndarray) -> tuple:
    """(the high five digits' value, the low five's) of a division's ten digits (10, 1 + keys, n)."""
    return _joined(digits[:ROUNDS // 2]), _joined(digits[ROUNDS // 2:])


def _product(auth, x: tuple, y: tuple) -> np.ndarray:
    """[h_x h_y + floor((h_x l_y + l_x h_y) / 2^20)] (circuits.rank_metrics' _product): one round of three products,
    the floor from the bits of the sum."""
    (hx, lx), (hy, ly) = x, y
    hh, cross = np.split(auth.multiply(np.concatenate([hx, hx, lx], axis=-1), np.concatenate([hy, ly, hy], axis=-1),
                                       PHASE), [1], axis=-1)
    bits = bits_of(auth, cross.sum(axis=-1, keepdims=True), PRODUCT_BITS, PHASE)[:, HALF:, 0]  # (1 + keys, 21)
    return hh + (bits * (np.int64(1) << np.arange(PRODUCT_BITS - HALF, dtype=np.int64))).sum(axis=1, keepdims=True)
