"""Shaped-network benchmark: the exact AUC with P0, P1, the dealer and the organiser each in its own network
namespace, on links of a given rate and round-trip time, beside the model's prediction.

Topology (made and removed here; needs root and the kernel's network namespaces): five namespaces
``mab-P0``, ``mab-P1``, ``mab-dealer``, ``mab-org`` and the ``mab-hub`` between them.  Each role's
namespace is joined to the hub by a veth pair (MTU 9000), both ends shaped by ``tc ... tbf rate R`` (the
role's upload and its download).  The deployment names each role at the hub's end of its pair, where a
delaying relay of our own (sims/bench/delay_relay.py: netem is not in this kernel) forwards its connections to
the role, which listens on its own end (``mpc-auc party --listen``).  Every byte between two roles so
crosses the relay once and two shaped veths: one-way delay RTT/2, rate R.  TCP's slow start after idle
is off in every namespace (``net.ipv4.tcp_slow_start_after_idle=0``, as on hosts tuned for such
protocols); the links are the project's own (TLS 1.3 with pinned keys, then AES-GCM records).

Each run is ``mpc-auc --quiet run --deployment ...`` in the organiser's namespace against the three
``mpc-auc party`` processes, which stay up over all runs; they share this machine's cores, so each gets a
third of them as worker threads (``--threads``, as the roles of a local run), not all of them as a party on
a host of its own would.  Measured per row: the protocol time (P0's,
from the submissions to the results; the run's ``mpc_wall_s`` less the clients' sharing), the end-to-end
time of the command, P0's bytes and hops (the Lamport count of message hops on its critical path,
protocols.runtime.link.HopClock; a round trip is two).

Model, from the unshaped row of the same data (the relay at zero delay, no tbf):

    protocol(R, RTT) = protocol(unshaped) + B / R + H * RTT / 2

with H P0's hops and B the busiest direction of one role's link (the largest of each role's upload and
download in bytes, from the roles' meters): every role has its own shaped link, so the bytes of the
busiest one set the transfer time, and each hop waits one one-way delay.

Usage: python -m mpc_auc.sims.bench.net [--sizes M ...] [--dtypes D ...] [--rates R ...] [--rtts MS ...]
       [--doc FILE]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from ...circuits.workers import available_cores
from ...protocols.inputs.encoding import ScoreEncoder
from ..host import machine, wait_for_line
from .e2e import DTYPES, SIZES, dataset, reference_auc, write_doc

ROLES = ("P0", "P1", "dealer", "org")
SERVING = ROLES[:3]
HUB = "mab-hub"
PORT = 7000
RATES = {"10gbit": 10e9, "1gbit": 1e9, "100mbit": 100e6}
RTTS_MS = (0.2, 2.0, 40.0)
MARKERS = ("<!-- bench-net:start -->", "<!-- bench-net:end -->")
MB = 1e6


def namespace(role: str) -> str:
    return f"mab-{role}"


def _inside(role: str) -> list:
    return ["ip", "netns", "exec", namespace(role) if role != "hub" else HUB]


def _ip(*args) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def cannot_run() -> str:
    """Why the namespaces cannot be made here ('' when they can)."""
    if shutil.which("ip") is None or shutil.which("tc") is None:
        return "the ip and tc commands (iproute2) are missing"
    if os.geteuid() != 0:
        return "network namespaces need root (run as root, or in a container with CAP_NET_ADMIN)"
    probe = subprocess.run(["ip", "netns", "add", "mab-probe"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"ip netns add failed: {probe.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", "mab-probe"], capture_output=True)
    tbf = subprocess.run(["tc", "qdisc", "add", "dev", "lo", "root", "tbf", "rate", "1gbit", "burst", "64kb",
                          "latency", "50ms"], capture_output=True, text=True)
    subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"], capture_output=True)
    if tbf.returncode != 0:
        return f"tc's tbf qdisc is not available: {tbf.stderr.strip()}"
    return ""


class Topology:
    """The five namespaces and four veth pairs; ``shape`` sets every veth's rate (None: unshaped)."""

    def __enter__(self):
        self.close()
        for name in [HUB] + [namespace(r) for r in ROLES]:
            _ip("netns", "add", name)
            subprocess.run(["ip", "netns", "exec", name, "sysctl", "-q", "-w",
                            "net.ipv4.tcp_slow_start_after_idle=0"], check=True)
            _ip("-n", name, "link", "set", "lo", "up")
        for k, role in enumerate(ROLES):
            _ip("link", "add", f"mab{k}", "mtu", "9000", "type", "veth", "peer", "name", f"mab{k}r", "mtu", "9000")
            _ip("link", "set", f"mab{k}", "netns", HUB)
            _ip("link", "set", f"mab{k}r", "netns", namespace(role))
            _ip("-n", HUB, "addr", "add", f"10.201.{k}.1/24", "dev", f"mab{k}")
            _ip("-n", namespace(role), "addr", "add", f"10.201.{k}.2/24", "dev", f"mab{k}r")
            _ip("-n", HUB, "link", "set", f"mab{k}", "up")
            _ip("-n", namespace(role), "link", "set", f"mab{k}r", "up")
            _ip("-n", namespace(role), "route", "add", "default", "via", f"10.201.{k}.1")
        return self

    @staticmethod
    def public(role: str) -> str:
        """The address the deployment names for a role: the hub's end of its pair (the relay listens there)."""
        return f"10.201.{ROLES.index(role)}.1:{PORT}"

    @staticmethod
    def own(role: str) -> str:
        """The address the role listens on, in its namespace."""
        return f"10.201.{ROLES.index(role)}.2:{PORT}"

    def shape(self, rate: str = None) -> None:
        for k, role in enumerate(ROLES):
            for ns, dev in ((HUB, f"mab{k}"), (namespace(role), f"mab{k}r")):
                subprocess.run(["tc", "-n", ns, "qdisc", "del", "dev", dev, "root"], capture_output=True)
                if rate is not None:
                    burst = max(64_000, int(RATES[rate] / 8 / 250))  # 4 ms at the rate, at least 64 kB
                    subprocess.run(["tc", "-n", ns, "qdisc", "add", "dev", dev, "root", "tbf", "rate", rate,
                                    "burst", str(burst), "latency", "100ms"], check=True, capture_output=True)

    def close(self) -> None:
        for name in [HUB] + [namespace(r) for r in ROLES]:
            subprocess.run(["ip", "netns", "del", name], capture_output=True)

    def __exit__(self, *_):
        self.close()


