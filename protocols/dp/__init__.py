"""The plain-DP AUC mechanisms of the papers behind one interface, mpc-central's law, noise calibration and
the epsilon grid."""

# the modules other layers import; the package's own: calibration
__all__ = ["central_law", "curve_grid", "curve_law", "dpauc", "fedauc", "grid", "score_ldp", "suite", "swamping"]
