"""`make flower-demo`: the example Flower app on Flower's Deployment Engine, every role its own process.

mpc-auc: a deployment on 127.0.0.2/3/4 and its three ``mpc-auc party`` processes (P0, P1, the dealer), five
client keys (mpc_auc.flower.local_deployment).  Flower: a SuperLink and five SuperNodes (partition-id 0..4), then ``flwr run`` of this app against
the SuperLink.  Each round's evaluation opens an mpc-auc evaluation; every SuperNode's ClientApp submits its test
predictions to the parties directly (one DP release per round; the parties and each client hold every client key to
epsilon 2 in all); the ServerApp logs the private global AUC beside the clear one.  Prints the
processes it started and the rounds, and stops everything at the end (or on failure).  docs/flower.md.
"""
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mpc_auc.flower import local_deployment, stop_processes

APP = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
CLIENTS = 5


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def wait_port(port: int, procs: dict, timeout_s: float) -> None:
    """Until something listens on 127.0.0.1:port (the SuperLink's HTTP API)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            dead = [name for name, p in procs.items() if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                raise SystemExit(f"flower-demo: {', '.join(dead) or 'the SuperLink'} did not start") from None
            time.sleep(0.5)


def wait_for(path: Path, procs: dict, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        dead = [name for name, p in procs.items() if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            raise SystemExit(f"flower-demo: {', '.join(dead) or 'the run'} "
                             f"{'stopped early' if dead else 'took too long'}; logs in {path.parent}")
        time.sleep(1)


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="mpcauc-flower-demo-", dir=os.environ.get("TMPDIR")))
    procs, logs, stack = {}, work / "logs", contextlib.ExitStack()
    logs.mkdir()

    def start(name: str, argv: list, env=None):
        procs[name] = subprocess.Popen(argv, stdout=open(logs / f"{name}.log", "w"), stderr=subprocess.STDOUT,
                                       env=env, cwd=work)

    try:
        # mpc-auc: the deployment, the three parties (each client key: epsilon 2 at most) and five client keys
        parties = stack.enter_context(local_deployment(CLIENTS, work / "mpcauc", party_options=("--budget", "2")))
        procs.update({f"mpc-auc party {role}": proc for role, proc in parties.processes.items()})
        link = free_port()  # the SuperLink's one HTTP API: Fleet (SuperNodes), Control (flwr run) and Runtime
        home = work / "flwr-home"
        home.mkdir()
        (home / "config.toml").write_text(f'[superlink]\ndefault = "demo"\n\n[superlink.demo]\n'
                                          f'address = "127.0.0.1:{link}"\ninsecure = true\n')
        # the SuperLink and SuperNodes start Flower's own helper commands by name: this environment's first
        env = {**os.environ, "FLWR_HOME": str(home), "PATH": os.pathsep.join([str(BIN), os.environ.get("PATH", "")])}
        start("flower-superlink", [BIN / "flower-superlink", "--insecure", "--host", "127.0.0.1", "--port", str(link),
                                   "--disable-runtime-dependency-installation"],  # this environment has them
              env)
        wait_port(link, procs, 120)
        for p in range(CLIENTS):
            start(f"flower-supernode {p}", [BIN / "flower-supernode", "--insecure", "--superlink",
                                            f"127.0.0.1:{link}", "--port", str(free_port()), "--node-config",
                                            f"partition-id={p} num-partitions={CLIENTS}"], env)
        out = work / "rounds.json"
        overrides = (f"mpcauc-deployment='{parties.deployment}' mpcauc-keys='{parties.keys}' "
                     f"out='{out}' clients={CLIENTS}")
        time.sleep(5)  # the SuperNodes register with the SuperLink
        start("flwr run", [BIN / "flwr", "run", str(APP), "demo", "--run-config", overrides, "--stream"], env)
        wait_for(out, procs, 600)
        print("processes:")
        for name, proc in procs.items():
            print(f"  pid {proc.pid:>7}  {name}")
        for r in json.loads(out.read_text())["rounds"]:
            if r["private_auc"] is None:
                print(f"round {r['round']}: no private AUC released (see the logs), clear AUC {r['clear_auc']:.6f}")
                continue
            how = f"DP at epsilon {r['epsilon']:g}, 95% interval {r['interval'][0]:.3f} .. {r['interval'][1]:.3f}" \
                if r.get("epsilon") is not None else "exact"
            print(f"round {r['round']}: private global AUC (mpc-auc, {how}) {r['private_auc']:.6f}, "
                  f"clear AUC {r['clear_auc']:.6f}")
        print(f"logs: {logs}")
        return 0
    finally:
        stop_processes(procs)
        stack.close()


if __name__ == "__main__":
    sys.exit(main())
