"""The example Flower app (examples/flower) in Flower's simulation runtime: 5 clients, 2 rounds of FedAvg, each
evaluation round's global AUC computed by mpc-auc (three ``mpc-auc party`` processes on 127.0.0.2-4) equal to
scikit-learn's on the union of the clients' test sets."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from roles_on_hosts import client_keys

pytest.importorskip("flwr", reason="Flower is the optional extra mpc-auc[flower] (make test installs it)")
EXAMPLE = Path(__file__).parents[2] / "examples" / "flower"
SIMULATION = """
from flwr.simulation import run_simulation
from mpcauc_flower.client_app import app as client_app
from mpcauc_flower.server_app import app as server_app
run_simulation(server_app, client_app, num_supernodes=5, backend_config={"client_resources": {"num_cpus": 0.2}})
"""


def test_the_flower_example_logs_the_private_global_auc_equal_to_sklearns(deployed, tmp_path):
    directory = deployed[0]
    work = tmp_path / "run"
    (work / "keys").mkdir(parents=True)
    for name in ("deployment.yaml", "coordinator.key"):
        shutil.copy(directory / name, work / name)
    client_keys(work / "keys", [f"client-{p}" for p in range(5)])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(EXAMPLE), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", SIMULATION], cwd=work, env=env, capture_output=True, text=True,
                          timeout=480)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-4000:]
    rounds = json.loads((work / "mpcauc-flower-rounds.json").read_text())["rounds"]
    assert [r["round"] for r in rounds] == [1, 2]
    sys.path.insert(0, str(EXAMPLE))
    try:
        from mpcauc_flower.task import union_of_tests
    finally:
        sys.path.remove(str(EXAMPLE))
    y_test, _ = union_of_tests(5)
    assert len(y_test) > 100 and 0 < y_test.mean() < 1
    for r in rounds:
        assert abs(r["private_auc"] - r["clear_auc"]) < 1e-12  # clear: scikit-learn on the union of the test sets
        logged = re.search(rf"round {r['round']}: private global AUC \(mpc-auc\) ([0-9.]+), clear AUC ([0-9.]+)", log)
        assert logged and abs(float(logged[1]) - float(logged[2])) < 1e-12
    assert not np.isclose(rounds[0]["private_auc"], 0.5)  # a trained model, not the initial one
