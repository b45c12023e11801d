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

from .keywords import python_words
from .labels import binary_labels, plain
from .context import ClientTerms, Context, Intake
from .planner import open_evaluation, plan, shared_outcome
from .progress import RoleProgress, say
from .protocols.errors import InputError
from .protocols.inputs.submission import Accepts, Roster
from .protocols.inputs.submitter import Policy, submit_rows
from .protocols.metric_catalogue import DEFAULT_POINTS
from .protocols.mpc.exact import secured
from .protocols.runtime.deployment import Deployment
from .protocols.runtime.identity import CLIENT_PREFIX, Identity
from .report import Report


@dataclass(frozen=True, eq=False, repr=False)
class EvaluationResult(Report):
    """What an evaluation released, as the organiser gets it (and, when it shares its result, every client that
    took part): as :class:`mpc_auc.Report`, a float (the AUC, ``auc``) with the metrics.

    Attributes
    ----------
    value : dict
        As :class:`mpc_auc.Report`'s ({"auc", and each metric}; a DP release's interval under "ci" as {"std",
        "ci"}, as the exact one's; a refused metric a ``Refused`` value).
    protocol, m, clients, revealed, traffic, wall_s, security
        As :class:`mpc_auc.Report`'s (``security``: under ``Context(security="malicious")``, as
        :class:`mpc_auc.AucResult`'s).
    missing : tuple of str
        The rostered clients that did not submit to both parties.
    epsilon, delta : float or None
        A DP release's (None for an exact one).
    excluded : tuple of str
        The clients left out because their rows failed the in-MPC domain check (an evaluation opened with
        ``Intake(exclude_invalid=True)``).

    See Also
    --------
    Evaluation.result : the organiser's copy.
    Receipt : a client's, in ``result`` (``Intake(share_result=True)``).

    Examples
    --------
    Run for real by tests/mpc_auc/test_deployed_api.py (docs/api.md, "Both sides of a deployed evaluation"):

    >>> result = evaluation.result()  # doctest: +SKIP
    >>> result["auc"], result.missing, result.epsilon  # doctest: +SKIP
    (0.8312, (), None)
    """
    missing: tuple = ()
    epsilon: float = None
    delta: float = None
    excluded: tuple = ()


@dataclass(frozen=True, repr=False)
class Receipt:
    """A client's submission, as the parties answered it.

    Attributes
    ----------
    evaluation, client : str
        The evaluation's id and the client's name.
    rows : int
        The rows the client submitted.
    status : str
        "computed", or why the client was left out.
    terms : str
        What the job released, as both parties' tickets stated it before the client sent anything.
    ranks : numpy.ndarray or pandas.Series or None
        The client's rows' global 1-based mid-ranks (evaluations with ranks), in row order, a pandas Series
        indexed by ``ids`` when given.
    result : EvaluationResult or None
        The released result (evaluations that share it), checked field by field across both parties.
    standings : tuple
        What each party's ledger held for the client's key before the job (its spent epsilon, budget, exact
        releases and their pins: protocols.runtime.ledger.Standing).

    See Also
    --------
    submit : what returns one.

    Examples
    --------
    Run for real by tests/mpc_auc/test_deployed_api.py (docs/api.md, "Both sides of a deployed evaluation"):

    >>> receipt = submit("deploy/deployment.yaml", evaluation="q3", client="a", key="a.key", y_true=[0, 1],
    ...                  y_score=[0.2, 0.7], ids=["r1", "r2"])  # doctest: +SKIP
    >>> receipt.status, receipt.ranks.to_dict()  # doctest: +SKIP
    ('computed', {'r1': 2.0, 'r2': 5.0})
    """
    evaluation: str
    client: str
    rows: int
    status: str
    terms: str
    ranks: object = None
    result: EvaluationResult = None
    standings: tuple = ()

    def __repr__(self) -> str:
        """One line, however many rows: the ranks and the result are summarised, not printed."""
        ranks = "" if self.ranks is None else f", ranks=<{len(self.ranks)} ranks>"
        result = "" if self.result is None else f", result=<auc {self.result.auc:.6f}>"
        return (f"Receipt(evaluation={self.evaluation!r}, client={self.client!r}, rows={self.rows}, "
                f"status={self.status!r}{ranks}{result})")


