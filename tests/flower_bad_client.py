"""The example's ClientApp (examples/flower) with node 0 malicious in the first evaluation round: there it submits
scores of 2.0, outside the declared [0, 1], past its own checks (as tests/malicious_client.py does); in later rounds
and on the other nodes it is the example's own.  Its round-1 rows fail the parties' in-MPC domain check."""
import numpy as np
from flwr.clientapp import ClientApp

from mpc_auc.protocols.inputs import submission, submitter
from mpc_auc.protocols.inputs.encoding import ScoreEncoder
from mpcauc_flower import client_app as example

BAD_ROUND = 1  # the round whose evaluation node 0 submits out-of-domain rows to

app = ClientApp()
app.train()(example.fit)


def _unchecked(*_args, **_kwargs):
    return None


@app.evaluate()
def evaluate(message, context):
    if int(context.node_config["partition-id"]) != 0 or int(message.content["config"]["server-round"]) != BAD_ROUND:
        return example.evaluate(message, context)
    submission.check_client = submitter.check_client = _unchecked  # its own checks, skipped (others' rows are valid)
    ScoreEncoder.check = _unchecked
    _, (_, y, ids) = example._rows(context)
    return example.submit(message, context, y, np.full(len(y), 2.0), ids)
