"""P0's memory over an evaluation's roster: three ``mpc-auc party`` processes on this machine, an evaluation of
``--clients`` rostered clients at ``--max-rows`` and ``--max-total-rows``, each but one submitting ``--rows``
rows through ``mpc_auc.submit`` at once and one that takes its tickets and stalls until the deadline (without
``--allow-missing`` it refuses the job there, after the others' rows were taken in); P0's resident memory read
from /proc before the evaluation, at its peak during it (VmHWM) and after it ended.

    python -m mpc_auc.sims.security.roster_memory --clients 8 --max-rows 10000000 --rows 1000000
    python -m mpc_auc.sims.security.roster_memory --clients 8 --max-rows 10000000 --max-total-rows 3000000 \\
        --rows 1000000

Prints JSON: MiB before, at the peak and after, each client's answer, the evaluation's outcome and the bound of
what the party holds of the submissions (max_total_bytes).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

import mpc_auc
from ...protocols.inputs.submission import DEFAULT_MAX_TOTAL_ROWS, Declaration, Roster
from ...protocols.runtime.control import recv_message
from ...protocols.runtime.deployment import Deployment
from ...protocols.runtime.identity import Identity, client_role
from ...protocols.runtime.link import dial, free_port

ROLES = ("P0", "P1", "dealer")


def _mib(pid: int, field: str) -> float:
    """VmRSS or VmHWM of ``pid``, in MiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise ValueError(f"no {field} for process {pid}")


def _settled(pid: int, limit_s: float = 60.0) -> float:
    """VmRSS of ``pid`` once it has stayed within 1 MiB for 3 s (the party has finished telling the clients and
    handed the job's memory back), or after ``limit_s``."""
    deadline, last = time.monotonic() + limit_s, _mib(pid, "VmRSS")
    while time.monotonic() < deadline:
        time.sleep(3.0)
        now = _mib(pid, "VmRSS")
        if abs(now - last) < 1.0:
            return now
        last = now
    return last


def _reset_peak(pid: int) -> None:
    """Start VmHWM again from the current resident size (Linux >= 4.0: ``echo 5 > clear_refs``)."""
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")


class Parties:
    """A deployment on 127.0.0.1 and its three serving roles."""

    def __init__(self, directory: str, timeout_s: float):
        self.directory = directory
        self.deployment = os.path.join(directory, "deployment.yaml")
        subprocess.run([sys.executable, "-m", "mpc_auc", "deploy", "init", "--dir", directory,
                        *(x for r in ROLES for x in (f"--{r.lower()}", f"127.0.0.1:{free_port()}"))],
                       check=True, capture_output=True)
        self.procs = {}
        for role in ROLES:
            log = open(os.path.join(directory, f"{role}.log"), "w")
            self.procs[role] = subprocess.Popen(
                [sys.executable, "-m", "mpc_auc", "party", "--role", role, "--deployment", self.deployment,
                 "--key", os.path.join(directory, f"{role}.key"), "--timeout", str(timeout_s)],
                stdout=log, stderr=subprocess.STDOUT)
        for role in ROLES:
            self._wait(role, "serving until stopped", 300)

    def _wait(self, role: str, text: str, limit_s: float) -> None:
        deadline = time.monotonic() + limit_s
        path = os.path.join(self.directory, f"{role}.log")
        while text not in open(path).read():
            if self.procs[role].poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{role} did not start: {open(path).read()[-2000:]}")
            time.sleep(0.2)

    def close(self) -> None:
        for proc in self.procs.values():
            proc.terminate()
        for proc in self.procs.values():
            proc.wait(30)


def _keys(directory: str, names) -> list:
    """Each client's identity, its key file and one-entry roster beside the deployment."""
    identities = []
    for name in names:
        identity = Identity(client_role(name))
        identity.save(os.path.join(directory, f"{name}.key"))
        Roster((identity.public,)).save(os.path.join(directory, f"{name}.roster.yaml"))
        identities.append(identity)
    return identities


def _stall(identity, deployment_path: str, evaluation: str, until: float) -> None:
    """A rostered client that takes its ticket at both parties and sends nothing until ``until``."""
    deployment = Deployment.load(deployment_path)
    links = []
    for role in ("P0", "P1"):
        while time.monotonic() < until:
            try:
                link = dial(identity, deployment, role, {"purpose": "submit", "evaluation": evaluation}, 30)
                recv_message(link, "ticket")
                links.append(link)
                break
            except Exception:  # the evaluation is not open yet: dial again
                time.sleep(0.5)
    time.sleep(max(0.0, until - time.monotonic()))
    for link in links:
        link.close(flush_s=0.2)


