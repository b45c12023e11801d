"""The listener side: a role's one listening socket, the fair admission of handshakes, and the sorting of
authenticated links by session and purpose.

:class:`Listener` identifies the dialer by its pinned certificate,
reads its HELLO (the session it belongs to, and what it is for) and hands
the link to whoever waits for it.  A role listens on exactly one address.
Its handshakes are admitted fairly: a few at once per source address, so
that strangers flooding it from their own addresses never shut out a pinned
peer dialing from another (:class:`Listener` states the rule and its limits).

What an observer (or a stranger dialing in) sees of it: a connection past its source's slots, or past all
of them, is reset as soon as it is accepted, unheard; any other gets a TLS 1.3 handshake that fails
unless its certificate is pinned, and at most :data:`HANDSHAKE_S` seconds to complete it.
"""
import collections
import errno
import json
import socket
import ssl
import struct
import sys
import threading
import time

from ..errors import ChannelIntegrityError, DeploymentError, PeerLost
from .identity import CLIENT_PREFIX
from .link import HELLO, Link, split_address, tune
from .records import Tls

HELLO_MAX = 64 << 10  # the largest frame a link takes before its hello said what it is for
PENDING_MAX = 256  # unauthenticated connections in their handshake at once, per listener
PENDING_PER_SOURCE = 8  # of those, from one source (an IPv4 address, an IPv6 /64)
HANDSHAKE_S = 3.0  # the longest a connection may take to authenticate (a handshake takes 12-160 ms here)
IPV6_SOURCE_BYTES = 8  # an IPv6 source is its /64 (a host or a site is often given a whole /64)
_IPV4_MAPPED = bytes(10) + b"\xff\xff"  # ::ffff:a.b.c.d, an IPv4 peer of an IPv6 socket
_RESET = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() resets the connection
_BACKOFF_S = (0.05, 1.0)  # the accepting thread's pause after a failed accept(), doubling up to the second


def _shed(raw: socket.socket) -> None:
    """Close an accepted connection unheard, with a reset: no FIN exchange, no TIME_WAIT left at this end."""
    try:
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET)
    except OSError:
        pass
    raw.close()


def _log_listener(role: str, text: str) -> None:
    sys.stderr.write(f"[{role}] listener: {text}\n")
    sys.stderr.flush()


def source_of(host: str) -> str:
    """The source a connection from ``host`` (a peer address as accept() gives it) counts against: its IPv4
    address (also when it reaches an IPv6 socket as an IPv4-mapped address), or its IPv6 /64.

    Called for every connection accepted, shed ones too: a few C calls, no parsing in Python."""
    if ":" not in host:
        return host  # an AF_INET socket's peer: already a dotted quad
    packed = socket.inet_pton(socket.AF_INET6, host.partition("%")[0])  # a link-local zone is not part of it
    if packed[:len(_IPV4_MAPPED)] == _IPV4_MAPPED:
        return socket.inet_ntop(socket.AF_INET, packed[len(_IPV4_MAPPED):])
    prefix = packed[:IPV6_SOURCE_BYTES] + bytes(16 - IPV6_SOURCE_BYTES)
    return f"{socket.inet_ntop(socket.AF_INET6, prefix)}/{8 * IPV6_SOURCE_BYTES}"


class Admission:
    """A listener's handshake slots: at most ``total`` connections in their handshake at once, and at most
    ``per_source`` of those from any one source (:func:`source_of`)."""

    def __init__(self, total: int, per_source: int):
        self.total, self.per_source = total, per_source
        self._lock = threading.Lock()
        self._held = collections.Counter()  # source -> slots it holds (a source holding none has no entry)
        self.in_use = 0
        self.shed = 0  # connections closed unheard because their source's slots, or all slots, were taken

    def take(self, source: str) -> bool:
        """A slot for a new connection from ``source``, if one is free to it."""
        with self._lock:
            if self.in_use >= self.total or self._held[source] >= self.per_source:
                self.shed += 1
                return False
            self._held[source] += 1
            self.in_use += 1
            return True

    def give_back(self, source: str) -> None:
        """The connection from ``source`` authenticated, failed or ran out of time: its slot is free."""
        with self._lock:
            self.in_use -= 1
            self._held[source] -= 1
            if not self._held[source]:
                del self._held[source]

    def held(self, source: str) -> int:
        with self._lock:
            return self._held[source]


def _bound(role: str, address: str) -> socket.socket:
    """A socket listening on ``address`` (HOST:PORT) for ``role``, or DeploymentError naming the address and why
    not (a port another process holds, an address not this host's)."""
    host, port = split_address(address)
    try:
        return socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET,
                                    backlog=socket.SOMAXCONN)
    except OSError as err:
        hint = " (another process listens there: stop it, or give this role another port)" \
            if err.errno == errno.EADDRINUSE else ""
        raise DeploymentError(f"{role} cannot listen on {address}: {err.strerror or err}{hint}") from None


