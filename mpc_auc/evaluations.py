"""Both sides of an evaluation whose clients submit from their own machines, in Python: the organiser's
:class:`Evaluation` (``mpc-auc evaluation open``) and a client's :func:`submit` (``mpc-auc client submit``), on
the running roles of one deployment (docs/api.md, "Both sides of a deployed evaluation").

The organiser's options are checked by the same planner as the command line's (mpc_auc.planner), and the
evaluation runs the same code (:func:`mpc_auc.planner.open_evaluation`); a client's rows go through the same
checks, sharing and signed submission (protocols.inputs.submitter).  What each role sees:
docs/client-submissions.md.
"""
import os
import threading
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .labels import binary_labels
from .planner import open_evaluation, parse_budget, plan, shared_outcome
from .progress import RoleProgress, say
from .protocols.errors import InputError
from .protocols.inputs.submission import DEFAULT_MAX_ROWS, DEFAULT_MAX_TOTAL_ROWS, Accepts, Roster
from .protocols.inputs.submitter import Policy, submit as submit_rows
from .protocols.metric_catalogue import DEFAULT_POINTS
from .protocols.runtime.deployment import Deployment
from .protocols.runtime.identity import CLIENT_PREFIX, Identity
from .report import Report


@dataclass(frozen=True, repr=False)
class EvaluationResult(Report):
    """What an evaluation released, as the organiser gets it (and, when it shares its result, every client that
    took part): ``value`` as :class:`mpc_auc.Report`'s ({"auc", and each metric}; a DP release's interval under
    "ci" as {"std", "ci"}, as the exact one's); ``missing``: the rostered clients that did not submit to both
    parties; ``excluded``: the clients left out because their rows failed the in-MPC domain check (an evaluation
    opened with ``exclude_invalid``); ``epsilon``, ``delta``: a DP release's (None for an exact one)."""
    missing: tuple = ()
    epsilon: float = None
    delta: float = None
    excluded: tuple = ()


@dataclass(frozen=True)
class Receipt:
    """A client's submission, as the parties answered it.

    ``status``: "computed", or why the client was left out; ``terms``: what the job released, as both parties'
    tickets stated it before the client sent anything; ``ranks``: the client's rows' global 1-based mid-ranks
    (evaluations with ranks), in row order, a pandas Series indexed by ``ids`` when given; ``result``: the
    released result (evaluations that share it), an :class:`EvaluationResult`, checked field by field across both
    parties; ``standings``: what each party's ledger held for the client's key before the job (its spent epsilon,
    budget, exact releases and their pins: protocols.runtime.ledger.Standing)."""
    evaluation: str
    client: str
    rows: int
    status: str
    terms: str
    ranks: object = None
    result: EvaluationResult = None
    standings: tuple = ()


class Evaluation:
    """An evaluation open on a deployment's parties: :meth:`open` declares it and returns at once;
    :meth:`result` waits for the rostered clients' submissions and the parties' computation."""

    def __init__(self, evaluation_id: str, protocol: str, worker: threading.Thread, box: dict):
        self.id, self.protocol = evaluation_id, protocol
        self._worker, self._box = worker, box

    @classmethod
    def open(cls, deployment: str, *, id: str, roster, protocol: str = "mpc-exact", metrics=("auc",),
             epsilon: float = None, deadline: float = 600.0, key: str = None, ranks: bool = False,
             share_result: bool = False, allow_missing: bool = False, max_rows: int = DEFAULT_MAX_ROWS,
             max_total_rows: int = DEFAULT_MAX_TOTAL_ROWS, exclude_invalid: bool = False,
             points: int = DEFAULT_POINTS, max_fpr: float = None, auc_decimals: int = None,
             score_range=(0.0, 1.0), score_dtype: str = "float64", neighbours: str = "label", alpha: float = 0.5,
             budget=None, dataset_id: str = None, method: str = "radix", timeout: float = 20.0,
             progress: bool = False) -> "Evaluation":
        """Declare evaluation ``id`` on the parties of ``deployment`` (its deployment.yaml; ``key``: the
        coordinator's key file, default coordinator.key beside it) for the clients of ``roster`` (a Roster, or
        roster file paths: ``mpc-auc client keygen`` writes one per client).  The options are
        ``mpc-auc evaluation open``'s; every one is checked here, before anything is sent.  ``progress``: show
        the roles' progress (a bar in a terminal or a notebook)."""
        request = plan(protocol=protocol, epsilon=epsilon, alpha=alpha, neighbours=neighbours, budget=budget,
                       score_range=score_range, score_dtype=score_dtype, method=method, ranks=ranks,
                       auc_decimals=auc_decimals, deployment=str(deployment), key=key, timeout=timeout,
                       dataset_id=dataset_id, metrics=metrics, points=points, max_fpr=max_fpr)
        if not isinstance(roster, Roster):
            roster = Roster.load([roster] if isinstance(roster, (str, os.PathLike)) else list(roster))
        box = {"start": time.perf_counter()}

        def work():
            try:
                box["outcome"] = open_evaluation(request, id, roster, deadline, RoleProgress() if progress else None,
                                                 allow_missing=allow_missing, max_rows=max_rows,
                                                 max_total_rows=max_total_rows, share_result=share_result,
                                                 exclude_invalid=exclude_invalid)
            except BaseException as err:  # handed to result(), in the caller's thread
                box["error"] = err
            box["wall_s"] = time.perf_counter() - box["start"]

        worker = threading.Thread(target=work, name=f"mpc-auc evaluation {id}", daemon=True)
        worker.start()
        return cls(id, protocol, worker, box)

    def done(self) -> bool:
        """Has the evaluation ended (released, or refused)?"""
        return not self._worker.is_alive()

    def result(self, timeout: float = None) -> EvaluationResult:
        """Wait (at most ``timeout`` seconds, default: until the evaluation's deadline and computation are over)
        and return what was released; raises what stopped it (InputError naming a refusal or a missing client,
        PartyFailure) or TimeoutError while it still runs."""
        self._worker.join(timeout)
        if self._worker.is_alive():
            raise TimeoutError(f"evaluation {self.id!r} is still running")
        if "error" in self._box:
            raise self._box["error"]
        return _result(self._box["outcome"], self.protocol, self._box["wall_s"])

    def __repr__(self) -> str:
        return f"Evaluation(id={self.id!r}, protocol={self.protocol!r}, done={self.done()})"


