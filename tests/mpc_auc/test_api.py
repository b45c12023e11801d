"""The Python API (docs/api.md): sklearn's value from a plain script with no main guard, the docs' examples
run as such scripts, and bad input refused by name before any process starts."""
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

import mpc_auc

DOCS = Path(__file__).resolve().parents[2] / "docs" / "api.md"
PLAIN_SCRIPT = """
import json
import numpy as np
import mpc_auc
rng = np.random.default_rng(3)
y = rng.integers(0, 2, 400)
s = np.round(rng.random(400), 2)
ids = np.where(np.arange(400) % 3 == 0, "north", np.where(np.arange(400) % 3 == 1, "south", "east"))
result = mpc_auc.roc_auc_score(y, s, clients=ids)
print(json.dumps({"auc": result.auc, "clients": result.clients, "m": result.m, "repr": repr(result)}))
"""


def _run_script(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300, cwd=path.parent)


def test_a_plain_script_without_main_guard_gets_sklearns_value(tmp_path):
    script = tmp_path / "plain.py"
    script.write_text(PLAIN_SCRIPT)
    done = _run_script(script)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    rng = np.random.default_rng(3)
    y, s = rng.integers(0, 2, 400), np.round(rng.random(400), 2)
    assert abs(out["auc"] - roc_auc_score(y, s)) < 1e-12
    assert (out["m"], out["clients"]) == (400, 3) and len(out["repr"]) < 120


# Runs each example file in its own directory as ``__main__``, in one interpreter, so that the examples share one
# warm session of local roles (as a notebook's cells would); prints the failures as JSON {path: traceback tail}.
EXAMPLES_DRIVER = """
import json, os, runpy, sys, traceback
failed = {}
for path in sys.argv[1:]:
    os.chdir(os.path.dirname(path))
    try:
        runpy.run_path(path, run_name="__main__")
    except BaseException:
        failed[path] = traceback.format_exc()[-2000:]
print(json.dumps(failed))
"""


