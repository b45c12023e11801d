"""Sample weights as integer units: the fixed point of the weighted AUC (docs/protocols/mpc-exact.md, "Weighted
AUC").

A row's weight w >= 0 enters the MPC as u = round(w 2^q) units, q the evaluation's public ``weight_bits`` (any
integer; negative q makes a unit larger than 1).  The weighted AUC is a ratio of sums of products of weights,
so it does not change when every weight is scaled alike: q only sets the precision.  Inside the MPC every
row's units must lie in [0, 2^30] and the job's total W in units must not exceed TOTAL_UNITS = 2^30 (checked
there: circuits.validity, protocols.mpc.ranking_party), so that 2 W+ W- <= W^2 / 2 < 2^59 and the exact long
division opens the fraction in 26 rounds of 2-bit digits.

Weights that are multiples of 2^-q are exact: the opened AUC equals scikit-learn's weighted AUC to 2^-52. Any
other weight is rounded to the nearest unit: with delta the largest relative rounding error of a positive weight
(at most 2^-(q+1) / w_min, w_min the smallest) every weight moves by a factor in [1 - delta, 1 + delta], the
weighted pair sums of the numerator and the denominator each by a factor in [(1 - delta)^2, (1 + delta)^2], and
the AUC by at most :func:`error_bound` = ((1 + delta) / (1 - delta))^2 - 1, about 4 delta. A positive weight
that would round to zero units is refused (the bound would not hold).
"""
import math

import numpy as np

from ..errors import InputError

TOTAL_BITS = 30
TOTAL_UNITS = 1 << TOTAL_BITS  # the most units one row, and all rows of a job together, may hold
MIN_BITS, MAX_BITS = -1000, 1000  # float64 weights: 2^q w stays finite and not subnormal within these


def check_weight_bits(bits) -> int:
    """The evaluation's weight precision q, an integer in [MIN_BITS, MAX_BITS]; InputError otherwise."""
    if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)) or not MIN_BITS <= bits <= MAX_BITS:
        raise InputError(f"weight_bits must be an integer in [{MIN_BITS}, {MAX_BITS}], not {bits!r}")
    return int(bits)


def check_weights(weights, rows: int, locate=lambda i: f"row {i}") -> np.ndarray:
    """``rows`` sample weights as float64; InputError naming the first that is not a finite number >= 0 (or a
    shape that is not one weight per row)."""
    w = np.asarray(weights)
    if w.ndim != 1 or len(w) != rows:
        raise InputError(f"sample weights must be one per row: {rows} rows but weights of shape {w.shape}")
    if w.dtype.kind not in "iuf":
        raise InputError(f"sample weights must be numbers, not {w.dtype}")
    w = w.astype(np.float64)
    _first(~np.isfinite(w), w, "is not a finite number", locate)
    _first(w < 0, w, "is negative", locate)
    return w


def weight_units(weights, bits: int, rows: int, locate=lambda i: f"row {i}") -> np.ndarray:
    """int64 units round(w 2^bits) of ``rows`` checked weights; InputError naming the first weight that rounds
    to 0 while positive or exceeds TOTAL_UNITS units (``locate(i)`` names row i)."""
    w = check_weights(weights, rows, locate)
    scaled = np.ldexp(w, bits)
    _first(scaled > TOTAL_UNITS, w, f"exceeds 2^{TOTAL_BITS} units of 2^{-bits}: declare fewer weight_bits", locate)
    _first((w > 0) & (np.rint(scaled) == 0), w, f"rounds to 0 units of 2^{-bits}: declare more weight_bits", locate)
    return np.rint(scaled).astype(np.int64)


def _first(bad: np.ndarray, w: np.ndarray, why: str, locate) -> None:
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(f"{locate(i)}: weight {float(w[i])!r} {why}")


def bits_for(weights) -> int:
    """The largest q whose units of every weight in ``weights`` (all rows of a job, checked) sum to at most
    TOTAL_UNITS, for one who holds them all (the Python API); InputError when no weight is positive."""
    w = np.asarray(weights, dtype=np.float64)
    total = float(w.sum())
    if not total > 0:
        raise InputError("sample weights must not all be 0")
    q = max(MIN_BITS, min(MAX_BITS, math.floor(math.log2(TOTAL_UNITS / (total + len(w))))))  # rows round up < 1
    while q < MAX_BITS and np.rint(np.ldexp(w, q + 1)).sum() <= TOTAL_UNITS:
        q += 1
    return q


def error_bound(weights, bits: int) -> float:
    """The most the weighted AUC can move when ``weights`` are rounded to units of 2^-bits (module docstring),
    with delta the largest relative rounding error of a positive weight (at most 2^-(bits+1) / w_min); 0 when
    every weight is a multiple of 2^-bits."""
    w = np.asarray(weights, dtype=np.float64)
    w = w[w > 0]
    delta = float(np.max(np.abs(np.ldexp(np.rint(np.ldexp(w, bits)), -bits) - w) / w, initial=0.0))
    return math.inf if delta >= 1 else ((1 + delta) / (1 - delta)) ** 2 - 1


def rounding_error(weights) -> float:
    """:func:`error_bound` at the precision :func:`bits_for` picks: what the Python API and ``mpc-auc run``, which
    hold every weight, report beside the weighted AUC."""
    w = np.asarray(weights, dtype=np.float64)
    return error_bound(w, bits_for(w))
