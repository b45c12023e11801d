"""Deployed parties that a stranger, a client or the organiser cannot bring down or talk past.

Three ``mpc-auc party`` processes on 127.0.0.2/3/4, each under ``ulimit -n 1024`` and with a budget of its
own (``--budget 1.5``):

* a stranger opens 2,000 plain TCP connections to P0 (twice its descriptor limit) and leaves them open;
  P0 sheds what it cannot handshake, times out the rest, stays up and serves the next job;
* a rostered client announces a 16 GiB message, another streams small messages the party does not read: the
  party ends each link before keeping any of it and serves the next job;
* the organiser asks for a budget of 100 and gets what the parties' own budget of 1.5 allows.
"""
import json
import resource
import socket
import subprocess
import time

import pytest

from mpc_auc.protocols.inputs import submitter
from mpc_auc.protocols.runtime import listener, records
from mpc_auc.protocols.runtime.deployment import Deployment
from mpc_auc.protocols.runtime.identity import Identity
from roles_on_hosts import CLI, HOSTS, client_keys, deploy

NOFILE = 1024
FLOOD = 2 * NOFILE - 48  # about twice the party's descriptor limit


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    ledger = tmp_path_factory.mktemp("own-ledgers")  # not the test session's shared default: fresh budgets
    yield from deploy(tmp_path_factory, nofile=NOFILE, extra=("--budget", "1.5", "--ledger", str(ledger)),
                      rows=200)  # its jobs only show that the party still serves, and what its budget refuses


def _run(directory, *extra):
    out = directory / f"result-{time.monotonic_ns()}.json"
    proc = subprocess.run(CLI + ["run", "--deployment", str(directory / "deployment.yaml"), "--input",
                                 str(directory / "data.csv"), "--out", str(out), "--timeout", "5", *extra],
                          capture_output=True, text=True, timeout=180)
    return proc, (json.loads(out.read_text()) if proc.returncode == 0 else None)


def _flood(address, count):
    """``count`` plain TCP connections to ``address``, opened as fast as the kernel takes them."""
    flood = []
    for _ in range(count):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(address)
        flood.append(s)
    return flood


def _wait_all_closed_by_peer(flood, limit_s):
    """Wait until the party has closed every flood connection (shed at once, or at its handshake deadline)."""
    open_ = list(flood)
    deadline = time.monotonic() + limit_s
    while open_:
        assert time.monotonic() < deadline, f"{len(open_)} flood connections still open after {limit_s} s"
        still = []
        for s in open_:
            try:
                if s.recv(1) == b"":
                    continue  # closed by the party
            except BlockingIOError:
                pass
            except OSError:
                continue  # reset by the party
            still.append(s)
        open_ = still
        time.sleep(0.2)


def test_a_flood_of_twice_the_descriptor_limit_leaves_the_party_serving(limited):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < FLOOD + 200:
        pytest.skip(f"this test process may open only {hard} descriptors; the flood needs {FLOOD + 200}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, FLOOD + 200) if hard == resource.RLIM_INFINITY
                                                else min(hard, max(soft, FLOOD + 200)), hard))
    directory, procs, _, ports = limited
    flood = _flood((HOSTS["P0"], ports["P0"]), FLOOD)
    try:
        # P0 is never out of descriptors (it sheds past its source's PENDING_PER_SOURCE) and never stops accepting
        _wait_all_closed_by_peer(flood, limit_s=listener.HANDSHAKE_S * 6 + 60)
    finally:
        for s in flood:
            s.close()
    assert procs["P0"].poll() is None
    proc, result = _run(directory)
    assert proc.returncode == 0, proc.stderr
    assert 0 < result["auc"] < 1


def _announces_16_gib(link) -> None:
    """A frame header announcing 16 GiB, then its payload as fast as the link takes it, until the party ends the
    link (it must, at the announcement: past the evaluation's --max-rows)."""
    chunk = memoryview(bytearray(8 << 20))
    with link._cond:
        link._outbox.append(memoryview(records.FRAME.pack(records.DATA, 1, 0, 16 << 30)))
    deadline = time.monotonic() + 60
    while link.failure is None:
        assert time.monotonic() < deadline, "the party kept taking the oversized message"
        with link._cond:
            if len(link._outbox) < 4:
                link._outbox.append(chunk)
        link._wake()
        time.sleep(0.005)
    assert link.bytes_sent < 1 << 30


def _streams_unread_messages(link) -> None:
    """16 KiB messages on a channel the intake never reads, without stating rows, until the party ends the link
    (it must, once 64 KiB lie unread there: a cap on each message alone would let them pile up)."""
    from mpc_auc.protocols.errors import PeerLost
    from mpc_auc.protocols.runtime.control import CONTROL

    deadline = time.monotonic() + 60
    while link.failure is None:
        assert time.monotonic() < deadline, "the party kept queueing the client's messages"
        try:
            link.send(CONTROL + 1, bytes(16 << 10))
        except PeerLost:
            break  # the party ended the link between the check and the send
        time.sleep(0.01)
    assert link.bytes_sent < 1 << 20


def test_an_oversized_message_or_unread_small_ones_end_the_clients_link_only(limited, tmp_path):
    """Two rostered clients of one evaluation (--max-rows 1000), one deadline: one announces 16 GiB and keeps
    sending, the other streams small messages the party does not read; the party ends each link, the job is
    refused at its deadline (no client submitted), the next job runs."""
    directory = limited[0]
    client_keys(tmp_path, ["big", "chatty"])
    opened = subprocess.Popen(CLI + ["evaluation", "open", "--deployment", str(directory / "deployment.yaml"),
                                     "--id", "oversized", "--roster", str(tmp_path / "big.roster.yaml"),
                                     str(tmp_path / "chatty.roster.yaml"), "--max-rows", "1000", "--deadline", "10",
                                     "--out", str(tmp_path / "o.json"), "--timeout", "5"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deployment = Deployment.load(str(directory / "deployment.yaml"))
    for name, attack in (("big", _announces_16_gib), ("chatty", _streams_unread_messages)):
        link, _ = submitter._connect(Identity.load(str(tmp_path / f"{name}.key")), deployment, "P0", "oversized",
                                     5.0, 60.0)
        attack(link)
        link.abort(RuntimeError("done"))
    _, err = opened.communicate(timeout=60)
    assert opened.returncode == 2 and "no client submitted" in err, err
    proc, _ = _run(directory)
    assert proc.returncode == 0, proc.stderr


def test_the_partys_own_budget_refuses_a_release_the_organiser_allows(limited):
    directory = limited[0]
    proc, result = _run(directory, "--protocol", "mpc-central", "--epsilon", "1", "--budget", "100",
                        "--dataset-id", "first")
    assert proc.returncode == 0, proc.stderr
    assert result["privacy"]["ledger"]["budget"][0] == 1.5  # the parties' own, not the organiser's 100
    proc, _ = _run(directory, "--protocol", "mpc-central", "--epsilon", "1", "--budget", "100",
                   "--dataset-id", "second")  # a new id string does not reset the roster's set
    assert proc.returncode == 2 and "privacy budget exceeded" in proc.stderr
    assert "this party's own budget" in proc.stderr
