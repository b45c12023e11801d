"""The public powers of two the ranking metrics are computed and opened over (circuits.rank_metrics).

Kept apart from the circuits so that whoever reads an opened value (the coordinator, which never imports
CrypTen) scales it back with the same constants.
"""
MEAN_BITS = 40  # DeLong: the placement values' mean squares and AUC^2, in units of 2^-40
VARIANCE_BITS = 54  # DeLong's variance is opened as floor(Var * 2^54) (two terms of 2^-54 each)
PRECISION_BITS = 36  # average precision: each threshold's precision in units of 2^-36 (AP's error below 3.1e-10)
OPEN_BITS = 52  # AP, the curves and KS are opened as floor(value * 2^52)
CURVE_DIGIT_BITS = 4  # the curves' long divisions: quotient bits a round, 15 comparisons a lane each (few lanes)
