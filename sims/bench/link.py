"""Moving bytes between two roles: the link's sealed records against Python's TLS 1.3 record loop.

Two processes on loopback pass ``--messages`` messages of ``--mb`` MiB back and forth (P1 sends one, P0
reads it and sends its own, P1 reads that), first over ``protocols.runtime.link`` (TLS 1.3 handshake
with pinned certificates, then AES-256-GCM records of 1 MiB), then over a plain ``ssl`` socket with the
same certificates (16 KiB TLS records, the link's transport before the speed-up release).  Prints wall seconds, GB/s
per direction and each process's CPU seconds per GB moved (sent plus received).

    python -m mpc_auc.sims.bench.link [--messages 40] [--mb 12]
"""
import argparse
import multiprocessing as mp
import os
import platform
import resource
import socket
import tempfile
import time

import numpy as np

from ...protocols.runtime.deployment import Deployment
from ...protocols.runtime.identity import Identity
from ...protocols.runtime.link import dial, free_port, split_address
from ...protocols.runtime.listener import Listener

ROLES = ("P0", "P1")


def _sealed_link(role, identity, deployment):
    """Both ends of a real link: P1 dials, P0's listener admits it."""
    if role == "P1":
        return dial(identity, deployment, "P0", {"purpose": "bench"}, 30.0)
    listener = Listener(identity, deployment, 30.0)
    _, link = listener.take(lambda hello: True, 30.0)
    return link


class _TlsSocket:
    """The baseline: a blocking TLS 1.3 socket with the same pinned certificates."""

    def __init__(self, role, identity, deployment):
        peer = "P1" if role == "P0" else "P0"
        context = identity.tls_context(server=role == "P0", trusted=[deployment.public(peer)])
        host, port = split_address(deployment.address("P0"))
        if role == "P0":
            with socket.create_server((host, port)) as server:
                raw, _ = server.accept()
        else:
            raw = _connect(host, port)
        self.sock = context.wrap_socket(raw, server_side=role == "P0")

    def send(self, _channel, payload):
        self.sock.sendall(payload)

    def recv(self, _channel, size):
        out = np.empty(size, dtype=np.uint8)
        view, got = memoryview(out), 0
        while got < len(out):
            got += self.sock.recv_into(view[got:], len(out) - got)
        return out


def _connect(host, port, limit_s: float = 30.0):
    deadline = time.monotonic() + limit_s
    while True:
        try:
            return socket.create_connection((host, port))
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _role(kind, role, key_path, deployment, messages, size, results):
    identity = Identity.load(key_path)
    sealed = kind == "sealed"
    link = _sealed_link(role, identity, deployment) if sealed else _TlsSocket(role, identity, deployment)
    payload = np.frombuffer(os.urandom(size), dtype=np.uint8)
    before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    for turn in range(2 * messages):
        if (turn % 2 == 0) == (role == "P1"):
            link.send(1, payload)
        elif len(link.recv(1) if sealed else link.recv(1, size)) != size:
            raise RuntimeError("a message arrived short")
    wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF)
    results.put((role, wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime))
    time.sleep(0.5)  # the peer's last message is read before this end goes


def measure(kind: str, messages: int, size: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="mpc-auc-bench-link-") as directory:
        identities = {role: Identity(role) for role in ROLES}
        for role, identity in identities.items():
            identity.save(os.path.join(directory, f"{role}.key"))
        deployment = Deployment({r: i.public for r, i in identities.items()},
                                {r: f"127.0.0.1:{free_port()}" for r in ROLES})
        context = mp.get_context("spawn")
        results = context.Queue()
        procs = [context.Process(target=_role, args=(kind, role, os.path.join(directory, f"{role}.key"),
                                                     deployment, messages, size, results)) for role in ROLES]
        for proc in procs:
            proc.start()
        got = dict((role, (wall, cpu)) for role, wall, cpu in (results.get(timeout=300) for _ in ROLES))
        for proc in procs:
            proc.join(30)
    moved_gb = 2 * messages * size / 1e9  # sent and received by each end
    wall = max(w for w, _ in got.values())
    return {"kind": kind, "wall_s": wall, "gb_s": moved_gb / wall,
            "cpu_s_per_gb": {role: cpu / moved_gb for role, (_, cpu) in got.items()}}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=40, help="messages each end sends")
    parser.add_argument("--mb", type=int, default=12, help="MiB per message")
    args = parser.parse_args(argv)
    size = args.mb << 20
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, {platform.platform()}")
    print(f"{args.messages} messages of {args.mb} MiB each way, back and forth")
    print("| transport | wall s | GB/s | CPU s per GB moved (P0 / P1) |")
    print("|---|---|---|---|")
    rows = [measure(kind, args.messages, size) for kind in ("sealed", "tls")]
    for row in rows:
        cpu = row["cpu_s_per_gb"]
        print(f"| {row['kind']} | {row['wall_s']:.2f} | {row['gb_s']:.2f} | {cpu['P0']:.2f} / {cpu['P1']:.2f} |")
    sealed, tls = rows
    print(f"sealed records: {tls['wall_s'] / sealed['wall_s']:.2f}x less wall, "
          f"{sum(tls['cpu_s_per_gb'].values()) / sum(sealed['cpu_s_per_gb'].values()):.2f}x less CPU per GB")


if __name__ == "__main__":
    main()
