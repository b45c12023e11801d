"""The party runtime: compute parties P0, P1 and the dealer as OS processes over TCP.

A coordinator (the process that calls :class:`Session`) starts one process
per role with the ``spawn`` start method.  The roles talk to each other only
through CrypTen's torch.distributed/gloo communicator over TCP, rendezvousing
at ``tcp://host:port``.  Each role also has two local pipes to the
coordinator: a message channel (inputs in, progress and results out) and an
abort line watched by a thread, so the coordinator can stop a role that is
blocked inside a gloo call.

Providers: ``TTP`` runs CrypTen's trusted-third-party server as the separate
``dealer`` process (rank 2); it sees no inputs.  ``TFP`` lets P0 generate all
Beaver triples itself, so P0 could learn P1's inputs: it is for unit tests
only, and every result carries the provider that produced it.

Failure handling (nothing waits forever):
* every gloo operation and the rendezvous carry ``timeout_s``; a stalled peer
  makes the waiting role raise :class:`PeerLost` naming that peer;
* a role that dies, or reports an error, is noticed by the coordinator at
  once; it waits ``grace_s`` for the others' own reports, sends every
  survivor an abort naming the failed role (each survivor exits with status
  3 and that message), kills what is still alive after that, and raises
  :class:`PartyFailure`;
* each child dies with its coordinator (PR_SET_PDEATHSIG, and the abort
  line's end-of-file).
"""
import ctypes
import multiprocessing as mp
import os
import secrets
import signal
import socket
import sys
import threading
import time
from collections import deque
from datetime import timedelta
from multiprocessing.connection import wait

from .errors import PartyFailure, PeerLost

PARTIES = ("P0", "P1")
DEALER = "dealer"
PROVIDERS = ("TTP", "TFP")
ABORT_EXIT = 3


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class PartyContext:
    """What a party's code sees of the runtime: its role, its channel to the coordinator,
    and (provider TTP) the stream key the dealer gave it for shuffles (circuits.shuffle)."""

    def __init__(self, role: str, rank: int, provider: str, conn, stream_key=None):
        self.role, self.rank, self.provider = role, rank, provider
        self.stream_key = stream_key
        self._conn = conn

    def send(self, kind: str, payload=None) -> None:
        self._conn.send((kind, payload))

    def recv(self, kind: str):
        got, payload = self._conn.recv()
        if got != kind:
            raise RuntimeError(f"{self.role} expected a {kind!r} message from the coordinator, got {got!r}")
        return payload

    def progress(self, text: str) -> None:
        self.send("progress", text)


# ---------------------------------------------------------------- child side

def _bytes_written() -> int:
    """Bytes this process has handed to write/send system calls (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/io") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("wchar:"))
    except (OSError, StopIteration):
        return 0


def peak_rss_bytes() -> int:
    """Largest resident set size of this process so far."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class TrafficMeter:
    """What this process sent since ``start``: CrypTen's counters and the bytes it wrote.

    CrypTen counts 8 bytes per tensor element for every send, receive and
    collective it runs, and one round per call; ``sent_bytes`` is what the
    process really wrote to its sockets (and, in small part, to its pipe to
    the coordinator).
    """

    def __init__(self, since_process_start: bool = False):
        """Start counting now, or take the counts since the process (and its communicator) began."""
        from ..circuits.crypten_compat import crypten

        self._written = 0 if since_process_start else _bytes_written()
        if not since_process_start:
            crypten.communicator.get().reset_communication_stats()

    def read(self) -> dict:
        from ..circuits.crypten_compat import crypten

        stats = crypten.communicator.get().get_communication_stats()
        return {"bytes": int(stats["bytes"]), "rounds": int(stats["rounds"]),
                "sent_bytes": _bytes_written() - self._written, "peak_rss": peak_rss_bytes()}


def _die_with_parent() -> None:
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the abort line's EOF still ends the process


