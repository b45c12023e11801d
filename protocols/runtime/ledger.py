"""The privacy ledger each compute party keeps: every release is charged, first, to the people whose rows it used.

The unit of privacy is a data owner.  A ledger lives in a directory of the party's own (``mpc-auc party
--ledger``; for local runs ``mpc-auc run --ledger``, default ``$XDG_STATE_HOME/mpc-auc/ledger`` or
``~/.local/state/mpc-auc/ledger``): one SQLite database under the role's own subdirectory (:class:`Ledger`),
which records each release in all its *accounts* or in none, durably, one job at a time.

A release is charged to two kinds of account (a :class:`Charge`; protocols.mpc.accounting says which):

* **owners**, each data owner whose rows it used: a client submitting directly by its key
  (``client-key-sha256:``; one account whatever its name, roster or evaluation), a relayed job's declared
  owner (``owner:NAME``: its coordinator holds those rows itself).  An owner's budget is this role's own
  (``mpc-auc party --budget``) tightened, for one job only, by what the job asks: it is never recorded, so
  no organiser raises it, nor lowers it for the jobs of others.
* **sets**, ids of the evaluation set (the roster's key set, a local run's rows as a multiset, a declared
  ``--dataset-id``): a budget fixed by the first job that names one, which a later job may lower, never
  raise.  A set id only narrows: adding one never resets an owner's spend.

DP releases must fit every account's budget and are then recorded in all of them.  Accounting (stated in
every result): an mpc-central release is a set of discrete Laplace mechanisms (parameter a = eps_i /
Delta_i, sensitivity Delta_i) plus the circuit's stated delta_i (circuits.noise_laws); a release known only
as (eps, delta)-DP (a client's own ledger, protocols.inputs.own_ledger) enters as that privacy pair's
dominating mechanism.  Composition: Google's ``dp-accounting`` privacy loss distributions (PLD, pessimistic
discretisation 1e-4), spent epsilon = eps_PLD(delta_B - sum delta_i); basic composition (sum eps_i, sum
delta_i) beside it, never smaller, and alone past MAX_PLD_TERMS mechanisms.

Exact releases (not DP: the exact AUC, ranks, curves, the partial AUC, ...) are counted per owner, not
composed: the owner's signed terms bound their number (:attr:`Charge.limits`), and every exact release of
an owner's rows is pinned to the client set, the AUC's decimals and weight precision of its first, and to the
curves' cuts and the partial AUC's max FPR of its first with each (docs/protocols/mpc-exact.md, "Exact releases
across evaluations": what a sequence may open at most).
"""
import functools
import json
import math
import os
import secrets
import sqlite3
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass

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


def _tightest(*budgets):
    """The tightest of the budgets given (None for none)."""
    budgets = [b for b in budgets if b is not None]
    return Budget(min(b.epsilon for b in budgets), min(b.delta for b in budgets)) if budgets else None


@dataclass(frozen=True)
class Exact:
    """What an exact release's openings depend on besides the rows: the clients' set and the public parameters."""
    clients: tuple  # the participating owners' account ids, sorted
    points: int = None  # the curves' cuts, when curves are opened
    max_fpr: float = None  # where the partial AUC stops, when it is opened
    decimals: int = None  # the AUC's decimals (None: 52 bits)
    weight_bits: int = None  # a weighted AUC's weight precision (None: unweighted)


