"""One planner behind both front ends: the Python API and ``mpc-auc run`` refuse the same bad request with the
same words (a case per rule), and give the same AUC on the same rows."""
import dataclasses
import json

import numpy as np
import pytest

import mpc_auc
from mpc_auc.cli import main
from mpc_auc.csv_io import write_evalset
from mpc_auc.planner import execute, plan
from mpc_auc.synthetic import synthetic_evalset

CONTEXT = {field.name for field in dataclasses.fields(mpc_auc.Context)}
# (API keyword arguments, the same request on the command line, the words both must print)
CASES = [
    ({"protocol": "mpc-central"}, ["--protocol", "mpc-central"],
     "protocol mpc-central is differentially private: it needs epsilon"),
    ({"protocol": "mpc-central", "epsilon": 0.0}, ["--protocol", "mpc-central", "--epsilon", "0"],
     "epsilon must be a privacy budget epsilon: a number, finite, > 0; not 0.0"),
    ({"protocol": "mpc-central", "epsilon": float("nan")}, ["--protocol", "mpc-central", "--epsilon", "nan"],
     "epsilon must be a privacy budget epsilon: a number, finite, > 0; not nan"),
    ({"protocol": "mpc-central", "epsilon": float("inf")}, ["--protocol", "mpc-central", "--epsilon", "inf"],
     "epsilon must be a privacy budget epsilon: a number, finite, > 0; not inf"),
    ({"epsilon": 1.0}, ["--epsilon", "1"],
     "protocol mpc-exact releases the exact AUC: it takes no epsilon and no budget"),
    ({"protocol": "clear", "budget": 2.0}, ["--protocol", "clear", "--budget", "2"],
     "protocol clear releases the exact AUC: it takes no epsilon and no budget"),
    ({"protocol": "mpc-central", "epsilon": 1.0, "ranks": True},
     ["--protocol", "mpc-central", "--epsilon", "1", "--ranks-dir", "RANKS"],
     "ranks and auc_decimals need protocol mpc-exact, not mpc-central"),
    ({"protocol": "mpc-central", "epsilon": 1.0, "auc_decimals": 3},
     ["--protocol", "mpc-central", "--epsilon", "1", "--auc-decimals", "3"],
     "ranks and auc_decimals need protocol mpc-exact, not mpc-central"),
    ({"auc_decimals": 13}, ["--auc-decimals", "13"],
     "auc_decimals must be a number of decimals: an integer, finite, >= 1 and <= 12; not 13"),
    ({"protocol": "mpc-central", "epsilon": 1.0, "budget": "abc"},
     ["--protocol", "mpc-central", "--epsilon", "1", "--budget", "abc"],
     "budget must be EPS or EPS,DELTA (numbers), not 'abc'"),
    ({"protocol": "mpc-central", "epsilon": 1.0, "budget": (-1.0, 1e-9)},
     ["--protocol", "mpc-central", "--epsilon", "1", "--budget=-1,1e-9"],
     "epsilon must be a privacy budget epsilon: a number, finite, > 0; not -1.0"),
    ({"protocol": "mpc-central", "epsilon": 1.0, "budget": (1.0, 1.0)},
     ["--protocol", "mpc-central", "--epsilon", "1", "--budget", "1,1"],
     "delta must be a privacy parameter delta: a number, finite, >= 0 and < 1; not 1.0"),
    ({"deployment": "D.yaml", "ledger": "L"}, ["--deployment", "D.yaml", "--ledger", "L"],
     "ledger is for local runs: deployed parties keep their own (mpc-auc party --ledger)"),
    ({"score_range": (1.0, 0.0)}, ["--score-range", "1", "0"],
     "declared score range [1.0, 0.0] must be finite with lo < hi"),
    ({"timeout": 0.0}, ["--timeout", "0"], "timeout must be a number of seconds: a number, finite, > 0 and <= 1e+06; "
                                           "not 0.0"),
]


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    evalset = synthetic_evalset(m=60, clients=3, seed=5, decimals=2)
    path = tmp_path_factory.mktemp("planner") / "rows.csv"
    write_evalset(str(path), evalset)
    return evalset, str(path)


@pytest.mark.parametrize("kwargs, options, words", CASES, ids=[c[2][:40] for c in CASES])
def test_the_api_and_the_cli_refuse_in_the_same_words(rows, tmp_path, capsys, kwargs, options, words):
    evalset, path = rows
    with pytest.raises(mpc_auc.InputError) as refused:
        _api(evalset, dict(kwargs))
    assert words in str(refused.value)
    argv = ["run", "--input", path, "--out", str(tmp_path / "r.json")]
    argv += [str(tmp_path / "ranks") if word == "RANKS" else word for word in options]
    try:
        code = main(argv)
    except SystemExit as stop:  # a value argparse refuses: the same check, through the option's type
        code = stop.code
    assert code == 2 and words in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def _api(evalset, kwargs: dict):
    """The request of ``kwargs`` through the API: the Context's fields in a Context (checked when made), ranks by
    the planner (the API asks for ranks with mpc-exact only: global_ranks), the rest by roc_auc_score."""
    context = {name: kwargs.pop(name) for name in list(kwargs) if name in CONTEXT}
    if kwargs.pop("ranks", False):
        return plan(ranks=True, context=mpc_auc.Context(**context), **kwargs)
    return mpc_auc.roc_auc_score(evalset.label, evalset.score, clients=evalset.client,
                                 context=mpc_auc.Context(**context), **kwargs)


