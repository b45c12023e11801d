"""The links between roles: TLS 1.3 with pinned certificates, then sealed records; a capture shows ciphertext only.

A recording TCP proxy sits in front of P0 (the deployment P1, the dealer
and the coordinator use points at the proxy; P0 listens on its real
address).  Every byte to and from P0 is recorded and parsed as TLS records
followed by the link's sealed records.  The session computes a Beaver
product of known shares with the dealer's keys; none of those values, nor
the keys, may appear in the capture.  A flipped or replayed record in
transit must stop the run with an integrity error, and a role presenting a
key the deployment does not pin must be refused.  The record layer itself
(protocols.runtime.records: Sealer, Opener) is tested on a socket pair: every
change, replay, reordering or splice of records is refused, and a variant
that reuses its nonce lets an observer read a record it did not know.
"""
import multiprocessing as mp
import secrets
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from mpc_auc.protocols.inputs import sharing
from mpc_auc.protocols.runtime.deployment import Deployment
from mpc_auc.protocols.errors import ChannelIntegrityError, PartyFailure
from mpc_auc.protocols.runtime.identity import COORDINATOR, ROLES, SERVING, Identity
from mpc_auc.protocols.runtime.link import dial, free_port, split_address
from mpc_auc.protocols.runtime.listener import Listener
from mpc_auc.protocols.runtime.records import (DATA, FRAME, RECORD, SEAL_LIMIT, SEALED, Incoming, Malformed, Opener,
                                               Sealer)
from mpc_auc.protocols.runtime.control import target_name
from mpc_auc.protocols.runtime.session import ROLES_MODULE, Placement, Session
from mpc_auc.protocols.services import RANKING
from mpc_auc.sims.security.capture import (APPLICATION_DATA, CHANGE_CIPHER_SPEC, HANDSHAKE, NotTls, RecordingProxy,
                                  carries_window, records)
from cryptography.exceptions import InvalidTag

# ----------------------------------------------------------- the roles

def _beaver_target(ctx):
    from mpc_auc.circuits.shares import from_share, reveal_int, share_of

    x = from_share(ctx.recv("job"))  # this party's share, from the coordinator
    product = x * x
    return {"dealer key": ctx.stream_key, "product share": share_of(product).copy(),
            "product": reveal_int(product).numpy()}


def _role_main(role, key_path, deployment, timeout_s, listening):
    from mpc_auc.protocols.runtime.roles import prepare_process, serve

    identity = Identity.load(key_path)
    prepare_process()
    listener = Listener(identity, deployment, timeout_s)
    listening.set()
    serve(identity, deployment, listener, {target_name(_beaver_target): _beaver_target}, once=True)


@pytest.fixture
def keys(tmp_path):
    identities = {role: Identity(role) for role in ROLES}
    for role, identity in identities.items():
        identity.save(str(tmp_path / f"{role}.key"))
    addresses = {role: f"127.0.0.2:{free_port('127.0.0.2')}" for role in SERVING}
    return tmp_path, identities, addresses


STARTUP_S = 300  # a bound on a role process's start, not a timing: the run's own timeouts start once all listen


