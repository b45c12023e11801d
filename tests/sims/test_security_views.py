"""The view steps of ``mpc-auc security`` (sims.security.view_checks), each on its own at small sizes: no
message a party receives in the radix sort, the bitonic sort, whole mpc-central and mpc-exact --ranks jobs (also
under security with abort), mpc-central's noise gadgets or ustat-2pc carries a secret or depends on the input, and
each step's leaky control is caught (test_security.py: the command and its other steps)."""
import pytest

from mpc_auc.sims.security.view_checks import (MALICIOUS_JOBS, bitonic_views, job_views, malicious_job_views,
                                               noise_views, ustat_views, views)

from security_steps import run_step


def test_the_radix_sorts_views_are_the_same_for_both_inputs_and_both_controls_are_caught():
    found = run_step(views, 21)
    assert [c["kind"] for c in found] == ["view"] * 2 + ["control"] * 4


def test_no_bitonic_message_carries_a_key_or_a_swap_bit_and_the_open_swap_bits_are_caught():
    found = run_step(bitonic_views, 22)
    assert [c["kind"] for c in found] == ["view", "view", "control"]


def test_whole_jobs_views_carry_nothing_and_each_party_seals_only_its_rank_shares():
    names = [c["name"] for c in run_step(job_views, 23, job_view_runs=3)]
    for protocol in ("mpc-central, every message", "mpc-exact --ranks, every message", "rank share",
                     "each client opens exactly its own rows' ranks"):
        assert any(protocol in name for name in names), protocol


def _malicious_jobs_checked(runs: int, m: int, dtype: str) -> None:
    """The step at these sizes: both views and the rank delivery pass, both controls (the labels and digits opened
    before the sort, the opened ranks sealed) are caught, the latter carrying the doubled ranks."""
    found = run_step(malicious_job_views, 26, malicious_job_view_runs=runs, malicious_job_view_m=m,
                     malicious_job_view_dtype=dtype)
    assert [c["kind"] for c in found] == ["view", "view", "control", "view", "view", "control", "view"]
    assert all(MALICIOUS_JOBS in c["name"] for c in found)
    assert "doubled ranks" in found[5]["details"]["carried"]
    assert {"labels", "key digit 0"} <= set(found[2]["details"]["carried"]) or m < 256


def test_whole_malicious_jobs_views_carry_nothing_and_the_open_labels_and_digits_are_caught():
    """Small: one job of each 8-row input, M = 64 with float32 keys (15 digits); the weakened party's opened
    digits are caught."""
    _malicious_jobs_checked(1, 64, "float32")


@pytest.mark.slow  # the quick suite's sizes
def test_whole_malicious_jobs_views_at_the_quick_suites_sizes():
    _malicious_jobs_checked(10, 256, "float64")


def test_no_noise_gadget_message_carries_a_draw_and_the_open_draws_are_caught():
    found = run_step(noise_views, 24)
    assert [c["kind"] for c in found] == ["view", "view", "control"]


def test_no_ustat_2pc_message_carries_a_kernel_value_and_the_open_kernel_bits_are_caught():
    found = run_step(ustat_views, 25)
    assert [c["kind"] for c in found] == ["view", "view", "control"]
