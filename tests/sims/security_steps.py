"""The steps of ``mpc-auc security`` one at a time, as make test runs them: the small configuration, and a step's
run whose every check holds in its stated direction with each regular check passed and each control caught."""
import numpy as np

from mpc_auc.sims.security.report import holds
from mpc_auc.sims.security.suite import settings

# every suite parameter small: minutes of the quick suite become seconds (its measuring sizes: make test-all)
SMALL = {"audit_draws": 60000, "mpc_audit_draws": 1000, "inference_m": 50, "inference_draws": 40,
         "inference_epsilons": [1, 4], "top_k_m": 5000, "top_k": [10, 100], "seed_bits": 8, "dealer_trials": 5,
         "view_runs": 20, "collusion_m": 100, "ustat_view_pairs": 512, "bitonic_view_m": 256, "job_view_runs": 5,
         "job_view_m": 128, "noise_view_draws": 512, "observer_m": 64, "malicious_job_view_runs": 1,
         "malicious_job_view_m": 64, "malicious_job_view_dtype": "float32"}


def small_config(**overrides) -> dict:
    """The quick suite's settings with SMALL and ``overrides`` in place of its sizes."""
    return {**settings("quick"), **SMALL, **overrides}


def run_step(step, seed: int, **overrides) -> list:
    """The checks of one suite step (sims.security.suite) on the small configuration; asserts that each holds as
    it states and that the step's verdict is ok: its regular checks passed, its controls caught."""
    done = step(small_config(**overrides), np.random.default_rng(seed))
    checks = done[0] if isinstance(done, tuple) else done
    assert checks and [c["name"] for c in checks if c["passed"] != holds(c)] == []
    assert [c["name"] for c in checks if c["passed"] == (c["kind"] == "control")] == []
    return checks