def _run(keys, tamper_record=None, impostor=None, replay_record=None):
    """Three role processes, P0 behind the recording proxy; the coordinator here runs the Beaver target.

    Returns (proxy, the parties' results or the PartyFailure, x and its shares).
    """
    directory, identities, addresses = keys
    publics = {r: i.public for r, i in identities.items()}
    proxy = RecordingProxy(split_address(addresses["P0"]), "127.0.0.5", tamper_record, replay_record)
    proxied = Deployment(publics, {**addresses, "P0": f"{proxy.address[0]}:{proxy.address[1]}"})
    if impostor:  # this role runs with a key the deployment does not pin
        Identity(impostor).save(str(directory / f"{impostor}.impostor.key"))
    context = mp.get_context("forkserver")  # forked from the server the local roles use: CrypTen loaded once
    context.set_forkserver_preload([ROLES_MODULE, RANKING.module])  # as LocalRoles' first start would preload
    procs, listening = [], []
    for role in SERVING:
        key = directory / (f"{role}.impostor.key" if role == impostor else f"{role}.key")
        deployment = Deployment(publics, addresses) if role == "P0" else proxied
        listening.append(context.Event())
        procs.append(context.Process(target=_role_main, args=(role, str(key), deployment, 10.0, listening[-1]),
                                     daemon=True))
        procs[-1].start()
    for role, event in zip(SERVING, listening):  # a loaded machine starts processes slowly: wait for the state
        assert event.wait(STARTUP_S), f"{role} did not start listening within {STARTUP_S} s"
    x = np.arange(1, 4097, dtype=np.int64) * 1_000_003
    shares = sharing.split(x)
    outcome = None
    try:
        with Session(_beaver_target, provider="TTP", timeout_s=10.0,
                     placement=Placement(deployment=proxied, identity=identities[COORDINATOR])) as session:
            for role, share in zip(("P0", "P1"), shares):
                session.send(role, "job", share)
            outcome = [session.recv(role, "done") for role in ("P0", "P1")]
    except PartyFailure as failure:
        outcome = failure
    finally:
        for proc in procs:  # after a failure a role may wait out its 10 s for a coordinator that never connects
            proc.join(0 if isinstance(outcome, PartyFailure) else 15)
            if proc.is_alive():
                proc.kill()
                proc.join()
        proxy.close()
    return proxy, outcome, x, shares


def _leaks(stream: bytes, secrets_known) -> bool:
    return any(carries_window(stream, secret) for secret in secrets_known)


def test_control_the_capture_checks_catch_a_plaintext_channel():
    sink = socket.create_server(("127.0.0.5", 0))
    proxy = RecordingProxy(sink.getsockname(), "127.0.0.5")
    share = b"shares:" + sharing.split(np.arange(512, dtype=np.int64))[1].tobytes()
    with socket.create_connection(proxy.address) as plain:  # a deliberately weakened link: no TLS
        plain.sendall(share)
        receiver, _ = sink.accept()
        received = b""
        while len(received) < len(share):
            received += receiver.recv(65536)
        receiver.close()
    proxy.close()
    sink.close()
    captured = bytes(proxy.streams[0][0])
    assert _leaks(captured, [share])
    with pytest.raises(NotTls, match="starts no TLS or sealed record"):
        records(captured)


def test_the_capture_keeps_what_one_side_sends_after_the_other_side_has_finished():
    """A role that stops sending (its half of the link ends) must not cut the capture of the other
    direction: the observer's record of the bytes still on their way stays whole."""
    sink = socket.create_server(("127.0.0.5", 0))
    proxy = RecordingProxy(sink.getsockname(), "127.0.0.5")
    late = secrets.token_bytes(200_000)
    with socket.create_connection(proxy.address) as client:
        receiver, _ = sink.accept()
        receiver.sendall(b"bye")
        receiver.shutdown(socket.SHUT_WR)  # the role is done sending; it still reads
        assert client.recv(16) == b"bye" and client.recv(16) == b""
        client.sendall(late)
        client.shutdown(socket.SHUT_WR)
        received = b""
        while chunk := receiver.recv(65536):
            received += chunk
        receiver.close()
    proxy.close()
    sink.close()
    assert received == late and bytes(proxy.streams[0][0]) == late


def test_capture_holds_tls_records_only_and_no_secret(keys):
    proxy, outcome, x, shares = _run(keys)
    assert not isinstance(outcome, PartyFailure), outcome
    assert all(np.array_equal(o["product"], x * x) for o in outcome)  # the run computed through the proxy
    assert len(proxy.streams) == 3  # the coordinator's, P1's and the dealer's links to P0
    secrets_known = [o["dealer key"] for o in outcome] + [s.tobytes() for s in shares]
    secrets_known += [o["product share"].tobytes() for o in outcome] + [(x * x).tobytes(), x.tobytes()]
    sealed = 0
    for up, down in proxy.streams:
        for stream in (up, down):
            seen = records(bytes(stream))
            kinds = [kind for kind, _ in seen]
            assert kinds[0] == HANDSHAKE  # ClientHello / ServerHello in the clear ...
            assert set(kinds[2:]) <= {APPLICATION_DATA, CHANGE_CIPHER_SPEC, SEALED}  # ... then only ciphertext
            assert sum(k == APPLICATION_DATA for k in kinds) >= 2  # the encrypted handshake and the key
            assert SEALED in kinds  # the frames themselves travel in sealed records
            sealed += sum(length for kind, length in seen if kind == SEALED)
            assert not _leaks(bytes(stream), secrets_known), "a secret crossed the wire in the clear"
    assert sealed > x.nbytes * 4  # shares did travel, in sealed records


