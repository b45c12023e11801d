"""A link: one mutually authenticated connection between two roles, full duplex, with heartbeats.

A link starts as a TLS 1.3 connection with pinned certificates (both ends
present one; each checks the other's digest against the deployment).
Inside it each end sends a fresh 256-bit key of its own (``secrets``) and
from then on seals everything it sends under that key with AES-256-GCM, in
records of up to 1 MiB instead of TLS's 16 KiB: on this machine the TLS
record loop of Python's ``ssl`` costs about 1 CPU-second per GB moved, the
sealed records 0.4 (``docs/protocols/secure-channels.md``).  A sealed record
is ``0x5E, length (4 bytes)`` in the clear and the AES-GCM ciphertext and
tag of its plaintext; the clear header is its associated data and its
nonce is the sender's record counter (96 bits, from 0), so a record that is
modified, dropped, replayed, reordered or moved to another link fails
authentication.  The receiver knows the length of every record it expects
(a frame header, then its payload cut into 1 MiB records), so a changed
length is refused at once.  Keys are per link and per direction, never
reused, and seal at most 2^38 bytes (RFC 8446 §5.5's margin for AES-GCM).

Each link is driven by its own I/O thread over a non-blocking socket: it
seals and writes queued frames and reads and opens incoming ones at the
same time, so two roles that send each other large messages at once never
deadlock.  Frames are ``kind (1 byte), channel (1 byte), 2 reserved bytes,
hop stamp (4 bytes), length (8 bytes)`` (one sealed record) and the payload
(its own records); the hop stamp feeds :data:`HOPS`, the process's count of
the longest chain of messages behind it (what a network's latency costs).

* DATA frames are queued per channel for :meth:`Link.recv`;
* a HEARTBEAT goes out whenever the link has been quiet for ``heartbeat_s``,
  so a peer that is busy computing still shows it is alive;
* :meth:`Link.recv` raises :class:`PeerLost` when the peer has sent nothing
  at all for ``timeout_s`` (stopped, or its host is gone), when it closed
  the connection, or after ``wait_limit_s`` without the expected message;
* a record that fails authentication (a modified byte in transit) raises
  :class:`ChannelIntegrityError` naming the channel, and so does a failed
  handshake (wrong or unknown key).

:func:`dial` and :class:`Listener` make links: the dialer presents its
certificate and checks the listener's against the one pinned for the role
it wants; the listener identifies the dialer by its pinned certificate,
reads its HELLO (the session it belongs to, and what it is for) and hands
the link to whoever waits for it.  A role listens on exactly one address.
Its handshakes are admitted fairly: a few at once per source address, so
that strangers flooding it from their own addresses never shut out a pinned
peer dialing from another (:class:`Listener` states the rule and its limits).
"""
import collections
import json
import secrets
import select
import socket
import ssl
import struct
import sys
import threading
import time
from collections import defaultdict, deque

import numpy as np
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..errors import ChannelIntegrityError, PeerLost
from .identity import CLIENT_PREFIX, fingerprint

_FRAME = struct.Struct(">BB2xIQ")  # kind, channel, hop stamp (HopClock), payload length
FRAME_BYTES = _FRAME.size  # a heartbeat is one bare frame header; each message starts with one
DATA, HEARTBEAT, CLOSE = 1, 2, 3
SEALED = 0x5E  # first byte of a sealed record (no TLS content type: a capture tells them apart)
REFUSED = 0x5F  # first byte of the clear notice an end sends when a record it received failed authentication
_SEAL_HEADER = struct.Struct(">BI")  # SEALED, ciphertext length (tag included)
TAG_BYTES = 16
HEADER_RECORD = FRAME_BYTES + TAG_BYTES  # ciphertext length of a frame header's record (a heartbeat is one)
RECORD = 1 << 20  # plaintext bytes per sealed record of a payload
KEY_BYTES = 32
SEAL_LIMIT = 1 << 38  # bytes sealed under one key, at most
_BACKLOG = 4 << 20  # ciphertext waiting for the socket before sealing pauses
_SOCKET_BUFFER = 4 << 20
_HELLO = 250  # the channel of the dialer's first frame
HELLO_MAX = 64 << 10  # the largest frame a link takes before its hello said what it is for
PENDING_MAX = 256  # unauthenticated connections in their handshake at once, per listener
PENDING_PER_SOURCE = 8  # of those, from one source (an IPv4 address, an IPv6 /64)
HANDSHAKE_S = 3.0  # the longest a connection may take to authenticate (a handshake takes 12-160 ms here)
IPV6_SOURCE_BYTES = 8  # an IPv6 source is its /64 (a host or a site is often given a whole /64)
_IPV4_MAPPED = bytes(10) + b"\xff\xff"  # ::ffff:a.b.c.d, an IPv4 peer of an IPv6 socket
_RESET = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() resets the connection
_BACKOFF_S = (0.05, 1.0)  # the accepting thread's pause after a failed accept(), doubling up to the second


