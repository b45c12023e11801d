"""The privacy ledger each compute party keeps: every DP release on an evaluation set is charged first.

A ledger lives in a directory of the party's own (``mpc-auc party --ledger``;
for local runs ``mpc-auc run --ledger``, default ``$XDG_STATE_HOME/mpc-auc/
ledger`` or ``~/.local/state/mpc-auc/ledger``), one JSON file per evaluation
set (named by the SHA-256 of its id), under the role's own subdirectory.
Writes are atomic and durable: a temporary file, fsync, rename, fsync of the
directory, all under an exclusive lock, so a party killed mid-write leaves
the previous state intact.

Accounting (stated in every result): each release of mpc-central is a set
of discrete Laplace mechanisms (parameter a = epsilon_i / Delta_i,
sensitivity Delta_i) plus the circuit's stated delta_i (truncation and
rounding, circuits.noise).  Their composition is computed with the privacy
loss distributions of Google's ``dp-accounting`` (PLD, pessimistic
discretisation): the spent epsilon is epsilon_PLD(delta_B - sum delta_i),
where delta_B is the budget's delta; basic composition (sum epsilon_i,
sum delta_i) is reported beside it as a cross-check and is never smaller
(and counts alone past MAX_PLD_TERMS mechanisms).

Budget: ``(epsilon_B, delta_B)`` per evaluation set, fixed by the first job
that names one; a later job may lower it, never raise it.  A party started
with ``--budget`` also enforces its own on every set, whatever a job asks.  A release that
would push the spent epsilon past epsilon_B (or the circuits' delta past
delta_B) is refused before any data moves.  Without any budget the ledger
records and reports only.
"""
import fcntl
import hashlib
import json
import math
import os
import secrets
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass

from ..errors import InputError
from ..validation import checked
from . import wire

DEFAULT_DELTA = 1e-9  # the budget's delta when only epsilon is given: room for the circuits' ~1e-13 per release
MAX_PLD_TERMS = 200  # beyond this many composed mechanisms, basic composition (module docstring)
ACCOUNTING = "dp-accounting PLD (pessimistic, discretisation 1e-4) over discrete Laplace; basic composition as check"


def default_directory() -> str:
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(state, "mpc-auc", "ledger")


@wire.message
@dataclass(frozen=True)
class Budget:
    epsilon: float
    delta: float = DEFAULT_DELTA

    def __post_init__(self):
        checked("epsilon", self.epsilon)
        checked("delta", self.delta)

    @classmethod
    def parse(cls, text: str) -> "Budget":
        """``EPS`` or ``EPS,DELTA``."""
        parts = text.split(",")
        try:
            values = [float(p) for p in parts]
        except ValueError:
            raise InputError(f"--budget must be EPS or EPS,DELTA, not {text!r}") from None
        if len(values) not in (1, 2):
            raise InputError(f"--budget must be EPS or EPS,DELTA, not {text!r}")
        return cls(*values)


@dataclass(frozen=True)
class Release:
    """One DP release: discrete Laplace terms (parameter, sensitivity) and the circuits' total delta."""
    protocol: str
    terms: tuple  # ((parameter, sensitivity), ...)
    circuit_delta: float

    @property
    def epsilon(self) -> float:
        return sum(a * s for a, s in self.terms)


@dataclass(frozen=True)
class Spent:
    epsilon: float  # PLD
    epsilon_basic: float
    delta: float  # the circuits' deltas, summed

    def as_dict(self) -> dict:
        return {"epsilon": self.epsilon, "epsilon_basic_composition": self.epsilon_basic, "delta": self.delta}


def compose(releases, delta: float) -> Spent:
    """Spent budget of ``releases`` at the target ``delta`` (module docstring).

    Identical mechanisms are self-composed (dp-accounting's FFT); past MAX_PLD_TERMS mechanisms (e.g.
    experiments that draw thousands of repetitions) the PLD is skipped and basic composition, never
    smaller, is what counts.
    """
    from dp_accounting.pld import privacy_loss_distribution as pld  # lazily: 0.9 s, only when a DP job composes

    circuit = sum(r.circuit_delta for r in releases)
    basic = sum(r.epsilon for r in releases)
    counts = Counter((float(a), int(s)) for r in releases for a, s in r.terms)
    if not counts or sum(counts.values()) > MAX_PLD_TERMS:
        return Spent(basic, basic, circuit)
    total = None
    for (parameter, sensitivity), count in counts.items():
        d = pld.from_discrete_laplace_mechanism(parameter, sensitivity=sensitivity,
                                                value_discretization_interval=1e-4)
        d = d.self_compose(count) if count > 1 else d
        total = d if total is None else total.compose(d)
    return Spent(min(basic, float(total.get_epsilon_for_delta(max(0.0, delta - circuit)))), basic, circuit)


@dataclass(frozen=True)
class LedgerPlace:
    """Where a party keeps its ledger (None: :func:`default_directory`) and the budget it enforces on every
    evaluation set of its own accord (None: only the budgets jobs name)."""
    directory: str = None
    budget: Budget = None

    def open(self, role: str) -> "Ledger":
        return Ledger(self.directory or default_directory(), role, self.budget)


