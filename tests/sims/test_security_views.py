"""The view steps of ``mpc-auc security`` (sims.security.view_checks), each on its own at small sizes: no
message a party receives in the radix sort, the bitonic sort, whole mpc-central and mpc-exact --ranks jobs (also
under security with abort), mpc-central's noise gadgets or ustat-2pc carries a secret or depends on the input, and
each step's leaky control is caught (test_security.py: the command and its other steps)."""
import pytest

from mpc_auc.sims.security.view_checks import (MALICIOUS_JOBS, bitonic_views, job_views, malicious_job_views,
                                               noise_views, ustat_views, views)
from mpc_auc.sims.security.suite import settings

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


def _malicious_jobs_checked(**sizes) -> list:
    """The step (at the small configuration's sizes, or ``sizes``): both views and the rank delivery pass, both
    controls are caught, the weakened party's view carrying the key's digits and its sealed share the doubled
    ranks."""
    found = run_step(malicious_job_views, 26, **sizes)
    assert [c["kind"] for c in found] == ["view", "view", "control", "view", "view", "control", "view"]
    assert all(MALICIOUS_JOBS in c["name"] for c in found)
    assert "key digit 0" in found[2]["details"]["carried"] and found[5]["details"]["carried"] == ["doubled ranks"]
    return found


def test_whole_malicious_jobs_views_carry_nothing_and_the_open_digits_and_ranks_are_caught():
    """One job of each 8-row input, then M = 64 rows with float32 keys (15 digits): seconds, not minutes."""
    _malicious_jobs_checked()


@pytest.mark.slow  # the quick suite's sizes: 10 jobs of each input, M = 256 with float64 keys (31 digits)
def test_whole_malicious_jobs_views_at_the_quick_suites_sizes():
    quick = settings("quick")
    found = _malicious_jobs_checked(**{k: v for k, v in quick.items() if k.startswith("malicious_job_view")})
    assert "labels" in found[2]["details"]["carried"]  # enough rows for the opened labels too


def test_no_noise_gadget_message_carries_a_draw_and_the_open_draws_are_caught():
    found = run_step(noise_views, 24)
    assert [c["kind"] for c in found] == ["view", "view", "control"]


def test_no_ustat_2pc_message_carries_a_kernel_value_and_the_open_kernel_bits_are_caught():
    found = run_step(ustat_views, 25)
    assert [c["kind"] for c in found] == ["view", "view", "control"]
