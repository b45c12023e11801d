"""A deployed job while strangers flood P0 with silent connections: its time quiet and under the flood.

Three ``mpc-auc party`` processes on 127.0.0.2/3/4 (each under ``ulimit -n`` ``--nofile``); the coordinator
runs ``mpc-auc --quiet run --deployment ...`` and so dials from 127.0.0.1, as do P1 and the dealer (the
kernel's source address for loopback).  Each flood *source* is a process bound to an address of its own
(127.0.0.10, 127.0.0.11, ...) that holds ``N`` plain TCP connections to P0, sends nothing on them and
re-opens every one P0 closes (shed at once, or at its handshake deadline), from before the job starts until
it ends.  Measured per scenario (connections per source, sources): quiet and flooded jobs in turn, their wall
times and exit statuses, the ratio of their medians, and how many connections a second the sources re-opened
during the flooded jobs; before each flooded job, with P0 only shedding, the rate and P0's CPU a second (what
a shed connection costs it); then one job right after the flood ends (what a flood leaves behind).

The flood sources share this machine's cores with the parties and the job: at ``--nice 0`` what a job loses
includes the attacker's own CPU, which an attacker on a host of its own would not take; at ``--nice 19`` they
get little CPU while the parties and the job want it (what the flood then costs is the parties' shedding, at
the rate the sources still reach: both are printed).

Printed as JSON.  Usage: python -m mpc_auc.sims.security.admission_flood [--rows 300] [--connections 200 2000]
[--sources 1 2] [--runs 3] [--nice 0] [--nofile 1024] [--timeout 20]
"""
import argparse
import json
import multiprocessing as mp
import os
import resource
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from ...protocols.runtime.link import free_port, split_address
from ..host import machine, wait_for_line

HOSTS = {"P0": "127.0.0.2", "P1": "127.0.0.3", "dealer": "127.0.0.4"}
FIRST_SOURCE = 10  # the flood sources bind 127.0.0.10, .11, ...
COMMAND = [sys.executable, "-m", "mpc_auc"]
RAMP_S = 3.0  # the flood runs this long before the job starts


# --------------------------------------------------------------- a flood source

def _open(source: str, target, selector) -> None:
    """One silent connection from ``source`` to ``target`` (non-blocking; watched for its end)."""
    s = socket.socket()
    s.setblocking(False)
    s.bind((source, 0))
    s.connect_ex(target)
    selector.register(s, selectors.EVENT_READ)


def hold(source: str, target, connections: int, stop, opened, nice: int = 0) -> None:
    """Hold ``connections`` silent connections from ``source`` to ``target``, re-opening each one that ends,
    until ``stop`` is set; ``opened``: a shared counter of the connections opened; nice: this process's
    scheduling niceness."""
    os.nice(nice)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, connections + 64)), hard))
    selector = selectors.DefaultSelector()
    for _ in range(connections):
        _open(source, target, selector)
    count = connections
    while not stop.is_set():
        for key, _ in selector.select(0.2):
            try:
                ended = key.fileobj.recv(1) == b""  # P0 closed it (a silent client never gets data)
            except BlockingIOError:
                ended = False
            except OSError:
                ended = True  # reset, or refused
            if ended:
                selector.unregister(key.fileobj)
                key.fileobj.close()
                _open(source, target, selector)
                count += 1
        opened.value = count
    for key in list(selector.get_map().values()):
        key.fileobj.close()


class Flood:
    """``sources`` flood processes, each holding ``connections`` to ``target`` (a context manager)."""

    def __init__(self, target, connections: int, sources: int, nice: int = 0):
        context = mp.get_context("fork")
        self._stop = context.Event()
        self._counts = [context.Value("q", 0, lock=False) for _ in range(sources)]
        self._procs = [context.Process(target=hold, args=(f"127.0.0.{FIRST_SOURCE + i}", target, connections,
                                                          self._stop, self._counts[i], nice), daemon=True)
                       for i in range(sources)]

    def __enter__(self):
        for proc in self._procs:
            proc.start()
        return self

    def opened(self) -> int:
        return sum(c.value for c in self._counts)

    def __exit__(self, *_):
        self._stop.set()
        for proc in self._procs:
            proc.join(30)
            if proc.is_alive():
                proc.kill()


# --------------------------------------------------------------- the deployment

