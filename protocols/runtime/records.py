"""The sealed record layer under a link: the TLS 1.3 handshake and the key exchange inside it, then the
AES-256-GCM records that carry every frame, and the reader that opens them.

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

Frames are ``kind (1 byte), channel (1 byte), 2 reserved bytes, hop stamp
(4 bytes), length (8 bytes)`` (one sealed record) and the payload (its own
records); an end whose record failed authentication sends the clear notice
``0x5F, 0`` (:data:`REFUSED`).

What an observer on the path sees: the TLS handshake and one key record
each way; then sealed records, with their lengths (which follow message
lengths; every frame header's record is as long as a heartbeat's, 32 bytes
of ciphertext); who talks to whom, when, and how many bytes.
"""
import secrets
import socket
import ssl
import struct
import time

import numpy as np
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from .identity import fingerprint

FRAME = struct.Struct(">BB2xIQ")  # kind, channel, hop stamp (protocols.runtime.link.HopClock), payload length
FRAME_BYTES = FRAME.size  # a heartbeat is one bare frame header; each message starts with one
DATA, HEARTBEAT, CLOSE = 1, 2, 3
SEALED = 0x5E  # first byte of a sealed record (no TLS content type: a capture tells them apart)
REFUSED = 0x5F  # first byte of the clear notice an end sends when a record it received failed authentication
SEAL_HEADER = struct.Struct(">BI")  # SEALED, ciphertext length (tag included)
TAG_BYTES = 16
HEADER_RECORD = FRAME_BYTES + TAG_BYTES  # ciphertext length of a frame header's record (a heartbeat is one)
RECORD = 1 << 20  # plaintext bytes per sealed record of a payload
KEY_BYTES = 32
SEAL_LIMIT = 1 << 38  # bytes sealed under one key, at most


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
        header = SEAL_HEADER.pack(SEALED, len(plaintext) + TAG_BYTES)
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



class Malformed(Exception):
    """A sealed record's clear header is not the one expected (changed in transit, or not our protocol)."""


class _Oversized(ValueError):
    """The peer announced a frame larger than the link's cap (Link.max_frame)."""


class PeerRefused(Exception):
    """The peer's REFUSED notice: a record it received from here failed authentication."""


class Incoming:
    """The receiving side of a link: reads the peer's sealed records straight into their destinations.

    The frame header's record is opened into a 16-byte buffer, a payload's records into the message's
    own array (not zeroed: delivered only once every record of it is opened).
    """

    def __init__(self, opener: Opener, pending: bytes, cap=lambda: None):
        self._opener, self._pending, self._cap = opener, memoryview(pending), cap
        self._head = memoryview(bytearray(SEAL_HEADER.size))
        self._body = memoryview(bytearray(RECORD + TAG_BYTES))
        self._frame = memoryview(bytearray(FRAME_BYTES))
        self._message, self._filled, self._channel, self._stamp = None, 0, 0, 0  # the payload being received, its
        # bytes so far, its channel and hop stamp
        self._have, self._want = 0, SEAL_HEADER.size  # bytes of the current header or body, and its size
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
                marker, length = SEAL_HEADER.unpack(self._head)
                if marker == REFUSED and length == 0:
                    raise PeerRefused()
                if marker != SEALED or length != self._expected():
                    raise Malformed("a sealed record's header was changed or is out of step")
                self._in_body, self._have, self._want = True, 0, length
            if not self._read(sock, self._body):
                return None
            body = self._body[:self._want]
            self._in_body, self._have, self._want = False, 0, SEAL_HEADER.size
            if self._message is None:
                self._opener.open_into(self._head, body, self._frame)
                kind, channel, stamp, length = FRAME.unpack(self._frame)
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