def _tune_allocator() -> None:
    """Keep freed memory in the heap for reuse (glibc): no mmap per large array, no trimming.

    The MPC phases allocate and free arrays of tens of MB thousands of times;
    with glibc's defaults each one is a fresh mmap whose pages fault in again.
    Measured at M = 4.6 million: 6 radix key bits took 35 s with the defaults, 21 s this way.
    """
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.mallopt(-4, 0)  # M_MMAP_MAX: serve large blocks from the heap
        libc.mallopt(-1, 2 ** 31 - 1)  # M_TRIM_THRESHOLD: do not hand freed heap back
        libc.mallopt(-2, 256 << 20)  # M_TOP_PAD: grow the heap in 256 MB steps
    except (OSError, AttributeError):
        pass  # not glibc: defaults


def _watch_abort_line(role: str, abort_conn) -> None:
    def watch():
        try:
            reason = abort_conn.recv()
        except (EOFError, OSError):
            reason = "the coordinator went away"
        sys.stderr.write(f"[{role}] stopping: {reason}\n")
        sys.stderr.flush()
        os._exit(ABORT_EXIT)

    threading.Thread(target=watch, name="abort-line", daemon=True).start()


def _role_names(world_size: int, with_dealer: bool) -> dict:
    names = {r: PARTIES[r] for r in range(world_size)}
    if with_dealer:
        names[world_size] = DEALER
    return names


def _install_timeouts(seconds: float) -> None:
    """Give every process group CrypTen creates a finite timeout."""
    import torch.distributed as dist

    limit = timedelta(seconds=seconds)
    init_group, new_group = dist.init_process_group, dist.new_group

    def init_with_timeout(*args, **kwargs):
        kwargs.setdefault("timeout", limit)
        return init_group(*args, **kwargs)

    def new_with_timeout(*args, **kwargs):
        kwargs.setdefault("timeout", limit)
        return new_group(*args, **kwargs)

    dist.init_process_group, dist.new_group = init_with_timeout, new_with_timeout


_POINT_TO_POINT = {"send": "dst", "recv": "src", "send_obj": "dst", "recv_obj": "src"}
_COLLECTIVES = ("scatter", "reduce", "all_reduce", "gather", "all_gather", "broadcast", "barrier", "broadcast_obj")


def _name_peers_on_failure(names: dict) -> None:
    """Turn communication errors into PeerLost naming the role(s) the call waited on."""
    import inspect

    from ..circuits.crypten_compat import crypten

    cls = crypten.communicator.DistributedCommunicator

    def peers_of(comm, op, bound):
        me = comm.get_rank()
        rank = bound.get(_POINT_TO_POINT.get(op, ""))
        if rank is not None:
            return [names[rank]]
        group = bound.get("group")
        if group is not None and group is getattr(comm, "ttp_comm_group", None):
            members = [0, comm.get_ttp_rank()]
        elif group is not None and group is getattr(comm, "ttp_group", None):
            members = list(names)
        else:
            members = list(range(comm.get_world_size()))
        return [names[r] for r in members if r != me] or [names[me]]

    for op in list(_POINT_TO_POINT) + list(_COLLECTIVES):
        original = getattr(cls, op)
        signature = inspect.signature(original)

        def guarded(self, *args, _original=original, _op=op, _signature=signature, **kwargs):
            try:
                return _original(self, *args, **kwargs)
            except RuntimeError as err:  # gloo: connection closed, timed out, ...
                bound = _signature.bind(self, *args, **kwargs).arguments
                raise PeerLost(peers_of(self, _op, bound), _op, err) from None

        setattr(cls, op, guarded)