def measure(clients: int, max_rows: int, rows: int, deadline_s: float, timeout_s: float, directory: str,
            allow_missing: bool = False, max_total_rows: int = DEFAULT_MAX_TOTAL_ROWS) -> dict:
    parties = Parties(directory, timeout_s)
    try:
        p0 = parties.procs["P0"].pid
        names = [f"c{i}" for i in range(clients)]
        identities = _keys(directory, names)
        time.sleep(2.0)
        _reset_peak(p0)
        before = _mib(p0, "VmRSS")
        box = {}

        def organise():
            try:
                intake = mpc_auc.Intake(deadline_s, allow_missing, max_rows, max_total_rows)
                opened = mpc_auc.Evaluation.open(mpc_auc.Context(deployment=parties.deployment, timeout=timeout_s),
                                                 id="roster-memory", intake=intake,
                                                 roster=[os.path.join(directory, f"{n}.roster.yaml") for n in names])
                box["result"] = opened.result(timeout=deadline_s + timeout_s)
            except Exception as err:  # reported, not raised: the measurement stands either way
                box["error"] = f"{type(err).__name__}: {err}"

        organiser = threading.Thread(target=organise)
        organiser.start()
        stalled = threading.Thread(target=_stall, args=(identities[-1], parties.deployment, "roster-memory",
                                                        time.monotonic() + deadline_s + 5))
        stalled.start()
        rng = np.random.default_rng(0)  # synthetic rows for a measurement, not a secret
        submitters, answers = [], {}

        def submit(name, y, s):
            try:
                answers[name] = mpc_auc.submit(parties.deployment, evaluation="roster-memory", client=name,
                                               key=os.path.join(directory, f"{name}.key"), y_true=y, y_score=s,
                                               timeout=timeout_s).status
            except Exception as err:  # a refused or cut-off client: its answer is the measurement's
                answers[name] = f"{type(err).__name__}: {err}"[:300]

        for name in names[:-1]:
            submitters.append(threading.Thread(target=submit, args=(name, np.arange(rows) % 2,
                                                                    np.round(rng.random(rows), 4))))
        for t in submitters:
            t.start()
        for t in submitters + [organiser, stalled]:
            t.join()
        peak = _mib(p0, "VmHWM")
        after = _settled(p0)
        outcome = ({"auc": box["result"]["auc"], "clients": box["result"].clients, "m": box["result"].m}
                   if "result" in box else {"error": box.get("error")})
        return {"clients": clients, "max_rows": max_rows, "max_total_rows": max_total_rows, "rows_each": rows,
                "max_total_bytes": Declaration("e", Roster(tuple(i.public for i in identities)),
                                              max_total_rows=max_total_rows).max_total_bytes,
                "clients_answered": answers, "P0_mib": {
            "before": round(before, 1), "peak": round(peak, 1), "after": round(after, 1),
            "peak_above_before": round(peak - before, 1), "after_above_before": round(after - before, 1)},
            "outcome": outcome}
    finally:
        parties.close()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8, help="rostered clients (the last one stalls)")
    parser.add_argument("--max-rows", type=int, default=10_000_000, help="the evaluation's most rows per client")
    parser.add_argument("--max-total-rows", type=int, default=DEFAULT_MAX_TOTAL_ROWS,
                        help="the evaluation's most rows over all clients")
    parser.add_argument("--rows", type=int, default=100_000, help="rows each submitting client sends")
    parser.add_argument("--deadline", type=float, default=60.0, help="the evaluation's deadline, seconds")
    parser.add_argument("--allow-missing", action="store_true",
                        help="compute on the clients present at the deadline (else the stalled one refuses the job)")
    parser.add_argument("--timeout", type=float, default=120.0, help="the parties' and clients' timeout, seconds")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        print(json.dumps(measure(args.clients, args.max_rows, args.rows, args.deadline, args.timeout, directory,
                                 args.allow_missing, args.max_total_rows),
                         indent=2))


if __name__ == "__main__":
    main()
