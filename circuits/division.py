"""Exact binary expansion of a shared fraction by restoring long division.

For shared integers 0 <= a <= b with b >= 1, computes the sharing of
floor(a * 2^F / b) one quotient bit per round: r <- 2r; bit = [r >= b];
r <- r - bit*b.  All intermediate values stay below 2b, so secure comparison
(exact for |x - y| < 2^63) is exact whenever b < 2^62.  Revealing the result
reveals the fraction to F bits and nothing else.
"""


def fraction_bits(numerator, denominator, bits: int):
    """Shared floor(numerator / denominator * 2^bits) for 0 <= numerator <= denominator."""
    whole = numerator >= denominator
    remainder = numerator - whole * denominator
    quotient = whole * (1 << bits)
    for j in range(1, bits + 1):
        remainder = remainder * 2
        bit = remainder >= denominator
        remainder = remainder - bit * denominator
        quotient = quotient + bit * (1 << (bits - j))
    return quotient
