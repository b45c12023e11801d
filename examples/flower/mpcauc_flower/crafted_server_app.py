"""A malicious ServerApp for the example (the attack of docs/flower.md, "What a server that chooses the model can
learn"): in each evaluation round it sends, instead of the trained model, a logistic model crafted to score one
target test row 1.0 and every other row 0.0, and reads the target's label off the round's global AUC (positive
when it exceeds 0.5).  It knows the test rows' features, not their labels: the worst case of a server that
chooses the model.  Against exact rounds (clients that accept them) it reads one label per round for certain;
against the DP default each round is one label-DP release and the clients' budgets end the rounds.

Run like the example's ServerApp (``mpcauc-oracle-rounds`` rounds, default 3); it writes ``oracle-out`` (default
mpcauc-oracle-rounds.json): per round the target row, its label, the released AUC (None where the round
released nothing) and the label read.
"""
import json

import numpy as np
from flwr.app import ArrayRecord
from flwr.serverapp import Grid, ServerApp

from mpc_auc.flower import MpcAucFedAvg

from .task import initial_weights, scores, setting, union_of_tests

app = ServerApp()
LOGIT = 800.0  # the target's logit and the others' at most its negative: sigmoid gives exactly 1.0 and 0.0


def isolating_model(x: np.ndarray, target: int):
    """[w, b] of a logistic model under which row ``target`` of ``x`` scores 1.0 and every other row 0.0, or None
    when no direction of the ones tried puts the target alone on top (w along its features, or away from the
    nearest row that beats it)."""
    for direction in (x[target], x[target] - x.mean(axis=0)):
        projection = x @ direction
        others = np.delete(projection, target)
        gap = projection[target] - others.max()
        if gap > 1e-9:
            scale = 2 * LOGIT / gap
            weights = [direction * scale, np.array([-scale * (projection[target] + others.max()) / 2])]
            with np.errstate(over="ignore"):
                crafted = scores(weights, x)
            if crafted[target] == 1.0 and np.count_nonzero(crafted) == 1:
                return weights
    return None


class CraftedFedAvg(MpcAucFedAvg):
    """FedAvg whose evaluation rounds send the crafted model of that round instead of the global one."""

    def __init__(self, *args, crafted: list, **kwargs):
        super().__init__(*args, **kwargs)
        self.crafted = crafted

    def configure_evaluate(self, server_round: int, arrays, config, grid):
        return super().configure_evaluate(server_round, ArrayRecord(self.crafted[server_round - 1]), config, grid)


@app.main()
def main(grid: Grid, context) -> None:
    clients, rounds = int(setting(context, "clients")), int(setting(context, "mpcauc-oracle-rounds"))
    y, x = union_of_tests(clients)
    found = ((t, isolating_model(x, t)) for t in range(len(y)))
    targets = [(t, model) for t, model in found if model is not None][:rounds]
    rosters = [f"{setting(context, 'mpcauc-keys')}/client-{p}.roster.yaml" for p in range(clients)]
    protocol = str(setting(context, "mpcauc-protocol"))
    options = {"deadline": float(setting(context, "mpcauc-deadline")), "protocol": protocol,
               **({"epsilon": float(setting(context, "mpcauc-epsilon"))} if protocol == "mpc-central" else {})}
    strategy = CraftedFedAvg(crafted=[model for _, model in targets], deployment=setting(context, "mpcauc-deployment"),
                             rosters=rosters, mpcauc_options=options, fraction_train=1.0, fraction_evaluate=1.0,
                             min_train_nodes=clients, min_evaluate_nodes=clients, min_available_nodes=clients)
    result = strategy.start(grid=grid, initial_arrays=ArrayRecord(initial_weights()), num_rounds=len(targets))
    out = []
    for server_round, (target, _) in enumerate(targets, 1):
        auc = result.evaluate_metrics_serverapp.get(server_round, {}).get("mpcauc-auc")
        out.append({"round": server_round, "target": target, "label": int(y[target]), "auc": auc,
                    "read": None if auc is None else int(auc > 0.5), "protocol": protocol})
    with open(str(setting(context, "oracle-out")), "w") as f:
        json.dump({"rounds": out}, f, indent=1)
