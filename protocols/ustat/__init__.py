"""U-statistics: ustat-2pc (the aggregator's side and the pair-parties' loop), its theory, the all-pairs and
LDP baselines, hierarchical histograms."""
