"""A role that dies or stalls mid-protocol stops every other role within a bounded time, naming it.

A stalled role is noticed after the silence limit (``timeout_s``, the default 20 s here: a shorter one can
fire while the roles start up on a loaded machine, before the sort the test waits for); a killed one at once.
"""
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import time

import pytest

from mpc_auc.protocols.inputs.encoding import ScoreEncoder
from mpc_auc.protocols.errors import PartyFailure
from mpc_auc.protocols.mpc.exact import mpc_exact_auc
from mpc_auc.synthetic import synthetic_evalset


def _run_and_hit(victim: str, sig: int, timeout_s: float):
    """Start mpc-exact, send ``sig`` to ``victim`` once the oblivious sort is running."""
    evalset = synthetic_evalset(m=4000, clients=5, seed=1)
    seen = {}
    kept = {p.pid for p in mp.active_children()}  # roles a warm session of this process keeps (mpc_auc.warm)

    def on_progress(role, text):
        if text.startswith("oblivious") and "hit" not in seen:
            seen["procs"] = {p.name.removeprefix("mpc-auc-"): p for p in mp.active_children()
                             if p.name.startswith("mpc-auc-") and p.pid not in kept}
            os.kill(seen["procs"][victim].pid, sig)
            seen["hit"] = time.monotonic()

    with pytest.raises(PartyFailure) as failure:
        mpc_exact_auc([evalset.clients()], ScoreEncoder(), timeout_s=timeout_s,
                      on_progress=on_progress)
    assert "hit" in seen, f"the run failed before its sort began: {failure.value}"
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
    ("P1", signal.SIGSTOP, 20),  # stalls: caught by the silence limit, then killed
    ("dealer", signal.SIGKILL, 20),
], ids=["killed-P1", "stalled-P1", "killed-dealer"])
def test_a_failed_role_stops_everyone_naming_it(victim, sig, timeout_s):
    err, elapsed, procs = _run_and_hit(victim, sig, timeout_s)
    assert err.role == victim
    assert elapsed < timeout_s + 25  # the silence limit, then the others' teardown
    if sig == signal.SIGKILL:
        assert "SIGKILL" in err.reports[victim]
    if victim == "P1":
        _assert_p0_traces_the_loss_to_p1(err)
    _assert_all_gone(procs)


_COORDINATOR = """
import sys
from mpc_auc.protocols.inputs.encoding import ScoreEncoder
from mpc_auc.protocols.mpc.exact import mpc_exact_auc
from mpc_auc.synthetic import synthetic_evalset
if __name__ == "__main__":
    evalset = synthetic_evalset(m=20000, clients=5, seed=1)
    mpc_exact_auc([evalset.clients()], ScoreEncoder(), timeout_s=20,
                  on_progress=lambda role, text: print(text, file=sys.stderr, flush=True))
"""


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(line.split()[1] for line in f if line.startswith("State:"))
    except (FileNotFoundError, StopIteration):
        return "gone"


def _children(pid: int) -> list:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(child) for child in f.read().split()]


def test_a_stopped_coordinator_makes_the_local_roles_exit_naming_it(tmp_path):
    script = tmp_path / "coordinator.py"
    script.write_text(_COORDINATOR)
    coordinator = subprocess.Popen([sys.executable, str(script)], stderr=subprocess.PIPE, text=True)
    try:
        while "oblivious" not in (line := coordinator.stderr.readline()):
            assert line, "the run ended before its sort began"
        roles = [pid for server in _children(coordinator.pid) for pid in _children(server)]  # via the fork server
        assert len(roles) == 3
        coordinator.send_signal(signal.SIGSTOP)
        stopped = time.monotonic()
        while any(_state(pid) not in ("Z", "gone") for pid in roles):
            assert time.monotonic() - stopped < 45, "a role kept running under a stopped coordinator"
            time.sleep(0.5)
        coordinator.kill()
        rest = coordinator.stderr.read()
        assert rest.count("stopping: the coordinator") == 3, rest  # stopped answering / went away
    finally:
        coordinator.kill()
        coordinator.wait()