class Evaluation:
    """An evaluation open on a deployment's parties: :meth:`open` declares it and returns at once;
    :meth:`result` waits for the rostered clients' submissions and the parties' computation (their examples
    show both; a client's side is :func:`submit`)."""

    def __init__(self, evaluation_id: str, protocol: str, worker: threading.Thread, box: dict):
        self.id, self.protocol = evaluation_id, protocol
        self._worker, self._box = worker, box

    @classmethod
    def open(cls, context, *, id: str, roster, protocol: str = "mpc-exact", epsilon: float = None,
             metrics=("auc",), points: int = DEFAULT_POINTS, max_fpr: float = None, ranks: bool = False,
             intake: Intake = None, progress: bool = False) -> "Evaluation":
        """Declare evaluation ``id`` on a deployment's parties for the clients of ``roster``; returns at once.

        Parameters
        ----------
        context : Context or str
            The deployment's :class:`Context` (its ``deployment``: the deployment.yaml, ``key``: the coordinator's
            key file, default coordinator.key beside it; the scores' range and type, privacy unit, budget,
            decimals), or the deployment.yaml's path alone.
        id : str
            The evaluation's id, which every client names when it submits.
        roster : Roster or str or sequence of str
            The clients, or their roster files (``mpc-auc client keygen`` writes one per client).
        protocol, epsilon, metrics, points, max_fpr
            As in :func:`mpc_auc.evaluate`.
        ranks : bool
            mpc-exact: deliver each client its rows' global ranks.
        intake : Intake, optional
            How the parties take the clients in: deadline, missing clients, row caps, a shared result
            (default ``Intake()``).
        progress : bool
            Show the roles' progress (a bar in a terminal or a notebook).

        Returns
        -------
        Evaluation
            :meth:`result` waits for the release.

        See Also
        --------
        submit : a client's side.

        Examples
        --------
        Run for real by tests/mpc_auc/test_deployed_api.py (docs/api.md, "Both sides of a deployed evaluation"):

        >>> evaluation = Evaluation.open("deploy/deployment.yaml", id="q3", roster=["a.roster.yaml"],
        ...                              intake=Intake(deadline=120))  # doctest: +SKIP
        >>> evaluation.result().value["auc"]  # doctest: +SKIP
        0.8312
        """
        context = context if isinstance(context, Context) else Context(deployment=str(context))
        intake = intake or Intake()
        request = plan(protocol=protocol, epsilon=epsilon, context=context, metrics=metrics, points=points,
                       max_fpr=max_fpr, ranks=ranks)
        if not isinstance(roster, Roster):
            roster = Roster.load([roster] if isinstance(roster, (str, os.PathLike)) else list(roster))
        box = {"start": time.perf_counter()}

        def work():
            try:
                box["outcome"] = open_evaluation(request, id, roster, intake, RoleProgress() if progress else None)
            except BaseException as err:  # handed to result(), in the caller's thread
                box["error"] = err
            box["wall_s"] = time.perf_counter() - box["start"]

        worker = threading.Thread(target=work, name=f"mpc-auc evaluation {id}", daemon=True)
        worker.start()
        return cls(id, protocol, worker, box)

    def done(self) -> bool:
        """Has the evaluation ended (released, or refused)?

        Returns
        -------
        bool
            True once :meth:`result` returns (or raises) at once.

        See Also
        --------
        Evaluation.result : wait for the release.

        Examples
        --------
        Run for real by tests/mpc_auc/test_deployed_api.py (docs/api.md, "Both sides of a deployed evaluation"):

        >>> evaluation = Evaluation.open("deploy/deployment.yaml", id="q3", roster=["a.roster.yaml"])  # doctest: +SKIP
        >>> evaluation.done()  # doctest: +SKIP
        False
        """
        return not self._worker.is_alive()

    def result(self, timeout: float = None) -> EvaluationResult:
        """Wait for the evaluation to end and return what was released.

        Parameters
        ----------
        timeout : float, optional
            Wait at most this many seconds (default: until the evaluation's deadline and computation are over).

        Returns
        -------
        EvaluationResult
            The released values, and the clients missing or excluded.

        Raises
        ------
        InputError
            The evaluation was refused: naming the refusal or a missing client.
        PartyFailure
            A party failed or fell silent.
        TimeoutError
            ``timeout`` passed while the evaluation still runs (call again to wait on).

        See Also
        --------
        Evaluation.done : whether it has ended, without waiting.
        submit : a client's side.

        Examples
        --------
        Run for real by tests/mpc_auc/test_deployed_api.py (docs/api.md, "Both sides of a deployed evaluation"):

        >>> evaluation = Evaluation.open("deploy/deployment.yaml", id="q3", roster=["a.roster.yaml"],
        ...                              metrics=("auc", "ci"))  # doctest: +SKIP
        >>> result = evaluation.result(timeout=900)  # doctest: +SKIP
        >>> result["auc"], result["ci"]["ci"]  # doctest: +SKIP
        (0.8312, (0.7904, 0.8720))
        """
        self._worker.join(timeout)
        if self._worker.is_alive():
            raise TimeoutError(f"evaluation {self.id!r} is still running")
        if "error" in self._box:
            raise self._box["error"]
        return _result(self._box["outcome"], self.protocol, self._box["wall_s"])

    def __repr__(self) -> str:
        return f"Evaluation(id={self.id!r}, protocol={self.protocol!r}, done={self.done()})"