@dataclass(frozen=True)
class Release:
    """One release: discrete Laplace terms (parameter, sensitivity) and the circuits' total delta; or an
    (epsilon, delta)-DP release known by its parameters only (``pure_epsilon``); or an exact one (``exact``)."""
    protocol: str
    terms: tuple  # ((parameter, sensitivity), ...)
    circuit_delta: float
    pure_epsilon: float = None
    exact: Exact = None

    @property
    def epsilon(self) -> float:
        return self.pure_epsilon if self.pure_epsilon is not None else sum(a * s for a, s in self.terms)

    def entry(self) -> dict:
        """The release as a ledger file records it."""
        out = {"protocol": self.protocol, "terms": [list(t) for t in self.terms], "circuit_delta": self.circuit_delta,
               "epsilon": self.epsilon}
        if self.pure_epsilon is not None:
            out["pure_epsilon"] = self.pure_epsilon
        if self.exact is not None:
            out["exact"] = {"clients": list(self.exact.clients), "points": self.exact.points,
                            "max_fpr": self.exact.max_fpr, "decimals": self.exact.decimals,
                            "weight_bits": self.exact.weight_bits}
        return out

    @classmethod
    def of(cls, entry: dict) -> "Release":
        """The release a ledger entry records."""
        exact = entry.get("exact")
        return cls(entry["protocol"], tuple(tuple(t) for t in entry["terms"]), entry["circuit_delta"],
                   entry.get("pure_epsilon"),
                   Exact(tuple(exact["clients"]), exact["points"], exact["max_fpr"], exact.get("decimals"),
                         exact.get("weight_bits")) if exact else None)


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
    circuit = sum(r.circuit_delta for r in releases)
    basic = sum(r.epsilon for r in releases)
    counts = Counter([("laplace", float(a), int(s)) for r in releases if r.pure_epsilon is None for a, s in r.terms]
                     + [("pair", float(r.pure_epsilon), 0) for r in releases if r.pure_epsilon is not None])
    if not counts or sum(counts.values()) > MAX_PLD_TERMS:
        return Spent(basic, basic, circuit)
    total = None
    for mechanism, count in counts.items():
        d = _mechanism_pld(*mechanism, count)
        total = d if total is None else total.compose(d)
    return Spent(min(basic, float(total.get_epsilon_for_delta(max(0.0, delta - circuit)))), basic, circuit)


@functools.lru_cache(maxsize=256)
def _mechanism_pld(kind: str, parameter: float, sensitivity: int, count: int):
    """The PLD of ``count`` runs of one mechanism (a discrete Laplace, or an (epsilon, 0) pair's dominating one),
    remembered: building it takes a second at the sensitivities of large sets, and a ledger composes the same few
    mechanisms for every account and job."""
    from dp_accounting.pld import common, privacy_loss_distribution as pld  # lazily: 0.9 s, when a DP job composes

    if kind == "laplace":
        d = pld.from_discrete_laplace_mechanism(parameter, sensitivity=sensitivity, value_discretization_interval=1e-4)
    else:
        d = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(parameter),
                                        value_discretization_interval=1e-4)
    return d.self_compose(count) if count > 1 else d


@dataclass(frozen=True)
class Charge:
    """What one job charges, and to whom (module docstring)."""
    release: Release
    owners: tuple = ()  # (account id, the name messages show) of each owner whose rows the release used
    sets: tuple = ()  # the evaluation set's account ids
    budget: Budget = None  # what the job asks for
    limits: tuple = ()  # exact releases: the most each owner (in order) accepts, None for no limit of its own

    @property
    def accounts(self) -> tuple:
        """Every account charged, each once."""
        return tuple(dict.fromkeys([a for a, _ in self.owners] + list(self.sets)))


@wire.message
@dataclass(frozen=True)
class Standing:
    """What one party's ledger holds for one owner, as that party states it in the owner's ticket."""
    party: str
    spent_epsilon: float  # composed at the budget's delta (DEFAULT_DELTA without one)
    spent_delta: float
    budget: tuple = None  # (epsilon, delta) this party enforces for the owner in this job, None: none
    exact_releases: int = 0
    pinned_clients: int = None  # exact releases pinned to a set of this many clients (None: none yet)
    pinned_points: int = None
    pinned_max_fpr: float = None

    def describe(self) -> str:
        budget = f" of a budget of {self.budget[0]:g}" if self.budget else " (no budget)"
        pins = [f"{self.pinned_clients} client(s)"] if self.pinned_clients is not None else []
        pins += [f"{self.pinned_points} cuts"] if self.pinned_points is not None else []
        pins += [f"max FPR {self.pinned_max_fpr:g}"] if self.pinned_max_fpr is not None else []
        return (f"{self.party}: your key has spent epsilon {self.spent_epsilon:.6g}{budget}, "
                f"{self.exact_releases} exact release(s)" + (f" pinned to {', '.join(pins)}" if pins else ""))


