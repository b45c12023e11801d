"""The ClientApp: trains the shared model on its rows, and in evaluation rounds submits its test predictions to
the round's mpc-auc evaluation (mpc_auc.flower.submit_predictions): no score, label or local metric goes to
the Flower server.  It accepts a DP release of at most ``mpcauc-max-epsilon`` per round and ``mpcauc-budget`` in
all (its own ledger, beside its key), and exact releases only as many as ``mpcauc-max-exact`` (default none):
the server chooses the model it scores with."""
from flwr.app import ArrayRecord, Context, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp

from mpc_auc import ClientTerms
from mpc_auc.flower import submit_predictions

from .task import partition, scores, setting, train

app = ClientApp()


def _rows(context: Context):
    return partition(int(context.node_config["partition-id"]), int(context.node_config["num-partitions"]))


@app.train()
def fit(message: Message, context: Context) -> Message:
    (x, y), _ = _rows(context)
    weights = train(message.content["arrays"].to_numpy_ndarrays(), x, y)
    return Message(RecordDict({"arrays": ArrayRecord(weights), "metrics": MetricRecord({"num-examples": len(y)})}),
                   reply_to=message)


@app.evaluate()
def evaluate(message: Message, context: Context) -> Message:
    _, (x, y, ids) = _rows(context)
    return submit(message, context, y, scores(message.content["arrays"].to_numpy_ndarrays(), x), ids)


def submit(message: Message, context: Context, y, predicted, ids) -> Message:
    """Submit ``predicted`` for this node's test rows ``y`` (``ids``) to the round's evaluation, on its terms."""
    name, keys = f"client-{context.node_config['partition-id']}", setting(context, "mpcauc-keys")
    return submit_predictions(message, context, y, predicted, ids=ids, client=name, key=f"{keys}/{name}.key",
                              deployment=setting(context, "mpcauc-deployment"),
                              terms=ClientTerms(max_epsilon=float(setting(context, "mpcauc-max-epsilon")),
                                                budget=float(setting(context, "mpcauc-budget")),
                                                max_exact=int(setting(context, "mpcauc-max-exact")),
                                                ledger=f"{keys}/{name}.ledger.json"))
