"""The Python API: the AUC of scores and labels spread over clients, in scikit-learn's conventions; the global
ranks; prediction files; the plain-DP mechanisms side by side; ustat-2pc.  The other metrics of the same sort are
mpc_auc.metric_api's.

Works from a notebook and from a plain script with no ``if __name__ == "__main__"`` guard: the role
processes never re-run the caller's script (protocols.runtime.session).  Every input is checked before any
process starts; a problem raises :class:`InputError` (a ``ValueError``) naming it.
"""
import time
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .context import Context
from .csv_io import Columns, ReadLimits, read_score_columns
from .keywords import python_words
from .labels import binary_labels, column, one_vs_rest
from .planner import Plan, auc_plan, plan, ustat_epsilon
from .protocols.clear_metrics import delong_interval
from .protocols.dp.central_law import SWAMPED
from .protocols.dp.grid import FIELDS, grid
from .protocols.dp.suite import MECHANISMS
from .protocols.errors import InputError
from .protocols.inputs.encoding import FINITE
from .protocols.mpc.exact import secured
from .protocols.ustat.two_party import Sample, ustat_2pc
from .protocols.validation import PARAMETERS, checked
from .rows import ONE_CLIENT, evaluation_rows, run_rows, weight_error
from .protocols.scalar import ScalarResult


@dataclass(frozen=True, eq=False, repr=False)
class AucResult(ScalarResult):
    """One AUC and how it was obtained: a ``float`` (the AUC) with attributes (docs/api.md, "Results are numbers").

    Attributes
    ----------
    value : float
        The released AUC (mpc-exact: floor(AUC * 2^52) / 2^52; mpc-central: the noisy release), also the result's
        own float value: ``float(result)``, ``result > 0.5``, ``f"{result:.3f}"``.
    auc : float
        The same as ``value`` (an alias).
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
        clipped), or with ``ci="logit"`` the logit-transformed one, inside (0, 1); mpc-central: the 95% interval auc +- 1.96 std, clipped to [0, 1].  None when not asked for,
        or when a class has fewer than two rows.
    per_class : dict or None
        ``multi_class="ovr"``: each class's one-vs-rest AUC (each opened).
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
    security : dict or None
        mpc-exact or mpc-central with ``Context(security="malicious")``: {"mode": "malicious", "statistical_bits": s,
        "checks": the MAC checks run, and for mpc-exact "positives": the count of positives opened with the AUC}; an
        undetected deviation of a compute party passes one check with probability at most 2^-(s - log2(s + 1)),
        s >= 40 (docs/protocols/malicious-security.md).  None: semi-honest.

    Examples
    --------
    >>> from mpc_auc import roc_auc_score
    >>> result = roc_auc_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], protocol="clear")
    >>> result > 0.5, f"{result:.2f}", round(result, 1), np.array([result, result]).dtype, result.m
    (True, '0.75', 0.8, dtype('float64'), 4)
    """
    value: float
    protocol: str
    m: int
    clients: int
    epsilon: float = None
    delta: float = None
    std: float = None
    ci: tuple = None
    ranks: np.ndarray = None
    traffic: dict = None
    wall_s: float = 0.0
    budget_remaining: float = None
    swamped: bool = False
    per_class: dict = None
    weight_error: float = None
    security: dict = None

    @property
    def auc(self) -> float:
        """The AUC: ``value``'s alias."""
        return self.value

    def __repr__(self) -> str:
        privacy = f", epsilon={self.epsilon:g}" if self.epsilon else ""
        privacy += f", ci=({self.ci[0]:.4f}, {self.ci[1]:.4f})" if self.ci else ""
        return (f"AucResult(auc={self.value:.6f}, protocol={self.protocol!r}, m={self.m}, clients={self.clients}"
                f"{privacy}, wall_s={self.wall_s:.1f})")


