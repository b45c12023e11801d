"""The Python API: the AUC of scores and labels spread over clients, in scikit-learn's conventions.

Works from a notebook and from a plain script with no ``if __name__ == "__main__"`` guard: the role
processes never re-run the caller's script (protocols.runtime.session).  Every input is checked before any
process starts; a problem raises :class:`InputError` (a ``ValueError``) naming it.
"""
import dataclasses
import time
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .csv_io import Columns, ReadLimits, read_score_columns
from .dataset import EvalSet
from .labels import binary_labels, one_vs_rest
from .planner import execute, plan
from .protocols.dp.central_law import SWAMPED
from .protocols.dp.grid import FIELDS, grid
from .protocols.clear_metrics import paired_test
from .protocols.dp.suite import MECHANISMS
from .protocols.errors import InputError
from .protocols.inputs.encoding import FINITE
from .protocols.inputs.weights import check_weights, rounding_error
from .protocols.metric_catalogue import CI_MAX_ROWS
from .protocols.ustat.two_party import Sample, ustat_2pc
from .protocols.validation import PARAMETERS, checked
from .report import DelongTestResult, MetricResult, Report

@dataclass(frozen=True, repr=False)
class AucResult:
    """One AUC and how it was obtained.

    Attributes
    ----------
    auc : float
        The released AUC (mpc-exact: floor(AUC * 2^52) / 2^52; mpc-central: the noisy release).
    protocol : str
        ``"mpc-exact"``, ``"mpc-central"`` or ``"clear"``.
    m, clients : int
        The public shape: rows and clients.
    epsilon, delta : float or None
        The release's privacy (mpc-central: delta is the noise circuit's); None for exact releases.
    std : float or None
        mpc-exact and clear (``ci=True``): DeLong's standard error sqrt(S10/P + S01/N), computed inside the MPC;
        mpc-central: the standard deviation of the release around the AUC (its noise and rounding).
    ci : tuple of float or None
        mpc-exact and clear: DeLong's 95% Wald interval auc +- z_0.975 std (as pROC's DeLong default, not
        clipped); mpc-central: the 95% interval auc +- 1.96 std, clipped to [0, 1].  None when not asked for,
        or when a class has fewer than two rows.
    per_class : dict or None
        ``multi_class="ovr"``: each class's one-vs-rest AUC (each opened).
    provider : str or None
        The correlation provider (``"TTP"``: the separate dealer); None for ``"clear"``.
    ranks : numpy.ndarray or None
        With ``return_ranks``: each row's global mid-rank, 1-based and ties averaged, as
        ``scipy.stats.rankdata(y_score)``; each client learns only its own rows' ranks.
    traffic : dict
        Bytes, rounds and peak memory per role.
    wall_s : float
        Seconds from the call to the result.
    budget_remaining : float or None
        mpc-central with a ``budget``: the epsilon the parties' ledgers have left for this data.
    swamped : bool
        mpc-central: the noise swamps the release, its 95% interval being wider than half the AUC's range
        (a ``UserWarning`` says so too; the same rule as ``u_statistic``'s); ``auc`` is clamped to [0, 1]
        in any case (post-processing of the release).
    weight_error : float or None
        mpc-exact with ``sample_weight``: the most that rounding the weights to the MPC's integer units can have
        moved ``auc`` (0.0 when every weight is a multiple of the unit; docs/protocols/mpc-exact.md,
        "Weighted AUC").
    """
    auc: float
    protocol: str
    m: int
    clients: int
    epsilon: float = None
    delta: float = None
    std: float = None
    ci: tuple = None
    provider: str = None
    ranks: np.ndarray = None
    traffic: dict = None
    wall_s: float = 0.0
    budget_remaining: float = None
    swamped: bool = False
    per_class: dict = None
    weight_error: float = None

    def __repr__(self) -> str:
        privacy = f", epsilon={self.epsilon:g}" if self.epsilon else ""
        privacy += f", ci=({self.ci[0]:.4f}, {self.ci[1]:.4f})" if self.ci else ""
        return (f"AucResult(auc={self.auc:.6f}, protocol={self.protocol!r}, m={self.m}, clients={self.clients}"
                f"{privacy}, wall_s={self.wall_s:.1f})")


