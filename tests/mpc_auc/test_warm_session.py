"""mpc_auc.Session: the local roles kept alive between API calls, each call still its own session."""
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

import mpc_auc
from mpc_auc import warm
from mpc_auc.protocols.mpc.ranking_job import dataset_id
from mpc_auc.protocols.runtime.ledger import Ledger
from mpc_auc.protocols.runtime.session import LocalRoles

RNG = np.random.default_rng(40)
Y, S = RNG.integers(0, 2, 200), RNG.random(200)


def _gone(pids, patience_s: float = 30.0) -> bool:
    """Every process of ``pids`` has ended (gone or a zombie) within ``patience_s``."""
    deadline = time.monotonic() + patience_s
    while time.monotonic() < deadline:
        if all(_ended(pid) for pid in pids):
            return True
        time.sleep(0.2)
    return False


def _ended(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def _reported(session, patience_s: float = 30.0) -> bool:
    """The session's kept roles are known to have a dead one (its exit reported by the fork server)."""
    deadline = time.monotonic() + patience_s
    while session._roles.alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    return not session._roles.alive()


def _auc(**options) -> float:
    return mpc_auc.roc_auc_score(Y, S, ci=False, **options).auc


def test_calls_in_a_session_reuse_the_roles_and_exit_stops_them():
    with mpc_auc.Session() as session:
        first = _auc()
        pids = session.pids
        second = _auc()
        assert session.pids == pids and len(pids) == 3  # P0, P1 and the dealer served both calls
    assert first == second == pytest.approx(roc_auc_score(Y, S), abs=1e-12)
    assert session.pids == () and _gone(pids)


def test_a_role_killed_between_calls_is_replaced_by_fresh_roles():
    with mpc_auc.Session() as session:
        _auc()
        pids = session.pids
        os.kill(pids[0], signal.SIGKILL)
        assert _reported(session)
        assert _auc() == pytest.approx(roc_auc_score(Y, S), abs=1e-12)
        assert not set(session.pids) & set(pids) and _gone(pids)  # all three replaced


def test_a_dead_role_the_liveness_check_missed_fails_the_call_at_once_and_the_next_starts_fresh(monkeypatch):
    with mpc_auc.Session() as session:
        _auc()
        pids = session.pids
        os.kill(pids[1], signal.SIGKILL)
        assert _reported(session)
        with monkeypatch.context() as patch:
            patch.setattr(LocalRoles, "alive", lambda self: True)  # as if it died just after the check
            start = time.monotonic()
            with pytest.raises(mpc_auc.PartyFailure):
                _auc()
            assert time.monotonic() - start < 30
        assert _gone(pids)  # the failed call stopped the others
        assert _auc() == pytest.approx(roc_auc_score(Y, S), abs=1e-12)


def test_each_call_is_charged_to_the_ledgers_on_its_own_and_other_roles_replace_the_kept_ones(tmp_path):
    context = mpc_auc.Context(ledger=str(tmp_path))
    with mpc_auc.Session() as session:
        for _ in range(2):
            mpc_auc.roc_auc_score(Y, S, protocol="mpc-central", epsilon=1.0, context=context)
        pids = session.pids
        _auc()  # another ledger: the session's one set of roles is replaced
        assert len(session.pids) == 3 and not set(session.pids) & set(pids) and _gone(pids)
    account = dataset_id([("c0", S, Y)])
    for role in ("P0", "P1"):
        releases = Ledger.releases(Ledger(str(tmp_path), role).state(account))
        assert [r.epsilon for r in releases] == [1.0, 1.0]


def test_keep_false_and_the_environment_make_calls_cold(monkeypatch):
    with mpc_auc.Session(keep=False) as session:
        _auc()
        assert session.pids == ()
    assert warm._entered() == []  # the block's end leaves this thread in no session
    monkeypatch.setenv(warm.ENV, "0")
    assert not warm.current().keep


def test_the_default_session_keeps_the_roles_between_calls_and_stops_them_at_exit():
    code = ("import mpc_auc\nfrom mpc_auc import warm\n"
            "first = mpc_auc.roc_auc_score([0, 1, 0, 1], [0.1, 0.8, 0.3, 0.6], ci=False)\n"
            "pids = warm.current().pids\n"
            "second = mpc_auc.roc_auc_score([0, 1, 1, 0], [0.2, 0.9, 0.4, 0.5], ci=False)\n"
            "assert warm.current().pids == pids and (first.auc, second.auc) == (1.0, 0.75)\n"
            "print(*pids)\n")
    env = {k: v for k, v in os.environ.items() if k != warm.ENV}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env, timeout=120)
    pids = [int(p) for p in out.stdout.split()]
    assert len(pids) == 3 and _gone(pids)


def test_a_forked_child_forgets_its_parents_roles_and_leaves_them_running():
    with mpc_auc.Session() as session:
        expected = _auc()
        kept = session.pids
        child = os.fork()
        if child == 0:  # the child: the roles are its parent's, neither tested nor stopped here
            try:
                os._exit(0 if session.pids == () and session.close() is None else 1)
            finally:
                os._exit(2)
        _, status = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert session.pids == kept and _auc() == expected and session.pids == kept


def test_a_with_block_scopes_its_own_threads_calls_only():
    import threading

    seen = []
    with mpc_auc.Session(keep=False) as session:
        assert warm.current() is session
        other = threading.Thread(target=lambda: seen.append(warm.current()))
        other.start()
        other.join(30)
    assert seen and seen[0] is not session and seen[0] is warm.current()
