"""A Message-API Flower app whose evaluation rounds sample nodes, in Flower's simulation, with its mpc-auc parties
started by one call (mpc_auc.flower.local_deployment): 5 nodes, each round trains (FedAvg) on 3 sampled nodes and
evaluates on 3 (``fraction_evaluate=0.6``) and opens an exact mpc-auc evaluation for exactly those (each client accepts one
exact release of its rows: ``max_exact=1``).  The private AUC is a ServerApp-side metric
(``Result.evaluate_metrics_serverapp``), beside the clear AUC of the sampled clients' test sets that the
ServerApp can compute here only because the example's data is public.

    PYTHONPATH=examples/flower python -m mpcauc_flower.sampled_simulation WORKDIR [OUT.json]
"""
import sys

from flwr.app import ArrayRecord, Context, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp
from flwr.serverapp import Grid, ServerApp
from flwr.simulation import run_simulation

from mpc_auc import ClientTerms
from mpc_auc.flower import MpcAucFedAvg, identify, local_deployment, submit_predictions

from .task import clear_auc, initial_weights, partition, report, scores, train

NODES, SAMPLED, ROUNDS = 5, 3, 1
# SAMPLED ClientApps at once: every sampled client submits at once (a submission waits for the round's roster), and
# no more start than that (each is a Ray worker process)
BACKEND = {"init_args": {"num_cpus": SAMPLED}, "client_resources": {"num_cpus": 1}}


def client_app(settings: dict) -> ClientApp:
    """The ClientApp: ``settings``: partition-id -> its mpc-auc client, key and deployment."""
    app = ClientApp()
    app.query("mpcauc")(identify)  # a sampled round asks each node which mpc-auc client it is

    @app.train()
    def fit(message: Message, context: Context) -> Message:
        (x, y), _ = partition(int(context.node_config["partition-id"]), NODES)
        weights = train(message.content["arrays"].to_numpy_ndarrays(), x, y)
        return Message(RecordDict({"arrays": ArrayRecord(weights), "metrics": MetricRecord({"num-examples": len(y)})}),
                       reply_to=message)

    @app.evaluate()
    def evaluate(message: Message, context: Context) -> Message:
        pid = int(context.node_config["partition-id"])
        _, (x, y, ids) = partition(pid, NODES)
        mine = settings[pid]
        return submit_predictions(message, context, y, scores(message.content["arrays"].to_numpy_ndarrays(), x), ids,
                                  terms=ClientTerms(max_exact=ROUNDS, ledger=mine["key"] + ".ledger.json"), **mine)

    return app


def server_app(options: dict, rounds: list) -> ServerApp:
    """The ServerApp: ``options``: the strategy's mpc-auc keywords; appends each round's result to ``rounds``."""
    app = ServerApp()

    @app.main()
    def main(grid: Grid, context: Context) -> None:
        strategy = MpcAucFedAvg(**options, mpcauc_options={"protocol": "mpc-exact", "deadline": 120.0},
                                fraction_train=SAMPLED / NODES, fraction_evaluate=SAMPLED / NODES,
                                min_train_nodes=SAMPLED, min_evaluate_nodes=SAMPLED, min_available_nodes=NODES)

        def clear(server_round: int, arrays: ArrayRecord):
            clients = strategy.mpcauc_clients.get(server_round)
            if clients is None:
                return None
            return MetricRecord({"clear-auc": clear_auc(arrays.to_numpy_ndarrays(), clients, NODES)})

        result = strategy.start(grid=grid, initial_arrays=ArrayRecord(initial_weights()), num_rounds=ROUNDS,
                                evaluate_fn=clear)
        for server_round, metrics in sorted(result.evaluate_metrics_serverapp.items()):
            if server_round:
                rounds.append({"round": server_round, "clients": strategy.mpcauc_clients[server_round],
                               "private_auc": metrics.get("mpcauc-auc"), "clear_auc": metrics["clear-auc"]})

    return app


def main(workdir: str, out: str = None) -> list:
    """Start the parties and keys, run the simulation, stop the parties; print and return the rounds."""
    rounds = []
    with local_deployment(NODES, workdir) as deployment:
        run_simulation(server_app(deployment.strategy_options, rounds),
                       client_app({p: deployment.client(p) for p in range(NODES)}), num_supernodes=NODES,
                       backend_config=BACKEND)
    return report(rounds, out)


if __name__ == "__main__":
    main(*sys.argv[1:])