class Listener:
    """A role's one listening socket: authenticates dialers and sorts their links by session and purpose.

    A stranger cannot silence it (fair admission): at most :data:`PENDING_MAX` connections are in their TLS
    handshake at once, and at most :data:`PENDING_PER_SOURCE` of them from one source (an IPv4 address, an
    IPv6 /64: :func:`source_of`); a connection past either is reset as soon as it is accepted, so the
    kernel's queue drains, the descriptors never run out and nothing of it stays behind.  A handshake has
    :data:`HANDSHAKE_S` seconds at most.  A stranger holding any number of connections from one address so
    takes PENDING_PER_SOURCE slots, and a pinned peer (a role, the coordinator, a rostered client) dialing
    from an address of its own always finds one.  Limits: strangers on PENDING_MAX / PENDING_PER_SOURCE
    sources (32) or more can take every slot while they hold them; a peer behind the same NAT as a stranger
    shares its slots; and every connection shed costs this process an accept() and a reset (40-60 us of
    CPU here: a rate limit per source belongs in a firewall).  The accepting thread never ends on an
    error: out of descriptors (EMFILE, ENFILE) or memory it logs, backs off and goes on.

    A client's link takes frames of at most :data:`HELLO_MAX` bytes until the intake raises its cap
    to what the evaluation allows (protocols.inputs.intake; a client sends nothing large before its ticket);
    a link from a role pinned in the deployment takes frames of any size.
    """

    def __init__(self, me, deployment, timeout_s: float, sock: socket.socket = None, listen: str = None):
        """Listen on ``me``'s configured address, or on ``listen`` (HOST:PORT, where a NAT or relay forwards
        the configured address), or on ``sock`` already bound (local runs)."""
        self.me, self.deployment, self.timeout_s = me, deployment, timeout_s
        self._peers = {p.fingerprint: p.role for p in deployment.peers_of(me.role)}
        self._context = me.tls_context(server=True, trusted=deployment.peers_of(me.role))
        self.sock = sock or _bound(me.role, listen or deployment.address(me.role))
        self._cond = threading.Condition()
        self._waiting = []  # (hello, link) not yet claimed
        self.refused = collections.deque(maxlen=1000)  # why handshakes were refused (latest, for operator and tests)
        self._accept_errors = 0  # accept() failures survived (e.g. EMFILE): the first is logged, then one a second
        self.admission = Admission(PENDING_MAX, PENDING_PER_SOURCE)
        self._stopped = False
        threading.Thread(target=self._accept_loop, name=f"listener {me.role}", daemon=True).start()

    def _accept_loop(self) -> None:
        backoff = _BACKOFF_S[0]
        while not self._stopped:
            try:
                raw, origin = self.sock.accept()
            except OSError as err:
                if self._stopped:
                    return
                self._accept_errors += 1
                if self._accept_errors == 1 or backoff == _BACKOFF_S[1]:
                    _log_listener(self.me.role, f"accept failed ({err}); retrying in {backoff:.2f} s")
                time.sleep(backoff)
                backoff = min(_BACKOFF_S[1], 2 * backoff)
                continue
            backoff = _BACKOFF_S[0]
            source = source_of(origin[0])
            if not self.admission.take(source):  # its source's slots, or all, are in handshakes: closed unheard
                _shed(raw)
                continue
            try:
                threading.Thread(target=self._admit, args=(raw, origin, source), daemon=True).start()
            except RuntimeError as err:  # no thread to be had: the connection goes, the loop stays
                self.admission.give_back(source)
                raw.close()
                self.refused.append(f"{origin[0]}:{origin[1]}: {err}")

    def _admit(self, raw: socket.socket, origin, source: str) -> None:
        try:
            tune(raw)
            deadline = time.monotonic() + min(self.timeout_s, HANDSHAKE_S)
            tls = Tls(raw, self._context, True, deadline)
            peer = self._peers.get(tls.peer_fingerprint())
            if peer is None:
                raise ssl.SSLError("the client's certificate is not pinned in the deployment")
            keys = tls.exchange_keys(deadline)
        except (ssl.SSLError, OSError) as err:
            self.refused.append(f"{origin[0]}:{origin[1]}: {getattr(err, 'reason', None) or err}")
            raw.close()
            return
        finally:
            self.admission.give_back(source)  # authenticated, or gone: the slot is a stranger's no more
        client = peer.startswith(CLIENT_PREFIX)  # a role pinned in the deployment sends frames of any size
        link = Link(raw, keys, self.me.role, peer, self.timeout_s, max_frame=HELLO_MAX if client else None)
        try:
            hello = json.loads(bytes(link.recv(HELLO, "hello")))
            hello["from"] = peer  # who it is comes from its certificate, never from what it says
        except (PeerLost, ChannelIntegrityError, ValueError) as err:
            self.refused.append(f"{peer} at {origin[0]}:{origin[1]}: no valid hello ({err})")
            link.abort(err if isinstance(err, Exception) else RuntimeError(str(err)))
            return
        with self._cond:
            self._waiting.append((hello, link))
            self._cond.notify_all()

    def trust(self, publics) -> None:
        """Also accept dialers with these certificates (a job's rostered clients) until :meth:`distrust`."""
        self._context.load_verify_locations(cadata="".join(p.certificate for p in publics))
        self._peers.update({p.fingerprint: p.role for p in publics if p.fingerprint not in self._peers})

    def distrust(self, publics) -> None:
        """Refuse these certificates again (the handshake may pass; the pinned-fingerprint check refuses)."""
        for p in publics:
            if self._peers.get(p.fingerprint) == p.role:
                del self._peers[p.fingerprint]

    def take(self, match, timeout_s: float = None):
        """The first waiting (hello, link) with ``match(hello)``; None after ``timeout_s`` (forever if None)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self._cond:
            while True:
                for i, (hello, link) in enumerate(self._waiting):
                    if match(hello):
                        del self._waiting[i]
                        return hello, link
                if deadline is not None and time.monotonic() >= deadline:
                    return None
                self._cond.wait(0.5 if deadline is None else max(0.01, min(0.5, deadline - time.monotonic())))

    def drop(self, match) -> None:
        """Close waiting links that ``match`` (e.g. those of a session that has ended)."""
        with self._cond:
            keep = []
            for hello, link in self._waiting:
                if match(hello):
                    link.abort(PeerLost([link.peer], "session", ConnectionAbortedError("session over")))
                else:
                    keep.append((hello, link))
            self._waiting = keep

    def close(self) -> None:
        self._stopped = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread, so the port is free at once
        except OSError:
            pass
        self.sock.close()
