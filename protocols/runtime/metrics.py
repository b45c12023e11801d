"""What a role measures of itself: traffic with its peers and peak memory (run JSON, benchmarks)."""
import resource
import time

import numpy as np

from .link import HOPS

_ACTIVE = []  # the meter that records phases in this process (at most one: the job's)


def peak_rss_bytes() -> int:
    """Largest resident set size of this process so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class TrafficMeter:
    """What this role sent to its peers since it was made (or since its session began).

    CrypTen counts 8 bytes per tensor element for every send, receive and
    collective it runs, and one round per call ("rounds": messages, not
    round trips); ``sent_bytes`` is what the role really wrote to its links
    with the other roles (TLS records included); ``hops`` is how far the
    process's hop clock (protocols.runtime.link.HopClock) moved: the longest
    chain of messages, each waiting for the last, in the metered work (a
    round trip is two hops).  With ``phases``, :func:`phase` marks where each
    named phase of the work begins, and ``read`` gives per phase its seconds,
    the bytes sent to each peer, its hops and the process's peak RSS by its end (the phase that raised it is where
    its memory peaked); ``sent_to`` splits ``sent_bytes`` by peer.
    """

    def __init__(self, since_session_start: bool = False, phases: bool = False):
        comm = _communicator()
        self._sent = 0 if since_session_start else comm.bytes_sent()
        self._sent_to = {} if since_session_start else _sent_to(comm)
        self._hops = 0 if since_session_start else HOPS.value
        if not since_session_start:
            comm.reset_communication_stats()
        self._marks = []  # (phase, perf_counter, {peer: bytes sent so far}, hop clock, peak RSS so far)
        if phases:
            _ACTIVE[:] = [self]
            self.mark("start")

    def mark(self, name: str) -> None:
        comm = _communicator()
        if self._marks and self._marks[-1][0] == name:
            return
        self._marks.append((name, time.perf_counter(), _sent_to(comm), HOPS.value, peak_rss_bytes()))

    def read(self) -> dict:
        comm = _communicator()
        stats = comm.get_communication_stats()
        # figures that follow timing (a heartbeat's bytes, the dealer's pace, memory) travel as 0-d float64 arrays:
        # control messages write numbers as text, arrays as fixed-size blobs, and no record's length may follow
        # them (the network observer's check); :func:`plain` turns them back into numbers
        out = {"bytes": int(stats["bytes"]), "rounds": int(stats["rounds"]),
               "sent_bytes": _fixed(comm.bytes_sent() - self._sent), "hops": _fixed(HOPS.value - self._hops),
               "sent_to": {peer: _fixed(n - self._sent_to.get(peer, 0)) for peer, n in _sent_to(comm).items()},
               "peak_rss": _fixed(peak_rss_bytes())}
        if self._marks:
            if _ACTIVE and _ACTIVE[0] is self:
                _ACTIVE.clear()
            self.mark("end")
            out["phases"] = [{"phase": name, "s": _fixed(t1 - t0), "hops": _fixed(h1 - h0),
                              "sent_bytes": {peer: _fixed(sent1[peer] - sent0.get(peer, 0)) for peer in sent1},
                              "peak_rss": _fixed(rss1)}
                             for (name, t0, sent0, h0, _), (_, t1, sent1, h1, rss1) in zip(self._marks, self._marks[1:])
                             if name != "end"]
        return out


def _fixed(value) -> np.ndarray:
    return np.array(value, dtype=np.float64)


def plain(figures):
    """A meter's reading (:meth:`TrafficMeter.read`) with its arrays as numbers (int where whole), for records."""
    if isinstance(figures, dict):
        return {k: plain(v) for k, v in figures.items()}
    if isinstance(figures, list):
        return [plain(v) for v in figures]
    if isinstance(figures, np.ndarray):
        value = float(figures)
        return int(value) if value.is_integer() else value
    return figures


def _communicator():
    """The role's communicator."""
    from ...circuits.crypten_compat import crypten  # lazily: a coordinator reads meters (plain) without CrypTen

    return crypten.communicator.get()


def _sent_to(comm) -> dict:
    """Bytes written so far to each peer role, by name."""
    return {comm.names[rank]: link.bytes_sent for rank, link in comm.links.items()}


def phase(text: str) -> None:
    """Mark the start of a phase (a progress line; a sort's steps are one phase) on the job's meter, if any."""
    if _ACTIVE:
        _ACTIVE[0].mark(text.split(": step")[0])