class Parties:
    """A deployment on 127.0.0.2/3/4 and its three ``mpc-auc party`` processes (a context manager)."""

    def __init__(self, directory: str, rows: int, nofile: int, timeout_s: float):
        self.directory, self.timeout_s = directory, timeout_s
        self.deployment = os.path.join(directory, "deployment.yaml")
        self.address = {role: f"{host}:{free_port(host)}" for role, host in HOSTS.items()}
        subprocess.run(COMMAND + ["deploy", "init", "--dir", directory]
                       + [x for role in HOSTS for x in (f"--{role.lower()}", self.address[role])],
                       check=True, capture_output=True)
        self.data = os.path.join(directory, "data.csv")
        subprocess.run(COMMAND + ["generate", "--out", self.data, "--m", str(rows), "--clients", "4"], check=True,
                       capture_output=True)
        self.procs = [self._start(role, nofile) for role in HOSTS]

    def _start(self, role: str, nofile: int):
        log = os.path.join(self.directory, f"{role}.log")
        with open(log, "w") as out:
            proc = subprocess.Popen(COMMAND + ["party", "--role", role, "--deployment", self.deployment, "--key",
                                               os.path.join(self.directory, f"{role}.key"), "--ledger",
                                               os.path.join(self.directory, "ledger"), "--timeout",
                                               str(self.timeout_s)],
                                    stdout=out, stderr=subprocess.STDOUT,
                                    preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile)))
        wait_for_line(log, "serving until stopped", proc, 120)
        return proc

    def job(self) -> dict:
        """One ``mpc-auc run`` against the parties: its wall seconds and exit status (and its error, if any)."""
        out = os.path.join(self.directory, f"result-{time.monotonic_ns()}.json")
        began = time.perf_counter()
        done = subprocess.run(COMMAND + ["--quiet", "run", "--deployment", self.deployment, "--input", self.data,
                                         "--out", out, "--timeout", str(self.timeout_s)],
                              capture_output=True, text=True)
        record = {"seconds": round(time.perf_counter() - began, 2), "exit": done.returncode}
        if done.returncode != 0:
            record["error"] = done.stderr.strip()[-300:]
        return record

    def alive(self) -> bool:
        return all(proc.poll() is None for proc in self.procs)

    def __enter__(self):
        return self

    def __exit__(self, *_):
        for proc in self.procs:
            proc.terminate()
            proc.wait(30)


# --------------------------------------------------------------- the measurement

def _median(jobs) -> float:
    return statistics.median(job["seconds"] for job in jobs)


def _cpu_s(pid: int) -> float:
    """CPU seconds (user and system) the process ``pid`` has used so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rates(flood: Flood, p0: int, seconds: float) -> tuple:
    """(connections the flood re-opened a second, P0's CPU seconds a second) over the next ``seconds``."""
    opened, cpu, began = flood.opened(), _cpu_s(p0), time.monotonic()
    time.sleep(seconds)
    elapsed = time.monotonic() - began
    return (flood.opened() - opened) / elapsed, (_cpu_s(p0) - cpu) / elapsed


def _flooded_job(parties: Parties, connections: int, sources: int, nice: int):
    """One job while ``sources`` sources hold ``connections`` each to P0.  Returns the job, what P0's shedding
    alone measured before it (:func:`_rates`) and the connections re-opened a second during it."""
    with Flood(split_address(parties.address["P0"]), connections, sources, nice) as flood:
        time.sleep(RAMP_S / 3)
        shedding = _rates(flood, parties.procs[0].pid, 2 * RAMP_S / 3)
        before, began = flood.opened(), time.monotonic()
        job = parties.job()
        return job, shedding, (flood.opened() - before) / (time.monotonic() - began)


def scenario(parties: Parties, connections: int, sources: int, runs: int, nice: int) -> dict:
    """``runs`` pairs of a quiet job and a flooded one (interleaved, so that the machine's other load weighs
    on both alike), then one job right after the flood."""
    quiet, flooded, shedding, rates = [], [], [], []
    for _ in range(runs):
        quiet.append(parties.job())
        job, shed, rate = _flooded_job(parties, connections, sources, nice)
        flooded.append(job)
        shedding.append(shed)
        rates.append(rate)
    reopened, cpu = (statistics.median(column) for column in zip(*shedding))
    return {"connections": connections, "sources": sources, "quiet_s": [q["seconds"] for q in quiet],
            "flooded_s": [job["seconds"] for job in flooded], "ratio": round(_median(flooded) / _median(quiet), 2),
            "failed": [job for job in quiet + flooded if job["exit"]],
            "reopened_per_s_during_jobs": round(statistics.median(rates)),
            "shedding": {"reopened_per_s": round(reopened), "p0_cpu_per_s": round(cpu, 2),
                         "p0_cpu_us_per_connection": round(1e6 * cpu / reopened, 1) if reopened else None},
            "next_job": parties.job(), "parties_alive": parties.alive()}


def measure(rows: int, connections, sources, runs: int, nice: int, nofile: int, timeout_s: float) -> dict:
    """Each (connections, sources) scenario against one deployment."""
    with tempfile.TemporaryDirectory() as tmp, Parties(tmp, rows, nofile, timeout_s) as parties:
        parties.job()  # warm-up (first imports, page cache)
        return {"machine": machine(), "rows": rows, "party_nofile": nofile, "flood_nice": nice,
                "scenarios": [scenario(parties, n, k, runs, nice) for k in sources for n in connections]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--connections", type=int, nargs="+", default=[200, 2000],
                        help="connections each source holds")
    parser.add_argument("--sources", type=int, nargs="+", default=[1, 2], help="numbers of sources at once")
    parser.add_argument("--runs", type=int, default=3,
                        help="quiet and flooded jobs per scenario (the ratio is of their medians)")
    parser.add_argument("--nice", type=int, default=0,
                        help="the flood processes' niceness (19: they get little of this machine's cores while the "
                             "parties and the job want them, as an attacker on a host of its own)")
    parser.add_argument("--nofile", type=int, default=1024, help="each party's descriptor limit")
    parser.add_argument("--timeout", type=float, default=20.0, help="the run's and the parties' --timeout")
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.rows, args.connections, args.sources, args.runs, args.nice, args.nofile,
                             args.timeout), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
