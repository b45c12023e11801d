"""The plain-DP AUC mechanisms of the papers behind one interface, mpc-central's law, noise calibration and
the epsilon grid."""