class Tls:
    """A TCP socket and the TLS 1.3 connection on top of it (memory buffers): the handshake and the key exchange."""

    def __init__(self, raw: socket.socket, context: ssl.SSLContext, server_side: bool, deadline: float):
        """Run the handshake (blocking, until ``deadline``); raises ssl.SSLError or OSError."""
        self.raw, self.incoming, self.outgoing = raw, ssl.MemoryBIO(), ssl.MemoryBIO()
        self.obj = context.wrap_bio(self.incoming, self.outgoing, server_side=server_side)
        while True:
            try:
                self.obj.do_handshake()
                done = True
            except ssl.SSLWantReadError:
                done = False
            except ssl.SSLError:
                self._flush()  # the alert tells the peer why
                raise
            self._flush()
            if done:
                return
            self._receive(deadline, "during the handshake")

    def _receive(self, deadline: float, when: str) -> None:
        """Feed what the socket has next (blocking, until ``deadline``) to TLS."""
        self.raw.settimeout(max(0.01, deadline - time.monotonic()))
        data = self.raw.recv(65536)
        if not data:
            raise ConnectionResetError(f"the peer closed the connection {when}")
        self.incoming.write(data)

    def _flush(self) -> None:
        data = self.outgoing.read()
        if data:
            try:
                self.raw.sendall(data)
            except OSError:
                pass

    def peer_fingerprint(self) -> str:
        return fingerprint(self.obj.getpeercert(binary_form=True))

    def exchange_keys(self, deadline: float) -> tuple:
        """Send this end's fresh sealing key inside TLS and read the peer's (blocking, until ``deadline``).

        Returns (Sealer with our key, Opener with the peer's, the raw bytes already received after the
        peer's key: its first sealed records).  Raises ssl.SSLError (e.g. the peer's alert refusing our
        certificate) or OSError.  No TLS record follows on either side.
        """
        own = secrets.token_bytes(KEY_BYTES)
        self.obj.write(own)
        data = self.outgoing.read()
        self.raw.settimeout(max(0.01, deadline - time.monotonic()))
        self.raw.sendall(data)
        theirs = bytearray()
        while len(theirs) < KEY_BYTES:
            try:
                theirs += self.obj.read(KEY_BYTES - len(theirs))
                continue
            except ssl.SSLWantReadError:
                pass
            except ssl.SSLError:
                self._flush()  # the alert tells the peer why (e.g. bad_record_mac)
                raise
            self._receive(deadline, "before sending its key")
        return Sealer(own), Opener(bytes(theirs)), self.incoming.read()


class Sealer:
    """One direction's sealing: AES-256-GCM under a fresh key, the record counter as nonce."""

    def __init__(self, key: bytes):
        self._aead, self._count, self.sealed = AESGCM(key), 0, 0

    def seal(self, plaintext) -> tuple:
        """(clear header, ciphertext with tag) of the next record."""
        self.sealed += len(plaintext)
        if self.sealed > SEAL_LIMIT:
            raise ValueError(f"a link sealed more than {SEAL_LIMIT} bytes under one key: start a new session")
        header = _SEAL_HEADER.pack(SEALED, len(plaintext) + TAG_BYTES)
        nonce = self._count.to_bytes(12, "big")
        self._count += 1
        return header, self._aead.encrypt(nonce, plaintext, header)


