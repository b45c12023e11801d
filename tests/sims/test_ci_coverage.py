"""DeLong's 95% interval covers the population AUC about 95% of the time on 500 simulated sets."""
from mpc_auc.sims.papers.ci_coverage import coverage


def test_delongs_interval_covers_the_population_auc_near_95_percent():
    found = coverage(sets=500, m=300, positives=90, auc=0.77, seed=0)
    lo, hi = found["wilson_95"]
    assert lo <= 0.95 <= hi and 0.93 <= found["coverage"] <= 0.97