def test_the_docs_examples_run_as_plain_scripts(tmp_path):
    """Every ```python block of docs/api.md, each written to a directory of its own and run there as a script
    with no main guard (one interpreter for all of them: the roles start once, not once per example)."""
    paths = []
    for index, code in enumerate(re.findall(r"```python\n(.*?)```", DOCS.read_text(), re.S)):
        (tmp_path / f"example{index}").mkdir()
        paths.append(tmp_path / f"example{index}" / f"example{index}.py")
        paths[-1].write_text(code)
    assert paths
    driver = tmp_path / "driver.py"
    driver.write_text(EXAMPLES_DRIVER)
    done = subprocess.run([sys.executable, str(driver), *map(str, paths)], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    failed = json.loads(done.stdout.strip().splitlines()[-1])
    assert failed == {}, "\n".join(f"{path}:\n{tail}" for path, tail in failed.items())


@pytest.mark.parametrize("kwargs, y_true, y_score, message", [
    ({}, [0, 1, 2], [0.1, 0.2, 0.3], "^y_true has 3 classes \\(0, 1, 2\\): a binary metric takes two"),
    ({}, [0, 1, 1], [0.1, float("nan"), 0.3], "row 1: score nan is not a finite number"),
    ({}, [0, 1, 1], [0.1, 0.2], "mismatched lengths"),
    ({}, [], [], "y_true is empty: a metric needs rows of both classes"),
    ({}, [1, 1, 1], [0.1, 0.2, 0.3], "no negative labels"),
    ({}, [0, 1, 1], [0.1, 0.2, 1.5], "range"),
    ({"protocol": "mpc-central"}, [0, 1, 1], [0.1, 0.2, 0.3], "needs epsilon"),
    ({"protocol": "mpc-central", "epsilon": -1.0}, [0, 1, 1], [0.1, 0.2, 0.3],
     "epsilon must be a privacy budget epsilon: a number, finite, > 0; not -1.0"),
    ({"epsilon": 1.0}, [0, 1, 1], [0.1, 0.2, 0.3], "takes no epsilon"),
    ({"protocol": "mpc-central", "epsilon": 500.0}, [0, 1, 1], [0.1, 0.2, 0.3],
     r"^epsilon 500 cannot be drawn over 3 rows \(alpha 0.5 of it, 250, on the rank statistic and 250 on the"),
    ({"protocol": "mpc-central", "epsilon": 1.0, "context": {"auc_decimals": 3}}, [0, 1, 1], [0.1, 0.2, 0.3],
     "ranks and auc_decimals need protocol mpc-exact"),
    ({"protocol": "secure"}, [0, 1, 1], [0.1, 0.2, 0.3], "protocol must be one of"),
    ({"clients": ["a", "b"]}, [0, 1, 1], [0.1, 0.2, 0.3], "mismatched lengths"),
    ({"context": {"score_range": (1.0,)}}, [0, 1, 1], [0.1, 0.2, 0.3], "score_range must be a pair"),
    ({"context": {"score_dtype": "float16"}}, [0, 1, 1], [0.1, 0.2, 0.3], "score_dtype must be one of float64, float32"),
])
def test_bad_input_raises_a_value_error_naming_it_before_any_process(kwargs, y_true, y_score, message):
    with pytest.raises(ValueError, match=message) as raised:
        kwargs = {k: mpc_auc.Context(**v) if k == "context" else v for k, v in kwargs.items()}
        mpc_auc.roc_auc_score(y_true, y_score, **kwargs)
    assert isinstance(raised.value, mpc_auc.InputError)


def test_declared_float32_scores_give_sklearns_auc_of_the_float32_scores():
    rng = np.random.default_rng(6)
    y = rng.integers(0, 2, 400)
    s = rng.random(400)
    s32 = s.astype(np.float32)
    result = mpc_auc.roc_auc_score(y, s, context=mpc_auc.Context(score_dtype="float32"))  # each score read as the nearest float32
    assert abs(result.auc - roc_auc_score(y, s32)) < 1e-12


def test_clear_protocol_and_boolean_labels():
    y = np.array([True, False, True, False, True])
    s = np.array([0.9, 0.1, 0.4, 0.4, 0.8])
    result = mpc_auc.roc_auc_score(y, s, protocol="clear")
    assert result.auc == roc_auc_score(y, s) and result.epsilon is None and result.traffic is None


def test_the_cli_prints_its_version(capsys):
    from mpc_auc.cli import main

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"mpc-auc {mpc_auc.__version__}"


@pytest.mark.parametrize("call, message", [
    (lambda: mpc_auc.compare([0, 1], [0.1, 0.9], epsilons=[0]),
     "epsilon must be a privacy budget epsilon: a number, finite, > 0; not 0.0"),
    (lambda: mpc_auc.compare([0, 1], [0.1, 0.9], protocols=["fedauc-rr", "rot13"]), "unknown protocol(s) rot13"),
    (lambda: mpc_auc.compare([0, 1], [0.1, 0.9], draws=1),
     "draws must be a number of noise draws: an integer, finite, >= 2"),
    (lambda: mpc_auc.compare([0, 1], [0.1, 0.9], delta=0), "delta must be the delta of an (epsilon, delta) mechanism"),
    (lambda: mpc_auc.compare([0, 0], [0.1, 0.9]), "no positive labels"),
    (lambda: mpc_auc.u_statistic([0.1, 0.9], kernel="auc", epsilon=1.0), "kernel auc needs labels"),
    (lambda: mpc_auc.u_statistic([0.1, 0.9], kernel="gini", epsilon=None),
     "ustat-2pc is differentially private: it needs epsilon"),
    (lambda: mpc_auc.u_statistic([0.1, 0.9], kernel="gini", epsilon=1.0, k=0),
     "k must be a number of pairs per user: an integer, finite, >= 1"),
    (lambda: mpc_auc.u_statistic([0.1, 1.9], kernel="gini", epsilon=1.0), "[0, 1]"),
])
def test_compare_and_u_statistic_refuse_bad_input_by_name(call, message):
    with pytest.raises(mpc_auc.InputError) as caught:
        call()
    assert message in str(caught.value)


def test_the_command_imports_neither_torch_nor_crypten():
    """The coordinator of `mpc-auc run` needs neither: only the roles import them (from a preloaded fork
    server, while the input is read)."""
    code = "import sys, mpc_auc.cli.parser; print(sorted(m for m in ('torch', 'crypten') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_swamped_dp_release_is_clamped_flagged_and_warned(tmp_path):
    rng = np.random.default_rng(5)
    y, s = rng.integers(0, 2, 300), rng.random(300)
    with pytest.warns(UserWarning, match="the noise swamps the release"):
        result = mpc_auc.roc_auc_score(y, s, protocol="mpc-central", epsilon=1e-4,
                                       context=mpc_auc.Context(ledger=str(tmp_path)))
    assert result.swamped and 0.0 <= result.auc <= 1.0 and result.std > 1


def test_a_receipt_prints_on_one_line_and_party_failure_is_exported():
    receipt = mpc_auc.Receipt("study", "north", 50_000, "computed", "the exact AUC", ranks=np.arange(50_000.0))
    assert repr(receipt) == ("Receipt(evaluation='study', client='north', rows=50000, status='computed', "
                             "ranks=<50000 ranks>)")
    from mpc_auc.protocols.errors import PartyFailure

    assert mpc_auc.PartyFailure is PartyFailure and "PartyFailure" in mpc_auc.__all__
