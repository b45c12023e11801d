"""Exact binary expansion of a shared fraction by long division, several quotient bits per round.

For shared integers 0 <= a <= b with b >= 1, computes the sharing of
floor(a * 2^F / b).  Each round takes D quotient bits at once (radix 2^D
restoring division): r <- 2^D r; q = #{k in 1..2^D - 1 : r >= k b} (2^D - 1
secure comparisons in one batch, each [r - k b >= 0] by
circuits.compare.nonnegative); r <- r - q b (one product).  All values
compared stay below 2^D b in magnitude, so the comparison (exact for
|x| < 2^63) is exact whenever b < 2^(62 - D).  Revealing the result reveals
the fraction to F bits and nothing else.

A round costs 9 rounds of messages (8 for the comparisons, 1 for the
product) whatever D is, and a comparison batch of 2^D - 1 lanes is a few
words per bit plane, so D is as wide as the bound on b allows, up to
MAX_DIGIT_BITS: F = 52 in 4 rounds of 8191 comparisons at D = 13.
"""
import numpy as np

from .compare import nonnegative

DIGIT_BITS = 4
MAX_DIGIT_BITS = 13


def digit_bits_for(bound: int) -> int:
    """The widest quotient digit (at most MAX_DIGIT_BITS) keeping every comparison exact when b <= bound."""
    return max(1, min(MAX_DIGIT_BITS, 62 - int(bound).bit_length()))


def fraction_bits(gates, numerator: np.ndarray, denominator: np.ndarray, bits: int,
                  digit_bits: int = DIGIT_BITS) -> np.ndarray:
    """This party's additive shares (int64) of floor(a / b * 2^bits) for shares of 0 <= a <= b (element-wise)."""
    a, b = np.atleast_1d(np.asarray(numerator, dtype=np.int64)), np.atleast_1d(np.asarray(denominator, np.int64))
    gates.reserve("mul", len(a) * (1 + -(-bits // digit_bits)))
    whole = nonnegative(gates, a - b)
    (taken,) = gates.multiply((whole, b))
    remainder = a - taken
    quotient = whole << bits
    done = 0
    while done < bits:
        step = min(digit_bits, bits - done)
        remainder = remainder << step
        multiples = b[:, None] * np.arange(1, 1 << step, dtype=np.int64)  # k b, k = 1 .. 2^step - 1: local
        digit = nonnegative(gates, (remainder[:, None] - multiples).ravel()).reshape(len(a), -1).sum(axis=1)
        (taken,) = gates.multiply((digit, b))
        remainder = remainder - taken
        done += step
        quotient = quotient + (digit << (bits - done))
    return quotient