def roc_auc_score(y_true, y_score, *, clients=None, protocol: str = "mpc-exact", epsilon: float = None, ci="auto",
                  multi_class: str = "raise", average: str = "macro", labels=None, sample_weight=None, max_fpr=None,
                  context: Context = None) -> AucResult:
    """The ROC AUC of ``y_score`` against ``y_true``, computed without any party seeing the others' rows.

    The scores are ranked obliviously by two compute parties with a separate dealer (mpc-exact,
    mpc-central); the AUC is the rank-sum (Mann-Whitney) statistic of the vFL rank-sum paper
    (fedauc eq. 1 with mid-ranks), AUC = (sum of positives' mid-ranks - P(P+1)/2) / (P N).

    Parameters
    ----------
    y_true : array-like of shape (M,)
        Labels of any two values (the greater is the positive class, as scikit-learn), or of three or more
        classes with ``multi_class="ovr"``.
    y_score : array-like of shape (M,) or (M, classes)
        Scores, finite and inside ``context.score_range``; one column per class for ``multi_class="ovr"``.
    clients : array-like of shape (M,), optional
        The client holding each row (ids: letters, digits, ``._-``); default: one client.  With mpc-central each
        client id names an owner of its rows, whose spend the parties' ledgers keep across evaluations (without
        ``clients``, only the rows as a multiset are charged).
    protocol : {"mpc-exact", "mpc-central", "clear"}
        mpc-exact opens the exact AUC; mpc-central one noisy release (label DP, or record DP with
        ``context.neighbours="record"``) at ``epsilon``; clear computes in this process (no privacy).
    epsilon : float, optional
        Required by mpc-central, refused by the others.
    ci : {"auto", True, False, "wald", "logit"}
        mpc-exact and clear: also compute DeLong's variance inside the MPC and return ``std`` and ``ci``; the
        parties then open the variance too.  True, "wald" and "auto": the Wald interval; "logit": the bounded
        one, inside (0, 1) (protocols.clear_metrics.delong_interval, from the released AUC and std).  It is computed for at most 2^20 rows: "auto" skips it beyond (with
        a UserWarning), and for the partial, weighted or one-vs-rest AUC; True refuses such a set.
    multi_class : {"raise", "ovr"}
        ``"ovr"``: one-vs-rest AUC of each class (one sort per class), averaged by ``average``.
    average : {"macro", "weighted"}
        ``multi_class="ovr"``: the plain mean of the classes' AUCs, or weighted by each class's share of the
        rows (which the caller holds in ``y_true``).
    labels : array-like, optional
        ``multi_class="ovr"``: the class of each score column; default: the sorted classes of ``y_true``.
    sample_weight : array-like of shape (M,), optional
        Non-negative weights: the weighted AUC, as scikit-learn's (mpc-exact and clear; the AUC alone).  Each
        weight enters the MPC as an integer number of units of 2^-q, q chosen so that all rows hold at most 2^30
        units: exact for weights that are multiples of 2^-q, else within the bound of docs/protocols/mpc-exact.md,
        "Weighted AUC" (``weight_error``).
    max_fpr : float, optional
        The standardised partial AUC up to this FPR (McClish 1989, as scikit-learn), computed inside the MPC
        (mpc-exact and clear, at most 2^20 rows; the parties open the partial area, to 2^-40, instead of the
        AUC).  1 or None: the full AUC.
    context : Context, optional
        Where the roles run, the scores' range and type, the privacy unit and budget, the AUC's decimals
        (:class:`Context`; default ``Context()``: roles spawned on this machine, scores in [0, 1]).

    Returns
    -------
    AucResult

    Raises
    ------
    InputError
        A bad input, named: lengths, NaN or out-of-range scores, labels other than 0/1, one class
        missing, a bad client id, epsilon missing or <= 0, an option the protocol does not take.  The
        options are checked by the same planner as the command line's (mpc_auc.planner), with the same words.

    See Also
    --------
    evaluate : every metric from one sort.
    global_ranks : each row's global rank, with the AUC.
    sklearn.metrics.roc_auc_score : the same value, in the clear.

    Examples
    --------
    >>> y, s = [0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]
    >>> print(roc_auc_score(y, s, protocol="clear"))
    0.75
    >>> roc_auc_score([0, 1, 2, 2], np.eye(4, 3)[[0, 1, 2, 2]], multi_class="ovr", protocol="clear").value
    1.0
    """
    start = time.perf_counter()
    request = auc_plan(protocol=protocol, epsilon=epsilon, ci=ci, multi_class=multi_class, average=average,
                       columns=np.ndim(column(y_score)), max_fpr=max_fpr, weighted=sample_weight is not None,
                       context=context)
    if multi_class == "ovr":
        return _multiclass_roc_auc(request, y_true, y_score, clients, average, labels, sample_weight, start)
    return _binary_roc_auc(request, binary_labels(y_true, greater=True), y_score, clients, sample_weight, start)


def global_ranks(y_true, y_score, *, clients=None, context: Context = None) -> AucResult:
    """Each row's global mid-rank among all clients' scores, with the exact AUC, by mpc-exact.

    Each client learns only its own rows' ranks (sealed to it by both parties); here every client is
    simulated in this process, so the caller gets them all.

    Parameters
    ----------
    y_true, y_score, clients, context
        As in :func:`roc_auc_score` (two classes).

    Returns
    -------
    AucResult
        ``ranks``: 1-based mid-ranks with ties averaged, as ``scipy.stats.rankdata(y_score)``.

    See Also
    --------
    roc_auc_score : the AUC alone.

    Examples
    --------
    >>> global_ranks([0, 1, 1], [0.2, 0.2, 0.9]).ranks  # the roles run on this machine, a few seconds
    array([1.5, 1.5, 3. ])
    """
    start = time.perf_counter()
    request = plan(protocol="mpc-exact", ranks=True, context=context)
    return _binary_roc_auc(request, binary_labels(y_true, greater=True), y_score, clients, None, start)


