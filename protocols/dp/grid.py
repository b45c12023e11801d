"""The plain-DP mechanisms over an epsilon grid on one evaluation set: the rows of ``mpc-auc compare`` and
``mpc_auc.compare``.

Each cell (protocol, epsilon) runs the mechanism ``draws`` times through protocols.dp.suite and reports
the mean, std, bias and RMSE of its AUC against the exact rank-sum AUC, with a percentile-bootstrap 95%
interval of the RMSE.
"""
import numpy as np

from ..clear_auc import rank_sum_auc
from .fedauc import generator
from .suite import MechanismBudget, run_mechanism

FIELDS = ("protocol", "epsilon", "delta", "mean", "std", "bias", "rmse", "rmse_lo", "rmse_hi", "draws", "seconds",
          "accounting", "server_received")


def unit_scores(clients, score_range) -> list:
    """The clients' scores mapped from the public [lo, hi] to [0, 1] by (s - lo) / (hi - lo).

    The map keeps the order, so the AUC is unchanged, and a mechanism whose sensitivity is 1 on [0, 1]
    scores (DP on scores, condensed LDP's grid, dpauc's thresholds) is then calibrated to the declared
    range.  Scores closer than float64 resolution after the map could tie; [0, 1] maps to itself.
    """
    lo, hi = (float(v) for v in score_range)
    if (lo, hi) == (0.0, 1.0):
        return list(clients)
    return [(c, (np.asarray(s, dtype=np.float64) - lo) / (hi - lo), y) for c, s, y in clients]


def grid(clients, protocols, epsilons, delta, draws, seed, score_range=(0.0, 1.0), cells=iter,
         on_row=None) -> tuple:
    """Rows of the comparison (one per protocol and epsilon; fedauc-vanilla once, exact) and the exact AUC.

    ``clients``: [(client id, scores, labels)], scores in the public ``score_range`` (checked by the
    caller; the mechanisms see them through :func:`unit_scores`).  RMSE is against the exact AUC
    over ``draws`` releases; its interval is the percentile bootstrap of the mean squared error,
    square-rooted.  cells: wraps the list of (protocol, epsilon) cells as it is run (a progress bar);
    on_row: called with each row once it is computed.
    """
    scores = np.concatenate([np.asarray(s, dtype=np.float64) for _, s, _ in clients])
    labels = np.concatenate([np.asarray(y) for _, _, y in clients])
    truth = rank_sum_auc(scores, labels)
    clients = unit_scores(clients, score_range)
    resample = generator(seed)
    todo = [(name, eps) for name in protocols for eps in ([np.inf] if name == "fedauc-vanilla" else epsilons)]
    rows = []
    for name, eps in cells(todo):
        release = run_mechanism(name, clients, MechanismBudget(eps, delta), draws, resample.integers(2**63))
        error = release.auc - truth
        lo, hi = mean_interval(error ** 2, resample)
        rows.append({"protocol": name, "epsilon": release.epsilon, "delta": release.delta,
                     "mean": float(release.auc.mean()), "std": float(release.auc.std(ddof=1)),
                     "bias": float(error.mean()), "rmse": float(np.sqrt((error ** 2).mean())),
                     "rmse_lo": float(np.sqrt(lo)), "rmse_hi": float(np.sqrt(hi)), "draws": draws,
                     "seconds": release.seconds, "accounting": release.accounting,
                     "server_received": release.server_received})
        if on_row is not None:
            on_row(rows[-1])
    return rows, truth


def mean_interval(values, rng, resamples: int = 1000) -> tuple:
    """Percentile-bootstrap 95% interval of the mean of ``values`` (e.g. squared errors over draws)."""
    values = np.asarray(values, dtype=np.float64)
    means = values[rng.integers(0, len(values), size=(resamples, len(values)))].mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))
