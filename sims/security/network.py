"""The network observer: real role processes over their secure links, every link to P0 and P1 captured
(sims.security.capture).

P0, P1 and the dealer run as processes serving sessions (as ``mpc-auc
party`` does); the coordinator relays the simulated clients' submissions.
Recording proxies stand in front of P0 and P1, so the capture holds the
coordinator's, the dealer's and the P0-P1 links: everything but the
coordinator-dealer control link.
"""
import multiprocessing as mp
import os
import secrets
import socket
import tempfile
import time
from collections import Counter

import numpy as np

from ...protocols.mpc.exact import exact_result
from ...protocols.mpc.ranking_job import run_ranking_jobs
from ...protocols.runtime.control import target_name
from ...protocols.runtime.deployment import Deployment
from ...protocols.runtime.identity import COMPUTE, COORDINATOR, ROLES, SERVING, Identity
from ...protocols.runtime.ledger import LedgerPlace
from ...protocols.runtime.link import Link, free_port, split_address
from ...protocols.runtime.listener import Listener
from ...protocols.runtime.records import HEADER_RECORD, SEAL_HEADER, SEALED, TAG_BYTES, Opener, Sealer
from ...protocols.runtime.roles import prepare_process, serve
from ...protocols.runtime.session import Placement
from .capture import NotTls, RecordingProxy, carries_window, records
from .view_parties import recording_party

TIMING_RECORD = HEADER_RECORD  # a sealed record of one bare frame header: the heartbeats, sent when a link is
# quiet, so their number follows timing, not data (every message's header record has this length too)


def _serve(role: str, key_path: str, deployment: Deployment, ledger: str, timeout_s: float) -> None:

    def recorded(ctx, *args):  # the real loop, recorded; the record goes to a file, not over the links
        jobs = recording_party(ctx, *args)
        material = {f"job{j}-dealer-key": np.frombuffer(job["dealer key"], dtype=np.uint8) for j, job in
                    enumerate(jobs)}
        material.update({f"job{j}-share{k}": share for j, job in enumerate(jobs)
                         for k, share in enumerate(job["input shares"])})
        np.savez(os.path.join(os.path.dirname(ledger), f"{role}-material.npz"), **material)

    identity = Identity.load(key_path)
    prepare_process()
    serve(identity, deployment, Listener(identity, deployment, timeout_s),
          {target_name(recording_party): recorded}, ledger=LedgerPlace(ledger))


def captured_jobs(requests, timeout_s: float = 60.0) -> list:
    """Run each request (protocols.mpc.exact.Request) as its own mpc-exact session of the parties' real loop,
    recorded (sims.security.view_parties.recording_party); per request (captured streams, key material): the streams
    [(party behind the proxy, bytes towards it, bytes from it)], and the byte strings the observer must not
    find: both parties' dealer keys and the input shares they opened."""

    with tempfile.TemporaryDirectory(prefix="mpc-auc-observer-") as directory:
        identities = {role: Identity(role) for role in ROLES}
        for role, identity in identities.items():
            identity.save(os.path.join(directory, f"{role}.key"))
        publics = {role: identity.public for role, identity in identities.items()}
        addresses = {role: f"127.0.0.1:{free_port('127.0.0.1')}" for role in SERVING}
        proxies = {party: RecordingProxy(split_address(addresses[party])) for party in COMPUTE}

        def seen_by(role):  # every role reaches P0 and P1 through their proxies; a party listens on its own
            return Deployment(publics, {**addresses, **{p: x.endpoint for p, x in proxies.items() if p != role}})

        context = mp.get_context("spawn")
        procs = [context.Process(target=_serve, daemon=True, args=(
            role, os.path.join(directory, f"{role}.key"), seen_by(role), os.path.join(directory, "ledger"),
            timeout_s)) for role in SERVING]
        for proc in procs:
            proc.start()
        placement = Placement(deployment=seen_by(COORDINATOR), identity=identities[COORDINATOR])
        out = []
        try:
            for request in requests:
                before = {party: len(proxy.streams) for party, proxy in proxies.items()}
                run = run_ranking_jobs([request], "radix", False, None, placement, timeout_s, None,
                                       party=recording_party)[0]
                exact_result(run, "radix")  # the job computed through the proxies
                _settle(proxies)
                material = []
                for party in COMPUTE:  # written by the party at the session's end (_serve)
                    with np.load(os.path.join(directory, f"{party}-material.npz")) as saved:
                        material += [saved[name].tobytes() for name in saved.files]
                out.append(([(party, bytes(up), bytes(down)) for party, proxy in proxies.items()
                             for up, down in proxy.streams[before[party]:]], material))
        finally:
            for proc in procs:
                proc.terminate()
                proc.join(10)
            for proxy in proxies.values():
                proxy.close()
    return out


