"""A delaying TCP relay, the shaped-network benchmark's stand-in for netem's delay (this kernel has no netem).

Each ``LISTEN=TARGET`` pair: connections accepted on LISTEN are joined to TARGET, and every byte read on
either side is written to the other ``--delay-ms`` milliseconds after it was read (the one-way delay: a
round trip through the relay costs twice it).  Threads, not an event loop: a thread's sleep is exact to
tens of microseconds where epoll's timeout rounds up to a millisecond.  The relay holds in memory what
is in flight (the delay times the rate), reads on regardless and never reorders bytes.  It sees only the
links' sealed records (TLS, then AES-GCM): it forwards what it cannot read or change undetected.

    python -m mpc_auc.sims.bench.delay_relay --delay-ms 20 10.201.0.1:7000=10.201.0.2:7000 ...
"""
import argparse
import socket
import sys
import threading
import time
from collections import deque

CHUNK = 1 << 20


def _address(text: str):
    host, _, port = text.rpartition(":")
    return host, int(port)


def _carry(source: socket.socket, sink: socket.socket, delay_s: float) -> None:
    """Forward source -> sink, each chunk ``delay_s`` after it arrived; half-close sink when source ends."""
    queue, cond = deque(), threading.Condition()

    def deliver():
        while True:
            with cond:
                while not queue:
                    cond.wait()
                due, data = queue.popleft()
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            if data is None:
                try:
                    sink.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                return
            try:
                sink.sendall(data)
            except OSError:
                return

    writer = threading.Thread(target=deliver, daemon=True)
    writer.start()
    while True:
        try:
            data = source.recv(CHUNK)
        except OSError:
            data = b""
        with cond:
            queue.append((time.monotonic() + delay_s, data or None))
            cond.notify()
        if not data:
            break
    writer.join()


def _join(accepted: socket.socket, target, delay_s: float) -> None:
    try:
        onward = socket.create_connection(target, timeout=30)
    except OSError as err:
        print(f"[relay] cannot reach {target}: {err}", file=sys.stderr, flush=True)
        accepted.close()
        return
    onward.settimeout(None)
    for sock in (accepted, onward):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    back = threading.Thread(target=_carry, args=(onward, accepted, delay_s), daemon=True)
    back.start()
    _carry(accepted, onward, delay_s)
    back.join()
    accepted.close()
    onward.close()


def _serve(server: socket.socket, target, delay_s: float) -> None:
    while True:
        accepted, _ = server.accept()
        threading.Thread(target=_join, args=(accepted, target, delay_s), daemon=True).start()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mpc_auc.sims.bench.delay_relay",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--delay-ms", type=float, default=0.0, help="one-way delay added to every byte (ms)")
    parser.add_argument("pairs", nargs="+", metavar="LISTEN=TARGET", help="HOST:PORT=HOST:PORT to relay")
    args = parser.parse_args(argv)
    routes = [tuple(_address(part) for part in pair.split("=")) for pair in args.pairs]
    servers = [socket.create_server(listen, backlog=socket.SOMAXCONN) for listen, _ in routes]
    for server, (_, target) in zip(servers, routes):
        threading.Thread(target=_serve, args=(server, target, args.delay_ms / 1000), daemon=True).start()
    print(f"[relay] {len(routes)} route(s) listening, one-way delay {args.delay_ms:g} ms", file=sys.stderr,
          flush=True)
    threading.Event().wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