def submit(deployment: str, *, evaluation: str, client: str, key: str, y_true, y_score, ids=None,
           pos_label=None, max_epsilon: float = None, budget=None, max_exact: int = None, max_decimals: int = None,
           ledger: str = None, timeout: float = 20.0, connect_timeout: float = 60.0,
           progress: bool = False) -> Receipt:
    """Submit one client's rows to an open evaluation on the parties of ``deployment`` (its deployment.yaml)
    with the client's ``key`` file (``mpc-auc client keygen``), as ``mpc-auc client submit`` does.

    ``y_true``, ``y_score``: the client's rows (labels of two values as :func:`mpc_auc.roc_auc_score` reads
    them, or ``pos_label``; all of one class is fine: the evaluation needs both classes overall); ``ids``: their
    ids, to key the ranks by.  What the client accepts (docs/client-submissions.md, "What a client accepts"):
    ``max_epsilon``: a DP release of at most this epsilon; ``budget`` (epsilon or (epsilon, delta)): what all
    releases its own ledger records (``ledger``: its file, default one per key) may spend; ``max_exact``: the
    exact releases of its rows it accepts in all (default 1, or 0 with ``max_epsilon``: a client that caps
    epsilon takes no exact release unless it says how many), and ``max_decimals``: the most decimals of any
    exact value, both stated in its signed statement and enforced by the parties too.  Returns a
    :class:`Receipt` once the job has ended; raises InputError (bad rows, a refused submission or job) before or
    instead."""
    identity = Identity.load(key)
    if identity.role != CLIENT_PREFIX + client:
        raise InputError(f"{key} is the key of {identity.role}, not of {CLIENT_PREFIX}{client}")
    scores = np.asarray(y_score)
    labels = binary_labels(y_true, pos_label, one_class=True)
    if scores.ndim != 1 or len(scores) != len(labels):
        raise InputError(f"y_score must be one score per row of y_true: shape {scores.shape} for {len(labels)} labels")
    if ids is not None and len(ids) != len(labels):
        raise InputError(f"ids must be one per row: {len(ids)} ids for {len(labels)} rows")
    if max_exact is None:
        max_exact = 0 if max_epsilon is not None else 1
    policy = Policy(max_epsilon, None if budget is None else parse_budget(budget), Accepts(max_exact, max_decimals),
                    None if ledger is None else str(ledger))
    outcome = submit_rows(identity, Deployment.load(deployment), evaluation, scores.astype(np.float64), labels,
                          timeout, connect_timeout, (lambda text: say(f"  [{client}] {text}")) if progress else None,
                          policy)
    ranks = outcome.ranks
    if ranks is not None and ids is not None:
        ranks = pd.Series(ranks, index=pd.Index(np.asarray(ids), name="id"), name="rank")
    result = None
    if outcome.shared is not None:
        result = _result(shared_outcome(outcome.ticket, outcome.shared), outcome.ticket.terms.protocol, 0.0)
    return Receipt(evaluation, client, outcome.rows, outcome.status, outcome.ticket.terms.describe(), ranks, result,
                   outcome.standings)


def _result(outcome, protocol: str, wall_s: float) -> EvaluationResult:
    """A planner Outcome of a deployed evaluation as the API's result."""
    release = outcome.release
    value = {"auc": outcome.auc, **(outcome.metrics or {})}
    if outcome.std is not None:  # mpc-central: the release's interval, under the exact one's name
        value["ci"] = {"std": outcome.std, "ci": outcome.ci}
    return EvaluationResult(value, protocol, release.m, release.clients, tuple(getattr(release, "revealed", ())),
                            release.traffic, wall_s, tuple(release.missing), getattr(release, "epsilon", None),
                            getattr(release, "delta", None), tuple(release.excluded or ()))
