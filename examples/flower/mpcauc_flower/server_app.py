"""The ServerApp: FedAvg whose evaluation rounds ask mpc-auc for the global AUC of the clients' test
predictions (mpc_auc.flower.MpcAucFedAvg), by default one DP release per round (``mpcauc-protocol``,
``mpcauc-epsilon``); it logs, per round, that private AUC and its interval beside the clear AUC of the union of
the test sets (computable here only because the example's data is public): both are ServerApp-side metrics
(``Result.evaluate_metrics_serverapp``)."""
import json
from logging import INFO

from flwr.app import ArrayRecord, Context, MetricRecord
from flwr.common import log
from flwr.serverapp import Grid, ServerApp
from sklearn.metrics import roc_auc_score

from mpc_auc.flower import MpcAucFedAvg

from .task import initial_weights, scores, setting, union_of_tests

app = ServerApp()


@app.main()
def main(grid: Grid, context: Context) -> None:
    clients = int(setting(context, "clients"))
    rosters = [f"{setting(context, 'mpcauc-keys')}/client-{p}.roster.yaml" for p in range(clients)]
    protocol = str(setting(context, "mpcauc-protocol"))
    options = {"deadline": float(setting(context, "mpcauc-deadline")), "protocol": protocol,
               "exclude_invalid": bool(setting(context, "mpcauc-exclude-invalid")),
               **({"epsilon": float(setting(context, "mpcauc-epsilon"))} if protocol == "mpc-central" else {})}
    strategy = MpcAucFedAvg(deployment=setting(context, "mpcauc-deployment"), rosters=rosters, mpcauc_options=options,
                            fraction_train=1.0, fraction_evaluate=1.0, min_train_nodes=clients,
                            min_evaluate_nodes=clients, min_available_nodes=clients)
    y_test, x_test = union_of_tests(clients)

    def clear_auc(server_round: int, arrays: ArrayRecord) -> MetricRecord:
        return MetricRecord({"clear-auc": float(roc_auc_score(y_test, scores(arrays.to_numpy_ndarrays(), x_test)))})

    result = strategy.start(grid=grid, initial_arrays=ArrayRecord(initial_weights()),
                            num_rounds=int(setting(context, "rounds")), evaluate_fn=clear_auc)
    rounds = []
    for server_round, metrics in sorted(result.evaluate_metrics_serverapp.items()):
        if server_round == 0:  # the initial model's clear AUC: no evaluation round
            continue
        clear = metrics["clear-auc"]
        if "mpcauc-auc" not in metrics:  # refused: e.g. the clients' budgets are spent
            log(INFO, "round %s: no private AUC released, clear AUC %.15f", server_round, clear)
            rounds.append({"round": server_round, "private_auc": None, "clear_auc": clear})
            continue
        private, epsilon = metrics["mpcauc-auc"], metrics.get("mpcauc-epsilon")
        interval = [metrics["mpcauc-auc-ci-low"], metrics["mpcauc-auc-ci-high"]] if epsilon is not None else None
        log(INFO, "round %s: private global AUC (mpc-auc%s) %.15f%s, clear AUC %.15f", server_round,
            f", DP at epsilon {epsilon:g}" if epsilon is not None else ", exact", private,
            f" (95% interval {interval[0]:.3f} .. {interval[1]:.3f})" if interval else "", clear)
        rounds.append({"round": server_round, "private_auc": private, "clear_auc": clear, "epsilon": epsilon,
                       "interval": interval, "std": metrics.get("mpcauc-auc-std"),
                       "excluded": metrics.get("mpcauc-excluded", 0)})
    if setting(context, "out"):
        with open(str(setting(context, "out")), "w") as f:
            json.dump({"rounds": rounds}, f, indent=1)
