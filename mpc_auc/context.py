"""The values a caller sets once and passes to every call: where the roles run and what the scores are
(:class:`Context`, OpenDP's Context: input domain, privacy unit, privacy loss), how a deployed evaluation takes
its clients in (:class:`Intake`), and what a client accepts (:class:`ClientTerms`).

Each is frozen and checked when made, with the words of protocols.validation; the rules between these and a
call's own options are the planner's (mpc_auc.planner).
"""
import numbers
from dataclasses import dataclass

import numpy as np

from .protocols.dp.central_law import NEIGHBOURS
from .protocols.errors import InputError
from .protocols.inputs.submission import DEFAULT_MAX_ROWS, DEFAULT_MAX_TOTAL_ROWS
from .protocols.mpc.ranking_job import METHODS
from .protocols.release_spec import SECURITY
from .protocols.runtime.ledger import Budget
from .protocols.validation import checked

DTYPES = ("float64", "float32")


@dataclass(frozen=True)
class Context:
    """Where the roles run, the scores' public domain and the privacy unit and budget: the settings shared by
    every call of a session (the API's ``context=``, the command line's common options).

    Parameters
    ----------
    deployment : str, optional
        A deployment file (``mpc-auc deploy init``): use the roles serving there; default: spawn them here.
    key : str, optional
        With ``deployment``: the coordinator's key file (default ``coordinator.key`` beside it).
    ledger : str, optional
        Local runs: the directory of the parties' privacy ledgers (deployed parties keep their own).
    timeout : float
        Seconds before a silent party counts as lost.
    score_range : (float, float)
        The public range every score lies in (its width sets the key encoding).
    score_dtype : {"float64", "float32"}
        The scores' declared precision: "float32" sorts 30-bit keys instead of 62 on [0, 1].
    method : {"radix", "bitonic"}
        The oblivious sort.
    neighbours : {"label", "record"}
        mpc-central's privacy unit: one row's label, or one row.
    alpha : float
        mpc-central: the share of epsilon spent on the rank statistic (the rest on the class count).
    budget : float or (float, float) or str, optional
        mpc-central: the (epsilon[, delta]) budget the parties' ledgers enforce ("EPS[,DELTA]" as on the command
        line); read as a :class:`protocols.runtime.ledger.Budget`.
    dataset_id : str, optional
        mpc-central: a declared ledger id for the evaluation set (narrows the budget, never resets it).
    auc_decimals : int, optional
        mpc-exact: open the AUC rounded to this many decimals (1 to 12) instead of to 52 bits.
    security : {"semi-honest", "malicious"}
        mpc-exact and mpc-central: "malicious" runs with security with abort against one deviating compute party
        (MACs on every shared value, each opening checked before anything is released; mpc-exact opens the AUC and
        the count of positives (and DeLong's interval, asked for), mpc-central its DP releases, the noise drawn on
        authenticated shares:
        docs/protocols/malicious-security.md); "semi-honest" (default) trusts both parties to follow the protocol.
    host, port : str, int
        Local runs: the address the parties listen on (P0's port; P1 and the dealer take the next two).

    See Also
    --------
    mpc_auc.roc_auc_score, mpc_auc.evaluate, mpc_auc.Evaluation.open : the calls that take one.

    Examples
    --------
    >>> Context(score_range=(-5, 5), budget="2,1e-9").budget
    Budget(epsilon=2.0, delta=1e-09)
    >>> from mpc_auc import roc_auc_score
    >>> logits = Context(score_range=(-5, 5))
    >>> roc_auc_score([0, 0, 1, 1], [-2.5, 0.3, -0.4, 4.1], protocol="clear", context=logits).auc
    0.75
    """
    deployment: str = None
    key: str = None
    ledger: str = None
    timeout: float = 60.0
    score_range: tuple = (0.0, 1.0)
    score_dtype: str = "float64"
    method: str = "radix"
    neighbours: str = "label"
    alpha: float = 0.5
    budget: Budget = None
    dataset_id: str = None
    auc_decimals: int = None
    security: str = "semi-honest"
    host: str = "127.0.0.1"
    port: int = None

    def __post_init__(self):
        for name, allowed in (("score_dtype", DTYPES), ("method", METHODS), ("neighbours", NEIGHBOURS),
                              ("security", SECURITY)):
            if getattr(self, name) not in allowed:
                raise InputError(f"{name} must be one of {', '.join(allowed)}; not {getattr(self, name)!r}")
        fixed = dict(score_range=numbers_of(self.score_range, "score_range", 2), timeout=checked("timeout", self.timeout),
                     alpha=checked("alpha", self.alpha), budget=None if self.budget is None else parse_budget(self.budget))
        if self.auc_decimals is not None:
            fixed["auc_decimals"] = checked("auc_decimals", self.auc_decimals)
        if self.port is not None:
            fixed["port"] = checked("port", self.port)
        for name, value in fixed.items():
            object.__setattr__(self, name, value)


