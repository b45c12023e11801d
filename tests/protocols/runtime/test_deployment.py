"""Roles on their own hosts: three ``mpc-auc party`` processes on 127.0.0.2/3/4, jobs via ``run --deployment``.

Each role listens on exactly its configured address (checked with ``ss -ltn``,
or /proc when ss is missing); mpc-exact equals sklearn; mpc-central runs; a
killed P1 fails the job naming P1 while P0 and the dealer keep serving; a
stopped coordinator is dropped by the parties, who serve the next job; SIGTERM
ends a role cleanly.
"""
import json
import os
import signal
import subprocess
import time

import pytest
from sklearn.metrics import roc_auc_score

from mpc_auc.csv_io import read_evalset
from mpc_auc.protocols.runtime.identity import Identity
from roles_on_hosts import CLI, HOSTS, cli_in_process, deploy, listening as _listening, start_role as _start_role, \
    wait_listening as _wait_listening


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    """This module's own deployment (its tests kill, stop and replace roles): not the one the other modules share."""
    yield from deploy(tmp_path_factory)


def _run(directory, *extra, data="data.csv", timeout=120):
    out = directory / f"result-{time.monotonic_ns()}.json"
    proc = subprocess.run(CLI + ["run", "--deployment", str(directory / "deployment.yaml"), "--input",
                                 str(directory / data), "--out", str(out), "--timeout", "5", *extra],
                          capture_output=True, text=True, timeout=timeout)
    return proc, (json.loads(out.read_text()) if proc.returncode == 0 else None)


def _next_job(directory):
    """The job after a failure, on the first 200 of data.csv's rows: it shows the roles serve (the 1,500 rows
    are for the jobs a failure must find mid-sort)."""
    small = directory / "next.csv"
    if not small.exists():
        small.write_text("\n".join((directory / "data.csv").read_text().splitlines()[:201]) + "\n")
    return _run(directory, data="next.csv")


def test_each_role_listens_only_on_its_configured_address(deployed):
    _, procs, _, ports = deployed
    for role, proc in procs.items():
        assert _listening(proc.pid) == [(HOSTS[role], ports[role])], role


def test_mpc_exact_and_mpc_central_through_the_deployment(deployed):
    directory = deployed[0]
    evalset = read_evalset(str(directory / "data.csv"))
    truth = roc_auc_score(evalset.label, evalset.score)
    proc, result = _run(directory)
    assert proc.returncode == 0, proc.stderr
    assert abs(result["auc"] - truth) < 1e-12
    proc, result = _run(directory, "--protocol", "mpc-central", "--epsilon", "4")
    assert proc.returncode == 0, proc.stderr
    assert abs(result["auc"] - truth) < 0.05 and result["privacy"]["epsilon"] == 4


@pytest.mark.parametrize("victim, sig", [("P1", signal.SIGKILL), ("P1", signal.SIGSTOP), ("dealer", signal.SIGKILL)],
                         ids=["killed-P1", "stalled-P1", "killed-dealer"])
def test_a_failed_role_fails_the_job_naming_it_and_the_others_keep_serving(deployed, victim, sig):
    directory, procs, logs, _ = deployed
    job = _start_job(directory, f"failed-{victim}.json")
    procs[victim].send_signal(sig)
    hit = time.monotonic()
    _, err = job.communicate(timeout=60)
    assert job.returncode == 3 and f"{victim} failed" in err, err
    assert time.monotonic() - hit < 30
    assert not (directory / f"failed-{victim}.json").exists()
    assert all(p.poll() is None for role, p in procs.items() if role != victim)  # still serving
    procs[victim].kill()
    procs[victim].wait()
    procs[victim] = _start_role(directory, victim, logs[victim])
    _wait_listening(procs)
    proc, _ = _next_job(directory)  # the next job runs
    assert proc.returncode == 0, proc.stderr


def _start_job(directory, name):
    """``mpc-auc run --deployment`` in the background, returned once its oblivious sort is under way."""
    job = subprocess.Popen(CLI + ["run", "--deployment", str(directory / "deployment.yaml"), "--input",
                                  str(directory / "data.csv"), "--out", str(directory / name), "--timeout", "5"],
                           stderr=subprocess.PIPE, text=True)
    line = job.stderr.readline()
    while "oblivious" not in line:
        assert line, "the job ended before its sort began"
        line = job.stderr.readline()
    return job