def roc_auc_score(y_true, y_score, *, clients=None, protocol: str = "mpc-exact", ci="auto",
                  multi_class: str = "raise", average: str = "macro", labels=None, sample_weight=None,
                  max_fpr=None, epsilon: float = None, neighbours: str = "label", score_range=(0.0, 1.0),
                  score_dtype: str = "float64", return_ranks: bool = False, auc_decimals: int = None,
                  deployment: str = None, ledger: str = None, budget=None, timeout: float = 60.0) -> AucResult:
    """The ROC AUC of ``y_score`` against ``y_true``, computed without any party seeing the others' rows.

    The scores are ranked obliviously by two compute parties with a separate dealer (mpc-exact,
    mpc-central); the AUC is the rank-sum (Mann-Whitney) statistic of fedauc-vfl-ranksum.md,
    AUC = (sum of positives' mid-ranks - P(P+1)/2) / (P N).

    Parameters
    ----------
    y_true : array-like of shape (M,)
        Labels of any two values (the greater is the positive class, as scikit-learn), or of three or more
        classes with ``multi_class="ovr"``.
    y_score : array-like of shape (M,) or (M, classes)
        Scores, finite and inside ``score_range``; one column per class for ``multi_class="ovr"``.
    clients : array-like of shape (M,), optional
        The client holding each row (ids: letters, digits, ``._-``); default: one client.  With mpc-central each
        client id names an owner of its rows, whose spend the parties' ledgers keep across evaluations (without
        ``clients``, only the rows as a multiset are charged).
    protocol : {"mpc-exact", "mpc-central", "clear"}
        mpc-exact opens the exact AUC; mpc-central one noisy release (label DP, or record DP with
        ``neighbours="record"``) at ``epsilon``; clear computes in this process (no privacy).
    ci : {"auto", True, False}
        mpc-exact and clear: also compute DeLong's variance inside the MPC and return ``std`` and ``ci``; the
        parties then open the variance too.  It is computed for at most 2^20 rows: "auto" skips it beyond (with
        a UserWarning), True refuses such a set.
    multi_class : {"raise", "ovr"}
        ``"ovr"``: one-vs-rest AUC of each class (one sort per class), averaged by ``average``.
    average : {"macro", "weighted"}
        ``multi_class="ovr"``: the plain mean of the classes' AUCs, or weighted by each class's share of the
        rows (which the caller holds in ``y_true``).
    labels : array-like, optional
        ``multi_class="ovr"``: the class of each score column; default: the sorted classes of ``y_true``.
    max_fpr : float, optional
        The standardised partial AUC up to this FPR (McClish 1989, as scikit-learn), computed inside the MPC
        (mpc-exact and clear, at most 2^20 rows; the parties open the partial area, to 2^-40, instead of the
        AUC); ``ci`` does not apply to it.  1 or None: the full AUC.
    sample_weight : array-like of shape (M,), optional
        Non-negative weights: the weighted AUC, as scikit-learn's (mpc-exact and clear; the AUC alone: no ``ci``
        (``"auto"`` leaves it out), ``max_fpr`` or ranks).  Each weight enters the MPC as an integer number of
        units of 2^-q, q chosen so that all rows hold at most 2^30 units: exact for weights that are multiples
        of 2^-q, else within the bound of docs/protocols/mpc-exact.md, "Weighted AUC" (``weight_error``).
    epsilon : float, optional
        Required by mpc-central, refused by the others.
    neighbours : {"label", "record"}
        mpc-central's neighbour relation.
    score_range : (float, float)
        The public range every score lies in (its width sets the key encoding).
    score_dtype : {"float64", "float32"}
        The scores' declared precision: "float32" reads each score as the nearest float32 (as a
        float32 model outputs it) and sorts 30-bit keys instead of 62 on [0, 1], about twice as fast.
    return_ranks : bool
        mpc-exact only: also return each row's global mid-rank.
    auc_decimals : int, optional
        mpc-exact only: open the AUC rounded to this many decimals (1 to 12) inside the MPC instead of to
        52 bits (docs/protocols/mpc-exact.md, "What the AUC reveals"); as ``mpc-auc run --auc-decimals``.
    deployment : str, optional
        A deployment file (``mpc-auc deploy init``): use the parties serving there, with
        ``coordinator.key`` beside it; default: spawn the roles on this machine.
    ledger : str, optional
        Local runs: the directory of the parties' privacy ledgers.
    budget : float or (float, float), optional
        mpc-central: the (epsilon[, delta]) budget the ledgers enforce for this data.
    timeout : float
        Seconds before a silent party counts as lost.

    Returns
    -------
    AucResult

    Raises
    ------
    InputError
        A bad input, named: lengths, NaN or out-of-range scores, labels other than 0/1, one class
        missing, a bad client id, epsilon missing or <= 0, an option the protocol does not take.  The
        options are checked by the same planner as the command line's (mpc_auc.planner), with the same words.
    """
    start = time.perf_counter()
    if ci not in ("auto", True, False):
        raise InputError(f"ci must be 'auto', True or False, not {ci!r}")
    if multi_class not in ("raise", "ovr"):
        raise InputError(f"multi_class must be 'raise' or 'ovr', not {multi_class!r} (one-vs-one is not supported)")
    if average not in ("macro", "weighted"):
        raise InputError(f"average must be 'macro' or 'weighted', not {average!r}")
    ovr = multi_class == "ovr" or np.ndim(y_score) == 2
    if ovr and (return_ranks or protocol == "mpc-central"):
        raise InputError("multi_class='ovr' opens one exact AUC per class: it takes neither return_ranks nor "
                         "protocol mpc-central")
    partial = max_fpr is not None and checked("max_fpr", max_fpr) < 1
    if partial and ovr:
        raise InputError("max_fpr (the partial AUC) is for a binary AUC, not multi_class='ovr' (as scikit-learn)")
    weighted = sample_weight is not None
    if weighted and (ci is True or partial):
        raise InputError("sample_weight gives the weighted AUC alone: it takes no ci=True (DeLong's interval) and "
                         "no max_fpr")
    metrics = ("auc", "ci") if ci and protocol != "mpc-central" and not (ovr or partial or weighted) else ("auc",)
    request = plan(protocol=protocol, epsilon=epsilon, neighbours=neighbours, budget=budget, score_range=score_range,
                   score_dtype=score_dtype, ranks=return_ranks, auc_decimals=auc_decimals, deployment=deployment,
                   ledger=ledger, timeout=timeout, metrics=metrics, max_fpr=max_fpr)
    if ovr:
        if multi_class != "ovr":
            raise InputError("y_score has one column per class: pass multi_class='ovr' (as scikit-learn asks)")
        return _one_vs_rest(request, y_true, y_score, clients, average, labels, start, sample_weight)
    evalset, groups, data = _evaluation(binary_labels(y_true, greater=True), y_score, clients, request.encoder)
    weights = _client_weights(sample_weight, evalset.m, groups)
    if ci == "auto" and "ci" in metrics and evalset.m > CI_MAX_ROWS:
        warnings.warn(f"DeLong's interval is computed for at most {CI_MAX_ROWS} rows; this set has {evalset.m}: "
                      "std and ci are left out (ci=False says so without the warning)", UserWarning, stacklevel=2)
        request = dataclasses.replace(request, metrics=("auc",))
    outcome = execute(request, data, weights=weights, owners=clients is not None)
    found = outcome.auc
    if partial:
        if "mcclish" not in outcome.metrics["pauc"]:
            raise InputError(outcome.metrics["pauc"]["refused"])
        found = outcome.metrics["pauc"]["mcclish"]
    common = dict(auc=found, protocol=protocol, m=evalset.m, clients=len(groups))
    delong = (outcome.metrics or {}).get("ci", {})
    interval = dict(std=delong.get("std"), ci=delong.get("ci"))
    if protocol == "clear":
        return AucResult(wall_s=time.perf_counter() - start, **interval, **common)
    if protocol == "mpc-central":
        release = outcome.release
        if outcome.swamped:
            warnings.warn(SWAMPED.format(std=outcome.std, epsilon=request.noise.epsilon), UserWarning, stacklevel=2)
        return AucResult(epsilon=request.noise.epsilon, delta=release.delta, std=outcome.std, ci=outcome.ci,
                         provider="TTP", swamped=outcome.swamped, traffic=release.traffic,
                         wall_s=time.perf_counter() - start,
                         budget_remaining=(release.ledger or {}).get("remaining_epsilon"), **common)
    result = outcome.release
    ranks = None
    if return_ranks:
        ranks = np.empty(evalset.m)
        for name, rows in groups:
            ranks[rows] = result.ranks[name]
    return AucResult(provider=result.provider, ranks=ranks, traffic=result.traffic,
                     wall_s=time.perf_counter() - start, weight_error=_weight_error(sample_weight), **interval,
                     **common)