class Opener:
    """The other direction: opens the peer's records in order; raises InvalidTag on any change."""

    def __init__(self, key: bytes):
        self._aead, self._count = AESGCM(key), 0

    def open_into(self, header, ciphertext, out) -> None:
        nonce = self._count.to_bytes(12, "big")
        self._count += 1
        self._aead.decrypt_into(nonce, ciphertext, header, out)


class HopClock:
    """A Lamport clock of message hops: the length of the longest chain of messages, each sent after the last
    one arrived, that leads to this point of this process (every link stamps the messages it sends with it).

    On a network whose one-way delay is d, a protocol whose clock ends at h waits at least h d for the
    network, however fast its links: the benchmarks' latency term (sims.bench_net).  Heartbeats and closes
    carry no stamp that counts.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self.value = 0

    def arrived(self, stamp: int) -> None:
        """A message sent at the sender's ``stamp`` was received here."""
        with self._lock:
            self.value = max(self.value, stamp + 1)


HOPS = HopClock()  # this process's clock (one per process: every link of it)


class Link:
    """An established link to ``peer`` (its keys exchanged inside TLS), run by an I/O thread."""

    def __init__(self, sock: socket.socket, keys: tuple, me: str, peer: str, timeout_s: float,
                 wait_limit_s: float = None, max_frame: int = None):
        """keys: what :meth:`Tls.exchange_keys` returned for this socket.  max_frame: the most payload bytes the
        peer may have here unread, the announced message included (None: any); a message past it ends the link
        (PeerLost) before any of it is kept."""
        self.sock, self.me, self.peer = sock, me, peer
        self.max_frame = max_frame
        self._unread = 0  # payload bytes delivered and not yet taken by recv
        self._sealer, self._opener, self._pending = keys
        self.timeout_s = timeout_s
        self.wait_limit_s = wait_limit_s or max(10 * timeout_s, 300.0)
        self.heartbeat_s = min(1.0, timeout_s / 4)
        self._cond = threading.Condition()
        self._outbox = deque()
        self._inbox = defaultdict(deque)
        self._failure = None
        self._closing = False
        self.last_seen = time.monotonic()
        self._last_sent = time.monotonic()
        self.bytes_sent = self.bytes_received = 0
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._ready_r, self._ready_w = socket.socketpair()  # readable when a frame arrived or the link failed
        self._notify = False  # signal _ready_w only once someone waits on fileno()
        self._selecting = False  # the I/O thread is (about to be) blocked in select: wake it on send
        self.sock.setblocking(False)
        self._thread = threading.Thread(target=self._run, name=f"link {me}->{peer}", daemon=True)
        self._thread.start()

    @property
    def channel_name(self) -> str:
        return f"{self.me}<->{self.peer}"

    def fileno(self) -> int:
        """A descriptor that turns readable when a message arrives or the link fails (for select/wait)."""
        with self._cond:
            self._notify = True
            if any(self._inbox.values()) or self._failure is not None:
                self._signal_ready()
        return self._ready_r.fileno()

    # sending ------------------------------------------------------------------
    def send(self, channel: int, payload=b"") -> None:
        """Queue ``payload`` (bytes-like, not modified afterwards by the caller) for the peer."""
        view = memoryview(payload).cast("B")
        with self._cond:
            self._raise_if_failed("send")
            self._outbox.append(memoryview(_FRAME.pack(DATA, channel, HOPS.value, len(view))))
            if len(view):
                self._outbox.append(view)
            wake = self._selecting
        if wake:
            self._wake()

    def _wake(self) -> None:
        """Interrupt the I/O thread's select (close, abort, or a send while it waits)."""
        try:
            self._wake_w.send(b"x")
        except (BlockingIOError, OSError):
            pass

    # receiving ----------------------------------------------------------------
    def recv(self, channel: int, operation: str = "recv") -> np.ndarray:
        """The next payload on ``channel`` (a writable uint8 array); raises PeerLost / ChannelIntegrityError
        instead of waiting forever."""
        began = time.monotonic()
        with self._cond:
            while not self._inbox[channel]:
                self._raise_if_failed(operation)
                now = time.monotonic()
                if now - self.last_seen > self.timeout_s:
                    self._fail(PeerLost([self.peer], operation, TimeoutError(
                        f"no sign of life from {self.peer} for {now - self.last_seen:.1f} s")))
                    continue
                if now - began > self.wait_limit_s:
                    raise PeerLost([self.peer], operation, TimeoutError(
                        f"{self.peer} sent no answer within {self.wait_limit_s:.0f} s"))
                self._cond.wait(min(0.25, self.timeout_s / 4))
            payload, stamp = self._inbox[channel].popleft()
            self._unread -= len(payload)
            HOPS.arrived(stamp)
            if self._notify and not any(self._inbox.values()):
                self._drain_ready()
            return payload

    def poll(self, channel: int) -> bool:
        with self._cond:
            return bool(self._inbox[channel])

    def wait_closed(self, timeout_s: float) -> None:
        """Wait until the link has ended (e.g. the peer's process exited and every byte it sent arrived)."""
        with self._cond:
            self._cond.wait_for(lambda: self._failure is not None, timeout_s)

    def silent_for(self) -> float:
        return time.monotonic() - self.last_seen

    @property
    def failure(self):
        return self._failure

    def _raise_if_failed(self, operation: str) -> None:
        if self._failure is not None:
            if isinstance(self._failure, PeerLost):
                raise PeerLost(self._failure.peers, operation, self._failure.cause)
            raise self._failure

    def _drain_ready(self) -> None:
        try:
            while self._ready_r.recv(4096, socket.MSG_DONTWAIT):
                pass
        except (BlockingIOError, OSError):
            pass

    def _signal_ready(self) -> None:
        try:
            self._ready_w.send(b"r", socket.MSG_DONTWAIT)
        except (BlockingIOError, OSError):
            pass

    # ending -------------------------------------------------------------------
    def close(self, flush_s: float = 5.0) -> None:
        """Send what is queued and a CLOSE frame (bounded by ``flush_s``), then end the link."""
        with self._cond:
            if self._failure is None and not self._closing:
                self._outbox.append(memoryview(_FRAME.pack(CLOSE, 0, 0, 0)))
                self._closing = True
        self._wake()
        self._thread.join(flush_s)
        self.abort(PeerLost([self.peer], "close", ConnectionAbortedError("the link was closed")))

    def abort(self, reason: BaseException) -> None:
        """End the link at once; every later use raises ``reason``."""
        self._fail(reason)
        self._wake()
        if threading.current_thread() is not self._thread:
            self._thread.join(2.0)
        for s in (self.sock, self._wake_r, self._wake_w):
            try:
                s.close()
            except OSError:
                pass

    def _fail(self, reason: BaseException) -> None:
        with self._cond:
            if self._failure is None:
                self._failure = reason
            self._cond.notify_all()
            if self._notify:
                self._signal_ready()

    # the I/O thread -----------------------------------------------------------
    def _run(self) -> None:
        incoming = _Incoming(self._opener, self._pending,
                             lambda: None if self.max_frame is None else self.max_frame - self._unread)
        current, raw_out, raw_backlog = None, deque(), 0
        try:
            while self._failure is None:
                # open every complete record already received
                while (frame := incoming.step(self.sock)) is not None:
                    kind, channel, stamp, payload = frame
                    if kind == CLOSE:
                        raise ConnectionAbortedError(f"{self.peer} closed the link")
                    if kind == DATA:
                        self._deliver(channel, payload, stamp)
                if incoming.received:
                    self.bytes_received += incoming.received
                    self.last_seen = time.monotonic()
                    incoming.received = 0
                # seal queued frames while little ciphertext waits for the socket
                with self._cond:
                    if current is None and self._outbox:
                        current = self._outbox.popleft()
                    done_closing = self._closing and current is None and not self._outbox and not raw_out
                if done_closing:
                    return
                while current is not None and raw_backlog < _BACKLOG:
                    header, sealed = self._sealer.seal(current[:RECORD])
                    current = current[RECORD:] if len(current) > RECORD else None
                    raw_out.extend((header, memoryview(sealed)))
                    raw_backlog += len(header) + len(sealed)
                    if current is None:
                        with self._cond:
                            current = self._outbox.popleft() if self._outbox else None
                with self._cond:  # block in select only if nothing new is queued meanwhile
                    self._selecting = current is None and not self._outbox and self._failure is None
                readable, writable, _ = select.select([self.sock, self._wake_r], [self.sock] if raw_out else [],
                                                      [], self.heartbeat_s if self._selecting else 0)
                self._selecting = False
                if self._wake_r in readable:
                    try:
                        self._wake_r.recv(65536)
                    except BlockingIOError:
                        pass
                while raw_out:
                    try:
                        n = self.sock.send(raw_out[0])
                    except BlockingIOError:
                        break
                    self.bytes_sent += n
                    raw_backlog -= n
                    self._last_sent = time.monotonic()
                    if n < len(raw_out[0]):
                        raw_out[0] = raw_out[0][n:]
                        break
                    raw_out.popleft()
                if current is None and not raw_out and time.monotonic() - self._last_sent >= self.heartbeat_s:
                    with self._cond:
                        self._outbox.append(memoryview(_FRAME.pack(HEARTBEAT, 0, 0, 0)))
        except _PeerRefused:
            self._fail(ChannelIntegrityError(self.channel_name, f"{self.peer} found a record from here changed in "
                                                                "transit and ended the link", self.peer))
        except (InvalidTag, _Malformed) as err:
            self._fail(ChannelIntegrityError(self.channel_name, f"{err or 'a sealed record failed authentication'}"
                                                                f" (from {self.peer})", self.peer))
            self._tell_refused(raw_out)
        except (OSError, ValueError) as err:  # reset, broken pipe, closed socket, the key's limit
            self._fail(PeerLost([self.peer], "transfer", err))

    def _tell_refused(self, raw_out) -> None:
        """Finish the records already sealed, then send the peer a clear REFUSED notice (best effort, 1 s).

        The notice is not authenticated: it only lets the other end name the cause (anyone on the path can
        end a connection anyway)."""
        try:
            self.sock.setblocking(True)
            self.sock.settimeout(1.0)
            for piece in raw_out:
                self.sock.sendall(piece)
            self.sock.sendall(_SEAL_HEADER.pack(REFUSED, 0))
        except OSError:
            pass

    def _deliver(self, channel: int, payload, stamp: int) -> None:
        with self._cond:
            self._inbox[channel].append((payload, stamp))
            self._unread += len(payload)
            self._cond.notify_all()
            if self._notify:
                self._signal_ready()