def submit(deployment: str, *, evaluation: str, client: str, key: str, y_true, y_score, ids=None, pos_label=None,
           terms: ClientTerms = None, timeout: float = 20.0, connect_timeout: float = 60.0,
           progress: bool = False) -> Receipt:
    """Submit one client's rows to an open evaluation, as ``mpc-auc client submit`` does.

    Parameters
    ----------
    deployment : str
        The deployment.yaml of the parties.
    evaluation : str
        The evaluation's id.
    client, key : str
        This client's name and its key file (``mpc-auc client keygen``).
    y_true, y_score : array-like of shape (rows,)
        The client's rows (labels of two values as :func:`mpc_auc.roc_auc_score` reads them, or ``pos_label``;
        all of one class is fine: the evaluation needs both classes overall).
    ids : array-like, optional
        The rows' ids, to key the ranks by.
    pos_label : optional
        The positive class.
    terms : ClientTerms, optional
        What the client accepts (docs/client-submissions.md, "What a client accepts"): a DP release of at most
        ``max_epsilon``, a ``budget`` its own ledger enforces, ``max_exact`` exact releases (default 1, or 0
        with ``max_epsilon``) and ``max_decimals``, the last two stated in its signed statement and enforced by
        the parties too.  Default ``ClientTerms()``.
    timeout, connect_timeout : float
        Seconds before a silent party counts as lost; seconds to keep dialling a party.
    progress : bool
        Print each step.

    Returns
    -------
    Receipt
        Once the job has ended.

    Raises
    ------
    InputError
        Before or instead of the receipt: bad rows, a key of another client, terms the tickets exceed, a refused
        submission or job.

    See Also
    --------
    Evaluation.open : the organiser's side.

    Examples
    --------
    Run for real by tests/mpc_auc/test_deployed_api.py (docs/api.md, "Both sides of a deployed evaluation"):

    >>> receipt = submit("deploy/deployment.yaml", evaluation="q3", client="a", key="a.key", y_true=[0, 1],
    ...                  y_score=[0.2, 0.7], terms=ClientTerms(max_epsilon=1.0))  # doctest: +SKIP
    >>> receipt.status  # doctest: +SKIP
    'computed'
    """
    with python_words():  # the client's terms are ClientTerms here, not client submit's options
        return located_submit(deployment, lambda i: f"y_score[{i}]", evaluation=evaluation, client=client, key=key,
                              y_true=y_true, y_score=y_score, ids=ids, pos_label=pos_label, terms=terms,
                              timeout=timeout, connect_timeout=connect_timeout, progress=progress)