def test_a_flipped_byte_stops_the_run_with_an_integrity_error(keys):
    _, outcome, _, _ = _run(keys, tamper_record=6)
    assert isinstance(outcome, PartyFailure)
    assert "integrity failure on channel" in str(outcome)
    assert "P0<->" in str(outcome) or "<->P0" in str(outcome)


def test_a_replayed_record_stops_the_run_with_an_integrity_error(keys):
    proxy, outcome, _, _ = _run(keys, replay_record=8)
    assert [kind for kind, _ in records(bytes(proxy.streams[0][0]))][:9].count(SEALED) >= 2  # a sealed one
    assert isinstance(outcome, PartyFailure)
    assert "integrity failure on channel" in str(outcome)


def test_a_role_with_an_unpinned_key_is_refused(keys):
    _, outcome, _, _ = _run(keys, impostor="P1")
    assert isinstance(outcome, PartyFailure)
    assert outcome.role == "P1"
    assert "integrity failure" in str(outcome) or "certificate" in str(outcome)


# ------------------------------------------------- single links, in process

def test_listener_refuses_an_unpinned_dialer_and_a_dialer_refuses_a_wrong_listener(keys):
    _, identities, addresses = keys
    deployment = Deployment({r: i.public for r, i in identities.items()}, addresses)
    listener = Listener(identities["P0"], deployment, 5.0)
    try:
        with pytest.raises(ChannelIntegrityError, match="P1<->P0.*UNKNOWN_CA"):  # P0's alert, at once or on use
            dial(Identity("P1"), deployment, "P0", {"purpose": "mesh", "session": "s"}, 5.0).recv(1)
        assert listener.take(lambda h: True, 1.0) is None
        assert any("certificate" in why or "CERTIFICATE" in why for why in listener.refused)
    finally:
        listener.close()
    impostor = Listener(Identity("P0"), deployment, 5.0)  # answers at P0's address with another key
    try:
        with pytest.raises(ChannelIntegrityError, match="handshake refused"):
            dial(identities["P1"], deployment, "P0", {"purpose": "mesh", "session": "s"}, 5.0)
    finally:
        impostor.close()


# ------------------------------------------------- the sealed record layer, on a socket pair

def _sealed(sealer, frames) -> list:
    """The wire records (clear header + ciphertext) of ``frames`` ((channel, payload)), as a link sends them."""
    out = []
    for channel, payload in frames:
        out.append(b"".join(sealer.seal(FRAME.pack(DATA, channel, 0, len(payload)))))
        view = memoryview(payload)
        for at in range(0, len(payload), RECORD):
            out.append(b"".join(sealer.seal(view[at:at + RECORD])))
    return out


def _opened(key: bytes, wire: list, pending: bytes = b"") -> list:
    """What a link's receiving side makes of ``wire`` under the peer key ``key``: its (channel, payload)s."""
    ours, theirs = socket.socketpair()

    def write():
        ours.sendall(b"".join(wire))
        ours.shutdown(socket.SHUT_WR)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        incoming, got = Incoming(Opener(key), pending), []
        with pytest.raises(ConnectionResetError):  # every record read, then the end of the stream
            while True:
                frame = incoming.step(theirs)
                if frame is not None:
                    got.append((frame[1], bytes(frame[3])))
    finally:
        theirs.close()
        writer.join(5)
        ours.close()
    return got


def test_sealed_records_carry_frames_of_every_size_in_order():
    key = secrets.token_bytes(32)
    frames = [(1, b""), (2, secrets.token_bytes(100)), (3, secrets.token_bytes(2 * RECORD + 5)),
              (4, secrets.token_bytes(RECORD))]
    wire = _sealed(Sealer(key), frames)
    assert _opened(key, wire) == frames
    assert _opened(key, wire[3:], b"".join(wire[:3])) == frames  # bytes the key exchange read ahead come first
    assert all(record[0] == SEALED for record in wire)