def _one_vs_rest(request, y_true, y_score, clients, average: str, labels, start: float,
                 sample_weight=None) -> AucResult:
    """The one-vs-rest AUC: each class's exact (weighted) AUC, one job each, averaged as scikit-learn's ovr
    (``average="weighted"``: by each class's share of the rows, or of the weight)."""
    per_class, shares, traffic = {}, {}, {}
    for name, hits, column in one_vs_rest(y_true, y_score, labels):
        evalset, groups, data = _evaluation(hits, column, clients, request.encoder)
        weights = _client_weights(sample_weight, evalset.m, groups)
        outcome = execute(request, data, weights=weights)
        per_class[name] = outcome.auc
        shares[name] = hits.mean() if weights is None else np.average(hits, weights=sample_weight)
        traffic[str(name)] = getattr(outcome.release, "traffic", None)
    weights = np.array([shares[c] for c in per_class]) if average == "weighted" else None
    exact = request.protocol == "clear"
    return AucResult(float(np.average(list(per_class.values()), weights=weights)), request.protocol, evalset.m,
                     len(groups), provider=None if exact else "TTP", traffic=traffic,
                     wall_s=time.perf_counter() - start, per_class=per_class,
                     weight_error=None if exact else _weight_error(sample_weight))


def average_precision_score(y_true, y_score, *, clients=None, pos_label=None, protocol: str = "mpc-exact",
                            sample_weight=None, score_range=(0.0, 1.0), score_dtype: str = "float64",
                            deployment: str = None, timeout: float = 60.0) -> MetricResult:
    """Average precision as scikit-learn's ``average_precision_score`` (every row of a tie group counted at its
    group's threshold), computed inside the MPC from the same oblivious sort as the AUC; only AP is opened.

    Parameters are as in :func:`roc_auc_score`; ``pos_label`` names the positive class (default 1, for labels
    {0, 1} or {-1, 1}).  Returns a :class:`MetricResult` whose ``value`` is the AP (to 2^-32)."""
    return _single("ap", y_true, y_score, clients, pos_label, protocol, sample_weight, score_range, score_dtype,
                   deployment, timeout)