class Roles:
    """The deployment, the three serving roles in their namespaces, and the relay in the hub."""

    def __init__(self, directory: str, timeout_s: float):
        self.directory, self.timeout_s = directory, timeout_s
        self.deployment = os.path.join(directory, "deployment.yaml")
        subprocess.run([sys.executable, "-m", "mpc_auc", "deploy", "init", "--dir", directory,
                        *(x for r in SERVING for x in (f"--{r.lower()}", Topology.public(r)))],
                       check=True, capture_output=True)
        threads = str(max(1, available_cores() // 3))  # the roles share this machine's cores, as in a local run
        self.parties = [self._start(r, [sys.executable, "-m", "mpc_auc", "--threads", threads, "party", "--role", r,
                                        "--deployment", self.deployment, "--key", os.path.join(directory, f"{r}.key"),
                                        "--listen", Topology.own(r), "--ledger", os.path.join(directory, "ledger"),
                                        "--timeout", str(timeout_s)], "serving until stopped")
                        for r in SERVING]
        self.relay = None

    def _start(self, role, command, ready: str, where: str = None):
        log = os.path.join(self.directory, f"{where or role}.log")
        with open(log, "w") as out:
            process = subprocess.Popen(_inside(where or role) + command, stdout=out, stderr=subprocess.STDOUT)
        wait_for_line(log, ready, process, 120)
        return process

    def relay_at(self, one_way_ms: float) -> None:
        self.stop_relay()
        pairs = [f"{Topology.public(r)}={Topology.own(r)}" for r in SERVING]
        self.relay = self._start("relay", [sys.executable, "-m", "mpc_auc.sims.bench.delay_relay", "--delay-ms",
                                           str(one_way_ms), *pairs], "route(s) listening", where="hub")

    def stop_relay(self) -> None:
        if self.relay is not None:
            self.relay.terminate()
            self.relay.wait(30)
            self.relay = None

    def run(self, path: str, dtype: str) -> dict:
        out = os.path.join(self.directory, f"result-{time.monotonic_ns()}.json")
        began = time.perf_counter()
        done = subprocess.run(_inside("org") + [sys.executable, "-m", "mpc_auc", "--quiet", "run", "--deployment",
                                                self.deployment, "--input", path, "--out", out, "--score-dtype",
                                                dtype, "--timeout", str(self.timeout_s)],
                              capture_output=True, text=True)
        total = time.perf_counter() - began
        if done.returncode != 0:
            raise SystemExit(f"mpc-auc run failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
        with open(out) as f:
            record = json.load(f)
        os.remove(out)
        return measured(record, total)

    def close(self) -> None:
        self.stop_relay()
        for process in self.parties:
            process.terminate()
        for process in self.parties:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()


def measured(record: dict, total: float) -> dict:
    """A run's figures: protocol and end-to-end seconds, P0's bytes and hops, the busiest link direction."""
    traffic = record["traffic"]
    dealer = {k.replace("_session_total", ""): v for k, v in traffic["dealer"].items()}
    sent = {"P0": traffic["P0"]["sent_to"], "P1": traffic["P1"]["sent_to"], "dealer": dealer["sent_to"]}
    upload = {role: sum(to.values()) for role, to in sent.items()}
    download = {role: sum(to.get(role, 0) for to in sent.values()) for role in sent}
    busiest = max([(v, f"{r} up") for r, v in upload.items()] + [(v, f"{r} down") for r, v in download.items()])
    return {"protocol": record["mpc_wall_s"] - record["sharing_s"], "total": total, "auc": record["auc"],
            "p0_bytes": traffic["P0"]["sent_bytes"], "hops": int(traffic["P0"]["hops"]), "busiest": busiest,
            "m": record["input_summary"]["M"]}


def predicted(base: dict, rate: float, rtt_ms: float, row: dict) -> float:
    """The model's protocol time on a link (module docstring)."""
    return base["protocol"] + row["busiest"][0] * 8 / rate + row["hops"] * rtt_ms / 2000


def table(rows) -> list:
    lines = ["| M | scores (key bits) | link | protocol s | model s | model / measured | end to end s "
             "| P0 sent MB | P0 B/score/key bit | P0 hops (round trips) | busiest direction MB |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        bits = ScoreEncoder(0.0, 1.0, r["dtype"]).key_bits
        model = f"{r['model']:.2f} | {r['model'] / r['protocol']:.2f}" if r["model"] is not None else "(base) | "
        lines.append(f"| {r['m']:,} | {r['dtype']} ({bits}) | {r['link']} | **{r['protocol']:.2f}** | {model} "
                     f"| {r['total']:.2f} | {r['p0_bytes'] / MB:.0f} | {r['p0_bytes'] / r['m'] / bits:.1f} "
                     f"| {r['hops']} ({r['hops'] / 2:.0f}) | {r['busiest'][0] / MB:.0f} ({r['busiest'][1]}) |")
    return lines


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="rows of each data set")
    parser.add_argument("--dtypes", nargs="+", choices=DTYPES, default=list(DTYPES), help="score precisions")
    parser.add_argument("--rates", nargs="+", choices=list(RATES), default=list(RATES), help="link rates (tc tbf)")
    parser.add_argument("--rtts", type=float, nargs="+", default=list(RTTS_MS), help="round-trip times in ms")
    parser.add_argument("--data", help="directory for the generated CSV files (default: a temporary one)")
    parser.add_argument("--timeout", type=float, default=120.0, help="the roles' silence limit (mpc-auc --timeout)")
    parser.add_argument("--doc", help="write the results into this markdown file, between the bench-net markers")
    args = parser.parse_args(argv)
    why = cannot_run()
    if why:
        print(f"bench-net skipped: {why}", flush=True)
        return 0
    print(f"machine: {machine()}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp, Topology() as topology:
        roles = Roles(os.path.join(tmp, "deployment"), args.timeout)
        try:
            for dtype, m in ((d, m) for d in args.dtypes for m in sorted(args.sizes)):
                path = dataset(args.data or tmp, m, dtype)
                reference = reference_auc(path)
                base = None
                for rate, rtt in [(None, 0.0)] + [(r, t) for r in args.rates for t in args.rtts]:
                    topology.shape(rate)
                    roles.relay_at(rtt / 2)
                    row = dict(roles.run(path, dtype), dtype=dtype, link=f"{rate}, {rtt:g} ms" if rate else
                               "unshaped, relay at 0 ms")
                    if abs(row["auc"] - reference) > 1e-12:
                        raise SystemExit(f"the AUC {row['auc']} differs from scikit-learn's {reference}")
                    base = base or row
                    row["model"] = predicted(base, RATES[rate], rtt, row) if rate else None
                    rows.append(row)
                    print(table([row])[-1], flush=True)
        finally:
            roles.close()
    lines = table(rows)
    print("\n".join(lines))
    if args.doc:
        write_doc(args.doc, lines, argv, MARKERS, "net", "make bench-net")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
