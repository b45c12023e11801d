"""The Python API: the AUC of scores and labels spread over clients, in scikit-learn's conventions.

Works from a notebook and from a plain script with no ``if __name__ == "__main__"`` guard: the role
processes never re-run the caller's script (protocols.runtime.session).  Every input is checked before any
process starts; a problem raises :class:`InputError` (a ``ValueError``) naming it.
"""
import numbers
import time
import warnings
from dataclasses import dataclass

import numpy as np

from .dataset import EvalSet
from .protocols.inputs.encoding import ScoreEncoder
from .protocols.errors import InputError

PROTOCOLS = ("mpc-exact", "mpc-central", "clear")


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
                  return_ranks: bool = False, deployment: str = None, ledger: str = None, budget=None,
                  timeout: float = 60.0) -> AucResult:
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
        missing, a bad client id, epsilon missing or <= 0, an option the protocol does not take.
    """
    from .protocols.mpc.ledger import Budget
    from .protocols.mpc.mpc_central import CentralNoise
    from .protocols.runtime.session import Placement

    start = time.perf_counter()
    if protocol not in PROTOCOLS:
        raise InputError(f"protocol must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")
    if protocol == "mpc-central":
        noise = CentralNoise(_epsilon(epsilon), neighbours=neighbours)
    elif epsilon is not None or budget is not None:
        raise InputError(f"protocol {protocol} releases the exact AUC and takes no epsilon or budget")
    if return_ranks and protocol != "mpc-exact":
        raise InputError("return_ranks needs protocol mpc-exact")
    if deployment and ledger:
        raise InputError("ledger is for local runs: deployed parties keep their own (mpc-auc party --ledger)")
    encoder = ScoreEncoder(*_pair(score_range, "score_range"), score_dtype)
    evalset, groups, data = _evaluation(y_true, y_score, clients, encoder)
    common = dict(protocol=protocol, m=evalset.m, clients=len(groups))
    if protocol == "clear":
        from .protocols.clear_auc import rank_sum_auc

        return AucResult(auc=rank_sum_auc(evalset.score, evalset.label), wall_s=time.perf_counter() - start,
                         **common)
    placement = Placement.deployed(deployment) if deployment else Placement(ledger=ledger)
    if protocol == "mpc-central":
        from .protocols.mpc.mpc_central import SWAMPED, mpc_central_auc, release_interval, swamped

        limit = Budget(*_pair(budget, "budget", 1)) if budget is not None else None
        release = mpc_central_auc([data], noise, encoder, placement=placement, timeout_s=timeout, budget=limit)[0]
        std, ci = release_interval(release, noise)
        if swamped(release.aucs[0], std):
            warnings.warn(SWAMPED.format(std=std, epsilon=noise.epsilon), UserWarning, stacklevel=2)
        return AucResult(auc=release.aucs[0], epsilon=noise.epsilon, delta=release.delta, std=std, ci=ci,
                         provider="TTP", swamped=swamped(release.aucs[0], std),
                         traffic=release.traffic, wall_s=time.perf_counter() - start,
                         budget_remaining=(release.ledger or {}).get("remaining_epsilon"), **common)
    from .protocols.mpc.mpc_exact import mpc_exact_auc

    result = mpc_exact_auc([data], encoder, ranks=return_ranks, placement=placement, timeout_s=timeout)[0]
    ranks = None
    if return_ranks:
        ranks = np.empty(evalset.m)
        for name, rows in groups:
            ranks[rows] = result.ranks[name] + 1
    return AucResult(auc=result.auc, provider=result.provider, ranks=ranks, traffic=result.traffic,
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
    import pandas as pd

    from .protocols.dp.dp_suite import MECHANISMS
    from .sims.compare import FIELDS, compare as run_grid

    protocols = list(MECHANISMS) if protocols is None else list(protocols)
    unknown = [p for p in protocols if p not in MECHANISMS]
    if unknown:
        raise InputError(f"unknown protocol(s) {', '.join(map(str, unknown))}; choose from {', '.join(MECHANISMS)}")
    epsilons = [_epsilon(e) for e in epsilons]
    if not 0 < delta < 1:
        raise InputError(f"delta must lie strictly between 0 and 1, not {delta!r}")
    if not (isinstance(draws, numbers.Integral) and draws >= 2):
        raise InputError(f"draws must be an integer >= 2, not {draws!r}")
    encoder = ScoreEncoder(*_pair(score_range, "score_range"))
    _, _, data = _evaluation(y_true, y_score, clients, encoder)
    rows, _ = run_grid(data, protocols, epsilons, delta, draws, seed, (encoder.lo, encoder.hi))
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
    from .protocols.ustat.ustat_2pc import Sample, check_k, ustat_2pc

    if kernel.startswith("auc") and labels is None:
        raise InputError(f"kernel {kernel} needs labels")
    sample = Sample(np.asarray(values), None if labels is None else np.asarray(labels))
    return ustat_2pc(kernel, [sample], _epsilon(epsilon, "u_statistic"), check_k(k), seed=seed, timeout_s=timeout)[0]


def _epsilon(value, who: str = "protocol mpc-central") -> float:
    if value is None:
        raise InputError(f"{who} needs epsilon")
    if not (isinstance(value, numbers.Real) and np.isfinite(value) and value > 0):
        raise InputError(f"epsilon must be a positive finite number, not {value!r}")
    return float(value)


def _pair(value, name: str, least: int = 2) -> tuple:
    """A number or a pair of numbers as a tuple (``least``: how many values may be given at the fewest)."""
    values = (value,) if np.isscalar(value) else tuple(value)
    if not least <= len(values) <= 2 or not all(isinstance(v, numbers.Real) for v in values):
        raise InputError(f"{name} must be {'a number or ' if least == 1 else ''}a pair of numbers, not {value!r}")
    return tuple(float(v) for v in values)
