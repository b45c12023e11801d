"""The coordinator's side of a session: start or reach the roles, route messages, stop everything on failure.

Two ways to get the roles (protocols.runtime.roles), one protocol path:

* **local** (the one-command run, tests): the coordinator spawns P0, P1
  and (provider TTP) the dealer as processes on this machine.  Each draws
  its own TLS and sealing keys, binds its listening socket on ``host``
  (loopback by default) and reports its certificate and port over a local
  pipe; the coordinator pins them all in an in-memory deployment and sends
  it back.  From then on everything, including the coordinator's control
  traffic, runs over the same mutually authenticated TLS links as a real
  deployment.
* **deployed**: the roles run as ``mpc-auc party`` on their own hosts; the
  coordinator reads the deployment file and its own key file and dials them.

``TFP`` (no dealer: P0 generates all Beaver triples itself, so P0 could
learn P1's inputs) is for unit tests of local runs only.

Failure handling (nothing waits forever):
* every link carries heartbeats; a role that stops sending anything for
  ``timeout_s`` counts as lost, a closed connection at once, a tampered
  record as an integrity failure naming the channel;
* when a role fails, the coordinator waits ``grace_s`` for the others'
  reports, sends every survivor an abort naming the failed role (local
  roles exit with status 3, deployed ones drop the session and serve the
  next), kills local processes still alive after that (warm local roles,
  which serve one session after another, at once: the next session starts
  fresh ones), and raises :class:`PartyFailure`;
* roles stop a session whose coordinator aborts, disconnects or goes
  silent for ``timeout_s``; local role processes also die with their
  coordinator (PR_SET_PDEATHSIG).
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
import types
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import wait

from . import wire
from .deployment import Deployment
from ..errors import ChannelIntegrityError, DeploymentError, DeviationDetected, PartyFailure, PeerLost
from .identity import COMPUTE, COORDINATOR, DEALER, Identity
from .link import dial
from .control import ABORT, CONTROL, INTERRUPTED, Service, send_message, target_name
from .ledger import LedgerPlace
from .listener import Listener
from .memory import tune_allocator

PARTIES = COMPUTE
P0_ROLE = PARTIES[0]
PROVIDERS = ("TTP", "TFP")
DEVIATION = "Deviation"  # the kind of error a role reports when a check found a deviating compute party (circuits.macs)
ROLES_MODULE = "mpc_auc.protocols.runtime.roles"  # what every role process runs (it loads CrypTen)


# ------------------------------------------------------- in the role processes

def _die_with_parent() -> None:
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the control link's end still stops the role


def _local_role_main(role, host, port, boot, targets, services, timeout_s, ledger_dir, once):
    """A locally started role: own keys, one listening socket, then one session over TLS (``once``) or one
    session after another (warm roles, :class:`LocalRoles` ``serving``)."""
    # a Ctrl-C is the coordinator's to answer (a forked role inherits the fork server's handlers, not ours)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    tune_allocator()
    try:
        from .roles import prepare_process, serve  # lazily: only a role process loads CrypTen

        identity = Identity(role)
        sock = socket.create_server((host, port))
        boot.send((identity.public, f"{host}:{sock.getsockname()[1]}"))
        deployment = boot.recv()
        boot.close()
        prepare_process(services)
        serve(identity, deployment, Listener(identity, deployment, timeout_s, sock=sock), targets, once=once,
              ledger=LedgerPlace(ledger_dir))
    except BaseException as err:
        sys.stderr.write(f"[{role}] {type(err).__name__}: {err}\n")
        sys.stderr.flush()
        os._exit(1)


# --------------------------------------------------------- coordinator side

@dataclass(frozen=True)
class Placement:
    """Where the roles run: spawned here on ``host`` (ports ``port``, ``port``+1, ``port``+2, or free
    ones; the parties' privacy ledgers in ``ledger``, default protocols.runtime.ledger.default_directory()),
    or already serving per ``deployment`` (with ledgers of their own), reached with the
    coordinator's ``identity``."""
    host: str = "127.0.0.1"
    port: int = None
    deployment: Deployment = None
    identity: Identity = None
    ledger: str = None
    started: "LocalRoles" = None  # local roles already started for this run (LocalRoles), adopted by its session
    dealer: type = None  # local roles: the dealer's class (the security suite's weakened controls); None: Dealer

    @classmethod
    def deployed(cls, deployment_file: str, key_file: str = None) -> "Placement":
        """The roles of a deployment file; the coordinator key defaults to coordinator.key beside it."""
        deployment = Deployment.load(deployment_file)  # first: a missing or broken file is named as such
        key_file = key_file or os.path.join(os.path.dirname(os.path.abspath(deployment_file)), "coordinator.key")
        identity = Identity.load(key_file)
        if identity.role != COORDINATOR:
            raise DeploymentError(f"{key_file} is the key of {identity.role}, not of the coordinator")
        return cls(deployment=deployment, identity=identity)


LOCAL = Placement()


class LocalRoles:
    """Role processes started on this machine ahead of their session, e.g. while the coordinator reads
    its input: each imports torch and CrypTen, draws its keys and binds its socket meanwhile.

    A Session adopts them through ``Placement.started``; ``stop`` ends them if no session does.
    ``serving`` roles (warm ones, mpc_auc.warm) serve one session after another, each over new TLS links
    with the keys pinned at their first session, until ``stop``; one-session roles exit after theirs.
    """

    def __init__(self, target, provider: str, placement: Placement, timeout_s: float, background: bool = False,
                 serving: bool = False):
        """target: a Service (protocols.runtime.control) or a function the roles run.

        The roles are forked by a fork server that has imported the runtime and the target's module once
        (CrypTen included): after the first session a role starts in a fraction of a second instead of a
        fresh interpreter's seconds.  background: start them from a thread, so that the first start's
        imports overlap the caller's work (the command line reads its input meanwhile); otherwise they
        start here, with the caller's script hidden (a script calling the API without a ``__main__`` guard
        is never run again in them).
        """
        self.target, self.provider, self.serving = target, provider, serving
        roles = list(PARTIES) + ([DEALER] if provider == "TTP" else [])
        self.processes, self._boots, self._failure, self._starting, self._agreed = {}, {}, None, None, None
        services = (target,) if isinstance(target, Service) else ()
        targets = {} if services else {target_name(target): target}
        if placement.dealer:
            targets[DEALER] = placement.dealer
        context = mp.get_context("forkserver")
        context.set_forkserver_preload([ROLES_MODULE, *(s.module for s in services)])  # the server's first start
        args = (context, roles, placement, targets, services, timeout_s)
        if background:
            self._starting = threading.Thread(target=self._start, args=args, daemon=True, name="mpc-auc role start")
            self._starting.start()
            return
        with _main_script_hidden(target), _interrupts_ignored():
            self._start(*args)
        self._started()

    def _start(self, context, roles, placement, targets, services, timeout_s) -> None:
        try:
            for offset, role in enumerate(roles):
                parent, child = context.Pipe()
                proc = context.Process(
                    target=_local_role_main, name=f"mpc-auc-{role}", daemon=True,
                    args=(role, placement.host, placement.port + offset if placement.port else 0, child, targets,
                          services, timeout_s, placement.ledger, not self.serving))
                proc.start()
                child.close()
                self.processes[role], self._boots[role] = proc, parent
        except BaseException as err:  # raised again by agree, in the caller's thread
            self._failure = err

    def _started(self) -> None:
        if self._starting is not None:
            self._starting.join()
        if self._failure is not None:
            raise PartyFailure(P0_ROLE, f"the roles could not be started: {self._failure}")

    def agree(self, target, provider: str, patience_s: float):
        """Wait for every role's public keys and address; pin them all in a deployment sent back to each.
        Returns (deployment, the coordinator's identity); serving roles' later sessions get the same."""
        if (target_name(target), provider) != (target_name(self.target), self.provider):
            raise ValueError("these roles were started for another target or provider")
        if self._agreed is not None:
            return self._agreed
        self._started()
        publics, addresses = {}, {}
        for role, boot in self._boots.items():
            if not boot.poll(patience_s):
                raise PartyFailure(role, "did not start")
            try:
                publics[role], addresses[role] = boot.recv()
            except (EOFError, OSError):
                self.processes[role].join(2.0)
                raise PartyFailure(role, f"failed to start ({_describe_exit(self.processes[role].exitcode)})") \
                    from None
        identity = Identity(COORDINATOR)
        publics[COORDINATOR] = identity.public
        deployment = Deployment(publics, addresses)
        for boot in self._boots.values():
            boot.send(deployment)
            boot.close()
        self._agreed = deployment, identity
        return self._agreed

    def alive(self) -> bool:
        """Every role process is still running."""
        return all(proc.is_alive() for proc in self.processes.values())

    def stop(self) -> None:
        """End the roles (no session took them, e.g. the input was refused; or serving roles no longer wanted)."""
        if self._starting is not None:
            self._starting.join()
        for proc in self.processes.values():
            if proc.is_alive():
                proc.kill()
            proc.join(5.0)


def _describe_exit(code) -> str:
    if code is None:
        return "still running"
    if code < 0:
        return f"killed by signal {signal.Signals(-code).name}"
    return f"exited with status {code}"


class Session:
    """One session of the roles: ``target(ctx, *args)`` runs in P0 and P1 (protocols.runtime.roles.RoleContext).

    ``target``: a Service (protocols.runtime.control), or for local roles also a function.
    ``placement``: local roles (default) or a deployment, whose roles run
    only the services they registered.  Use as a context
    manager: leaving the block normally waits for every role to finish its
    session cleanly, leaving it by an exception stops all roles.
    """

    def __init__(self, target, args=(), provider="TTP", placement: Placement = LOCAL, timeout_s: float = 20.0,
                 grace_s: float = 3.0, on_progress=None):
        if provider not in PROVIDERS:
            raise ValueError(f"provider must be one of {PROVIDERS}, not {provider!r}")
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        deployment, identity = placement.deployment, placement.identity
        if deployment is not None and provider != "TTP":
            raise ValueError("a deployment runs with its dealer (provider TTP)")
        self.provider, self.timeout_s, self.grace_s = provider, timeout_s, grace_s
        self._on_progress = on_progress
        self.roles = list(PARTIES) + ([DEALER] if provider == "TTP" else [])
        self._inbox = {r: deque() for r in self.roles}
        self._outcome = {}  # role -> ("done", result) | ("error", info) | ("exit", code) | ("lost", text)
        self._procs, self._links, self._serving = {}, {}, False
        self.session_id = secrets.token_hex(16)
        try:
            if deployment is None:
                started = placement.started or LocalRoles(target, provider, placement, timeout_s)
                self._procs, self._serving = started.processes, started.serving
                deployment, identity = started.agree(target, provider, max(60.0, timeout_s))
            self.deployment = deployment
            start = {"session": self.session_id, "target": target_name(target), "provider": provider,
                     "args": tuple(args)}
            for role in self.roles:
                self._links[role] = dial(identity, deployment, role, {"purpose": "control", "session": self.session_id},
                                         timeout_s, lambda role=role: self._ended(role))
                send_message(self._links[role], "start", start)
        except BaseException as err:
            culprit = (err.peers[0] if isinstance(err, PeerLost) else getattr(err, "peer", None)) or self.roles[0]
            self._stop_all(f"the session could not start: {err}")
            if isinstance(err, (PeerLost, ChannelIntegrityError)):
                raise PartyFailure(culprit, str(err)) from None
            raise

    def _ended(self, role: str) -> bool:
        """``role`` is a local process that has ended (e.g. a warm role that died between sessions): not dialled
        for ``timeout_s`` as a role still starting would be."""
        proc = self._procs.get(role)
        return proc is not None and proc.exitcode is not None

    @property
    def pids(self) -> dict:
        return {role: proc.pid for role, proc in self._procs.items()}

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self._finish()
        else:
            self._stop_all(INTERRUPTED if issubclass(exc_type, KeyboardInterrupt) else "the coordinator stopped the run")
        return False

    # messages ---------------------------------------------------------
    def send(self, role: str, kind: str, payload=None) -> None:
        try:
            send_message(self._links[role], kind, payload)
        except (PeerLost, ChannelIntegrityError) as err:
            self._outcome.setdefault(role, ("lost", str(err)))
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
        live = {self._links[r]: r for r in self.roles if r not in self._outcome}
        sentinels = {self._procs[r].sentinel: r for r in self.roles if r not in self._outcome and r in self._procs}
        for ready in wait(list(live) + list(sentinels), timeout):
            if ready in live:
                self._read(live[ready])
            elif sentinels[ready] not in self._outcome:
                role = sentinels[ready]
                self._links[role].wait_closed(5.0)  # what it sent before exiting is still arriving
                self._read(role)
                if role not in self._outcome:
                    self._procs[role].join(1.0)
                    self._outcome[role] = ("exit", self._procs[role].exitcode)
        for link, role in live.items():  # a role whose host went quiet
            if role not in self._outcome and link.silent_for() > self.timeout_s:
                self._outcome[role] = ("lost", f"no sign of life for {link.silent_for():.0f} s")

    def _read(self, role: str) -> None:
        """Handle every message waiting from ``role``; a failed link is its outcome."""
        link = self._links[role]
        while role not in self._outcome and link.poll(CONTROL):
            kind, payload = wire.decode(link.recv(CONTROL))
            if kind == "progress":
                if self._on_progress is not None:
                    self._on_progress(role, payload)
            elif kind in ("done", "error"):
                self._outcome[role] = (kind, payload)
                if kind == "done":
                    self._inbox[role].append((kind, payload))
            else:
                self._inbox[role].append((kind, payload))
        if role not in self._outcome and link.failure is not None:
            if role in self._procs and not isinstance(link.failure, ChannelIntegrityError):
                self._procs[role].join(1.0)
                if self._procs[role].exitcode is not None:
                    self._outcome[role] = ("exit", self._procs[role].exitcode)
                    return
            self._outcome[role] = ("lost", str(link.failure))

    # failure ------------------------------------------------------------
    def _failed_roles(self):
        return [r for r, (kind, payload) in self._outcome.items()
                if kind in ("error", "lost") or (kind == "exit" and payload != 0)]

    def _fail_if_needed(self, force_role=None) -> None:
        if not self._failed_roles() and force_role is None:
            return
        deadline = time.monotonic() + self.grace_s
        while time.monotonic() < deadline and any(r not in self._outcome for r in self.roles):
            self._pump(0.2)
        culprit = self._culprit() or force_role
        reports = {r: self._report(r) for r in self.roles}
        self._stop_all(f"{culprit} failed")
        deviation = [r for r, (kind, info) in self._outcome.items() if kind == "error" and info.get("kind") == DEVIATION]
        if deviation:  # a check found a deviating compute party: that is the failure, not the party that stopped
            raise DeviationDetected(deviation[0], reports[deviation[0]], reports)
        raise PartyFailure(culprit, reports[culprit], reports)

    def _culprit(self) -> str:
        """The role that failed first: dead or lost without a report, else named by others yet silent."""
        silent = [r for r, (kind, code) in self._outcome.items() if (kind == "exit" and code != 0) or kind == "lost"]
        if silent:
            return silent[0]
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
        if kind == "lost":
            return f"lost: {payload}"
        if kind == "done":
            return "finished"
        return "stalled or still running (stopped by the coordinator)"

    def _stop_all(self, reason: str) -> None:
        for link in self._links.values():
            try:
                link.send(ABORT, wire.encode(reason))
            except (PeerLost, ChannelIntegrityError):
                pass
        deadline = time.monotonic() + (0.0 if self._serving else 2.0)  # serving roles never exit of themselves
        for proc in self._procs.values():
            proc.join(max(0.0, deadline - time.monotonic()))
        for proc in self._procs.values():
            if proc.is_alive():  # stalled (e.g. SIGSTOP) or stuck outside Python
                proc.kill()
                proc.join(5.0)
        for link in self._links.values():
            link.close(flush_s=0.5)

    def _finish(self) -> None:
        while any(r not in self._outcome for r in self.roles):
            self._pump(1.0)
            self._fail_if_needed()
        self._fail_if_needed()
        for proc in () if self._serving else self._procs.values():  # serving roles wait for the next session
            proc.join(5.0)
        for link in self._links.values():
            link.close(flush_s=1.0)


@contextmanager
def _interrupts_ignored():
    """Role processes start with SIGINT ignored (kept across exec): a Ctrl-C at the terminal reaches the
    whole process group, and only the coordinator answers it; it stops every role (Session.__exit__)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def _main_script_hidden(target):
    """Start role processes without re-running the caller's script in them.

    A started child (forked by the fork server) imports the parent's ``__main__`` file (as ``__mp_main__``),
    so a plain script calling the API at top level, with no ``if __name__ == "__main__"`` guard, would run
    again in every role and fail.  The role targets live in importable modules, so while a role process starts,
    ``__main__`` is a bare module; unless the target itself is defined in the script.
    """
    main = sys.modules.get("__main__")
    if getattr(target, "__module__", None) == "__main__" or not getattr(main, "__file__", None):
        yield
        return
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def run_parties(target, args=(), **session_options) -> list:
    """Run ``target`` in both compute parties and return [P0's result, P1's result]."""
    with Session(target, args, **session_options) as session:
        return [session.recv(role, "done") for role in PARTIES]