def _binary_roc_auc(request: Plan, labels, y_score, clients, sample_weight, start: float) -> AucResult:
    """The AUC (or the partial AUC, or with ranks) of two classes, as the planned protocol releases it."""
    outcome, evalset, groups = run_rows(request, labels, y_score, clients, sample_weight)
    found = outcome.metrics["pauc"]["mcclish"] if request.spec.max_fpr is not None else outcome.auc
    common = dict(value=float(found), protocol=request.protocol, m=evalset.m, clients=len(groups),
                  wall_s=time.perf_counter() - start)
    delong = (outcome.metrics or {}).get("ci")
    interval = dict(std=delong["std"], ci=delong_interval(outcome.auc, delong["std"], request.interval)) \
        if isinstance(delong, dict) else {}
    if request.protocol == "clear":
        return AucResult(**interval, **common)
    if request.protocol == "mpc-central":
        release = outcome.release
        if outcome.swamped:
            warnings.warn(SWAMPED.format(std=outcome.std, epsilon=request.noise.epsilon), UserWarning, stacklevel=3)
        return AucResult(epsilon=request.noise.epsilon, delta=release.delta, std=outcome.std, ci=outcome.ci,
                         swamped=outcome.swamped, traffic=release.traffic,
                         budget_remaining=(release.ledger or {}).get("remaining_epsilon"), security=secured(release),
                         **common)
    result = outcome.release
    ranks = None
    if request.ranks:
        ranks = np.empty(evalset.m)
        for name, rows in groups:
            ranks[rows] = result.ranks[name]
    return AucResult(ranks=ranks, traffic=result.traffic, weight_error=weight_error(sample_weight), **interval,
                     security=secured(result), **common)


def _multiclass_roc_auc(request: Plan, y_true, y_score, clients, average: str, labels, sample_weight,
                        start: float) -> AucResult:
    """The one-vs-rest AUC: each class's exact (weighted) AUC, one job each, averaged as scikit-learn's ovr
    (``average="weighted"``: by each class's share of the rows, or of the weight)."""
    per_class, shares, traffic = {}, {}, {}
    for name, hits, column in one_vs_rest(y_true, y_score, labels):
        outcome, evalset, groups = run_rows(request, hits, column, clients, sample_weight)
        per_class[name] = outcome.auc
        shares[name] = hits.mean() if sample_weight is None else np.average(hits, weights=sample_weight)
        traffic[str(name)] = getattr(outcome.release, "traffic", None)
    weights = np.array([shares[c] for c in per_class]) if average == "weighted" else None
    exact = request.protocol == "clear"
    return AucResult(float(np.average(list(per_class.values()), weights=weights)), request.protocol, evalset.m,
                     len(groups), traffic=traffic, wall_s=time.perf_counter() - start, per_class=per_class,
                     weight_error=None if exact else weight_error(sample_weight))


def read_predictions(path, *, client_col: str = "client", score_col="score", label_col: str = "label",
                     id_col: str = None, weight_col: str = None, sep: str = None, positive_label=None,
                     limits=None) -> pd.DataFrame:
    """A prediction file as a DataFrame, with the same reader, checks and messages as ``mpc-auc run``.

    CSV-like text with its separator sniffed, gzip or Parquet known by their bytes, other columns ignored, decimal
    commas refused by name; a file past a reading limit is refused, naming it, before it is read.

    Parameters
    ----------
    path : str or path-like
        The file.
    client_col : str or None
        The column of the client ids; None: the file holds one client's rows (``client`` is then ``"c0"``, the
        client of the API's calls without ``clients``).
    label_col : str
        The column of the labels.
    score_col : str or sequence of str
        The score column, or several (models scored on the same rows).
    id_col, weight_col : str, optional
        A column of row ids (the frame's ``id``), of sample weights (its ``weight``, for ``sample_weight``).
    sep : str, optional
        The separator (default: sniffed).
    positive_label : optional
        The label value of the positive class (default: labels of two values, the greater positive).
    limits : ReadLimits or dict, optional
        How much of the file is read (``max_bytes``, ``max_rows``, ``max_columns``, ``max_line_bytes``; default
        ``ReadLimits()``, docs/api.md, "Reading limits").

    Returns
    -------
    pandas.DataFrame
        The columns ``client``, each score column under its own name, ``label`` (0/1) and, when asked for, ``id``
        and ``weight``.

    See Also
    --------
    roc_auc_score : the AUC of the rows read.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "export.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("site;p_hat;outcome\\nnorth;0.2;no\\nsouth;0.7;yes\\nnorth;0.4;no\\n")
    >>> rows = read_predictions(path, client_col="site", score_col="p_hat", label_col="outcome",
    ...                         positive_label="yes")
    >>> rows.label.tolist(), rows.client.tolist()
    ([0, 1, 0], ['north', 'south', 'north'])
    """
    scores = (score_col,) if isinstance(score_col, str) else tuple(score_col)
    with python_words():
        columns = Columns(client_col, scores, label_col, id_col, weight_col)
        evalset, values, ids, weights = read_score_columns(
            path, columns, FINITE, declared_clients=None if client_col else (ONE_CLIENT,), both_classes=False,
            sep=sep, positive_label=None if positive_label is None else str(positive_label),
            limits=ReadLimits.of(limits))
    frame = pd.DataFrame({"client": evalset.client, **dict(zip(scores, values.T)), "label": evalset.label})
    if ids is not None:
        frame["id"] = ids
    if weights is not None:
        frame["weight"] = weights
    return frame


