"""A rostered client that skips its own checks (the honest CLI refuses such rows before sealing them): run as
``python malicious_client.py DEPLOYMENT EVALUATION KEY label|key``.  It submits 30 rows through the real
submission path, one of them with label 400 or with a score key outside the declared range; exit 2 and the
parties' reason on stderr when the job is refused."""
import sys

import numpy as np

from mpc_auc.protocols.inputs import submission, submitter
from mpc_auc.protocols.inputs.encoding import ScoreEncoder
from mpc_auc.protocols.runtime.deployment import Deployment
from mpc_auc.protocols.runtime.identity import Identity


def rows(case: str):
    scores, labels = np.linspace(0.1, 0.9, 30), np.arange(30) % 2
    if case == "label":
        labels[3] = 400
    else:
        scores[3] = 2.0  # outside the declared [0, 1]: its key lies past 2^62
    return scores, labels


def main(deployment: str, evaluation: str, key: str, case: str) -> int:
    def unchecked(*_args, **_kwargs):
        return None

    submission.check_client = submitter.check_client = unchecked
    ScoreEncoder.check = unchecked
    try:
        outcome = submitter.submit_rows(Identity.load(key), Deployment.load(deployment), evaluation, *rows(case),
                                   timeout_s=5)
    except submitter.JobRefused as err:
        print(err, file=sys.stderr)
        return 2
    print(outcome.status)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