def _child_main(role, rank, provider, host, port, timeout_s, conn, abort_conn, target, args):
    _die_with_parent()
    _tune_allocator()
    _watch_abort_line(role, abort_conn)
    try:
        import torch

        torch.set_num_threads(1)
        # CrypTen's dealer seeds its triple generators from torch's default
        # generator, which is fixed unless seeded: seed it from the OS CSPRNG.
        torch.manual_seed(secrets.randbits(63))
        from ..circuits.crypten_compat import crypten

        os.environ.update(DISTRIBUTED_BACKEND="gloo", RENDEZVOUS=f"tcp://{host}:{port}",
                          WORLD_SIZE=str(len(PARTIES)), RANK=str(rank))
        crypten.cfg.mpc.provider = provider
        crypten.cfg.communicator.verbose = True  # count rounds and bytes
        _install_timeouts(timeout_s)
        _name_peers_on_failure(_role_names(len(PARTIES), provider == "TTP"))
        if role == DEALER:
            from ..circuits.dealer import Dealer

            Dealer()  # CrypTen's TTP server plus shuffle correlations; returns on "terminate"
            result = TrafficMeter(since_process_start=True).read()
        else:
            crypten.init()
            stream_key = None
            if provider == "TTP":
                from ..circuits.dealer import receive_stream_key

                stream_key = receive_stream_key()
            result = target(PartyContext(role, rank, provider, conn, stream_key), *args)
            crypten.uninit()
        conn.send(("done", result))
    except BaseException as err:  # report anything, then exit non-zero
        peers = list(err.peers) if isinstance(err, PeerLost) else []
        try:
            conn.send(("error", {"message": f"{type(err).__name__}: {err}", "peers": peers}))
        except (OSError, ValueError):
            pass
        sys.stderr.write(f"[{role}] {type(err).__name__}: {err}\n")
        sys.stderr.flush()
        os._exit(1)
    os._exit(0)


# ---------------------------------------------------------- coordinator side

def _describe_exit(code) -> str:
    if code is None:
        return "still running"
    if code < 0:
        return f"killed by signal {signal.Signals(-code).name}"
    return f"exited with status {code}"


