"""A serving role: P0, P1 or the dealer on its own host, listening on exactly one configured address.

A role waits for a coordinator to open a *control link* (TLS, its pinned
certificate) and send ``start``: the session id, the target to run (by
name: a deployed role runs only the services it registered, protocols.runtime.control)
and the provider.  It then opens the session's *mesh*: P1 dials P0, the dealer
dials P0 and P1, each link TLS with both certificates pinned and a HELLO
naming the session; it installs the secure communicator
(protocols.runtime.communicator) and CSPRNG randomness (protocols.runtime.csprng) into
CrypTen, runs the target, reports ``done`` or ``error`` to the coordinator
and closes the mesh.  Then it serves the next session.

Failure: a peer that dies, stalls or sends a tampered record makes the
target raise (PeerLost / ChannelIntegrityError naming it), the role reports
the error and drops the session; a coordinator that sends ``abort`` or
stops answering (no heartbeat for ``timeout_s``) ends the session the same
way.  A role started for one session only (``once``, the local
one-command run) exits instead: status 0 after a clean session, 1 after an
error, 3 when the coordinator aborted it or went silent.
"""
import os
import sys
import threading

import torch

from ...circuits import workers
from ...circuits.crypten_compat import crypten
from ..errors import ChannelIntegrityError, PeerLost
from . import csprng, wire
from .communicator import SecureCommunicator
from .control import ABORT, ABORT_EXIT, INTERRUPTED, load_services, recv_message, resolve_target, send_message
from .dealer import Dealer
from .identity import COMPUTE, COORDINATOR, DEALER
from .ledger import LedgerPlace
from .link import dial
from .listener import Listener
from .metrics import TrafficMeter, phase

ABORT_GRACE_S = 0.5  # how long a role that lost a compute peer awaits the coordinator's abort before it says so (the
#                      coordinator waits for every report before it names a culprit: each failure pays it)


class RoleContext:
    """What a target sees of the runtime: its role and rank, its keys, and its control link.

    stream_key: the dealer key k_p of this party (protocols.runtime.csprng; provider TTP), from which
    the shuffles' correlations are expanded.  seal_key: the X25519 key clients seal shares to.
    deployment: the session's pinned roles (protocols.runtime.deployment).
    ledger: this party's privacy ledger.  listener: this role's listening socket, where clients
    submitting directly connect (protocols.inputs.intake).
    """

    def __init__(self, role, rank, provider, control, identity=None, stream_key=None, ledger=None, listener=None,
                 deployment=None):
        self.role, self.rank, self.provider, self.deployment = role, rank, provider, deployment
        self._identity = identity
        self.stream_key = stream_key
        self.seal_key = identity.seal_key if identity is not None else None
        self.ledger = ledger  # protocols.runtime.ledger.Ledger of this party: DP releases are charged to it
        self.listener = listener
        self._control = control

    def send(self, kind: str, payload=None) -> None:
        send_message(self._control, kind, payload)

    def recv(self, kind: str):
        got, payload = recv_message(self._control, f"waiting for {kind!r} from the coordinator")
        if got != kind:
            raise RuntimeError(f"{self.role} expected a {kind!r} message from the coordinator, got {got!r}")
        return payload

    def progress(self, text: str) -> None:
        phase(text)
        self.send("progress", text)

    def sign(self, data: bytes) -> bytes:
        """This role's Ed25519 signature (its identity key, pinned in the deployment)."""
        return self._identity.tls_key.sign(data)


def prepare_process(services=()) -> None:
    """Once per role process: the modules of the ``services`` it offers, its worker threads (the command's
    ``--threads``, handed down in the environment; 1 without it), as many torch threads, torch's RNG disabled,
    CrypTen's randomness from the CSPRNG."""
    load_services(services)
    count = int(os.environ.get(workers.ENV, "1"))
    workers.set_threads(count)
    torch.set_num_threads(count)
    csprng.install()
    csprng.forbid_torch_rng()


def serve(identity, deployment, listener: Listener, local_targets=None, once: bool = False,
          ledger=None) -> None:
    """Serve sessions from coordinators until stopped (SIGTERM), or one session if ``once``.

    ledger: protocols.runtime.ledger.LedgerPlace: where this party keeps its privacy ledger and its own budget
    (default: protocols.runtime.ledger.default_directory(), no budget of its own).
    """
    while True:
        taken = listener.take(lambda h: h.get("purpose") == "control" and h["from"] == COORDINATOR,
                              listener.timeout_s if once else None)
        if taken is None:
            _log(identity.role, "stopping: the coordinator did not connect")
            os._exit(ABORT_EXIT)
        control = taken[1]
        ok = _session(identity, deployment, listener, control, local_targets or {}, once, ledger)
        if once:
            sys.stderr.flush()
            os._exit(0 if ok else 1)


def _stop(role: str, reason: str, detail: str = "") -> None:
    """End a one-session role the coordinator gave up on; say why, unless its user already knows (Ctrl-C)."""
    if reason != INTERRUPTED:
        _log(role, f"stopping: {reason}{detail}")
    os._exit(ABORT_EXIT)


def _log(role: str, text: str) -> None:
    sys.stderr.write(f"[{role}] {text}\n")
    sys.stderr.flush()


