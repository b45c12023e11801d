"""The rows of one API call: checked into an evaluation set, grouped by client, and run by a plan.

Every function of the Python API (mpc_auc.api, mpc_auc.metric_api) hands its labels, scores, clients and weights
here: the rows are checked as ``mpc-auc run`` checks a file's (mpc_auc.dataset), each client's rows go to the
planner's :func:`mpc_auc.planner.execute` together.
"""
import numpy as np

from .dataset import EvalSet
from .keywords import python_words
from .labels import column, plain
from .planner import Plan, execute
from .protocols.errors import InputError
from .protocols.inputs.weights import check_weights, rounding_error

ONE_CLIENT = "c0"  # the client of every row when a call names none


def run_rows(request: Plan, labels, y_score, clients, sample_weight) -> tuple:
    """Check the rows and run ``request`` on them: (the planner's Outcome, the evaluation set, its client groups).
    labels: 0/1; the client ids name the owners of their rows only when ``clients`` is given."""
    evalset, groups, data = evaluation_rows(labels, y_score, clients, request.encoder)
    weights = None
    if sample_weight is not None:
        weights = check_weights(sample_weight, evalset.m, lambda i: f"sample_weight[{i}]")
        weights = [weights[rows] for _, rows in groups]
    return execute(request, data, weights=weights, owners=clients is not None), evalset, groups


def weight_error(sample_weight):
    """The rounding bound of the units the simulated clients send (protocols.inputs.weights); None unweighted."""
    return None if sample_weight is None else rounding_error(sample_weight)


def evaluation_rows(y_true, y_score, clients, encoder) -> tuple:
    """The checked evaluation set, its (client, rows) groups and the clients' (id, scores, labels); y_true: 0/1.
    A score column of shape (M, 1) (a one-column DataFrame) is taken as (M,), as scikit-learn does."""
    labels = np.asarray(y_true)
    scores = column(y_score)
    if scores.ndim != 1 or labels.ndim != 1:
        raise InputError(f"y_true and y_score must be one-dimensional, not of shapes {labels.shape} and "
                         f"{scores.shape}")
    owners = np.full(len(scores), ONE_CLIENT) if clients is None else np.asarray(clients)
    with python_words():
        evalset = EvalSet.build(owners, scores, labels, encoder)
    groups = [(plain(name), rows) for name, rows in evalset.client_rows()]  # ids as str, in messages too
    return evalset, groups, [(name, evalset.score[rows], evalset.label[rows]) for name, rows in groups]
