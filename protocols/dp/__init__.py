"""The plain-DP AUC mechanisms of the papers behind one interface, and noise calibration."""