def located_submit(deployment: str, locate, *, evaluation: str, client: str, key: str, y_true, y_score, ids=None,
                   pos_label=None, terms: ClientTerms = None, timeout: float = 20.0, connect_timeout: float = 60.0,
                   progress: bool = False) -> Receipt:
    """:func:`submit`, naming row i of ``y_score`` as ``locate(i)`` in the client's own messages (``mpc-auc
    client submit``: the line of its file)."""
    terms = terms or ClientTerms()
    identity = Identity.load(key)
    if identity.role != CLIENT_PREFIX + client:
        raise InputError(f"{key} is the key of {identity.role}, not of {CLIENT_PREFIX}{client}")
    scores = np.asarray(y_score)
    labels = binary_labels(y_true, pos_label, one_class=True)
    if scores.ndim != 1 or len(scores) != len(labels):
        raise InputError(f"y_score must be one score per row of y_true: shape {scores.shape} for {len(labels)} labels")
    if ids is not None and len(ids) != len(labels):
        raise InputError(f"ids must be one per row: {len(ids)} ids for {len(labels)} rows")
    if ids is not None:
        _unique(ids)
    policy = Policy(terms.max_epsilon, terms.budget, Accepts(terms.max_exact, terms.max_decimals), terms.ledger,
                    terms.require_security)
    outcome = submit_rows(identity, Deployment.load(deployment), evaluation, scores.astype(np.float64), labels,
                          timeout, connect_timeout, (lambda text: say(f"  [{client}] {text}")) if progress else None,
                          policy, locate)
    ranks = outcome.ranks
    if ranks is not None and ids is not None:
        ranks = pd.Series(ranks, index=pd.Index(np.asarray(ids), name="id"), name="rank")
    result = None
    if outcome.shared is not None:
        result = _result(shared_outcome(outcome.ticket, outcome.shared), outcome.ticket.terms.protocol, 0.0)
    return Receipt(evaluation, client, outcome.rows, outcome.status, outcome.ticket.terms.describe(), ranks, result,
                   outcome.standings)


def _unique(ids) -> None:
    """Refuse two rows with one id (the client's ranks come back keyed by id), naming the id and both rows."""
    index = pd.Index(np.asarray(ids))
    repeated = np.flatnonzero(index.duplicated())
    if len(repeated):
        second = int(repeated[0])
        first = int(np.flatnonzero(index == index[second])[0])
        raise InputError(f"duplicate id {plain(index[second])!r} at ids[{first}] and ids[{second}] (each row's id "
                         "must be unique: the ranks come back keyed by id)")


def _result(outcome, protocol: str, wall_s: float) -> EvaluationResult:
    """A planner Outcome of a deployed evaluation as the API's result."""
    release = outcome.release
    value = {"auc": outcome.auc, **(outcome.metrics or {})}
    if outcome.std is not None:  # mpc-central: the release's interval, under the exact one's name
        value["ci"] = {"std": outcome.std, "ci": outcome.ci}
    return EvaluationResult(value, protocol, release.m, release.clients, tuple(getattr(release, "revealed", ())),
                            release.traffic, wall_s, secured(release), missing=tuple(release.missing),
                            epsilon=getattr(release, "epsilon", None), delta=getattr(release, "delta", None),
                            excluded=tuple(release.excluded or ()))
