"""Exact binary expansion of a shared fraction by long division, several quotient bits per round.

For shared integers 0 <= a <= b with b >= 1, computes the sharing of
floor(a * 2^F / b).  Each round takes D quotient bits at once (radix 2^D
restoring division): r <- 2^D r; q = #{k in 1..2^D - 1 : r >= k b} (2^D - 1
secure comparisons in one batch, each [r - k b >= 0] by
circuits.comparators.nonnegative); r <- r - q b (one product).  All values
compared stay below 2^D b in magnitude, so the comparison (exact for
|x| < 2^63) is exact whenever b < 2^(62 - D).  Revealing the result reveals
the fraction to F bits and nothing else.  :func:`decimal_round` runs the
same division in base 10 and opens the fraction rounded to k decimals.

A round costs 9 rounds of messages (8 for the comparisons, 1 for the
product) whatever D is, and a comparison batch of 2^D - 1 lanes is a few
words per bit plane, so D is as wide as the bound on b allows, up to
MAX_DIGIT_BITS: F = 52 in 4 rounds of 8191 comparisons at D = 13.
"""
import numpy as np

from .comparators import comparison_ands, nonnegative

DIGIT_BITS = 4
MAX_DIGIT_BITS = 13


def digit_bits_for(bound: int) -> int:
    """The widest quotient digit (at most MAX_DIGIT_BITS) keeping every comparison exact when b <= bound."""
    return max(1, min(MAX_DIGIT_BITS, 62 - int(bound).bit_length()))


def _long_division(gates, a: np.ndarray, b: np.ndarray, radices, bound: int = None) -> tuple:
    """Shares of (q, r) with a * prod(radices) = q b + r, 0 <= r < b, for shares of 0 <= a <= b: one quotient
    digit per radix, the most significant first (restoring division, module docstring).  bound: a public
    bound on b, if known: every value compared is then below radix * bound in magnitude, and the comparisons
    are only as wide as that (circuits.comparators.nonnegative)."""
    width = 63 if bound is None else min(63, (int(bound) * max(radices, default=1)).bit_length())
    gates.reserve("mul", len(a) * (1 + len(radices)))
    lanes = [1, *[radix - 1 for radix in radices]]  # comparisons per element of each step
    gates.reserve("and", sum(comparison_ands((len(a) * k,), width) for k in lanes[:2]))  # this step's and the next
    whole = nonnegative(gates, a - b, width, True)
    (taken,) = gates.multiply((whole, b))
    remainder = a - taken
    quotient = whole
    for step, radix in enumerate(radices, start=2):
        if step < len(lanes):  # the step after this one: made by the dealer while this one runs
            gates.reserve("and", comparison_ands((len(a) * lanes[step],), width))
        remainder = remainder * np.int64(radix)
        multiples = b[:, None] * np.arange(1, radix, dtype=np.int64)  # k b, k = 1 .. radix - 1: local
        digit = nonnegative(gates, (remainder[:, None] - multiples).ravel(), width, True)
        digit = digit.reshape(len(a), -1).sum(axis=1)
        (taken,) = gates.multiply((digit, b))
        remainder = remainder - taken
        quotient = quotient * np.int64(radix) + digit
    return quotient, remainder


def _operands(numerator, denominator):
    return np.atleast_1d(np.asarray(numerator, dtype=np.int64)), np.atleast_1d(np.asarray(denominator, np.int64))


def fraction_bits(gates, numerator: np.ndarray, denominator: np.ndarray, bits: int,
                  digit_bits: int = DIGIT_BITS, bound: int = None) -> np.ndarray:
    """This party's additive shares (int64) of floor(a / b * 2^bits) for shares of 0 <= a <= b (element-wise);
    ``bound``: a public bound on b, which narrows the comparisons (:func:`_long_division`)."""
    a, b = _operands(numerator, denominator)
    steps = [min(digit_bits, bits - done) for done in range(0, bits, digit_bits)]
    return _long_division(gates, a, b, [1 << step for step in steps], bound)[0]


def decimal_round(gates, numerator: np.ndarray, denominator: np.ndarray, decimals: int) -> np.ndarray:
    """Shares of round(a / b * 10^decimals) (halves round up) for shares of 0 <= a <= b: the decimal long
    division's quotient plus [2 r >= b] for its remainder r, one more comparison.  Exact while
    10 b < 2^62."""
    a, b = _operands(numerator, denominator)
    quotient, remainder = _long_division(gates, a, b, [10] * decimals)
    return quotient + nonnegative(gates, 2 * remainder - b)