def roc_curve(y_true, y_score, *, clients=None, pos_label=None, points: int = 100, protocol: str = "mpc-exact",
              epsilon: float = None, sample_weight=None, score_range=(0.0, 1.0), score_dtype: str = "float64",
              deployment: str = None, timeout: float = 60.0) -> MetricResult:
    """The ROC curve at ``points`` public cuts of the ranking: with the top ceil(k M / points) scores flagged,
    k = 1..points, the FPR and TPR (a tie group a cut falls in counted in proportion: scikit-learn's curve,
    interpolated linearly in the rows flagged).  The scores and thresholds stay secret; the cuts are public,
    and with them the points reveal the class counts.  ``value`` is (fpr, tpr); ``flagged`` the cuts.

    ``protocol="mpc-central"`` with ``epsilon``: the DP curve instead (label DP: the positives between the cuts
    released by the binary tree mechanism with noise drawn inside the MPC, ties split by row order;
    docs/protocols/mpc-central.md, "The DP curve")."""
    return _single("roc", y_true, y_score, clients, pos_label, protocol, sample_weight, score_range, score_dtype,
                   deployment, timeout, points, epsilon)


def precision_recall_curve(y_true, y_score, *, clients=None, pos_label=None, points: int = 100,
                           protocol: str = "mpc-exact", epsilon: float = None, sample_weight=None,
                           score_range=(0.0, 1.0), score_dtype: str = "float64", deployment: str = None,
                           timeout: float = 60.0) -> MetricResult:
    """The precision-recall curve at the cuts of :func:`roc_curve` (exact, or the DP curve with
    ``protocol="mpc-central"``); ``value`` is (precision, recall)."""
    return _single("pr", y_true, y_score, clients, pos_label, protocol, sample_weight, score_range, score_dtype,
                   deployment, timeout, points, epsilon)