def compare(y_true, y_score, clients=None, *, protocols=None, epsilons=(0.5, 1.0, 2.0, 4.0, 8.0), delta=1e-6,
            draws: int = 100, seed=None, context: Context = None):
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
        The epsilon grid (fedauc-vanilla, which is exact, is run once, with epsilon inf).
    delta : float
        delta of the (epsilon, delta) mechanisms.
    draws : int
        Noise draws per protocol and epsilon (>= 2).
    seed : int, optional
        Seed of the simulated noise (a simulation: not the MPC's CSPRNG); default: the OS CSPRNG.
    context : Context, optional
        Its ``score_range``: the public range of the scores; the mechanisms that perturb or bin score values see
        them mapped to [0, 1] (their sensitivity is the range's width).

    Returns
    -------
    pandas.DataFrame
        Columns protocol, epsilon, delta, mean, std, bias, rmse, rmse_lo, rmse_hi (95% bootstrap
        interval), draws, seconds, accounting, server_received.

    See Also
    --------
    roc_auc_score : the private AUC (``protocol="mpc-central"``: one DP release).

    Examples
    --------
    >>> y = [0, 1] * 50
    >>> s = [0.1 + 0.8 * label * ((i * 7) % 10) / 10 for i, label in enumerate(y)]
    >>> table = compare(y, s, protocols=["fedauc-rr"], epsilons=[1.0], draws=20, seed=1)
    >>> table[["protocol", "epsilon", "draws"]].values.tolist()
    [['fedauc-rr', 1.0, 20]]
    """
    protocols = list(MECHANISMS) if protocols is None else list(protocols)
    unknown = [p for p in protocols if p not in MECHANISMS]
    if unknown:
        raise InputError(f"unknown protocol(s) {', '.join(map(str, unknown))}; choose from {', '.join(MECHANISMS)}")
    epsilons = [checked("epsilon", e) for e in epsilons]
    checked("delta", delta, PARAMETERS["mechanism_delta"])
    encoder = plan(protocol="clear", context=context).encoder
    _, _, data = evaluation_rows(y_true, y_score, clients, encoder)
    rows, _ = grid(data, protocols, epsilons, delta, checked("draws", draws), seed, (encoder.lo, encoder.hi))
    return pd.DataFrame(rows, columns=list(FIELDS))


def u_statistic(values, *, kernel: str, epsilon: float, k: int = 1, labels=None, seed=None,
                timeout: float = 60.0, security: str = "semi-honest"):
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
    security : {"semi-honest"}
        ustat-2pc trusts both parties to follow the protocol; "malicious" is refused (its kernels and noise are not
        built on authenticated shares yet: docs/protocols/malicious-security.md).

    Returns
    -------
    UstatRelease
        A float, the estimate (``estimate``, also ``value``), with ``std`` (standard error from the released
        values), ``swamped`` (True when the noise leaves the estimate uninformative), ``pairs``,
        ``effective_epsilon``, ``delta``, ``traffic``, ``wall_s``.

    See Also
    --------
    roc_auc_score : the AUC of all rows, ranked obliviously.

    Examples
    --------
    >>> release = u_statistic([0.1, 0.4, 0.8, 0.3, 0.9, 0.6], kernel="gini", epsilon=2.0, seed=3)
    >>> release.pairs  # k = 1: a random perfect matching of the six users
    3
    >>> float(release) == release.value == release.estimate
    True
    """
    epsilon = ustat_epsilon(kernel, epsilon, labels is not None, security)
    sample = Sample(np.asarray(values), None if labels is None else np.asarray(labels))
    return ustat_2pc(kernel, [sample], epsilon, checked("k", k), seed=seed, timeout_s=checked("timeout", timeout))[0]