@dataclass(frozen=True)
class LedgerPlace:
    """Where a party keeps its ledger (None: :func:`default_directory`) and the budget it enforces on every
    owner and set of its own accord (None: only the budgets jobs name)."""
    directory: str = None
    budget: Budget = None

    def open(self, role: str) -> "Ledger":
        return Ledger(self.directory or default_directory(), role, self.budget)


class Ledger:
    """One role's ledger, a SQLite database in its directory, with the role's own budget (``mpc-auc party
    --budget``), if any.

    Tables: ``releases`` (each release once: its entry stamp, its record as JSON, why it was voided), ``charged``
    (account, entry: which accounts a release was charged to), ``budgets`` (a set's recorded budget).
    :meth:`charge` decides and records inside one immediate transaction, so concurrent jobs on one directory are
    serialised and a release is recorded in all its accounts or in none, durably (``synchronous=FULL``: a party
    killed mid-write leaves the previous state); owners whose histories are the same are decided once, so a
    release over many owners (a local run whose every row is its own client) costs one composition per
    distinct history.  :meth:`void` marks a charged release as not made.
    """

    def __init__(self, directory: str, role: str, own_budget: Budget = None):
        self.role = role
        self.directory = os.path.join(directory, role)
        self.own_budget = own_budget
        os.makedirs(self.directory, mode=0o700, exist_ok=True)
        self.path = os.path.join(self.directory, "ledger.sqlite3")
        with self._database() as db:
            db.executescript(_SCHEMA)

    @contextmanager
    def _database(self, write: bool = False):
        """A connection; with ``write``, inside one immediate transaction (committed on leaving, else rolled back)."""
        db = sqlite3.connect(self.path, timeout=LOCK_WAIT_S, isolation_level=None)
        try:
            db.execute("PRAGMA synchronous=FULL")
            if not write:
                yield db
                return
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        finally:
            db.close()

    def state(self, account: str) -> dict:
        """What the ledger holds for ``account``: {"dataset", "budget" ([epsilon, delta] recorded, or None),
        "releases" (each a record: protocol, terms, epsilon, ..., entry, time, and void where voided)}."""
        with self._database() as db:
            budget = db.execute("SELECT epsilon, delta FROM budgets WHERE account = ?", (account,)).fetchone()
            rows = db.execute("SELECT r.record, r.void FROM charged c JOIN releases r ON r.entry = c.entry "
                              "WHERE c.account = ? ORDER BY r.rowid", (account,)).fetchall()
        return {"dataset": account, "budget": list(budget) if budget else None,
                "releases": [{**json.loads(record), **({"void": void} if void else {})} for record, void in rows]}

    @staticmethod
    def releases(state) -> list:
        """The releases an account's state records, the void ones left out."""
        return [Release.of(r) for r in state["releases"] if not r.get("void")]

    def _budget(self, recorded, requested):
        """The tightest of an account's recorded budget (a set's; an owner's is None), the job's and this role's."""
        return _tightest(Budget(*recorded) if recorded else None, requested, self.own_budget)

    def effective_budget(self, sets, requested=None):
        """The budget a release on ``sets`` must fit at the least (owners' accounts add no budget of their own)."""
        return _tightest(self._budget(None, requested),
                         *(self._budget(self.state(s)["budget"], requested) for s in sets))

    def standing(self, account: str, requested=None) -> Standing:
        """What this ledger holds for the owner ``account``: its spend, the budget it must fit, its exact
        releases and their pins."""
        budget = self._budget(None, requested)
        releases = self.releases(self.state(account))
        spent = compose(releases, budget.delta if budget else DEFAULT_DELTA)
        exact = [r.exact for r in releases if r.exact is not None]
        pins = _pins(exact)
        return Standing(self.role, spent.epsilon, spent.delta, (budget.epsilon, budget.delta) if budget else None,
                        len(exact), len(pins["clients"]) if exact else None, pins["points"], pins["max_fpr"])

    def _histories(self, db, accounts) -> dict:
        """account -> the entries of its releases not voided, in order (a tuple; empty for a new account)."""
        db.execute("CREATE TEMP TABLE IF NOT EXISTS wanted (account TEXT PRIMARY KEY)")
        db.execute("DELETE FROM wanted")
        db.executemany("INSERT OR IGNORE INTO wanted VALUES (?)", ((a,) for a in accounts))
        found = {a: [] for a in accounts}
        for account, entry in db.execute("SELECT c.account, c.entry FROM charged c JOIN wanted w ON w.account = "
                                         "c.account JOIN releases r ON r.entry = c.entry WHERE r.void IS NULL "
                                         "ORDER BY r.rowid"):
            found[account].append(entry)
        return {a: tuple(e) for a, e in found.items()}

    def _decide(self, db, charge: Charge) -> dict:
        """Would the release fit every account of ``charge``?  The verdict of the first that refuses, else of the
        one with the least room left: {"fits", "budget", "spent" (before), "after", "message", "account"}."""
        histories = self._histories(db, charge.accounts)  # fills the temporary table ``wanted``
        records = {entry: Release.of(json.loads(record)) for entry, record in db.execute(
            "SELECT entry, record FROM releases WHERE entry IN (SELECT c.entry FROM charged c JOIN wanted w ON "
            "w.account = c.account)")}
        recorded = {a: (e, d) for a, e, d in db.execute("SELECT account, epsilon, delta FROM budgets JOIN wanted "
                                                        "USING (account)")}
        release, verdicts = charge.release, []
        groups = {}  # an owners' history -> its owners (account, name, limit): owners alike are decided once
        limits = list(charge.limits) + [None] * (len(charge.owners) - len(charge.limits))
        for (account, name), limit in zip(charge.owners, limits):
            groups.setdefault(histories[account], []).append((account, name, limit))
        owners_budget = self._budget(None, charge.budget)
        for history, members in groups.items():
            found = _verdict(self, [records[e] for e in history], owners_budget, release)
            account, name, _ = members[0]
            if found["fits"] and release.exact is not None:
                earlier = [records[e].exact for e in history if records[e].exact is not None]
                why = next((w for a, n, limit in members if (w := _exact_refusal(n, earlier, release.exact, limit))),
                           "")
                found.update(fits=not why, message=why)
            verdicts.append({**found, "account": account, "message": found["message"].replace(WHO, f"client {name!r}")})
        for account in charge.sets:
            found = _verdict(self, [records[e] for e in histories[account]],
                             self._budget(recorded.get(account), charge.budget), release)
            verdicts.append({**found, "account": account,
                             "message": found["message"].replace(WHO, f"evaluation set {account!r}")})
        if not verdicts:
            raise ValueError("a release must be charged to at least one account")
        failing = [v for v in verdicts if not v["fits"]]
        if failing:
            return failing[0]
        return min(verdicts, key=lambda v: (v["budget"].epsilon - v["after"].epsilon) if v["budget"] else math.inf)

    def charge(self, charge: Charge) -> dict:
        """Decide and, if the release fits, record it in every account, in one transaction; the verdict, with
        ``entry`` (for :meth:`void`) when charged."""
        with self._database(write=True) as db:
            verdict = self._decide(db, charge)
            if verdict["fits"]:
                stamp = secrets.token_hex(8)
                record = {**charge.release.entry(), "entry": stamp,
                          "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
                db.execute("INSERT INTO releases (entry, record) VALUES (?, ?)", (stamp, json.dumps(record)))
                db.executemany("INSERT OR IGNORE INTO charged VALUES (?, ?)", ((a, stamp) for a in charge.accounts))
                if charge.budget is not None:
                    db.executemany("INSERT INTO budgets VALUES (?, ?, ?) ON CONFLICT(account) DO UPDATE SET "
                                   "epsilon = min(epsilon, excluded.epsilon), delta = min(delta, excluded.delta)",
                                   ((s, charge.budget.epsilon, charge.budget.delta) for s in charge.sets))
                verdict["entry"] = stamp
        return verdict

    def void(self, entry: str, reason: str) -> None:
        """Mark a charged release as not made (the job stopped before opening it); kept, with the reason."""
        with self._database(write=True) as db:
            db.execute("UPDATE releases SET void = ? WHERE entry = ?", (reason, entry))


_SCHEMA = """
CREATE TABLE IF NOT EXISTS releases (entry TEXT PRIMARY KEY, record TEXT NOT NULL, void TEXT);
CREATE TABLE IF NOT EXISTS charged (account TEXT NOT NULL, entry TEXT NOT NULL, PRIMARY KEY (account, entry));
CREATE TABLE IF NOT EXISTS budgets (account TEXT PRIMARY KEY, epsilon REAL NOT NULL, delta REAL NOT NULL);
"""
LOCK_WAIT_S = 600.0  # how long a job waits for another's charge on the same ledger (each takes well under a second)


WHO = "\x00account\x00"  # where a refusal names the account (its name may hold any character but this one)


def _verdict(ledger: Ledger, history: list, budget, release: Release) -> dict:
    """Would ``release`` fit after ``history`` under ``budget``?  The message has :data:`WHO` for the account."""
    target = budget.delta if budget else DEFAULT_DELTA
    before, after = compose(history, target), compose(history + [release], target)
    message = ""
    if release.exact is None and budget is not None and not (after.epsilon <= budget.epsilon * (1 + 1e-9)
                                                             and after.delta <= budget.delta):
        whose = " (this party's own budget)" if ledger.own_budget and budget.epsilon == ledger.own_budget.epsilon \
            else ""
        message = (f"privacy budget exceeded for {WHO}: spent epsilon {before.epsilon:.6g} (delta "
                   f"{before.delta:.3g}) of the budget ({budget.epsilon:g}, {budget.delta:g}){whose}; this release "
                   f"requests epsilon {release.epsilon:g}, which would make {after.epsilon:.6g}")
    return {"fits": not message, "budget": budget, "spent": before, "after": after, "message": message}


def _pins(exact: list) -> dict:
    """The client set, decimals and weight precision of an owner's first exact release, and the cuts and max FPR
    of its first with each."""
    return {"clients": exact[0].clients if exact else None,
            "precision": (exact[0].decimals, exact[0].weight_bits) if exact else None,
            "points": next((e.points for e in exact if e.points is not None), None),
            "max_fpr": next((e.max_fpr for e in exact if e.max_fpr is not None), None)}


def _exact_refusal(name: str, history: list, new: Exact, limit) -> str:
    """Why owner ``name``, whose earlier exact releases are ``history``, may not be part of ``new``, or ""."""
    if limit is not None and len(history) + 1 > limit:
        return (f"client {name!r} accepts at most {limit} exact release(s) of its rows (its signed terms, "
                f"--max-exact) and has had {len(history)}")
    if not history:
        return ""
    pins = _pins(history)
    if pins["clients"] != new.clients:
        return (f"the exact releases of client {name!r}'s rows are pinned to the set of {len(pins['clients'])} "
                f"client(s) of its first; this job's {len(new.clients)} client(s) are another set (a client added, "
                "dropped or replaced): two exact releases on different sets open what differs between them")
    if pins["precision"] != (new.decimals, new.weight_bits):
        return (f"client {name!r}'s exact releases are pinned to the decimals and weight precision of its first "
                f"{pins['precision']}; this job asks {(new.decimals, new.weight_bits)}: two roundings of one value "
                "open more than either")
    if new.points is not None and pins["points"] not in (None, new.points):
        return (f"client {name!r}'s exact curves are pinned to {pins['points']} cuts (its first); this job asks "
                f"{new.points}: cuts that move by a row between evaluations open single labels")
    if new.max_fpr is not None and pins["max_fpr"] not in (None, new.max_fpr):
        return (f"client {name!r}'s exact partial AUC is pinned to max FPR {pins['max_fpr']:g} (its first); this "
                f"job asks {new.max_fpr:g}: two stops inside one ROC step open the positives between them")
    return ""

