"""Average precision on authenticated shares (security with abort), as circuits.rank_metrics.secret_average_precision.

scikit-learn's AP = (1/P) sum_t p_t (P - Pex_t) / (M - a_t) over the tie groups t (the precision at each threshold,
descending, weighted by its recall step).  The semi-honest circuit moves each group's positive count p_t back to its
start's sorted position j = a_t (zero elsewhere), where the divisor M - j is public, and takes the precision as
sum_b t_b floor(2^(36+b) / (M - j)), linear in the bits t_b of TP_j = P - Pex_j (Pex_j: the positives before j);
then S = sum_j p_j precision_j and floor(AP 2^52) = floor(S 2^52 / (P 2^36)).  Under the mode, bit for bit:

* **The true tie groups** (circuits.auth_tie_groups: where each row's two destinations in the sort of both orders
  change, and their compaction; the curves' runs would split a group of tied positives, which AP counts whole at its
  threshold), and the groups' positive counts moved back to their starts (AuthRadixRanking.gather; slots from G on
  hold 0).
* **The bits of TP_j** (circuits.auth_compare.bits_of: one masked opening and the borrows of a subtraction, a
  prefix of (gt, eq) joins), the precision linear in them with the public weights, split as
  w = w_h 2^16 + w_l so that every value stays narrow enough for MACs in Z_2^64: S = S_h 2^16 + S_l with
  S_h = sum_j p_j precision_h,j <= P 2^20 (a precision is at most 2^36) and S_l < P bits 2^16.
* **The division by P 2^36** (P public: it is opened before) in exact steps by public divisors
  (circuits.auth_compare.divide): S_h = P q1 + r1, T = r1 2^16 + S_l = h P 2^16 + T' (h < 2^carry), T' = P q2 + r2,
  q3 = floor(r2 2^16 / P), so that floor(S 2^16 / P) = (q1 + h) 2^32 + q2 2^16 + q3 (:func:`joined`): the words
  q1 + h, q2 < 2^16 and q3 < 2^16 leave and are put together in the clear.  They are the base-2^16 digits of the
  semi-honest integer, a function of it alone; floor(T / P) itself, up to P (1 + bits) 2^16 / P, would say more
  (how much of S came from its low parts: two inputs of one floor(AP 2^52) told apart).  h's division and q2's take
  as many rounds as floor(T / P)'s would.

Everything opened is masked by fresh dealer words, except the partition's destinations (opened after a check, a
uniform permutation whatever the data); the digits leave only through circuits.macs.Authenticator.release.
"""
import numpy as np

from .auth_compare import bits_of, divide, division_bits, in_batches
from .auth_curves import next_slot
from .auth_tie_groups import TieGroups
from .scales import CURVE_DIGIT_BITS, OPEN_BITS, PRECISION_BITS

PHASE = "the average precision"
LOW = 16  # the precision's weights split as w = w_h 2^16 + w_l (module docstring): both divisions' widths balanced
HIGH = PRECISION_BITS - LOW  # a precision is at most 2^36, its high part 2^20
FRACTION = OPEN_BITS - PRECISION_BITS  # floor(S 2^52 / (P 2^36)) = floor(S 2^16 / P)


def average_precision(ranking, groups: TieGroups, n1: int) -> np.ndarray:
    """[(d2, d1, d0)] (1 + keys, 3), the base-2^16 digits of floor(AP 2^52) = d2 2^32 + d1 2^16 + d0 (:func:`joined`;
    d2 <= 2^20), AP as scikit-learn's average_precision_score (module docstring), from the true tie groups
    (circuits.auth_tie_groups.tie_groups) and the opened count of positives ``n1`` (1 <= n1 < M)."""
    auth, m, below = ranking.auth, groups.below.shape[-1], groups.below
    positives = next_slot(auth, groups.pex, n1) - groups.pex  # p_t, 0 from G on
    at_starts = groups.compaction.gather(groups.sigma, positives)
    auth.phase = PHASE
    bits = m.bit_length()  # TP_j = P - Pex_j <= M < 2^bits
    top = (np.int64(1) << np.int64(PRECISION_BITS + bits - 1)) // (m - np.arange(m, dtype=np.int64))

    def terms(part: np.ndarray, columns: slice) -> np.ndarray:  # (1 + keys, 2, n): p_j precision_h,j and _l,j
        tp_bits = bits_of(auth, auth.add_public(-part[:, 1], n1), bits, PHASE)  # (1 + keys, bits, n)
        weights = top[columns][None] >> (bits - 1 - np.arange(bits, dtype=np.int64))[:, None]  # floor(2^(36+b)/(M-j))
        split = np.stack([weights >> LOW, weights & ((1 << LOW) - 1)])  # (2, bits, n): w_h, w_l
        precision = np.einsum("rbn,hbn->rhn", tp_bits, split)  # linear in the bits: wraps mod 2^64 as shares do
        return auth.multiply(np.repeat(part[:, :1], 2, axis=1), precision, PHASE)

    sums = in_batches(auth, terms, np.stack([at_starts, below], axis=1), PHASE).sum(axis=-1)  # (S_h, S_l)
    return _divided(auth, sums[:, :1], sums[:, 1:], n1, bits)


def joined(digits) -> int:
    """floor(AP 2^52) from the opened base-2^16 digits (d2, d1, d0) of :func:`average_precision`."""
    d2, d1, d0 = (int(d) for d in digits)
    return (d2 << (LOW + FRACTION)) + (d1 << FRACTION) + d0


def release_width(m: int) -> int:
    """The wide values' bits AP of ``m`` rows needs (P < M): its divisions' comparisons (the widest: T by
    P 2^(16 + n) or S_h by P 2^20, below 2^D times that, n the bits of 1 + bits(M)), the bits' opening, S_l's sum."""
    bits, p = m.bit_length(), m
    widest = p << max(HIGH, LOW + (1 + bits).bit_length())  # the larger of P 2^20 and P 2^(16 + n)
    return max(division_bits(widest, CURVE_DIGIT_BITS), (p * bits << LOW).bit_length() + 1, 2 * -(-bits // 2) + 1)


def _divided(auth, high: np.ndarray, low: np.ndarray, n1: int, bits: int) -> np.ndarray:
    """[(q1 + h, q2, q3)] from [S_h], [S_l] (1 + keys, 1) by the public P = ``n1`` (module docstring): the base-2^16
    digits of floor(S 2^16 / P), q2 and q3 below 2^16."""
    carry = (1 + bits).bit_length()  # S_l < P bits 2^16 <= P 2^16 (2^carry - 1)
    q1, _ = divide(auth, high, n1 << HIGH, HIGH, CURVE_DIGIT_BITS, n1 << HIGH, PHASE)  # S_h <= P 2^20
    rest = ((high - q1 * np.int64(n1)) << np.int64(LOW)) + low  # T = r1 2^16 + S_l < P 2^(16 + carry)
    over, _ = divide(auth, rest, n1 << (LOW + carry), carry, CURVE_DIGIT_BITS, n1 << (LOW + carry), PHASE,
                     whole=False)  # h = floor(T / (P 2^16)) < 2^carry
    rest = rest - over * np.int64(n1 << LOW)  # T' = T - h P 2^16 < P 2^16
    q2, _ = divide(auth, rest, n1 << LOW, LOW, CURVE_DIGIT_BITS, n1 << LOW, PHASE, whole=False)  # floor(T' / P)
    q3, _ = divide(auth, rest - q2 * np.int64(n1), n1, FRACTION, CURVE_DIGIT_BITS, n1, PHASE, whole=False)  # r2 < P
    return np.concatenate([q1 + over, q2, q3], axis=-1)