class _Malformed(Exception):
    """A sealed record's clear header is not the one expected (changed in transit, or not our protocol)."""


class _Oversized(ValueError):
    """The peer announced a frame larger than the link's cap (Link.max_frame)."""


class _PeerRefused(Exception):
    """The peer's REFUSED notice: a record it received from here failed authentication."""


class _Incoming:
    """The receiving side of a link: reads the peer's sealed records straight into their destinations.

    The frame header's record is opened into a 16-byte buffer, a payload's records into the message's
    own array (not zeroed: delivered only once every record of it is opened).
    """

    def __init__(self, opener: Opener, pending: bytes, cap=lambda: None):
        self._opener, self._pending, self._cap = opener, memoryview(pending), cap
        self._head = memoryview(bytearray(_SEAL_HEADER.size))
        self._body = memoryview(bytearray(RECORD + TAG_BYTES))
        self._frame = memoryview(bytearray(FRAME_BYTES))
        self._message, self._filled, self._channel, self._stamp = None, 0, 0, 0  # the payload being received, its
        # bytes so far, its channel and hop stamp
        self._have, self._want = 0, _SEAL_HEADER.size  # bytes of the current header or body, and its size
        self._in_body = False
        self.received = 0

    def _expected(self) -> int:
        """Ciphertext length of the next record: a frame header's, or the payload's next piece."""
        if self._message is None:
            return HEADER_RECORD
        return min(RECORD, len(self._message) - self._filled) + TAG_BYTES

    def _read(self, sock, into) -> bool:
        """Fill ``into`` up to self._want from the pending bytes, then the socket; False if it would block."""
        while self._have < self._want:
            if len(self._pending):
                n = min(len(self._pending), self._want - self._have)
                into[self._have:self._have + n] = self._pending[:n]
                self._pending = self._pending[n:]
            else:
                try:
                    n = sock.recv_into(into[self._have:self._want])
                except BlockingIOError:
                    return False
                if n == 0:
                    raise ConnectionResetError("the peer closed the connection")
                self.received += n
            self._have += n
        return True

    def step(self, sock):
        """(kind, channel, hop stamp, payload) once a frame is complete, else None when the socket has nothing
        more."""
        while True:
            if not self._in_body:
                if not self._read(sock, self._head):
                    return None
                marker, length = _SEAL_HEADER.unpack(self._head)
                if marker == REFUSED and length == 0:
                    raise _PeerRefused()
                if marker != SEALED or length != self._expected():
                    raise _Malformed("a sealed record's header was changed or is out of step")
                self._in_body, self._have, self._want = True, 0, length
            if not self._read(sock, self._body):
                return None
            body = self._body[:self._want]
            self._in_body, self._have, self._want = False, 0, _SEAL_HEADER.size
            if self._message is None:
                self._opener.open_into(self._head, body, self._frame)
                kind, channel, stamp, length = _FRAME.unpack(self._frame)
                cap = self._cap()
                if cap is not None and length > cap:
                    raise _Oversized(f"the peer announced a message of {length:,} bytes; this link takes at most "
                                     f"{cap:,}")
                if kind == DATA and length:
                    self._message, self._filled = np.empty(length, dtype=np.uint8), 0
                    self._channel, self._stamp = channel, stamp
                    continue
                return kind, channel, stamp, np.empty(0, dtype=np.uint8)
            size = len(body) - TAG_BYTES
            self._opener.open_into(self._head, body, memoryview(self._message)[self._filled:self._filled + size])
            self._filled += size
            if self._filled == len(self._message):
                message, self._message = self._message, None
                return DATA, self._channel, self._stamp, message


