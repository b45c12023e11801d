"""What a role measures of itself: traffic with its peers and peak memory (run JSON, benchmarks)."""
import resource

from ...circuits.crypten_compat import crypten


def peak_rss_bytes() -> int:
    """Largest resident set size of this process so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class TrafficMeter:
    """What this role sent to its peers since it was made (or since its session began).

    CrypTen counts 8 bytes per tensor element for every send, receive and
    collective it runs, and one round per call; ``sent_bytes`` is what the
    role really wrote to its links with the other roles (TLS records included).
    """

    def __init__(self, since_session_start: bool = False):
        self._sent = 0 if since_session_start else crypten.communicator.get().bytes_sent()
        if not since_session_start:
            crypten.communicator.get().reset_communication_stats()

    def read(self) -> dict:
        comm = crypten.communicator.get()
        stats = comm.get_communication_stats()
        return {"bytes": int(stats["bytes"]), "rounds": int(stats["rounds"]),
                "sent_bytes": comm.bytes_sent() - self._sent, "peak_rss": peak_rss_bytes()}