def test_a_stopped_coordinator_is_dropped_and_the_roles_serve_the_next_job(deployed):
    directory, procs, logs, _ = deployed
    job = _start_job(directory, "stopped.json")
    job.send_signal(signal.SIGSTOP)
    deadline = time.monotonic() + 60  # the parties' timeout is 5 s; a loaded machine may take longer to tell
    dropped = []
    while time.monotonic() < deadline and len(dropped) < 2:
        time.sleep(0.2)
        dropped = [r for r in ("P0", "P1") if "lost contact with coordinator" in (directory / f"{r}.log").read_text()]
    assert dropped == ["P0", "P1"], dropped
    job.kill()
    job.wait()
    proc, _ = _next_job(directory)
    assert proc.returncode == 0, proc.stderr


def test_sigterm_ends_a_role_cleanly(deployed):
    _, procs, _, _ = deployed
    procs["dealer"].send_signal(signal.SIGTERM)
    assert procs["dealer"].wait(timeout=10) == 0


def test_bad_deployment_input_exits_2_naming_the_problem(tmp_path, capsys):
    init = ["deploy", "init", "--dir", str(tmp_path), "--p0", "127.0.0.2:1", "--p1", "127.0.0.3:1", "--dealer"]
    code, err = cli_in_process(init + ["nohost"], capsys)
    assert code == 2 and "HOST:PORT" in err and not list(tmp_path.iterdir())
    assert cli_in_process(init + ["127.0.0.4:1"], capsys)[0] == 0
    assert all(oct((tmp_path / f"{r}.key").stat().st_mode & 0o777) == "0o600" for r in ("P0", "P1", "dealer"))
    code, err = cli_in_process(init + ["127.0.0.4:1"], capsys)
    assert code == 2 and "exists already" in err
    deployment = str(tmp_path / "deployment.yaml")
    data = tmp_path / "data.csv"
    data.write_text("client,score,label\na,0.1,0\na,0.9,1\n")
    code, err = cli_in_process(["run", "--deployment", deployment, "--key", str(tmp_path / "P0.key"), "--input",
                             str(data), "--out", str(tmp_path / "r.json")], capsys)
    assert code == 2 and "not of the coordinator" in err, err
    cases = [
        (["party", "--role", "P0", "--deployment", str(tmp_path / "none.yaml"), "--key", str(tmp_path / "P0.key")],
         "cannot read deployment file"),
        (["party", "--role", "P1", "--deployment", deployment, "--key", str(tmp_path / "P0.key")],
         "is the key of P0, not of P1"),
    ]
    pinned = Identity.load(str(tmp_path / "dealer.key"))  # the same TLS key, another sealing key
    Identity("dealer", pinned.tls_key, pinned.certificate).save(str(tmp_path / "resealed.key"))
    code, err = cli_in_process(["party", "--role", "dealer", "--deployment", deployment, "--key",
                                str(tmp_path / "resealed.key")], capsys)
    assert code == 2 and "does not hold the sealing key pinned for dealer" in err, err
    os.chmod(tmp_path / "dealer.key", 0o644)
    cases.append((["party", "--role", "dealer", "--deployment", deployment, "--key", str(tmp_path / "dealer.key")],
                  "readable by others"))
    for argv, message in cases:
        proc = subprocess.run(CLI + argv, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and message in proc.stderr, (argv, proc.stderr)
    assert not (tmp_path / "r.json").exists()


def test_a_port_already_in_use_is_one_line_naming_it_with_exit_2(tmp_path, capsys):
    """``mpc-auc party`` on a port another socket holds: exit 2 and one line naming the role and the address,
    not a traceback (the deployment written in process; the party is its own process)."""
    import socket

    holder = socket.create_server(("127.0.0.2", 0))
    try:
        port = holder.getsockname()[1]
        assert cli_in_process(["deploy", "init", "--dir", str(tmp_path), "--p0", f"127.0.0.2:{port}", "--p1",
                               "127.0.0.3:1", "--dealer", "127.0.0.4:1"], capsys)[0] == 0
        proc = subprocess.run(CLI + ["party", "--role", "P0", "--deployment", str(tmp_path / "deployment.yaml"),
                                     "--key", str(tmp_path / "P0.key")], capture_output=True, text=True, timeout=60)
    finally:
        holder.close()
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"mpc-auc: error: P0 cannot listen on 127.0.0.2:{port}: Address already in use"), \
        lines[0]
