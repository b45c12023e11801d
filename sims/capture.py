"""What a network observer sees: a recording TCP proxy in front of a role, and the TLS records it captured.

No root needed: the deployment the other roles use points at the proxy,
which forwards to the role's real address and keeps every byte of both
directions (a loopback stand-in for a packet capture of the link).  The
observer's view of a capture is its sequence of TLS records: type and
length, since TLS 1.3 encrypts everything after the ServerHello.
"""
import socket
import threading

HANDSHAKE, APPLICATION_DATA, CHANGE_CIPHER_SPEC, ALERT = 0x16, 0x17, 0x14, 0x15
RECORD_TYPES = (HANDSHAKE, APPLICATION_DATA, CHANGE_CIPHER_SPEC, ALERT)


class NotTls(ValueError):
    """A captured stream is not a sequence of TLS records."""


class RecordingProxy:
    """Forwards TCP connections to ``target``; records both directions; may flip one byte of one record."""

    def __init__(self, target, host: str = "127.0.0.1", tamper_record: int = None):
        self.target, self.tamper_record = target, tamper_record
        self.streams = []  # one (upstream bytes, downstream bytes) pair of bytearrays per connection
        self.server = socket.create_server((host, 0))
        self.address = self.server.getsockname()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def endpoint(self) -> str:
        return f"{self.address[0]}:{self.address[1]}"

    def _accept(self):
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target)
            except OSError:  # the role is not listening yet: the dialer retries
                client.close()
                continue
            record = (bytearray(), bytearray())
            self.streams.append(record)
            threading.Thread(target=self._pump, args=(client, upstream, record[0], True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, record[1], False), daemon=True).start()

    def _pump(self, src, dst, log, tampering):
        tampered = False
        try:
            while data := src.recv(65536):
                data = bytearray(data)
                start = len(log)
                log += data
                if tampering and self.tamper_record is not None and not tampered:
                    at = nth_record_payload(log, self.tamper_record)
                    if at is not None and at >= start:
                        data[at - start] ^= 0x01
                        tampered = True
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self.server.close()


def records(stream: bytes) -> list:
    """[(type, length)] of the TLS records in ``stream``; raises NotTls if it is not a sequence of records."""
    out, at = [], 0
    while at + 5 <= len(stream):
        kind, major, length = stream[at], stream[at + 1], int.from_bytes(stream[at + 3:at + 5], "big")
        if kind not in RECORD_TYPES or major != 3:
            raise NotTls(f"byte {at} of the stream starts no TLS record")
        out.append((kind, length))
        at += 5 + length
    if at != len(stream):
        raise NotTls("the stream ends inside a TLS record header")
    return out


def nth_record_payload(stream: bytes, n: int):
    """Offset of the middle byte of the n-th application-data record's payload, once it is complete."""
    at, seen = 0, 0
    while at + 5 <= len(stream):
        kind, length = stream[at], int.from_bytes(stream[at + 3:at + 5], "big")
        if kind == APPLICATION_DATA:
            seen += 1
            if seen == n and at + 5 + length <= len(stream):
                return at + 5 + length // 2
        at += 5 + length
    return None


def carries_window(stream: bytes, secret: bytes, width: int = 16) -> bool:
    """Whether any ``width``-byte window of ``secret`` (every 8 bytes) appears in ``stream`` in the clear."""
    return any(secret[i:i + width] in stream for i in range(0, len(secret) - width + 1, 8))
