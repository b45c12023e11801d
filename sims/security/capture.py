"""What a network observer sees: a recording TCP proxy in front of a role, and the records it captured.

No root needed: the deployment the other roles use points at the proxy,
which forwards to the role's real address and keeps every byte of both
directions (a loopback stand-in for a packet capture of the link).  The
observer's view of a capture is its sequence of records, type and length:
the TLS 1.3 records of the handshake and key exchange (encrypted after the
ServerHello), then the link's sealed AES-GCM records (protocols.runtime.records).
"""
import socket
import threading

import numpy as np

from ...protocols.runtime.records import REFUSED, SEALED

HANDSHAKE, APPLICATION_DATA, CHANGE_CIPHER_SPEC, ALERT = 0x16, 0x17, 0x14, 0x15
RECORD_TYPES = (HANDSHAKE, APPLICATION_DATA, CHANGE_CIPHER_SPEC, ALERT)
CIPHERTEXT = (APPLICATION_DATA, SEALED)


class NotTls(ValueError):
    """A captured stream is not a sequence of TLS records followed by sealed records."""


class RecordingProxy:
    """Forwards TCP connections to ``target``; records both directions; towards the target it may flip one
    byte of one ciphertext record (``tamper_record``: its number) or send one of them twice (``replay_record``)."""

    def __init__(self, target, host: str = "127.0.0.1", tamper_record: int = None, replay_record: int = None):
        self.target, self.tamper_record, self.replay_record = target, tamper_record, replay_record
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

    def _pump(self, src, dst, log, towards_target):
        pending = {"tamper": self.tamper_record, "replay": self.replay_record} if towards_target else {}
        try:
            while data := src.recv(65536):
                data = bytearray(data)
                start = len(log)
                log += data
                if pending.get("tamper") is not None:
                    span = nth_record_span(log, pending["tamper"])
                    if span is not None and span[2] > start:
                        data[(span[1] + span[2]) // 2 - start] ^= 0x01  # the middle byte of its payload
                        pending["tamper"] = None
                if pending.get("replay") is not None:
                    span = nth_record_span(log, pending["replay"])
                    if span is not None and span[2] > start:
                        cut = span[2] - start
                        data[cut:cut] = log[span[0]:span[2]]  # the whole record again, right after itself
                        pending["replay"] = None
                dst.sendall(data)
        except OSError:
            pass
        try:  # pass the end on and let the other direction drain on its own: shutting both sockets down here
            dst.shutdown(socket.SHUT_WR)  # would drop that direction's bytes still in flight from the capture
        except OSError:
            pass

    def close(self):
        self.server.close()


def _record_at(stream: bytes, at: int):
    """(type, header bytes, payload length) of the record starting at ``at``; raises NotTls if none does."""
    kind = stream[at]
    if kind in (SEALED, REFUSED):
        return kind, 5, int.from_bytes(stream[at + 1:at + 5], "big")
    if kind not in RECORD_TYPES or stream[at + 1] != 3:
        raise NotTls(f"byte {at} of the stream starts no TLS or sealed record")
    return kind, 5, int.from_bytes(stream[at + 3:at + 5], "big")


def records(stream: bytes) -> list:
    """[(type, length)] of the records in ``stream``: TLS records, then sealed ones (type SEALED, or the
    empty REFUSED notice) and no TLS record after those; raises NotTls if the stream is anything else."""
    out, at = [], 0
    while at + 5 <= len(stream):
        kind, header, length = _record_at(stream, at)
        if out and out[-1][0] in (SEALED, REFUSED) and kind not in (SEALED, REFUSED):
            raise NotTls(f"byte {at} of the stream: a TLS record after the sealed records began")
        out.append((kind, length))
        at += header + length
    if at != len(stream):
        raise NotTls("the stream ends inside a record header")
    return out


def nth_record_span(stream: bytes, n: int):
    """(record start, payload start, end) of the n-th ciphertext record (TLS application data or sealed),
    once it is complete in ``stream``; else None."""
    at, seen = 0, 0
    while at + 5 <= len(stream):
        kind, header, length = _record_at(stream, at)
        if kind in CIPHERTEXT:
            seen += 1
            if seen == n:
                return (at, at + header, at + header + length) if at + header + length <= len(stream) else None
        at += header + length
    return None


def carries_window(stream: bytes, secret: bytes, width: int = 16) -> bool:
    """Whether any ``width``-byte window of ``secret`` (every 8 bytes) appears in ``stream`` in the clear.

    The windows' first 8 bytes are looked up among the stream's words at each of its 8 byte alignments
    (numpy), and only those hits are compared in full, so long secrets (share arrays) cost one pass."""
    starts = range(0, len(secret) - width + 1, 8)
    if not starts or len(stream) < width:
        return False
    firsts = np.unique(np.frombuffer(b"".join(secret[i:i + 8] for i in starts), dtype=np.uint64))  # sorted
    windows = {secret[i:i + width] for i in starts}
    for offset in range(8):
        words = np.frombuffer(stream, dtype=np.uint64, count=(len(stream) - offset) // 8, offset=offset)
        slot = np.searchsorted(firsts, words).clip(max=len(firsts) - 1)  # no sort of the stream's words
        for hit in np.flatnonzero(firsts[slot] == words):
            at = offset + 8 * int(hit)
            if stream[at:at + width] in windows:
                return True
    return False