@dataclass(frozen=True)
class Intake:
    """How the parties take a deployed evaluation's clients in (``mpc-auc evaluation open``'s intake options).

    Parameters
    ----------
    deadline : float
        Seconds the parties wait for the whole roster.
    allow_missing : bool
        At the deadline, compute on the clients present at both parties (else refuse the job).
    max_rows, max_total_rows : int
        The most rows one client, and all clients together, may submit.
    share_result : bool
        Send the released result to every client that took part.
    exclude_invalid : bool
        Leave out (and name) a client whose rows fail the in-MPC domain check, instead of refusing the job.

    See Also
    --------
    mpc_auc.Evaluation.open : the call that takes one.

    Examples
    --------
    >>> Intake(deadline=120, allow_missing=True).max_rows
    50000000
    """
    deadline: float = 600.0
    allow_missing: bool = False
    max_rows: int = DEFAULT_MAX_ROWS
    max_total_rows: int = DEFAULT_MAX_TOTAL_ROWS
    share_result: bool = False
    exclude_invalid: bool = False


@dataclass(frozen=True)
class ClientTerms:
    """What a client accepts of the releases of its rows (docs/client-submissions.md, "What a client accepts").

    Parameters
    ----------
    max_epsilon : float, optional
        A DP release of at most this epsilon.
    budget : float or (float, float) or str, optional
        What all releases its own ledger records may spend.
    max_exact : int, optional
        The exact releases of its rows it accepts in all (default 1, or 0 with ``max_epsilon``).
    max_decimals : int, optional
        The most decimals of any exact value.
    ledger : str, optional
        Its ledger file (default one per key, under ``$XDG_STATE_HOME/mpc-auc/client-ledger``).
    require_security : {"malicious"}, optional
        Submit only to a job whose ticket (both parties') states security with abort against a deviating
        compute party.

    See Also
    --------
    mpc_auc.submit : the call that takes one.

    Examples
    --------
    >>> ClientTerms(max_epsilon=1.0).max_exact
    0
    >>> ClientTerms(budget="3,1e-6").budget
    Budget(epsilon=3.0, delta=1e-06)
    """
    max_epsilon: float = None
    budget: Budget = None
    max_exact: int = None
    max_decimals: int = None
    ledger: str = None
    require_security: str = None

    def __post_init__(self):
        if self.require_security not in (None, "malicious"):
            raise InputError(f"require_security must be 'malicious' or None, not {self.require_security!r}")
        if self.max_exact is None:
            object.__setattr__(self, "max_exact", 0 if self.max_epsilon is not None else 1)
        if self.budget is not None:
            object.__setattr__(self, "budget", parse_budget(self.budget))
        if self.ledger is not None:
            object.__setattr__(self, "ledger", str(self.ledger))


def parse_budget(value) -> Budget:
    """A budget given as a Budget, epsilon, (epsilon, delta), or the command line's ``EPS[,DELTA]``."""
    if isinstance(value, Budget):
        return value
    if isinstance(value, str):
        try:
            value = tuple(float(part) for part in value.split(","))
        except ValueError:
            raise InputError(f"budget must be EPS or EPS,DELTA (numbers), not {value!r}") from None
    return Budget(*numbers_of(value, "budget", 1))


def numbers_of(value, name: str, least: int) -> tuple:
    """A number or a pair of numbers as a tuple of floats (``least``: how many may be given at the fewest)."""
    values = (value,) if np.isscalar(value) else tuple(value)
    if not least <= len(values) <= 2 or not all(isinstance(v, numbers.Real) for v in values):
        raise InputError(f"{name} must be {'a number or ' if least == 1 else ''}a pair of numbers, not {value!r}")
    return tuple(float(v) for v in values)