def evaluate(y_true, y_score, *, clients=None, metrics=("auc", "ci", "ap", "roc", "pr", "ks"), points: int = 100,
             pos_label=None, protocol: str = "mpc-exact", epsilon: float = None, max_fpr: float = None,
             sample_weight=None, score_range=(0.0, 1.0), score_dtype: str = "float64", deployment: str = None,
             timeout: float = 60.0) -> Report:
    """Every requested metric from one oblivious sort of the scores: ``metrics`` from auc, ci (DeLong), ap,
    roc, pr (at ``points`` cuts), ks and, with ``max_fpr``, pauc (as ``mpc-auc run --metrics``); with
    ``protocol="mpc-central"`` and ``epsilon``, roc and pr are the DP curve.  Returns a :class:`Report`; its
    ``revealed`` lists each opened value."""
    start = time.perf_counter()
    _unweighted(sample_weight)
    request = plan(protocol=protocol, epsilon=epsilon, score_range=score_range, score_dtype=score_dtype,
                   deployment=deployment, timeout=timeout, metrics=metrics, points=points, max_fpr=max_fpr)
    evalset, groups, data = _evaluation(binary_labels(y_true, pos_label), y_score, clients, request.encoder)
    outcome = execute(request, data)
    revealed = getattr(outcome.release, "revealed", ())
    return Report({"auc": outcome.auc, **outcome.metrics}, protocol, evalset.m, len(groups), tuple(revealed),
                  getattr(outcome.release, "traffic", None), time.perf_counter() - start)


def delong_test(y_true, score_a, score_b, *, clients=None, pos_label=None, protocol: str = "mpc-exact",
                score_range=(0.0, 1.0), score_dtype: str = "float64", deployment: str = None,
                timeout: float = 60.0) -> DelongTestResult:
    """DeLong's test of two models scored on the same rows: both AUCs, DeLong's covariance matrix, z and the
    two-sided p-value [DeLong1988], without any party seeing a score or a label.

    Each client submits both score columns of its rows together; each column is sorted obliviously, each
    row's placement values of both sorts go back to input order inside the MPC, and only the two AUCs, the
    two variances and their covariance are opened (z and p follow here).  Parameters as in
    :func:`average_precision_score`; ``score_a`` and ``score_b`` must match ``y_true`` row for row.  Returns
    a :class:`DelongTestResult` (``value``: AUC_a - AUC_b, ``z``, ``p_value``)."""
    start = time.perf_counter()
    a, b = np.asarray(score_a), np.asarray(score_b)
    if a.ndim != 1 or b.shape != a.shape or len(a) != len(np.asarray(y_true)):
        raise InputError(f"score_a and score_b must be one score per row of y_true: shapes {a.shape} and {b.shape} "
                         f"for {np.shape(y_true)[0] if np.ndim(y_true) else 0} labels")
    request = plan(protocol=protocol, score_range=score_range, score_dtype=score_dtype, deployment=deployment,
                   timeout=timeout, metrics=("auc", "ci"))
    labels = binary_labels(y_true, pos_label, greater=pos_label is None)
    evalset, groups, data = _evaluation(labels, a, clients, request.encoder)
    _evaluation(labels, b, clients, request.encoder)  # the second column's checks
    data = [(name, np.c_[column, b[rows]], y) for (name, column, y), (_, rows) in zip(data, groups)]
    if evalset.m > CI_MAX_ROWS:
        raise InputError(f"DeLong's test is computed for at most {CI_MAX_ROWS} rows")
    outcome = execute(request, data)
    if (0, 1) not in (outcome.covariance or {}):
        raise InputError("DeLong's test needs two rows of each class")
    test = paired_test(outcome.auc, outcome.others[0]["auc"], outcome.metrics["ci"]["variance"],
                       outcome.others[0]["metrics"]["ci"]["variance"], outcome.covariance[(0, 1)])
    revealed = tuple(getattr(outcome.release, "revealed", ()))
    return DelongTestResult(test.difference, test.value, test.covariance, test.z, test.p_value, protocol, evalset.m,
                            len(groups), revealed, getattr(outcome.release, "traffic", None),
                            time.perf_counter() - start)


