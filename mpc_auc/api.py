"""The Python API: the AUC of scores and labels spread over clients, in scikit-learn's conventions.

Works from a notebook and from a plain script with no ``if __name__ == "__main__"`` guard: the role
processes never re-run the caller's script (protocols.runtime.session).  Every input is checked before any
process starts; a problem raises :class:`InputError` (a ``ValueError``) naming it.
"""
import time
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .dataset import EvalSet
from .planner import execute, plan
from .protocols.dp.central_law import SWAMPED
from .protocols.dp.grid import FIELDS, grid
from .protocols.dp.suite import MECHANISMS
from .protocols.errors import InputError
from .protocols.ustat.two_party import Sample, ustat_2pc
from .protocols.validation import PARAMETERS, checked

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
        mpc-central: the standard deviation of the release around the AUC (its noise and rounding).
    ci : tuple of float or None
        mpc-central: the 95% interval auc +- 1.96 std, clipped to [0, 1].
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

    def __repr__(self) -> str:
        privacy = f", epsilon={self.epsilon:g}, ci=({self.ci[0]:.4f}, {self.ci[1]:.4f})" if self.epsilon else ""
        return (f"AucResult(auc={self.auc:.6f}, protocol={self.protocol!r}, m={self.m}, clients={self.clients}"
                f"{privacy}, wall_s={self.wall_s:.1f})")


def roc_auc_score(y_true, y_score, *, clients=None, protocol: str = "mpc-exact", epsilon: float = None,
                  neighbours: str = "label", score_range=(0.0, 1.0), score_dtype: str = "float64",
                  return_ranks: bool = False, auc_decimals: int = None, deployment: str = None, ledger: str = None,
                  budget=None, timeout: float = 60.0) -> AucResult:
    """The ROC AUC of ``y_score`` against ``y_true``, computed without any party seeing the others' rows.

    The scores are ranked obliviously by two compute parties with a separate dealer (mpc-exact,
    mpc-central); the AUC is the rank-sum (Mann-Whitney) statistic of fedauc-vfl-ranksum.md,
    AUC = (sum of positives' mid-ranks - P(P+1)/2) / (P N).

    Parameters
    ----------
    y_true : array-like of shape (M,)
        Labels: 0/1 or False/True.
    y_score : array-like of shape (M,)
        Scores, finite and inside ``score_range``.
    clients : array-like of shape (M,), optional
        The client holding each row (ids: letters, digits, ``._-``); default: one client.
    protocol : {"mpc-exact", "mpc-central", "clear"}
        mpc-exact opens the exact AUC; mpc-central one noisy release (label DP, or record DP with
        ``neighbours="record"``) at ``epsilon``; clear computes in this process (no privacy).
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
    request = plan(protocol=protocol, epsilon=epsilon, neighbours=neighbours, budget=budget, score_range=score_range,
                   score_dtype=score_dtype, ranks=return_ranks, auc_decimals=auc_decimals, deployment=deployment,
                   ledger=ledger, timeout=timeout)
    evalset, groups, data = _evaluation(y_true, y_score, clients, request.encoder)
    outcome = execute(request, data)
    common = dict(auc=outcome.auc, protocol=protocol, m=evalset.m, clients=len(groups))
    if protocol == "clear":
        return AucResult(wall_s=time.perf_counter() - start, **common)
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
            ranks[rows] = result.ranks[name] + 1
    return AucResult(provider=result.provider, ranks=ranks, traffic=result.traffic,
                     wall_s=time.perf_counter() - start, **common)


def _evaluation(y_true, y_score, clients, encoder) -> tuple:
    """The checked evaluation set, its (client, rows) groups and the clients' (id, scores, labels)."""
    labels = np.asarray(y_true)
    labels = labels.astype(np.int64) if labels.dtype == bool else labels
    scores = np.asarray(y_score)
    if scores.ndim != 1 or labels.ndim != 1:
        raise InputError("y_true and y_score must be one-dimensional")
    owners = np.full(len(scores), "c0") if clients is None else np.asarray(clients)
    evalset = EvalSet.build(owners, scores, labels, encoder)
    groups = evalset.client_rows()
    return evalset, groups, [(name, evalset.score[rows], evalset.label[rows]) for name, rows in groups]


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
