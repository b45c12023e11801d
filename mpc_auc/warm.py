"""Warm sessions: the local roles (P0, P1, the dealer) kept running between API calls.

Without a warm session every mpc-exact or mpc-central call spawns the three roles, each drawing its keys and
importing CrypTen, and stops them at its end.  A :class:`Session` starts them at its first call, in the serving
mode of deployed roles (protocols.runtime.roles.serve), on loopback with the keys pinned in memory at that first
call, and routes each later call to them as a session of its own: new TLS links, new dealer keys and triples,
new CSPRNG keys and masks, a new ticket and the parties' ledgers charged for that call, exactly as a cold call.
What calls share: the three processes, their TLS and sealing keys, their listening sockets.

Repeated API calls use one implicitly: the process's default session, made by the first call and stopped at
interpreter exit (``atexit``).  ``with mpc_auc.Session():`` scopes the roles to a block (stopped when it ends);
``with mpc_auc.Session(keep=False):`` or the environment variable ``MPC_AUC_WARM=0`` makes every call start and
stop its own roles, as before.  A role found dead before a call is replaced (the call starts fresh roles); a role
that fails during a call fails that call with PartyFailure, all three are stopped, and the next call starts fresh
ones.  Calls through one session run one at a time.
"""
import atexit
import dataclasses
import os
import threading
from contextlib import contextmanager

from .protocols.mpc.ranking_job import warm_roles
from .protocols.runtime.session import Placement

ENV = "MPC_AUC_WARM"  # "0": no implicit default session (each call starts its own roles)


class Session:
    """Keep the local roles alive between API calls (a context manager; see the module's docstring).

    keep: False makes the calls inside the block cold (each starts and stops its own roles).

    >>> import mpc_auc
    >>> with mpc_auc.Session() as session:
    ...     first = mpc_auc.roc_auc_score([0, 1, 0, 1], [0.1, 0.8, 0.3, 0.6], ci=False)
    ...     second = mpc_auc.roc_auc_score([0, 1, 1, 0], [0.2, 0.9, 0.4, 0.5], ci=False)
    ...     kept = len(session.pids)
    >>> round(first.auc, 6), round(second.auc, 6), kept
    (1.0, 0.75, 3)
    """

    def __init__(self, keep: bool = True):
        self.keep = keep
        self._roles = {}  # (placement, timeout) -> the serving LocalRoles for them
        self._lock = threading.RLock()

    def __enter__(self) -> "Session":
        _ENTERED.append(self)
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        _ENTERED.remove(self)
        self.close()
        return False

    @property
    def pids(self) -> tuple:
        """The process ids of the roles kept now (sorted; empty before the first call and after ``close``)."""
        with self._lock:
            return tuple(sorted(proc.pid for roles in self._roles.values() for proc in roles.processes.values()))

    @contextmanager
    def placement(self, placement: Placement, timeout_s: float):
        """``placement`` with this session's roles for it, started at their first call or afresh when one has
        died; a deployment, roles already started for the call, or ``keep=False``: ``placement`` as it is."""
        if not self.keep or placement.deployment is not None or placement.started is not None:
            yield placement
            return
        with self._lock:  # one call at a time: the roles serve one session after another
            key = (placement, timeout_s)
            roles = self._roles.get(key)
            if roles is None or not roles.alive():
                if roles is not None:
                    roles.stop()
                roles = self._roles[key] = warm_roles(placement, timeout_s)
            yield dataclasses.replace(placement, started=roles)

    def close(self) -> None:
        """Stop the roles this session keeps (a later call starts new ones)."""
        with self._lock:
            for roles in self._roles.values():
                roles.stop()
            self._roles.clear()


_ENTERED = []  # sessions entered with ``with``, innermost last
_DEFAULT = []  # the process's implicit session, made by the first call that needs it


def current() -> Session:
    """The session an API call runs in: the innermost ``with`` block's, else the process's default (a cold one
    when ``MPC_AUC_WARM=0``)."""
    if _ENTERED:
        return _ENTERED[-1]
    if os.environ.get(ENV, "1") == "0":
        return Session(keep=False)
    if not _DEFAULT:
        _DEFAULT.append(Session())
        atexit.register(_DEFAULT[0].close)
    return _DEFAULT[0]
