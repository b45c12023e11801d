"""Deployed jobs while one and two strangers flood P0 (sims.security.admission_flood): every job completes, the parties
stay up, and the job after the flood runs (the figures: docs/BENCHMARKS.md, "A party under a connection flood")."""
import pytest

from mpc_auc.sims.security.admission_flood import measure


@pytest.mark.slow  # it measures: four quiet and four flooded jobs (about a minute and a half)
def test_deployed_jobs_complete_under_floods_from_one_and_two_sources():
    result = measure(rows=300, connections=[200, 2000], sources=[1, 2], runs=1, nice=0, nofile=1024,
                     timeout_s=20.0)
    for scenario in result["scenarios"]:
        assert not scenario["failed"], scenario
        assert scenario["next_job"]["exit"] == 0 and scenario["parties_alive"], scenario
        assert scenario["shedding"]["reopened_per_s"] > 100, scenario  # the flood was on
