"""U-statistics: ustat-2pc (the aggregator's side and the pair-parties' loop), its theory, the all-pairs and
LDP baselines, hierarchical histograms."""

# the modules other layers import (pair_party by name: the service a role loads); the package's own: theory
# (the predicted MSE the tests check ustat-2pc against)
__all__ = ["auc_hh", "baselines", "pair_party", "two_party"]
