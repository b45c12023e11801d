"""Paper reproductions and statistical studies, measuring accuracy (neither security nor speed): the plain-DP
mechanisms side by side (``dp_comparison``, ``mpc-auc compare``), fedauc Table 7 (``fedauc_table7``,
``mpc-auc table7``), dpauc Table 5 (``dpauc_table5``), ustats' MSE curves (``ustat_experiments``,
``mpc-auc ustat-experiment``) over its synthetic populations (``ustat_data``), and the coverage of DeLong's
interval (``ci_coverage``)."""
__all__ = ["ci_coverage", "dp_comparison", "dpauc_table5", "fedauc_table7", "ustat_data", "ustat_experiments"]
