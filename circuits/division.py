"""Exact binary expansion of a shared fraction by long division, several quotient bits per round.

For shared integers 0 <= a <= b with b >= 1, computes the sharing of
floor(a * 2^F / b).  Each round takes D quotient bits at once (radix 2^D
restoring division): r <- 2^D r; q = #{k in 1..2^D - 1 : r >= k b} (2^D - 1
secure comparisons in one batch); r <- r - q b.  All values compared stay
below 2^D b, so secure comparison (exact for |x - y| < 2^63) is exact
whenever b < 2^(62 - D).  Revealing the result reveals the fraction to F bits
and nothing else.  With D = 4, F = 52 takes 13 rounds instead of 52; with
D = 8 (:func:`digit_bits_for` a public bound on b that allows it), 7 rounds of
255 comparisons, which cost about what 15 do: the rounds dominate.
"""
import torch

from .shares import public

DIGIT_BITS = 4
MAX_DIGIT_BITS = 8


def digit_bits_for(bound: int) -> int:
    """The widest quotient digit (at most MAX_DIGIT_BITS) keeping every comparison exact when b <= bound."""
    return max(1, min(MAX_DIGIT_BITS, 62 - int(bound).bit_length()))


def fraction_bits(numerator, denominator, bits: int, digit_bits: int = DIGIT_BITS):
    """Shared floor(numerator / denominator * 2^bits) for 0 <= numerator <= denominator (element-wise)."""
    whole = numerator >= denominator
    remainder = numerator - whole * denominator
    quotient = whole * (1 << bits)
    done = 0
    while done < bits:
        step = min(digit_bits, bits - done)
        remainder = remainder * (1 << step)
        multiples = denominator.unsqueeze(-1) * public(torch.arange(1, 1 << step))  # k b, k = 1 .. 2^step - 1
        digit = (remainder.unsqueeze(-1) >= multiples).sum(-1)
        remainder = remainder - digit * denominator
        done += step
        quotient = quotient + digit * (1 << (bits - done))
    return quotient
