"""The example's data and model: scikit-learn's breast-cancer set (569 rows, shipped with scikit-learn), split
over the clients at random (a fixed public seed), 70/30 train/test on each; a logistic regression trained by
full-batch gradient descent on standardised features, whose weights FedAvg averages."""
import json
import os

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.metrics import roc_auc_score

SEED = 2026  # the split's seed: public, the same on every node
FEATURES = 30
# the run config's keys (pyproject.toml), with the values Flower's Python simulation API (which passes no run
# config) gets: paths relative to the directory the run starts in
DEFAULTS = {"clients": 5, "rounds": 2, "mpcauc-deployment": "deployment.yaml", "mpcauc-keys": "keys",
            "mpcauc-deadline": 300.0, "out": "mpcauc-flower-rounds.json",
            # each round one DP release at this epsilon; each client accepts at most that per release and this much
            # in all (its own ledger, beside its key), and no exact release unless mpcauc-max-exact says so
            "mpcauc-protocol": "mpc-central", "mpcauc-epsilon": 1.0, "mpcauc-max-epsilon": 1.0, "mpcauc-budget": 2.0,
            "mpcauc-max-exact": 0,
            # a client whose rows fail the parties' in-MPC domain check is left out of the round's release (named in
            # the log) instead of costing the round its AUC
            "mpcauc-exclude-invalid": True,
            # crafted_server_app (the attack of docs/flower.md): its rounds and its output
            "mpcauc-oracle-rounds": 3, "oracle-out": "mpcauc-oracle-rounds.json"}


def setting(context, name: str):
    """A run config value; else, for Flower's Python simulation API (which passes no run config), the environment's
    MPCAUC_FLOWER_<NAME> (mpcauc-budget: MPCAUC_FLOWER_MPCAUC_BUDGET); else its default."""
    if name in context.run_config:
        return context.run_config[name]
    value = os.environ.get("MPCAUC_FLOWER_" + name.upper().replace("-", "_"), DEFAULTS[name])
    if isinstance(DEFAULTS[name], bool) and isinstance(value, str):  # a flag from the environment
        return value.strip().lower() in ("1", "true", "yes")
    return value


def partition(partition_id: int, partitions: int) -> tuple:
    """((x_train, y_train), (x_test, y_test, ids)) of one client: its share of the rows, standardised with the
    whole set's public feature scales (a real deployment would agree on them beforehand)."""
    x, y = load_breast_cancer(return_X_y=True)
    x = (x - x.mean(axis=0)) / x.std(axis=0)
    owner = np.random.default_rng(SEED).integers(0, partitions, len(y))
    rows = np.flatnonzero(owner == partition_id)
    test = np.random.default_rng(SEED + 1 + partition_id).random(len(rows)) < 0.3
    train_rows, test_rows = rows[~test], rows[test]
    return (x[train_rows], y[train_rows]), (x[test_rows], y[test_rows], np.array([f"row-{i}" for i in test_rows]))


def union_of_tests(partitions: int) -> tuple:
    """(y, x) of every client's test rows together: for the clear AUC the example logs beside the private one
    (only a simulation can compute it; a deployment cannot, which is the point)."""
    parts = [partition(p, partitions)[1] for p in range(partitions)]
    return np.concatenate([p[1] for p in parts]), np.concatenate([p[0] for p in parts])


def initial_weights() -> list:
    return [np.zeros(FEATURES), np.zeros(1)]


def scores(weights, x) -> np.ndarray:
    """P(malignant... the positive class) of each row: the logistic of the linear score."""
    w, b = weights
    return 1.0 / (1.0 + np.exp(-(x @ w + b[0])))


def train(weights, x, y, epochs: int = 20, rate: float = 0.5) -> list:
    """Full-batch gradient descent on the mean log loss from ``weights``."""
    w, b = (np.array(a, dtype=np.float64) for a in weights)
    for _ in range(epochs):
        error = scores([w, b], x) - y
        w -= rate * x.T @ error / len(y)
        b -= rate * np.array([error.mean()])
    return [w, b]


def clear_auc(weights, clients: list, partitions: int) -> float:
    """scikit-learn's AUC of ``weights``' scores on the union of the test sets of ``clients`` (client-<i>): what a
    round's private AUC equals (computable only because the example's data is public)."""
    parts = [partition(int(name.rpartition("-")[2]), partitions)[1] for name in clients]
    return float(roc_auc_score(np.concatenate([p[1] for p in parts]),
                               scores(weights, np.concatenate([p[0] for p in parts]))))


def report(rounds: list, out: str = None) -> list:
    """Print the simulation examples' rounds (the sampled clients, the private and the clear AUC) and write them to
    ``out`` (JSON) if given; returns them."""
    for r in rounds:
        print(f"round {r['round']}: clients {', '.join(r['clients'])}: private global AUC (mpc-auc, exact) "
              f"{r['private_auc']!r}, clear AUC {r['clear_auc']!r}")
    if out:
        with open(out, "w") as f:
            json.dump({"rounds": rounds}, f, indent=1)
    return rounds
