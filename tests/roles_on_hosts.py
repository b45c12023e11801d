"""Roles on their own addresses for tests: a deployment on 127.0.0.2/3/4 and three ``mpc-auc party`` processes."""
import os
import resource
import shutil
import subprocess
import sys
import time

from mpc_auc.cli import main
from mpc_auc.csv_io import write_evalset
from mpc_auc.protocols.inputs.submission import Roster
from mpc_auc.protocols.runtime.deployment import init
from mpc_auc.protocols.runtime.identity import Identity, client_role
from mpc_auc.protocols.runtime.link import free_port
from mpc_auc.synthetic import synthetic_evalset

CLI = [sys.executable, "-m", "mpc_auc"]
HOSTS = {"P0": "127.0.0.2", "P1": "127.0.0.3", "dealer": "127.0.0.4"}


def cli_in_process(argv, capsys):
    """(exit status, stderr) of ``mpc-auc ARGV`` run by the command line's entry point in this test's process (the
    status ``python -m mpc_auc`` exits with; a usage error ends with SystemExit, as argparse does).  Not for
    ``party``: it sets the threads of the process it runs in."""
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code
    return code, capsys.readouterr().err


def start_role(directory, role, log, nofile: int = None, extra=(), command=CLI):
    """``mpc-auc party`` for ``role``; nofile: its descriptor limit (RLIMIT_NOFILE, as ``ulimit -n``); command:
    what runs the command line (a weakened party's wrapper, e.g. tests/weakened_party.py)."""
    def limit():
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    return subprocess.Popen(list(command) + ["party", "--role", role, "--deployment", str(directory / "deployment.yaml"),
                                   "--key", str(directory / f"{role}.key"), "--timeout", "5", *extra],
                            stdout=log, stderr=subprocess.STDOUT, preexec_fn=limit)


def listening(pid: int):
    """(address, port) of every TCP socket ``pid`` listens on."""
    if shutil.which("ss"):
        out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
        rows = [line.split() for line in out.splitlines() if f"pid={pid}," in line]
        return sorted((row[3].rpartition(":")[0], int(row[3].rpartition(":")[2])) for row in rows)
    inodes = {os.readlink(f"/proc/{pid}/fd/{fd}")[8:-1] for fd in os.listdir(f"/proc/{pid}/fd")
              if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:[")}
    found = []
    for line in open("/proc/net/tcp").read().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "0A" and fields[9] in inodes:  # state LISTEN
            host, port = fields[1].split(":")
            found.append((".".join(str(int(host[i:i + 2], 16)) for i in (6, 4, 2, 0)), int(port, 16)))
    return sorted(found)


def deploy(tmp_path_factory, nofile: int = None, extra=(), commands=None, rows: int = 1500):
    """A deployment on 127.0.0.2/3/4 with its three roles serving (a generator: stop them after); nofile and
    extra: each role's descriptor limit and further ``mpc-auc party`` options; commands: role -> what runs its
    command line instead of ``python -m mpc_auc``; rows: the rows of its data.csv (4 clients, two decimals)."""
    directory = tmp_path_factory.mktemp("deployment")
    ports = {role: free_port(host) for role, host in HOSTS.items()}
    # what `mpc-auc deploy init` and `mpc-auc generate --m ROWS --clients 4 --decimals 2` write, in this process
    init(str(directory), {role: f"{HOSTS[role]}:{ports[role]}" for role in HOSTS})
    write_evalset(directory / "data.csv", synthetic_evalset(m=rows, clients=4, decimals=2))
    logs = {role: open(directory / f"{role}.log", "w") for role in HOSTS}
    procs = {role: start_role(directory, role, logs[role], nofile, extra, (commands or {}).get(role, CLI))
             for role in HOSTS}
    wait_listening(procs)
    yield directory, procs, logs, ports
    for proc in procs.values():
        if proc.poll() is None:
            proc.kill()


def wait_listening(procs, timeout_s=60):
    deadline = time.monotonic() + timeout_s
    while any(not listening(p.pid) for p in procs.values()):
        assert time.monotonic() < deadline, "roles did not start listening"
        time.sleep(0.2)


def client_keys(directory, names) -> None:
    """Each client's fresh key and one-entry roster in ``directory`` (NAME.key, NAME.roster.yaml, replacing any),
    as ``mpc-auc client keygen`` writes them: a new key is a new owner in the parties' ledgers."""
    for name in names:
        for suffix in (".key", ".roster.yaml"):
            (directory / f"{name}{suffix}").unlink(missing_ok=True)
        identity = Identity(client_role(name))
        identity.save(str(directory / f"{name}.key"))
        Roster((identity.public,)).save(str(directory / f"{name}.roster.yaml"))
