"""The step of ``mpc-auc security`` on a deviating compute party (sims.security.deviating_party), on its own: each
party's cheats on the authenticated sort caught in every phase, and its control, the same cheats with the MAC checks
skipped, caught releasing wrong ranks (test_security.py: the command and its other steps)."""
import pytest

from mpc_auc.sims.security.deviating_jobs import job_deviation_checks
from mpc_auc.sims.security.deviating_party import deviation_checks

from security_steps import run_step


def test_each_partys_cheats_are_caught_and_the_runs_without_checks_release_wrong_ranks():
    found = run_step(deviation_checks, 26, deviation_runs=1)
    assert [(c["kind"], c["name"][:2]) for c in found] == [("attack", "P0"), ("control", "P0"), ("attack", "P1"),
                                                           ("control", "P1")]


@pytest.mark.slow  # ten sessions; tests/protocols/mpc/test_malicious.py runs the same cheats in make test
def test_each_partys_cheats_stop_whole_jobs_and_the_jobs_without_checks_release_a_wrong_auc():
    found = run_step(job_deviation_checks, 27, deviation_jobs=1)
    per_party = ([("attack", True)] * 3 + [("control", False)] * 2  # the offset, a replay, a substitution; two controls
                 + [("attack", True)] + [("control", False)] * 2  # the noise draw's offset; its two controls
                 + ([("attack", True)] + [("control", False)] * 2) * 5)  # the KS statistic's, the rounding's,
#                                                                          the curves', AP's and the partial AUC's rows

    assert [(c["kind"], c["name"][:2], c["passed"]) for c in found] == [
        (kind, f"P{party}", passed) for party in (0, 1) for kind, passed in per_party]
