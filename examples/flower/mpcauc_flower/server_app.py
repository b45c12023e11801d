"""The ServerApp: FedAvg whose evaluation rounds ask mpc-auc for the global AUC of the clients' test
predictions (mpc_auc.flower.MpcAucFedAvg); it logs, per round, that private AUC beside the clear one of the
union of the test sets (computable here only because the example's data is public)."""
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
    strategy = MpcAucFedAvg(deployment=setting(context, "mpcauc-deployment"), rosters=rosters,
                            mpcauc_options={"deadline": float(setting(context, "mpcauc-deadline"))},
                            fraction_train=1.0, fraction_evaluate=1.0, min_train_nodes=clients,
                            min_evaluate_nodes=clients, min_available_nodes=clients)
    y_test, x_test = union_of_tests(clients)

    def clear_auc(server_round: int, arrays: ArrayRecord) -> MetricRecord:
        return MetricRecord({"clear-auc": float(roc_auc_score(y_test, scores(arrays.to_numpy_ndarrays(), x_test)))})

    result = strategy.start(grid=grid, initial_arrays=ArrayRecord(initial_weights()),
                            num_rounds=int(setting(context, "rounds")), evaluate_fn=clear_auc)
    rounds = []
    for server_round, metrics in sorted(result.evaluate_metrics_clientapp.items()):
        clear = result.evaluate_metrics_serverapp[server_round]["clear-auc"]
        private = metrics["mpcauc-auc"]
        log(INFO, "round %s: private global AUC (mpc-auc) %.15f, clear AUC %.15f", server_round, private, clear)
        rounds.append({"round": server_round, "private_auc": private, "clear_auc": clear})
    if setting(context, "out"):
        with open(str(setting(context, "out")), "w") as f:
            json.dump({"rounds": rounds}, f, indent=1)