def _session(identity, deployment, listener, control, local_targets, once, ledger) -> bool:
    """Run one session; True when it ended cleanly."""
    role = identity.role
    mesh, session = {}, None
    finished = threading.Event()
    try:
        kind, start = recv_message(control, "start")
        if kind != "start":
            raise RuntimeError(f"expected 'start' from the coordinator, got {kind!r}")
        session, provider = str(start["session"]), start["provider"]
        roles = COMPUTE + ((DEALER,) if provider == "TTP" else ())
        if role not in roles:
            raise RuntimeError(f"{role} has no part in a {provider} session")
        target = resolve_target(start["target"], local_targets) if role != DEALER else local_targets.get(DEALER)
        _watch_coordinator(role, control, mesh, finished, once)
        mesh.update(_connect_mesh(identity, deployment, listener, session, roles, control.timeout_s))
        names = dict(enumerate(roles))
        rank = roles.index(role)
        SecureCommunicator.install(SecureCommunicator(rank, len(COMPUTE), {roles.index(p): link for p, link in
                                                                             mesh.items()}, names, provider == "TTP"))
        crypten.cfg.mpc.provider = provider
        crypten.cfg.communicator.verbose = True  # count rounds and bytes
        result = _run(role, rank, provider, control, identity, target, start.get("args", ()), ledger, listener,
                      deployment)
        send_message(control, "done", result)
        return True
    except BaseException as err:  # report anything to the coordinator, then drop the session
        # a peer may have left for that reason first: a compute peer lost may be the coordinator's abort (a Ctrl-C)
        # reaching that peer a moment before this role, so its abort is awaited a moment before anything is said
        lost_peer = isinstance(err, PeerLost) and COORDINATOR not in err.peers
        gone = _coordinator_gone(control, control.timeout_s / 2, ABORT_GRACE_S if lost_peer else 0.0)
        if once and gone is not None:
            _stop(role, gone, f" ({type(err).__name__}: {err})")
        peers = list(err.peers) if isinstance(err, PeerLost) else []
        if isinstance(err, ChannelIntegrityError):
            peers = [err.peer]
        _log(role, f"{type(err).__name__}: {err}")
        try:
            send_message(control, "error", {"message": f"{type(err).__name__}: {err}", "peers": peers,
                                            "kind": type(err).__name__})
        except (PeerLost, ChannelIntegrityError, OSError):
            pass
        if isinstance(err, (KeyboardInterrupt, SystemExit)):
            raise
        return False
    finally:
        finished.set()
        _reset_crypten()
        for link in mesh.values():
            link.close(flush_s=1.0)
        control.close(flush_s=3 * control.timeout_s)  # the result may be large: let it reach the coordinator
        if session is not None:
            listener.drop(lambda h: h.get("session") == session)


def _run(role, rank, provider, control, identity, target, args, ledger, listener, deployment):
    if role == DEALER:  # CrypTen's TTP loop with CSPRNG keys; returns when P0 sends "terminate"
        (target or Dealer)(identity.seal_key)
        return TrafficMeter(since_session_start=True).read()
    crypten.init()
    stream_key = None
    if provider == "TTP":
        stream_key = csprng.dealer_key()
    own_ledger = (ledger or LedgerPlace()).open(role)
    result = target(RoleContext(role, rank, provider, control, identity, stream_key, own_ledger, listener,
                                deployment), *args)
    crypten.uninit()
    return result


def _reset_crypten() -> None:
    """Forget the session's communicator and dealer client, so the next session starts clean."""
    SecureCommunicator.instance = SecureCommunicator._pending = None
    crypten.mpc.provider.ttp_provider.TTPClient.uninit()


def _connect_mesh(identity, deployment, listener, session: str, roles, timeout_s: float) -> dict:
    """TLS links to every other role of the session: dial those before this role, accept those after it."""
    me = roles.index(identity.role)
    links = {}
    hello = {"purpose": "mesh", "session": session}
    for peer in roles[:me]:
        links[peer] = dial(identity, deployment, peer, hello, timeout_s)
    for peer in roles[me + 1:]:
        taken = listener.take(lambda h, p=peer: h.get("purpose") == "mesh" and h.get("session") == session
                              and h["from"] == p, timeout_s)
        if taken is None:
            for link in links.values():
                link.close(flush_s=0.5)
            raise PeerLost([peer], "connect", TimeoutError(f"{peer} did not connect within {timeout_s:.0f} s"))
        links[peer] = taken[1]
    return links


def _coordinator_gone(control, patience_s: float, wait_s: float = 0.0):
    """Why the coordinator counts as gone (it aborted, disconnected or was silent ``patience_s``), or None;
    ``wait_s``: how long an abort that may be on its way is awaited."""
    if control.poll(ABORT, wait_s):
        return wire.decode(control.recv(ABORT))
    if control.failure is not None:
        return f"the coordinator went away ({control.failure})"
    if control.silent_for() > patience_s:
        return f"the coordinator stopped answering for {control.silent_for():.0f} s"
    return None


def _watch_coordinator(role, control, mesh, finished, once) -> None:
    """Stop the session when the coordinator aborts it, goes away or stops answering."""

    def watch():
        while not finished.wait(0.2):
            reason = _coordinator_gone(control, control.timeout_s)
            if reason is None:
                continue
            if once:
                _stop(role, reason)
            cause = PeerLost([COORDINATOR], "session", ConnectionAbortedError(reason))
            for link in list(mesh.values()):
                link.abort(cause)
            control.abort(cause)
            return

    threading.Thread(target=watch, name=f"{role} watchdog", daemon=True).start()
