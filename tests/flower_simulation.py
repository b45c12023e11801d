"""The example Flower app (examples/flower) in Flower's simulation runtime, as the Flower tests run it
(test_flower.py): a deployment's directory, five client keys, the example's ServerApp and
a ClientApp in one simulation."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from roles_on_hosts import client_keys

EXAMPLE = Path(__file__).parents[1] / "examples" / "flower"
SIMULATION = """
from flwr.simulation import run_simulation
from {client} import app as client_app
from mpcauc_flower.{server} import app as server_app
run_simulation(server_app, client_app, num_supernodes=5, backend_config={{"init_args": {{"num_cpus": 1,
               "include_dashboard": False}}, "client_resources": {{"num_cpus": 0.2}}}})  # 5 Ray workers, one per
# node, not 10; no dashboard (its processes cost seconds of the 2-core machine's CPU and the tests read no metrics)
"""


def simulate(deployed, tmp_path, server="server_app", client="mpcauc_flower.client_app", **settings):
    """Run ``client`` (the example's ClientApp, or a module of tests/) with ``server`` in Flower's simulation, in a
    directory holding the deployment file, the coordinator's key and five fresh client keys; ``settings``: the
    run config's values (by the environment: the simulation API passes no run config).  Returns (the directory,
    the log)."""
    directory = deployed[0]
    work = tmp_path / "run"
    (work / "keys").mkdir(parents=True)
    for name in ("deployment.yaml", "coordinator.key"):
        shutil.copy(directory / name, work / name)
    client_keys(work / "keys", [f"client-{p}" for p in range(5)])
    # the tests' own ClientApp copied beside the run: tests/ on the path would shadow the package (its mpc_auc/)
    shutil.copy(Path(__file__).parent / "flower_bad_client.py", work)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(EXAMPLE), str(work), os.environ.get("PYTHONPATH", "")]),
           **{"MPCAUC_FLOWER_" + k.upper(): str(v) for k, v in settings.items()}}
    proc = subprocess.run([sys.executable, "-c", SIMULATION.format(server=server, client=client)], cwd=work, env=env,
                          capture_output=True, text=True, timeout=600)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-4000:]
    return work, log


def union_of_tests_of_the_example():
    """(y, x) of the example's five clients' test rows together (mpcauc_flower.task.union_of_tests)."""
    sys.path.insert(0, str(EXAMPLE))
    try:
        from mpcauc_flower.task import union_of_tests
    finally:
        sys.path.remove(str(EXAMPLE))
    return union_of_tests(5)
