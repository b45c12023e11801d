"""Fair admission at a listener: strangers flooding from addresses of their own never shut out a pinned peer.

Two flood sources (127.0.0.10 and 127.0.0.11, sims.security.admission_flood's) each hold 150 silent connections to P0's
listener and re-open every one it closes: 300 in all, past its PENDING_MAX slots.  Under a global cap only
(``PENDING_PER_SOURCE = PENDING_MAX``: the rule before fair admission) they take every slot and P1, dialing from
127.0.0.1, is shut out; under the real rule they hold PENDING_PER_SOURCE each and P1's link is made.  Both
variants run with a handshake deadline past the test's length, so that the per-source cap alone decides.
Then: a connection past its source's slots is reset at once while another source is admitted; a silent
connection is closed at HANDSHAKE_S; sources are IPv4 addresses and IPv6 /64s.
"""
import socket
import time
from contextlib import contextmanager

import pytest

from mpc_auc.protocols.errors import PeerLost
from mpc_auc.protocols.runtime import listener as listener_module
from mpc_auc.protocols.runtime.deployment import Deployment
from mpc_auc.protocols.runtime.identity import ROLES, SERVING, Identity
from mpc_auc.protocols.runtime.link import dial, free_port, split_address
from mpc_auc.protocols.runtime.listener import Listener, source_of
from mpc_auc.sims.security.admission_flood import FIRST_SOURCE, Flood

SOURCES, EACH = 2, 150  # connections per flood source: together past PENDING_MAX
LONG_S = 60.0  # a handshake deadline no slot reaches during a test
BOUND_S = 60.0  # bounds on waiting for states, not timings


@pytest.fixture(scope="module")
def roles():
    identities = {role: Identity(role) for role in ROLES}
    addresses = {role: f"127.0.0.2:{free_port('127.0.0.2')}" for role in SERVING}
    return identities, Deployment({r: i.public for r, i in identities.items()}, addresses)


def _wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + BOUND_S
    while not condition():
        assert time.monotonic() < deadline, f"{what} within {BOUND_S:.0f} s"
        time.sleep(0.05)


@contextmanager
def _flooded_listener(roles, monkeypatch, per_source: int):
    """P0's listener (handshake deadline LONG_S, at most ``per_source`` handshakes a source) under the flood,
    once the flood holds all the slots it can get."""
    identities, deployment = roles
    monkeypatch.setattr(listener_module, "HANDSHAKE_S", LONG_S)
    monkeypatch.setattr(listener_module, "PENDING_PER_SOURCE", per_source)
    assert SOURCES * EACH > listener_module.PENDING_MAX
    listener = Listener(identities["P0"], deployment, LONG_S)
    try:
        with Flood(split_address(deployment.address("P0")), EACH, SOURCES):
            held = min(listener_module.PENDING_MAX, SOURCES * per_source)
            _wait_for(lambda: listener.admission.in_use == held and listener.admission.shed > 0,
                      f"the flood did not take {held} slots")
            yield listener
    finally:
        listener.close()


def _dial_p1(roles, timeout_s: float):
    identities, deployment = roles
    return dial(identities["P1"], deployment, "P0", {"purpose": "mesh", "session": "s"}, timeout_s)


def test_a_global_cap_alone_lets_two_strangers_shut_out_a_pinned_peer(roles, monkeypatch):
    with _flooded_listener(roles, monkeypatch, per_source=listener_module.PENDING_MAX) as listener:
        with pytest.raises(PeerLost, match="connect"):
            _dial_p1(roles, 3.0)
        assert listener.admission.held("127.0.0.1") == 0


def test_per_source_slots_admit_a_pinned_peer_through_two_strangers_floods(roles, monkeypatch):
    strangers = [f"127.0.0.{FIRST_SOURCE + i}" for i in range(SOURCES)]
    with _flooded_listener(roles, monkeypatch, per_source=listener_module.PENDING_PER_SOURCE) as listener:
        assert [listener.admission.held(s) for s in strangers] == [listener_module.PENDING_PER_SOURCE] * SOURCES
        link = _dial_p1(roles, BOUND_S)
        hello, accepted = listener.take(lambda h: h.get("purpose") == "mesh", BOUND_S)
        assert hello["from"] == "P1"
        link.send(1, b"through")
        assert bytes(accepted.recv(1)) == b"through"
        assert [listener.admission.held(s) for s in strangers] == [listener_module.PENDING_PER_SOURCE] * SOURCES
        link.close()
        accepted.close()


def _silent_from(source: str, address):
    s = socket.socket()
    s.bind((source, 0))
    s.connect(address)
    s.settimeout(BOUND_S)
    return s


def test_a_connection_past_its_sources_slots_is_reset_at_once_and_others_are_admitted(roles, monkeypatch):
    identities, deployment = roles
    monkeypatch.setattr(listener_module, "HANDSHAKE_S", LONG_S)
    address = split_address(deployment.address("P0"))
    listener = Listener(identities["P0"], deployment, LONG_S)
    try:
        held = [_silent_from("127.0.0.20", address) for _ in range(listener_module.PENDING_PER_SOURCE)]
        _wait_for(lambda: listener.admission.held("127.0.0.20") == listener_module.PENDING_PER_SOURCE,
                  "the first connections were not admitted")
        with _silent_from("127.0.0.20", address) as past, pytest.raises(ConnectionResetError):
            past.recv(1)  # reset unheard, long before any deadline
        with _silent_from("127.0.0.21", address):
            _wait_for(lambda: listener.admission.held("127.0.0.21") == 1, "another source was not admitted")
        assert listener.admission.held("127.0.0.20") == listener_module.PENDING_PER_SOURCE
        for s in held:
            s.close()
    finally:
        listener.close()


def test_a_silent_connection_is_closed_at_the_handshake_deadline(roles):
    identities, deployment = roles
    listener = Listener(identities["P0"], deployment, 20.0)
    try:
        with _silent_from("127.0.0.1", split_address(deployment.address("P0"))) as silent:
            began = time.monotonic()
            assert silent.recv(1) == b""  # closed by the listener, having heard nothing
            held = time.monotonic() - began
        assert listener_module.HANDSHAKE_S / 2 <= held < listener_module.HANDSHAKE_S + BOUND_S / 2
        _wait_for(lambda: listener.admission.in_use == 0, "the silent connection's slot was not freed")
    finally:
        listener.close()


@pytest.mark.parametrize("host, source", [
    ("192.0.2.7", "192.0.2.7"),
    ("::ffff:192.0.2.7", "192.0.2.7"),  # an IPv4 peer of an IPv6 socket is its IPv4 address
    ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
    ("2001:db8:1:2:bbbb:cccc:dddd:eeee", "2001:db8:1:2::/64"),  # the same /64: one source
    ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
    ("fe80::1%eth0", "fe80::/64"),
])
def test_sources_are_ipv4_addresses_and_ipv6_slash_64s(host, source):
    assert source_of(host) == source