def test_every_rule_of_the_planner_has_a_case():
    """Each refusal the planner states is among CASES (a rule added without a case fails here)."""
    source = open(plan.__code__.co_filename).read()
    rules = source.count("raise InputError(")
    covered = {"needs epsilon", "takes no epsilon", "need protocol mpc-exact", "ledger is for local runs"}
    assert all(any(c in words for _, _, words in CASES) for c in covered)
    # + protocol (argparse's choices on the command line: it cannot even express that request); + the metrics
    # rule, which roc_auc_score cannot express (test_metrics_other_than_auc_need_an_exact_protocol_in_the_same_words),
    # and the rule on several score columns (the same test); + the two on sample weights
    # (tests/protocols/mpc/test_weighted.py: what weights go with, and the clear AUC without weight on a class); + a
    # deployed evaluation's need of a deployment (tests/mpc_auc/test_deployed_api.py); + roc_auc_score's own seven
    # (ci, ci="logit" with mpc-central (tests/mpc_auc/test_bounded_ci.py), multi_class, average, one column per class, ovr with mpc-central, ovr with max_fpr:
    # tests/mpc_auc/test_api_metrics.py), the bound on ci and pauc's rows (tests/protocols/mpc/test_metrics.py) and
    # ustat-2pc's two (epsilon, labels: tests/mpc_auc/test_api.py); + security malicious's two (what the mode does
    # not build, ustat-2pc under it: tests/protocols/mpc/test_malicious.py).
    # Each option's own domain (neighbours, method, score_dtype, the range, the metrics, points, max_fpr) is checked
    # where its value is made: mpc_auc.context.Context, protocols.release_spec.ReleaseSpec.
    assert rules == len(covered) + 1 + 2 + 2 + 1 + 7 + 1 + 2 + 2


def test_metrics_other_than_auc_need_an_exact_protocol_in_the_same_words(rows, tmp_path, capsys):
    evalset, path = rows
    words = ("metrics ci need protocol mpc-exact or clear; mpc-central releases one noisy AUC, or with roc or pr the "
             "DP curve")
    with pytest.raises(mpc_auc.InputError) as refused:
        mpc_auc.evaluate(evalset.label, evalset.score, metrics="ci", protocol="mpc-central")
    assert words in str(refused.value)
    assert main(["run", "--input", path, "--out", str(tmp_path / "r.json"), "--protocol", "mpc-central",
                 "--epsilon", "1", "--metrics", "ci"]) == 2
    assert words in capsys.readouterr().err and not (tmp_path / "r.json").exists()
    words = "the pauc metric needs max_fpr, the FPR the partial AUC stops at (0 < max_fpr < 1)"
    with pytest.raises(mpc_auc.InputError) as refused:
        mpc_auc.evaluate(evalset.label, evalset.score, metrics="pauc")
    assert words in str(refused.value)
    assert main(["run", "--input", path, "--out", str(tmp_path / "r.json"), "--metrics", "pauc"]) == 2
    assert words in capsys.readouterr().err and not (tmp_path / "r.json").exists()
    words = "several score columns (models compared on the same rows) need protocol mpc-exact or clear, without ranks"
    with pytest.raises(mpc_auc.InputError) as refused:  # the planner's own rule (the API's delong_test asks ci)
        execute(plan(protocol="mpc-central", epsilon=1.0), [("a", np.c_[evalset.score, evalset.score], evalset.label)])
    assert words in str(refused.value)
    paired = tmp_path / "paired.csv"
    paired.write_text("client,a,b,label\n" + "".join(f"{c},{s},{s},{y}\n" for c, s, y in
                                                    zip(evalset.client, evalset.score, evalset.label)))
    assert main(["run", "--input", str(paired), "--out", str(tmp_path / "r.json"), "--score-col", "a,b",
                 "--protocol", "mpc-central", "--epsilon", "1"]) == 2
    assert words in capsys.readouterr().err and not (tmp_path / "r.json").exists()


def test_the_api_and_the_cli_give_the_same_auc(rows, tmp_path):
    evalset, path = rows
    for protocol in ("clear", "mpc-exact"):
        out = tmp_path / f"{protocol}.json"
        assert main(["run", "--input", path, "--protocol", protocol, "--out", str(out)]) == 0
        api = mpc_auc.roc_auc_score(evalset.label, evalset.score, clients=evalset.client, protocol=protocol)
        assert json.loads(out.read_text())["auc"] == api.auc
    assert np.isclose(api.auc, mpc_auc.roc_auc_score(evalset.label, evalset.score, protocol="clear").auc,
                      atol=1e-15)


def test_the_demo_plans_and_runs_the_main_job(capsys):
    """`make demo`'s command (README) through the planner: the MPC AUC equals the clear one."""
    assert main(["demo", "--m", "400", "--clients", "3"]) == 0
    out = capsys.readouterr().out
    difference = float(out.split("difference:")[1].split()[0])
    assert difference < 1e-12 and "MPC AUC" in out


def test_a_missing_or_broken_deployment_file_is_named_before_its_key(tmp_path):
    """The deployment file is read before the coordinator's key beside it: its own problem is the one named."""
    path = tmp_path / "deployment.yaml"
    with pytest.raises(ValueError, match=f"cannot read deployment file {path}"):
        mpc_auc.roc_auc_score([0, 1], [0.1, 0.2], context=mpc_auc.Context(deployment=str(path)))
    path.write_text("parties: [1,")
    with pytest.raises(ValueError, match="is not valid YAML"):
        mpc_auc.roc_auc_score([0, 1], [0.1, 0.2], context=mpc_auc.Context(deployment=str(path)))
