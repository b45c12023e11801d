"""The security suite's false-alarm budget: how often a run may fail a check although every claim holds.

``mpc-auc security`` runs tens of statistical checks (views, carry tests, DP audits, inference and top-K
attacks, collusion bands).  Each alone at the customary 1e-3 or "3 standard errors" would fail some run
now and then for nothing: the hardening release saw one such failure, which no one could tell from a leak.  The suite
states instead a **family-wise false-alarm rate** FAMILY_ALPHA = 1e-3 per run and meets it by Bonferroni:
each of at most MAX_CHECKS statistical checks gets CHECK_ALPHA = 1e-5, and a check made of many tests
(every vector against every secret) splits its CHECK_ALPHA over them (sims.security.view_leaks.flagged).  The
suite refuses to report if it ran more statistical checks than MAX_CHECKS; an exact check (a deterministic attack
such as a deviating party's job that must stop, an exact count, a recorded limit: ``chance=False`` in
sims.security.report.check) cannot fail while its claim holds and takes no share.
"""
from scipy.stats import norm

FAMILY_ALPHA = 1e-3  # P(a run fails any regular check | every claim holds), at most
MAX_CHECKS = 100  # statistical checks of one run, at most (the quick suite runs fewer: report.json says how many)
CHECK_ALPHA = FAMILY_ALPHA / MAX_CHECKS
Z_ONE_SIDED = float(norm.isf(CHECK_ALPHA))  # 4.26: standard errors above a bound before a check fails
Z_TWO_SIDED = float(norm.isf(CHECK_ALPHA / 2))  # 4.42: standard deviations from chance before a check fails
