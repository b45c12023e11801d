"""A link: one mutually authenticated connection between two roles, full duplex, with heartbeats.

Its bytes travel in the sealed records of :mod:`.records` (TLS 1.3 with pinned certificates, then
AES-256-GCM under a fresh key per link and direction).  Each link is driven by its own I/O thread over a
non-blocking socket: it seals and writes queued frames and reads and opens incoming ones at the same time,
so two roles that send each other large messages at once never deadlock.  Each frame carries a hop stamp
that feeds :data:`HOPS`, the process's count of the longest chain of messages behind it (what a network's
latency costs).

* DATA frames are queued per channel for :meth:`Link.recv`;
* a HEARTBEAT goes out whenever the link has been quiet for ``heartbeat_s``,
  so a peer that is busy computing still shows it is alive;
* :meth:`Link.recv` raises :class:`PeerLost` when the peer has sent nothing
  at all for ``timeout_s`` (stopped, or its host is gone), when it closed
  the connection, or after ``wait_limit_s`` without the expected message;
* a record that fails authentication (a modified byte in transit) raises
  :class:`ChannelIntegrityError` naming the channel, and so does a failed
  handshake (wrong or unknown key).

:func:`dial` makes a link: the dialer presents its certificate, checks the listener's against the one
pinned for the role it wants and sends its HELLO (the session it belongs to, and what it is for); the
other end is :class:`protocols.runtime.listener.Listener`.

What an observer on the path sees of a link: its records (:mod:`.records`), their lengths and timing
(who talks to whom, when, how many bytes), and a heartbeat record (32 bytes of ciphertext, as long as any
frame header's) whenever the link has been quiet for ``heartbeat_s``; never a frame's kind, channel or
hop stamp.
"""
import json
import select
import socket
import ssl
import threading
import time
from collections import defaultdict, deque

import numpy as np
from cryptography.exceptions import InvalidTag

from ..errors import ChannelIntegrityError, PeerLost
from .records import (CLOSE, DATA, FRAME, HEARTBEAT, RECORD, REFUSED, SEAL_HEADER, Incoming, Malformed, PeerRefused,
                      Tls)

_BACKLOG = 4 << 20  # ciphertext waiting for the socket before sealing pauses
_SOCKET_BUFFER = 4 << 20
HELLO = 250  # the channel of the dialer's first frame


class HopClock:
    """A Lamport clock of message hops: the length of the longest chain of messages, each sent after the last
    one arrived, that leads to this point of this process (every link stamps the messages it sends with it).

    On a network whose one-way delay is d, a protocol whose clock ends at h waits at least h d for the
    network, however fast its links: the benchmarks' latency term (sims.bench.net).  Heartbeats and closes
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
            self._outbox.append(memoryview(FRAME.pack(DATA, channel, HOPS.value, len(view))))
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

    def poll(self, channel: int, wait_s: float = 0.0) -> bool:
        """Whether a message waits on ``channel``, waiting up to ``wait_s`` for one (or for the link's end)."""
        with self._cond:
            self._cond.wait_for(lambda: self._inbox[channel] or self._failure is not None, wait_s)
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
                self._outbox.append(memoryview(FRAME.pack(CLOSE, 0, 0, 0)))
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
        incoming = Incoming(self._opener, self._pending,
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
                        self._outbox.append(memoryview(FRAME.pack(HEARTBEAT, 0, 0, 0)))
        except PeerRefused:
            self._fail(ChannelIntegrityError(self.channel_name, f"{self.peer} found a record from here changed in "
                                                                "transit and ended the link", self.peer))
        except (InvalidTag, Malformed) as err:
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
            self.sock.sendall(SEAL_HEADER.pack(REFUSED, 0))
        except OSError:
            pass

    def _deliver(self, channel: int, payload, stamp: int) -> None:
        with self._cond:
            self._inbox[channel].append((payload, stamp))
            self._unread += len(payload)
            self._cond.notify_all()
            if self._notify:
                self._signal_ready()


def tune(sock: socket.socket) -> None:
    """A link's socket: no Nagle delay, 4 MiB buffers each way."""
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for option in (socket.SO_SNDBUF, socket.SO_RCVBUF):
        sock.setsockopt(socket.SOL_SOCKET, option, _SOCKET_BUFFER)


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


def dial(me, deployment, peer: str, hello: dict, timeout_s: float, gone=None) -> Link:
    """Connect to ``peer`` at its configured address, check its pinned certificate, send ``hello``.
    gone: a function telling when ``peer`` is known to have ended (a local process): no more retries then."""
    host, port = split_address(deployment.address(peer))
    context = me.tls_context(server=False, trusted=[deployment.public(peer)])
    deadline = time.monotonic() + timeout_s
    while True:  # the peer may not be listening yet: retry until the deadline
        raw = None
        try:
            raw = socket.create_connection((host, port), timeout=max(0.5, deadline - time.monotonic()))
            tune(raw)
            tls = Tls(raw, context, False, deadline)
            break
        except (ssl.SSLEOFError, OSError) as err:
            if raw is not None:
                raw.close()
            if isinstance(err, ssl.SSLError) and not isinstance(err, ssl.SSLEOFError):
                raise _refused(me, peer, err) from None
            if time.monotonic() > deadline or (gone is not None and gone()):
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
    link.send(HELLO, json.dumps(hello).encode())
    return link


