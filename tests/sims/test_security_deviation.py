"""The step of ``mpc-auc security`` on a deviating compute party (sims.security.deviating_party), on its own: each
party's cheats on the authenticated sort caught in every phase, and its control, the same cheats with the MAC checks
skipped, caught releasing wrong ranks (test_security.py: the command and its other steps)."""
from mpc_auc.sims.security.deviating_party import deviation_checks

from security_steps import run_step


def test_each_partys_cheats_are_caught_and_the_runs_without_checks_release_wrong_ranks():
    found = run_step(deviation_checks, 26, deviation_runs=1)
    assert [(c["kind"], c["name"][:2]) for c in found] == [("attack", "P0"), ("control", "P0"), ("attack", "P1"),
                                                           ("control", "P1")]
