"""Warm sessions: the local roles (P0, P1, the dealer) kept running between API calls.

Without a warm session every mpc-exact or mpc-central call spawns the three roles, each drawing its keys and
importing CrypTen, and stops them at its end.  A :class:`Session` starts them at its first call, in the serving
mode of deployed roles (protocols.runtime.roles.serve), on the call's ``Context.host`` (loopback by default) with
the keys pinned in memory at that first call, listening there until the session stops, and routes each later call to them as a session of its own: new TLS links, new dealer keys and triples,
new CSPRNG keys and masks, a new ticket and the parties' ledgers charged for that call, exactly as a cold call.
What calls share: the three processes, their TLS and sealing keys, their listening sockets.

Repeated API calls use one implicitly: the process's default session, made by the first call and stopped at
interpreter exit (``atexit``).  ``with mpc_auc.Session():`` scopes the roles to a block (stopped when it ends);
``with mpc_auc.Session(keep=False):`` or the environment variable ``MPC_AUC_WARM=0`` makes every call start and
stop its own roles, as before.  A role found dead before a call is replaced (the call starts fresh roles); a role
that fails during a call fails that call with PartyFailure, all three are stopped, and the next call starts fresh
ones.  Calls through one session run one at a time.  A ``with`` block scopes the calls of its own thread; other
threads use the default session.  A process forked after the roles started (``os.fork``, a fork-context pool)
forgets them (they are its parent's) and starts its own at its first call.
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
    """Keep the local roles (P0, P1, the dealer) alive between API calls: a context manager.

    Each call is still its own session: new TLS links, dealer keys, triples, masks and ledger charges; the calls
    share the three processes and their keys (the module's docstring, docs/api.md "Warm sessions").

    Parameters
    ----------
    keep : bool
        False: the calls inside the block are cold (each starts and stops its own roles).

    Returns
    -------
    Session
        Entered with ``with``: the block's calls use it; the roles stop when the block ends.

    See Also
    --------
    mpc_auc.roc_auc_score, mpc_auc.evaluate : calls that use it.

    Examples
    --------
    >>> import mpc_auc
    >>> with mpc_auc.Session() as session:
    ...     first = mpc_auc.roc_auc_score([0, 1, 0, 1], [0.1, 0.8, 0.3, 0.6], ci=False)
    ...     kept = session.pids
    ...     second = mpc_auc.roc_auc_score([0, 1, 1, 0], [0.2, 0.9, 0.4, 0.5], ci=False)
    ...     same = session.pids == kept
    >>> round(first.auc, 6), round(second.auc, 6), len(kept), same, session.pids
    (1.0, 0.75, 3, True, ())
    """

    def __init__(self, keep: bool = True):
        self.keep = keep
        self._forget()

    def _forget(self) -> None:
        """Hold no roles: at the start, and in a forked child, whose inherited roles are its parent's to stop."""
        self._key, self._roles = None, None  # the serving LocalRoles kept, and the (placement, timeout) they serve
        self._lock, self._pid = threading.RLock(), os.getpid()

    def _owned(self) -> None:
        """In a process forked after the roles started (os.fork, a fork-context Pool): forget them."""
        if self._pid != os.getpid():
            self._forget()

    def __enter__(self) -> "Session":
        _entered().append(self)
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        _entered().remove(self)
        self.close()
        return False

    @property
    def pids(self) -> tuple:
        """The process ids of the roles kept now (sorted; empty before the first call and after ``close``)."""
        self._owned()
        with self._lock:
            return () if self._roles is None else tuple(sorted(proc.pid for proc in self._roles.processes.values()))

    @contextmanager
    def _placement(self, placement: Placement, timeout_s: float):
        """``placement`` with this session's roles for it, started at their first call, or afresh when one has
        died or the last call asked for other roles (another host, port, ledger or timeout: the session keeps one
        set); a deployment, roles already started for the call, or ``keep=False``: ``placement`` as it is."""
        if not self.keep or placement.deployment is not None or placement.started is not None:
            yield placement
            return
        self._owned()
        with self._lock:  # one call at a time: the roles serve one session after another
            if (placement, timeout_s) != self._key or not self._roles.alive():
                self.close()
                self._roles, self._key = warm_roles(placement, timeout_s), (placement, timeout_s)
            yield dataclasses.replace(placement, started=self._roles)

    def close(self) -> None:
        """Stop the roles this session keeps now; a later call starts new ones (``with`` calls it at the end).

        Returns
        -------
        None

        See Also
        --------
        Session.pids : the process ids of the roles kept.

        Examples
        --------
        >>> session = Session()
        >>> session.close()
        >>> session.pids
        ()
        """
        self._owned()
        with self._lock:
            if self._roles is not None:
                self._roles.stop()
            self._key, self._roles = None, None


_THREAD = threading.local()  # .entered: the sessions this thread entered with ``with``, innermost last
_DEFAULT = []  # the process's implicit session, made by the first call that needs it
_MAKING = threading.Lock()  # two threads' first calls make one default session


def current() -> Session:
    """The session an API call runs in: the innermost ``with`` block of this thread's, else the process's default
    (a cold one when ``MPC_AUC_WARM=0``)."""
    if _entered():
        return _entered()[-1]
    if os.environ.get(ENV, "1") == "0":
        return Session(keep=False)
    with _MAKING:
        if not _DEFAULT:
            _DEFAULT.append(Session())
            atexit.register(_DEFAULT[0].close)
    return _DEFAULT[0]


def _entered() -> list:
    """The sessions the calling thread entered with ``with``, innermost last."""
    if not hasattr(_THREAD, "entered"):
        _THREAD.entered = []
    return _THREAD.entered


def placement(placement: Placement, timeout_s: float):
    """A context manager giving ``placement`` with the roles of the current session (:func:`current`) for an API
    call (mpc_auc.planner.execute); the call runs inside it."""
    return current()._placement(placement, timeout_s)