class Ledger:
    """One role's ledger directory, with the role's own budget (``mpc-auc party --budget``), if any.

    Evaluation sets are named by ids (``ids``: a tuple); a release is charged to every id the job names and
    must fit under each one's budget, so a job that adds an id of its own narrows what it may spend, never
    resets it.  :meth:`charge` decides and records under one exclusive file lock, so concurrent jobs on
    one ledger directory are serialised.
    """

    def __init__(self, directory: str, role: str, own_budget: Budget = None):
        self.directory = os.path.join(directory, role)
        self.own_budget = own_budget
        os.makedirs(self.directory, mode=0o700, exist_ok=True)

    def _path(self, dataset: str) -> str:
        return os.path.join(self.directory, hashlib.sha256(dataset.encode()).hexdigest()[:32] + ".json")

    @contextmanager
    def _locked(self):
        with open(os.path.join(self.directory, ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    def state(self, dataset: str) -> dict:
        try:
            with open(self._path(dataset)) as f:
                return json.load(f)
        except FileNotFoundError:
            return {"dataset": dataset, "budget": None, "releases": []}

    @staticmethod
    def _releases(state) -> list:
        return [Release(r["protocol"], tuple(tuple(t) for t in r["terms"]), r["circuit_delta"])
                for r in state["releases"] if not r.get("void")]

    def _budget(self, state, requested):
        """The tightest of the recorded budget, the requested one and this role's own."""
        budgets = [b for b in (Budget(*state["budget"]) if state["budget"] else None, requested, self.own_budget)
                   if b is not None]
        if not budgets:
            return None
        return Budget(min(b.epsilon for b in budgets), min(b.delta for b in budgets))

    def effective_budget(self, ids, requested=None):
        """The budget a release on ``ids`` must fit (the tightest over the ids), or None: nothing to fit."""
        budgets = [b for b in (self._budget(self.state(d), requested) for d in ids) if b is not None]
        if not budgets:
            return None
        return Budget(min(b.epsilon for b in budgets), min(b.delta for b in budgets))

    def _decide_one(self, dataset: str, budget, release: Release) -> dict:
        state = self.state(dataset)
        budget = self._budget(state, budget)
        target = budget.delta if budget else DEFAULT_DELTA
        before = compose(self._releases(state), target)
        after = compose(self._releases(state) + [release], target)
        fits = budget is None or (after.epsilon <= budget.epsilon * (1 + 1e-9) and after.delta <= budget.delta)
        message = ""
        if not fits:
            whose = " (this party's own budget)" if self.own_budget and budget.epsilon == self.own_budget.epsilon \
                else ""
            message = (f"privacy budget exceeded for evaluation set {dataset!r}: spent epsilon "
                       f"{before.epsilon:.6g} (delta {before.delta:.3g}) of the budget ({budget.epsilon:g}, "
                       f"{budget.delta:g}){whose}; this release requests epsilon {release.epsilon:g}, which "
                       f"would make {after.epsilon:.6g}")
        return {"fits": fits, "budget": budget, "spent": before, "after": after, "message": message,
                "dataset": dataset}

    def decide(self, ids, budget, release: Release) -> dict:
        """Would ``release`` fit under every id's budget?  The verdict of the tightest id: {"fits", "budget",
        "spent" (before), "after", "message", "dataset"}."""
        verdicts = [self._decide_one(d, budget, release) for d in ids]
        failing = [v for v in verdicts if not v["fits"]]
        if failing:
            return failing[0]
        return min(verdicts, key=lambda v: (v["budget"].epsilon - v["after"].epsilon) if v["budget"] else math.inf)

    def charge(self, ids, budget, release: Release) -> dict:
        """Decide and, if the release fits, record it under every id, atomically (one lock for both); the
        verdict, with ``entry`` (for :meth:`void`) when charged."""
        with self._locked():
            verdict = self.decide(ids, budget, release)
            if verdict["fits"]:
                verdict["entry"] = self._append(ids, budget, release)
        return verdict

    def record(self, ids, release: Release) -> None:
        """Record a release that spends no budget (e.g. ranks delivered to their clients)."""
        with self._locked():
            self._append(ids, None, release)

    def void(self, entry, reason: str) -> None:
        """Mark a charged release as not made (the job stopped before opening it); kept, with the reason."""
        ids, stamp = entry
        with self._locked():
            for dataset in ids:
                state = self.state(dataset)
                for r in state["releases"]:
                    if r.get("entry") == stamp:
                        r["void"] = reason
                _write_durably(self._path(dataset), json.dumps(state, indent=1))

    def _append(self, ids, budget, release: Release):
        stamp = secrets.token_hex(8)
        for dataset in ids:
            state = self.state(dataset)
            if budget is not None:
                old = state["budget"]
                state["budget"] = [min(old[0], budget.epsilon), min(old[1], budget.delta)] if old else \
                    [budget.epsilon, budget.delta]
            state["releases"].append({"protocol": release.protocol, "terms": [list(t) for t in release.terms],
                                      "circuit_delta": release.circuit_delta, "epsilon": release.epsilon,
                                      "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "entry": stamp})
            _write_durably(self._path(dataset), json.dumps(state, indent=1))
        return tuple(ids), stamp


def _write_durably(path: str, text: str) -> None:
    directory = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=".ledger-", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