def _single(metric, y_true, y_score, clients, pos_label, protocol, sample_weight, score_range, score_dtype,
            deployment, timeout, points=100, epsilon=None) -> MetricResult:
    """One metric of :func:`evaluate` as a MetricResult (the AUC is opened with it)."""
    report = evaluate(y_true, y_score, clients=clients, metrics=(metric,), points=points, pos_label=pos_label,
                      protocol=protocol, epsilon=epsilon, sample_weight=sample_weight, score_range=score_range,
                      score_dtype=score_dtype, deployment=deployment, timeout=timeout)
    found, flagged = report[metric], None
    if metric in ("roc", "pr"):
        flagged = np.asarray(found["flagged"])
        found = tuple(np.asarray(found[k]) for k in (("fpr", "tpr") if metric == "roc" else ("precision", "recall")))
    return MetricResult(found, metric, protocol, report.m, report.clients, flagged, report.revealed, report.traffic,
                        report.wall_s)


def _client_weights(sample_weight, m: int, groups) -> list:
    """Each client's sample weights, checked (protocols.inputs.weights), in the order of ``groups``; None if
    unweighted."""
    if sample_weight is None:
        return None
    weights = check_weights(sample_weight, m, lambda i: f"sample_weight[{i}]")
    return [weights[rows] for _, rows in groups]


def _weight_error(sample_weight):
    """The rounding bound of the units the simulated clients send (protocols.inputs.weights); None unweighted."""
    return None if sample_weight is None else rounding_error(sample_weight)


def _unweighted(sample_weight) -> None:
    """InputError for sample weights where only the AUC takes them."""
    if sample_weight is not None:
        raise InputError("sample_weight is taken by roc_auc_score only (the weighted AUC); average precision, the "
                         "curves and the report are unweighted here (pass None)")


def _evaluation(y_true, y_score, clients, encoder) -> tuple:
    """The checked evaluation set, its (client, rows) groups and the clients' (id, scores, labels); y_true: 0/1."""
    labels = np.asarray(y_true)
    scores = np.asarray(y_score)
    if scores.ndim != 1 or labels.ndim != 1:
        raise InputError("y_true and y_score must be one-dimensional")
    owners = np.full(len(scores), "c0") if clients is None else np.asarray(clients)
    evalset = EvalSet.build(owners, scores, labels, encoder)
    groups = evalset.client_rows()
    return evalset, groups, [(name, evalset.score[rows], evalset.label[rows]) for name, rows in groups]


def read_predictions(path, *, client_col: str = "client", score_col="score", label_col: str = "label",
                     id_col: str = None, weight_col: str = None, sep: str = None, positive_label=None,
                     limits=None) -> pd.DataFrame:
    """A prediction file as a DataFrame with the columns ``client``, each score column under its own name, ``label``
    (0/1) and, with ``id_col``, ``id``, with ``weight_col``, ``weight`` (for ``sample_weight``): the same reader,
    checks and messages as ``mpc-auc run`` (CSV-like text with its separator sniffed, gzip or Parquet known by their
    bytes, other columns ignored, decimal commas refused by name). ``score_col``: a name, or several (models scored
    on the same rows). ``limits``: how much of the file is read, a :class:`ReadLimits` or a dict of its fields
    (``max_bytes``, ``max_rows``, ``max_columns``, ``max_line_bytes``; default ``ReadLimits()``, docs/api.md); a
    file past one is refused, naming it, before it is read.

    >>> rows = read_predictions("export.csv", client_col="site", score_col="p_hat", label_col="outcome")
    >>> roc_auc_score(rows.label, rows.p_hat, clients=rows.client)  # doctest: +SKIP
    """
    scores = (score_col,) if isinstance(score_col, str) else tuple(score_col)
    columns = Columns(client_col, scores, label_col, id_col, weight_col)
    evalset, values, ids, weights = read_score_columns(path, columns, FINITE, both_classes=False, sep=sep,
                                              positive_label=None if positive_label is None else str(positive_label),
                                              limits=ReadLimits.of(limits))
    frame = pd.DataFrame({"client": evalset.client, **dict(zip(scores, values.T)), "label": evalset.label})
    if ids is not None:
        frame["id"] = ids
    if weights is not None:
        frame["weight"] = weights
    return frame


