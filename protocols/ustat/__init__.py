"""U-statistics: ustat-2pc, its theory, the all-pairs and LDP baselines, hierarchical histograms."""