# ------------------------------------------------------------ making links

def _tune(sock: socket.socket) -> None:
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for option in (socket.SO_SNDBUF, socket.SO_RCVBUF):
        sock.setsockopt(socket.SOL_SOCKET, option, _SOCKET_BUFFER)


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


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now (the OS picks it; for tests and examples)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def split_address(address: str):
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


def _refused(me, peer: str, err: ssl.SSLError) -> ChannelIntegrityError:
    """The error of a TLS handshake the peer refused (an alert, not a lost connection)."""
    return ChannelIntegrityError(f"{me.role}<->{peer}", f"TLS handshake refused: {err.reason or err}", peer)


def dial(me, deployment, peer: str, hello: dict, timeout_s: float) -> Link:
    """Connect to ``peer`` at its configured address, check its pinned certificate, send ``hello``."""
    host, port = split_address(deployment.address(peer))
    context = me.tls_context(server=False, trusted=[deployment.public(peer)])
    deadline = time.monotonic() + timeout_s
    while True:  # the peer may not be listening yet: retry until the deadline
        raw = None
        try:
            raw = socket.create_connection((host, port), timeout=max(0.5, deadline - time.monotonic()))
            _tune(raw)
            tls = Tls(raw, context, False, deadline)
            break
        except (ssl.SSLEOFError, OSError) as err:
            if raw is not None:
                raw.close()
            if isinstance(err, ssl.SSLError) and not isinstance(err, ssl.SSLEOFError):
                raise _refused(me, peer, err) from None
            if time.monotonic() > deadline:
                raise PeerLost([peer], "connect", err) from None
            time.sleep(0.1)
    if tls.peer_fingerprint() != deployment.public(peer).fingerprint:
        raw.close()
        raise ChannelIntegrityError(f"{me.role}<->{peer}", "the peer's certificate is not the one pinned for it",
                                    peer)
    try:
        keys = tls.exchange_keys(deadline)
    except OSError as err:
        raw.close()
        if isinstance(err, ssl.SSLError) and not isinstance(err, ssl.SSLEOFError):  # the peer refused us
            raise _refused(me, peer, err) from None
        raise PeerLost([peer], "key exchange", err) from None
    link = Link(raw, keys, me.role, peer, timeout_s)
    link.send(_HELLO, json.dumps(hello).encode())
    return link


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
        if sock is None:
            host, port = split_address(listen or deployment.address(me.role))
            sock = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET,
                                        backlog=socket.SOMAXCONN)
        self.sock = sock
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
            _tune(raw)
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
            hello = json.loads(bytes(link.recv(_HELLO, "hello")))
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