def _settle(proxies, quiet_s: float = 0.5, limit_s: float = 10.0) -> None:
    """Wait until the proxies have forwarded the session's last bytes (no growth for ``quiet_s``)."""
    def size():
        return sum(len(u) + len(d) for proxy in proxies.values() for u, d in proxy.streams)

    deadline, last = time.monotonic() + limit_s, -1
    while (now := size()) != last and time.monotonic() < deadline:
        last = now
        time.sleep(quiet_s)


def observer_view(streams) -> Counter:
    """What the observer sees of one session: how often each (party, direction, record type, length) occurs."""
    return Counter((party, direction, kind, length) for party, up, down in streams
                   for direction, stream in (("to", up), ("from", down)) for kind, length in records(stream))


def differences(view_a: Counter, view_b: Counter) -> tuple:
    """(records of other lengths in one view and not the other, heartbeat-sized records that differ)."""
    diff = (view_a - view_b) + (view_b - view_a)
    timing = sum(n for (_, _, _, length), n in diff.items() if length == TIMING_RECORD)
    return sum(diff.values()) - timing, timing


def exposure(streams, hidden) -> tuple:
    """(bytes of ``streams`` outside well-formed TLS and sealed records, (stream, secret) pairs showing a secret window)."""
    outside = 0
    for stream in streams:
        try:
            records(stream)
        except NotTls:
            outside += len(stream)
    return outside, sum(carries_window(stream, secret) for stream in streams for secret in hidden)


class _PlainSealer(Sealer):
    """A deliberately weakened sealer (a control): the project's record framing, the plaintext in place of
    the AES-GCM ciphertext, a zero tag."""

    def seal(self, plaintext) -> tuple:
        return SEAL_HEADER.pack(SEALED, len(plaintext) + TAG_BYTES), bytes(plaintext) + bytes(TAG_BYTES)


class _PlainOpener(Opener):
    def open_into(self, header, ciphertext, out) -> None:
        out[:] = ciphertext[:len(ciphertext) - TAG_BYTES]


def weakened_link(payload: bytes) -> bytes:
    """The control: ``payload`` sent over two of the project's links (protocols.runtime.link.Link) whose
    sealing is weakened to the identity, through the same recording proxy; the capture towards the receiver."""
    sink = socket.create_server(("127.0.0.1", 0))
    proxy = RecordingProxy(sink.getsockname())
    key = secrets.token_bytes(32)
    try:
        sender = socket.create_connection(proxy.address)
        receiver, _ = sink.accept()
        ends = [Link(sock, (_PlainSealer(key), _PlainOpener(key), b""), me, peer, 10.0)
                for sock, me, peer in ((sender, "P0", "P1"), (receiver, "P1", "P0"))]
        ends[0].send(1, payload)
        ends[1].recv(1, "the control's payload")
        for end in ends:
            end.close(flush_s=1.0)
        _settle({"sink": proxy})
    finally:
        proxy.close()
        sink.close()
    return bytes(proxy.streams[0][0])