class Session:
    """Start the roles, route messages to and from the parties, stop everything on failure.

    ``target(ctx, *args)`` runs in P0 and P1 after ``crypten.init()``; what it
    returns is that party's result.  Use as a context manager: leaving the
    block normally waits for every role to finish cleanly, leaving it by an
    exception stops all roles at once.
    """

    def __init__(self, target, args=(), provider="TTP", host="127.0.0.1", port=None,
                 timeout_s: float = 20.0, grace_s: float = 3.0, on_progress=None):
        if provider not in PROVIDERS:
            raise ValueError(f"provider must be one of {PROVIDERS}, not {provider!r}")
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        self.provider, self.host = provider, host
        self.port = port or free_port(host)
        self.timeout_s, self.grace_s = timeout_s, grace_s
        self._on_progress = on_progress
        self.roles = list(PARTIES) + ([DEALER] if provider == "TTP" else [])
        self._inbox = {r: deque() for r in self.roles}
        self._outcome = {}  # role -> ("done", result) | ("error", info) | ("exit", code)
        self._procs, self._conns, self._aborts = {}, {}, {}
        context = mp.get_context("spawn")
        for rank, role in enumerate(self.roles):
            parent, child = context.Pipe()
            abort_parent, abort_child = context.Pipe()
            proc = context.Process(
                target=_child_main, name=f"mpc-auc-{role}", daemon=True,
                args=(role, rank, provider, host, self.port, timeout_s, child, abort_child, target, tuple(args)))
            proc.start()
            child.close()
            abort_child.close()
            self._procs[role], self._conns[role], self._aborts[role] = proc, parent, abort_parent

    @property
    def pids(self) -> dict:
        return {role: proc.pid for role, proc in self._procs.items()}

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self._finish()
        else:
            self._stop_all("the coordinator stopped the run")
        return False

    # messages ---------------------------------------------------------
    def send(self, role: str, kind: str, payload=None) -> None:
        try:
            self._conns[role].send((kind, payload))
        except (BrokenPipeError, EOFError, OSError):
            self._pump(0.5)
            self._fail_if_needed(force_role=role)

    def recv(self, role: str, kind: str):
        """Next message of ``kind`` from ``role``; raises PartyFailure if any role fails meanwhile."""
        while not self._inbox[role]:
            if role in self._outcome:
                self._fail_if_needed(force_role=role)
            self._pump(1.0)
            self._fail_if_needed()
        got, payload = self._inbox[role].popleft()
        if got != kind:
            self._stop_all(f"{role} sent {got!r} where {kind!r} was expected")
            raise PartyFailure(role, f"protocol error: sent {got!r} where {kind!r} was expected")
        return payload

    def _pump(self, timeout: float) -> None:
        live = {self._conns[r]: r for r in self.roles if r not in self._outcome}
        sentinels = {self._procs[r].sentinel: r for r in self.roles if r not in self._outcome}
        for ready in wait(list(live) + list(sentinels), timeout):
            if ready in live:
                self._read(live[ready])
            elif sentinels[ready] not in self._outcome:
                role = sentinels[ready]
                self._drain(role)
                if role not in self._outcome:
                    self._procs[role].join(1.0)
                    self._outcome[role] = ("exit", self._procs[role].exitcode)

    def _read(self, role: str) -> bool:
        """Handle one message from ``role``; False at end of file (the process is gone)."""
        try:
            kind, payload = self._conns[role].recv()
        except (EOFError, OSError):
            return False  # its sentinel reports the exit
        if kind == "progress":
            if self._on_progress is not None:
                self._on_progress(role, payload)
        elif kind in ("done", "error"):
            self._outcome[role] = (kind, payload)
            if kind == "done":
                self._inbox[role].append((kind, payload))
        else:
            self._inbox[role].append((kind, payload))
        return True

    def _drain(self, role: str) -> None:
        conn = self._conns[role]
        while role not in self._outcome and conn.poll() and self._read(role):
            pass

    # failure ------------------------------------------------------------
    def _failed_roles(self):
        return [r for r, (kind, payload) in self._outcome.items()
                if kind == "error" or (kind == "exit" and payload != 0)]

    def _fail_if_needed(self, force_role=None) -> None:
        if not self._failed_roles() and force_role is None:
            return
        deadline = time.monotonic() + self.grace_s
        while time.monotonic() < deadline and any(r not in self._outcome for r in self.roles):
            self._pump(0.2)
        culprit = self._culprit() or force_role
        reports = {r: self._report(r) for r in self.roles}
        self._stop_all(f"{culprit} failed")
        raise PartyFailure(culprit, reports[culprit], reports)

    def _culprit(self) -> str:
        """The role that failed first: dead without a report, else named by others yet silent."""
        silent_deaths = [r for r, (kind, code) in self._outcome.items() if kind == "exit" and code != 0]
        if silent_deaths:
            return silent_deaths[0]
        errors = [(r, info) for r, (kind, info) in self._outcome.items() if kind == "error"]
        for _, info in errors:
            for peer in info["peers"]:
                if peer in self.roles and self._outcome.get(peer, ("",))[0] != "error":
                    return peer
        return errors[0][0] if errors else None

    def _report(self, role: str) -> str:
        kind, payload = self._outcome.get(role, ("running", None))
        if kind == "error":
            return payload["message"]
        if kind == "exit":
            return _describe_exit(payload)
        if kind == "done":
            return "finished"
        return "stalled or still running (stopped by the coordinator)"

    def _stop_all(self, reason: str) -> None:
        for role in self.roles:
            if self._procs[role].is_alive():
                try:
                    self._aborts[role].send(reason)
                except (BrokenPipeError, OSError):
                    pass
        deadline = time.monotonic() + 2.0
        for proc in self._procs.values():
            proc.join(max(0.0, deadline - time.monotonic()))
        for proc in self._procs.values():
            if proc.is_alive():  # stalled (e.g. SIGSTOP) or stuck outside Python
                proc.kill()
                proc.join(5.0)
        self._close_pipes()

    def _close_pipes(self) -> None:
        for conn in list(self._conns.values()) + list(self._aborts.values()):
            conn.close()

    def _finish(self) -> None:
        while any(r not in self._outcome for r in self.roles):
            self._pump(1.0)
            self._fail_if_needed()
        self._fail_if_needed()
        for proc in self._procs.values():
            proc.join(5.0)
        self._close_pipes()


def run_parties(target, args=(), **session_options) -> list:
    """Run ``target`` in both compute parties and return [P0's result, P1's result]."""
    with Session(target, args, **session_options) as session:
        return [session.recv(role, "done") for role in PARTIES]
