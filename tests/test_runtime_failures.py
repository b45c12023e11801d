"""A role that dies or stalls mid-protocol stops every other role within 30 s, naming it."""
import multiprocessing as mp
import os
import signal
import time

import pytest

from mpc_auc.protocols.encoding import ScoreEncoder
from mpc_auc.protocols.errors import PartyFailure
from mpc_auc.protocols.mpc_exact import mpc_exact_auc
from mpc_auc.synthetic import synthetic_evalset


def _run_and_hit(victim: str, sig: int, timeout_s: float):
    """Start mpc-exact, send ``sig`` to ``victim`` once the oblivious sort is running."""
    evalset = synthetic_evalset(m=4000, clients=5, seed=1)
    seen = {}

    def on_progress(role, text):
        if text.startswith("oblivious") and "hit" not in seen:
            seen["procs"] = {p.name.removeprefix("mpc-auc-"): p for p in mp.active_children()
                             if p.name.startswith("mpc-auc-")}
            os.kill(seen["procs"][victim].pid, sig)
            seen["hit"] = time.monotonic()

    with pytest.raises(PartyFailure) as failure:
        mpc_exact_auc([evalset.clients()], ScoreEncoder(), provider="TTP", timeout_s=timeout_s,
                      on_progress=on_progress)
    return failure.value, time.monotonic() - seen["hit"], seen["procs"]


def _assert_all_gone(procs):
    for role, proc in procs.items():
        assert not proc.is_alive(), f"{role} survived"
        assert proc.exitcode != 0, f"{role} exited 0 after a failure"
        with pytest.raises(ProcessLookupError):
            os.kill(proc.pid, 0)


def _assert_p0_traces_the_loss_to_p1(err):
    """P0's own error names P1, or the dealer P0 was waiting on, whose own error names P1."""
    assert "P1" in err.reports["P0"] or ("dealer" in err.reports["P0"] and "P1" in err.reports["dealer"])


@pytest.mark.parametrize("victim, sig, timeout_s", [
    ("P1", signal.SIGKILL, 20),  # dies: noticed at once
    ("P1", signal.SIGSTOP, 5),  # stalls: caught by the gloo timeout, then killed
    ("dealer", signal.SIGKILL, 20),
], ids=["killed-P1", "stalled-P1", "killed-dealer"])
def test_a_failed_role_stops_everyone_naming_it(victim, sig, timeout_s):
    err, elapsed, procs = _run_and_hit(victim, sig, timeout_s)
    assert err.role == victim
    assert elapsed < 30
    if sig == signal.SIGKILL:
        assert "SIGKILL" in err.reports[victim]
    if victim == "P1":
        _assert_p0_traces_the_loss_to_p1(err)
    _assert_all_gone(procs)
