"""A legacy-API Flower app (flwr.server.strategy.FedProx and a NumPyClient) whose evaluation rounds report the
private global AUC (mpc-auc), in Flower's simulation, with its parties started by one call
(mpc_auc.flower.local_deployment): 5 nodes, each round trains (FedProx) on 3 sampled nodes and evaluates on 3
(``fraction_evaluate=0.6``) and opens an exact mpc-auc evaluation for exactly those (each client accepts one exact
release of its rows).  The private AUC is in ``History.metrics_centralized`` (Flower's "[SUMMARY]" log: "History
(metrics, centralized)"); the example also prints the clear AUC of the sampled clients' test sets, which it can
compute only because its data is public.

    PYTHONPATH=examples/flower python -m mpcauc_flower.legacy_simulation WORKDIR [OUT.json]
"""
import sys

import numpy as np
from flwr.client import ClientApp, NumPyClient
from flwr.common import Context, ndarrays_to_parameters
from flwr.server import ServerApp, ServerAppComponents, ServerConfig
from flwr.server.strategy import FedProx
from flwr.simulation import run_simulation

from mpc_auc import ClientTerms
from mpc_auc.flower import MpcAucLegacyEvaluation, local_deployment, node_properties, submit_numpy

from .task import clear_auc, initial_weights, partition, report, scores, train

NODES, SAMPLED, ROUNDS = 5, 3, 1
# SAMPLED ClientApps at once: every sampled client submits at once (a submission waits for the round's roster), and
# no more start than that (each is a Ray worker process)
BACKEND = {"init_args": {"num_cpus": SAMPLED}, "client_resources": {"num_cpus": 1}}


class MpcAucFedProx(MpcAucLegacyEvaluation, FedProx):
    """FedProx whose evaluation rounds compute the global AUC with mpc-auc."""


class Client(NumPyClient):
    """A NumPyClient of the example's logistic regression; ``mpcauc``: its mpc-auc client, key and deployment."""

    def __init__(self, partition_id: int, mpcauc: dict):
        self.partition_id, self.mpcauc = partition_id, mpcauc

    def get_properties(self, config):
        return node_properties(config, self.mpcauc["client"])  # a sampled round asks which mpc-auc client it is

    def fit(self, parameters, config):
        (x, y), _ = partition(self.partition_id, NODES)
        return train(parameters, x, y), len(y), {}

    def evaluate(self, parameters, config):
        _, (x, y, ids) = partition(self.partition_id, NODES)
        predicted = scores(parameters, x)
        loss = float(-np.mean(y * np.log(predicted + 1e-12) + (1 - y) * np.log(1 - predicted + 1e-12)))
        terms = ClientTerms(max_exact=ROUNDS, ledger=self.mpcauc["key"] + ".ledger.json")
        return loss, len(y), submit_numpy(config, y, predicted, ids, terms=terms, **self.mpcauc)


def main(workdir: str, out: str = None) -> list:
    """Start the parties and keys, run the simulation, stop the parties; print and return the rounds."""
    strategies, models = [], {}

    def keep(server_round, ndarrays, config):  # the round's global model, for the clear AUC printed after
        models[server_round] = ndarrays

    with local_deployment(NODES, workdir) as deployment:
        settings, options = {p: deployment.client(p) for p in range(NODES)}, deployment.strategy_options

        def client_fn(context: Context):
            pid = int(context.node_config["partition-id"])
            return Client(pid, settings[pid]).to_client()

        def server_fn(context: Context) -> ServerAppComponents:
            strategy = MpcAucFedProx(**options, mpcauc_options={"protocol": "mpc-exact", "deadline": 120.0},
                                     proximal_mu=0.1, fraction_fit=SAMPLED / NODES,
                                     fraction_evaluate=SAMPLED / NODES, min_fit_clients=SAMPLED,
                                     min_evaluate_clients=SAMPLED, min_available_clients=NODES,
                                     initial_parameters=ndarrays_to_parameters(initial_weights()), evaluate_fn=keep)
            strategies.append(strategy)
            return ServerAppComponents(strategy=strategy, config=ServerConfig(num_rounds=ROUNDS))

        run_simulation(ServerApp(server_fn=server_fn), ClientApp(client_fn=client_fn), num_supernodes=NODES,
                       backend_config=BACKEND)
    strategy = strategies[0]
    rounds = [{"round": r, "clients": clients, "private_auc": strategy.mpcauc_metrics.get(r, {}).get("mpcauc-auc"),
               "clear_auc": clear_auc(models[r], clients, NODES)}
              for r, clients in sorted(strategy.mpcauc_clients.items())]
    return report(rounds, out)


if __name__ == "__main__":
    main(*sys.argv[1:])