def compare(y_true, y_score, clients=None, *, protocols=None, epsilons=(0.5, 1.0, 2.0, 4.0, 8.0), delta=1e-6,
            draws: int = 100, seed=None, score_range=(0.0, 1.0)):
    """The plain-DP AUC mechanisms side by side on these rows: one row per protocol and epsilon.

    Each mechanism of the papers (fedauc, dpauc, mindspore label DP, condensed LDP, and the law of
    mpc-central's release) is simulated ``draws`` times on the same clients' data; the error is
    against the exact rank-sum AUC.  The same table as ``mpc-auc compare``.

    Parameters
    ----------
    y_true, y_score, clients : array-like of shape (M,)
        As in :func:`roc_auc_score` (``clients`` default: one client).
    protocols : sequence of str, optional
        Mechanism names (``mpc-auc compare --help`` lists them); default: all.
    epsilons : sequence of float
        The epsilon grid (fedauc-vanilla, which is exact, is run once with epsilon NaN).
    delta : float
        delta of the (epsilon, delta) mechanisms.
    draws : int
        Noise draws per protocol and epsilon (>= 2).
    seed : int, optional
        Seed of the simulated noise (a simulation: not the MPC's CSPRNG); default: the OS CSPRNG.
    score_range : (float, float)
        The public range of the scores; the mechanisms that perturb or bin score values see them
        mapped to [0, 1] (their sensitivity is the range's width).

    Returns
    -------
    pandas.DataFrame
        Columns protocol, epsilon, delta, mean, std, bias, rmse, rmse_lo, rmse_hi (95% bootstrap
        interval), draws, seconds, accounting, server_received.
    """
    protocols = list(MECHANISMS) if protocols is None else list(protocols)
    unknown = [p for p in protocols if p not in MECHANISMS]
    if unknown:
        raise InputError(f"unknown protocol(s) {', '.join(map(str, unknown))}; choose from {', '.join(MECHANISMS)}")
    epsilons = [checked("epsilon", e) for e in epsilons]
    checked("delta", delta, PARAMETERS["mechanism_delta"])
    encoder = plan(protocol="clear", score_range=score_range).encoder
    _, _, data = _evaluation(y_true, y_score, clients, encoder)
    rows, _ = grid(data, protocols, epsilons, delta, checked("draws", draws), seed, (encoder.lo, encoder.hi))
    return pd.DataFrame(rows, columns=list(FIELDS))


def u_statistic(values, *, kernel: str, epsilon: float, k: int = 1, labels=None, seed=None,
                timeout: float = 60.0):
    """A U-statistic of values held one per user, by ustat-2pc (ustats §5): sampled pairs, 2PC kernels.

    ``k`` random permutations pair the users (k pairs per user); each pair's kernel and its noise
    (randomized response at epsilon/k for the AUC, discrete Laplace of scale k/epsilon for Gini and
    Kendall) are computed in 2PC by two parties with a separate dealer, and the aggregator averages
    the released values (ustats Thm. 5: MSE 4 sigma1^2/n + ... + 4k/(n eps^2) for Laplace).

    Parameters
    ----------
    values : array-like
        ``(n,)`` values in [0, 1] (auc, auc-private, gini) or ``(n, 2)`` integer ratings (kendall).
    kernel : {"auc", "auc-private", "gini", "kendall"}
        auc: classes public, auc-private: labels private too.
    epsilon : float
        The privacy budget per user.
    k : int
        Pairs per user.
    labels : array-like of shape (n,), optional
        0/1 classes, for the AUC kernels.
    seed : int, optional
        Seed of the pair sampling only (the noise always comes from the parties' CSPRNG).
    timeout : float
        Seconds before a silent party counts as lost.

    Returns
    -------
    UstatRelease
        ``estimate``, ``std`` (standard error from the released values), ``swamped`` (True when the
        noise leaves the estimate uninformative), ``pairs``, ``effective_epsilon``, ``delta``,
        ``traffic``, ``wall_s``.
    """
    if kernel.startswith("auc") and labels is None:
        raise InputError(f"kernel {kernel} needs labels")
    sample = Sample(np.asarray(values), None if labels is None else np.asarray(labels))
    return ustat_2pc(kernel, [sample], _required_epsilon(epsilon, "u_statistic"), checked("k", k), seed=seed,
                     timeout_s=checked("timeout", timeout))[0]


def _required_epsilon(value, who: str) -> float:
    if value is None:
        raise InputError(f"{who} is differentially private: it needs epsilon")
    return checked("epsilon", value)
