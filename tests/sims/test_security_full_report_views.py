"""The full report's view step of ``mpc-auc security`` (sims.security.view_checks.full_report_views) at small sizes:
whole semi-honest jobs whose AP, partial AUC, curve and KS circuits run side by side, their gates merged into shared
rounds (circuits.lockstep), on two inputs with the same releases; a file of its own, so that the test workers run
it beside test_security_views.py."""
from mpc_auc.sims.security.view_checks import FULL_REPORT, full_report_views

from security_steps import run_step


def test_full_report_views_carry_nothing_and_a_circuit_opening_the_sorted_labels_is_caught():
    found = run_step(full_report_views, 27, job_view_runs=3)
    assert [c["kind"] for c in found] == ["view", "view", "control"] and all(FULL_REPORT in c["name"] for c in found)
    assert found[2]["details"]["carried"] == ["sorted labels"]
