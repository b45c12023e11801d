"""The links between roles: TLS 1.3 with pinned certificates; a capture shows ciphertext only.

A recording TCP proxy sits in front of P0 (the deployment P1, the dealer
and the coordinator use points at the proxy; P0 listens on its real
address).  Every byte to and from P0 is recorded and parsed as TLS records.
The session computes a Beaver product of known shares with the dealer's
keys; none of those values, nor the keys, may appear in the capture.  A
flipped byte in transit must stop the run with an integrity error, and a
role presenting a key the deployment does not pin must be refused.
"""
import multiprocessing as mp
import socket

import numpy as np
import pytest

from mpc_auc.protocols.inputs import sharing
from mpc_auc.protocols.runtime.deployment import Deployment
from mpc_auc.protocols.errors import ChannelIntegrityError, PartyFailure
from mpc_auc.protocols.runtime.identity import COORDINATOR, ROLES, SERVING, Identity
from mpc_auc.protocols.runtime.link import Listener, dial, free_port, split_address
from mpc_auc.protocols.runtime.roles import target_name
from mpc_auc.protocols.runtime.session import Placement, Session
from mpc_auc.sims.capture import (APPLICATION_DATA, CHANGE_CIPHER_SPEC, HANDSHAKE, NotTls, RecordingProxy,
                                  carries_window, records)

# ----------------------------------------------------------- the roles

def _beaver_target(ctx):
    from mpc_auc.circuits.shares import from_share, reveal_int, share_of

    x = from_share(ctx.recv("job"))  # this party's share, from the coordinator
    product = x * x
    return {"dealer key": ctx.stream_key, "product share": share_of(product).copy(),
            "product": reveal_int(product).numpy()}


def _role_main(role, key_path, deployment, timeout_s):
    from mpc_auc.protocols.runtime.roles import prepare_process, serve

    identity = Identity.load(key_path)
    prepare_process()
    serve(identity, deployment, Listener(identity, deployment, timeout_s),
          {target_name(_beaver_target): _beaver_target}, once=True)


@pytest.fixture
def keys(tmp_path):
    identities = {role: Identity(role) for role in ROLES}
    for role, identity in identities.items():
        identity.save(str(tmp_path / f"{role}.key"))
    addresses = {role: f"127.0.0.2:{free_port('127.0.0.2')}" for role in SERVING}
    return tmp_path, identities, addresses


def _run(keys, tamper_record=None, impostor=None):
    """Three role processes, P0 behind the recording proxy; the coordinator here runs the Beaver target.

    Returns (proxy, the parties' results or the PartyFailure, x and its shares).
    """
    directory, identities, addresses = keys
    publics = {r: i.public for r, i in identities.items()}
    proxy = RecordingProxy(split_address(addresses["P0"]), "127.0.0.5", tamper_record)
    proxied = Deployment(publics, {**addresses, "P0": f"{proxy.address[0]}:{proxy.address[1]}"})
    if impostor:  # this role runs with a key the deployment does not pin
        Identity(impostor).save(str(directory / f"{impostor}.impostor.key"))
    context = mp.get_context("spawn")
    procs = []
    for role in SERVING:
        key = directory / (f"{role}.impostor.key" if role == impostor else f"{role}.key")
        deployment = Deployment(publics, addresses) if role == "P0" else proxied
        procs.append(context.Process(target=_role_main, args=(role, str(key), deployment, 10.0), daemon=True))
        procs[-1].start()
    x = np.arange(1, 4097, dtype=np.int64) * 1_000_003
    shares = sharing.split(x)
    try:
        with Session(_beaver_target, provider="TTP", timeout_s=10.0,
                     placement=Placement(deployment=proxied, identity=identities[COORDINATOR])) as session:
            for role, share in zip(("P0", "P1"), shares):
                session.send(role, "job", share)
            outcome = [session.recv(role, "done") for role in ("P0", "P1")]
    except PartyFailure as failure:
        outcome = failure
    finally:
        for proc in procs:
            proc.join(15)
            if proc.is_alive():
                proc.kill()
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
    with pytest.raises(NotTls, match="starts no TLS record"):
        records(captured)


def test_capture_holds_tls_records_only_and_no_secret(keys):
    proxy, outcome, x, shares = _run(keys)
    assert not isinstance(outcome, PartyFailure), outcome
    assert all(np.array_equal(o["product"], x * x) for o in outcome)  # the run computed through the proxy
    assert len(proxy.streams) == 3  # the coordinator's, P1's and the dealer's links to P0
    secrets_known = [o["dealer key"] for o in outcome] + [s.tobytes() for s in shares]
    secrets_known += [o["product share"].tobytes() for o in outcome] + [(x * x).tobytes(), x.tobytes()]
    for up, down in proxy.streams:
        for stream in (up, down):
            kinds = [kind for kind, _ in records(bytes(stream))]
            assert kinds[0] == HANDSHAKE  # ClientHello / ServerHello in the clear ...
            assert set(kinds[2:]) <= {APPLICATION_DATA, CHANGE_CIPHER_SPEC}  # ... then only ciphertext
            assert sum(k == APPLICATION_DATA for k in kinds) >= 2
            assert not _leaks(bytes(stream), secrets_known), "a secret crossed the wire in the clear"
    assert sum(len(u) + len(d) for u, d in proxy.streams) > x.nbytes * 4  # shares did travel (encrypted)


def test_a_flipped_byte_stops_the_run_with_an_integrity_error(keys):
    _, outcome, _, _ = _run(keys, tamper_record=6)
    assert isinstance(outcome, PartyFailure)
    assert "integrity failure on channel" in str(outcome)
    assert "P0<->" in str(outcome) or "<->P0" in str(outcome)


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