@pytest.mark.parametrize("change", ["flip a byte", "flip the length", "replay", "reorder", "drop",
                                    "another link's record", "another key"])
def test_every_change_to_the_records_is_refused(change):
    key = secrets.token_bytes(32)
    frames = [(1, secrets.token_bytes(300)), (1, secrets.token_bytes(300)), (2, secrets.token_bytes(300))]
    wire = _sealed(Sealer(key), frames)
    if change == "flip a byte":
        wire[1] = wire[1][:40] + bytes([wire[1][40] ^ 1]) + wire[1][41:]
    elif change == "flip the length":
        wire[1] = wire[1][:4] + bytes([wire[1][4] ^ 1]) + wire[1][5:]
    elif change == "replay":
        wire.insert(2, wire[0])
    elif change == "reorder":
        wire[0:2], wire[2:4] = wire[2:4], wire[0:2]
    elif change == "drop":
        del wire[2:4]
    elif change == "another link's record":  # same frames, sealed under the other link's fresh key
        wire[2] = _sealed(Sealer(secrets.token_bytes(32)), frames)[2]
    else:
        key = secrets.token_bytes(32)
    with pytest.raises(Malformed if change == "flip the length" else InvalidTag):
        _opened(key, wire)


class _NonceReusingSealer(Sealer):
    """A deliberately weakened record layer: every record under the same nonce."""

    def seal(self, plaintext):
        self._count = 0
        return super().seal(plaintext)


@pytest.mark.parametrize("sealer, readable", [(Sealer, False), (_NonceReusingSealer, True)])
def test_an_observer_reads_a_record_only_if_the_nonce_repeats(sealer, readable):
    """AES-GCM is a stream cipher: two records under one (key, nonce) XOR to their plaintexts' XOR.  The
    observer knows the first frame's header (a HELLO of known length) and so reads the second's."""
    source = sealer(secrets.token_bytes(32))
    known, unknown = FRAME.pack(DATA, 250, 0, 37), FRAME.pack(DATA, 3, 0, 458_407 * 16)
    first, second = (source.seal(header)[1] for header in (known, unknown))
    guess = bytes(a ^ b ^ c for a, b, c in zip(first, second, known))
    assert (guess == unknown) is readable


def test_a_key_seals_no_more_than_its_limit():
    sealer = Sealer(secrets.token_bytes(32))
    sealer.seal(b"x" * 100)
    sealer.sealed = SEAL_LIMIT - 100
    sealer.seal(b"x" * 100)  # exactly at the limit
    with pytest.raises(ValueError, match="under one key"):
        sealer.seal(b"x")


def test_a_party_behind_a_delaying_relay_listens_on_its_own_address(keys):
    """``mpc-auc party --listen``: P0 listens on its own address while P1 dials the deployment's, where
    sims.bench.delay_relay forwards with 25 ms each way (the shaped-network benchmark's set-up).  The pinned keys
    still authenticate the link, a round trip takes at least the two delays, and the hop clock counts both
    messages of the chain."""
    from mpc_auc.protocols.runtime.link import HOPS

    _, identities, addresses = keys
    deployment = Deployment({r: i.public for r, i in identities.items()}, addresses)
    own = f"127.0.0.3:{free_port('127.0.0.3')}"
    relay = subprocess.Popen([sys.executable, "-m", "mpc_auc.sims.bench.delay_relay", "--delay-ms", "25",
                              f"{addresses['P0']}={own}"], stderr=subprocess.PIPE, text=True)
    try:
        assert "listening" in relay.stderr.readline()  # the relay's routes are bound
        listener = Listener(identities["P0"], deployment, 10.0, listen=own)
        link = dial(identities["P1"], deployment, "P0", {"purpose": "relay test"}, 10.0)
        _, accepted = listener.take(lambda hello: hello.get("purpose") == "relay test", 10.0)
        payload, hops = secrets.token_bytes(4096), HOPS.value
        began = time.perf_counter()
        link.send(1, payload)
        accepted.send(1, accepted.recv(1))
        back = link.recv(1)
        elapsed = time.perf_counter() - began
        assert bytes(back) == payload and elapsed >= 0.05
        assert HOPS.value == hops + 2
        link.close()
        listener.close()
    finally:
        relay.kill()
        relay.wait()
