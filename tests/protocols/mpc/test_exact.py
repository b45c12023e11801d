"""mpc-exact end to end (P0, P1 and a separate dealer process over TCP) equals sklearn.

Both sorts, the radix sort and the bitonic reference (five times slower), run with rank delivery on the
datasets of at most 100 rows, which hold every kind of case (ties, K = 1, K = M, sizes that are not powers of
two), and the radix sort also on those of 129 and 150 rows and one of 257 (two-byte positions); their AUCs must
equal sklearn and their ranks the clear mid-ranks.  The radix sort on every other dataset (up to 1,200 rows) and
the bitonic sort on 129 and 150 rows: make test-all.
"""
import json

import numpy as np
import pytest
from scipy.stats import rankdata
from sklearn.metrics import roc_auc_score

import mpc_auc

from mpc_auc.cli import main
from mpc_auc.csv_io import write_evalset
from mpc_auc.protocols.inputs.encoding import ScoreEncoder
from mpc_auc.protocols.errors import InputError
from mpc_auc.protocols.mpc.exact import mpc_exact_auc
from mpc_auc.synthetic import synthetic_evalset

# (m, clients, partition, decimals, auc): ties, M not a power of two, K = 1, K = M
CASES = [
    (300, 10, "iid", None, 0.77), (257, 1, "iid", None, 0.77), (129, 129, "iid", None, 0.7),
    (500, 7, "non-iid", 2, 0.77), (400, 400, "iid", 2, 0.8), (333, 1, "iid", 1, 0.77),
    (256, 16, "iid", None, 0.9), (2, 1, "iid", None, 0.6), (3, 3, "iid", None, 0.6),
    (100, 5, "non-iid", 1, 0.55), (777, 20, "iid", 3, 0.77), (64, 64, "non-iid", None, 0.77),
    (1000, 10, "iid", 2, 0.95), (511, 2, "iid", None, 0.5), (513, 50, "non-iid", 2, 0.77),
    (90, 1, "iid", 0, 0.77), (150, 150, "iid", 1, 0.85), (600, 30, "iid", None, 0.77),
    (45, 4, "iid", 2, 0.6), (1200, 12, "iid", 2, 0.77), (31, 31, "iid", 1, 0.99),
]


SMALL = [i for i, case in enumerate(CASES) if case[0] <= 150]
BITONIC = [7, 11, 15]  # the reference's make-test cases: 2 rows, K = M = 64, 90 rows of one client, two scores
RUNS = {"radix": SMALL + [1], "bitonic": BITONIC}  # make test's: two-byte positions from 257 rows on
LARGER = [i for i in range(len(CASES)) if i not in RUNS["radix"]]  # the radix sort's other cases: make test-all


def _evaluate(method: str, cases: list) -> dict:
    """{case index: (its evaluation set, mpc-exact's result with ranks by ``method``)} for ``cases``."""
    sets = [synthetic_evalset(m=m, clients=k, scheme=scheme, decimals=d, auc=auc, seed=i)
            for i, (m, k, scheme, d, auc) in ((i, CASES[i]) for i in cases)]
    results = mpc_exact_auc([s.clients() for s in sets], ScoreEncoder(), method=method, ranks=True, timeout_s=30)
    return dict(zip(cases, zip(sets, results)))


def _check_auc(evalset, result, method: str) -> None:
    """The result's AUC equals sklearn's to 1e-12, over the set's rows and clients, by ``method``."""
    assert result.m == evalset.m and result.clients == len(evalset.clients())
    assert abs(result.auc - roc_auc_score(evalset.label, evalset.score)) < 1e-12
    assert result.method == method


def _check_ranks(evalset, result) -> None:
    """Each client is delivered exactly its own rows' global mid-ranks, in its own order."""
    global_ranks = rankdata(evalset.score, method="average")  # 1-based mid-ranks, as delivered
    clients = evalset.clients()
    assert list(result.ranks) == [c for c, _, _ in clients]
    for client, scores, _ in clients:
        assert np.array_equal(result.ranks[client], global_ranks[evalset.client == client])


@pytest.fixture(scope="module")
def evaluated():
    return {method: _evaluate(method, cases) for method, cases in RUNS.items()}


@pytest.mark.parametrize("method, i", [(method, i) for method, cases in RUNS.items() for i in cases])
def test_mpc_auc_equals_sklearn(evaluated, method, i):
    _check_auc(*evaluated[method][i], method)


@pytest.mark.parametrize("method, i", [(method, i) for method, cases in RUNS.items() for i in cases])
def test_both_rankings_deliver_each_client_exactly_its_own_mid_ranks(evaluated, method, i):
    _check_ranks(*evaluated[method][i])


@pytest.mark.slow  # it measures: the radix sort on the other 11 cases, 256 to 1,200 rows (about a minute)
def test_the_radix_sort_on_every_larger_case_equals_sklearn_and_delivers_mid_ranks():
    _check_cases("radix", LARGER)


@pytest.mark.slow  # the bitonic reference on its other small cases (up to 150 rows: most of its time in make test)
def test_the_bitonic_sort_on_the_other_small_cases_equals_sklearn_and_delivers_mid_ranks():
    _check_cases("bitonic", [i for i in SMALL if i not in BITONIC])


def _check_cases(method: str, cases: list) -> None:
    """mpc-exact by ``method`` on ``cases`` (indexes into CASES): sklearn's AUC and the clear mid-ranks."""
    for evalset, result in _evaluate(method, cases).values():
        _check_auc(evalset, result, method)
        _check_ranks(evalset, result)


@pytest.mark.parametrize("method", list(RUNS))
def test_cases_cover_ties_odd_sizes_and_client_extremes(evaluated, method):
    sets = [evalset for evalset, _ in evaluated[method].values()]
    assert len(sets) >= (7 if method == "radix" else 3)  # the bitonic reference's other cases: test-all
    assert any(len(np.unique(s.score)) < s.m / 2 for s in sets)  # heavy ties
    assert any(s.m & (s.m - 1) for s in sets)  # not a power of two
    assert any(len(s.clients()) == 1 for s in sets) and any(len(s.clients()) == s.m for s in sets)


def test_traffic_is_counted_for_every_role(evaluated):
    for r in [result for runs in evaluated.values() for _, result in runs.values()]:
        assert r.traffic["P0"]["bytes"] > 0 and r.traffic["P1"]["rounds"] > 0
        assert r.traffic["P0"]["sent_bytes"] > 0 and r.traffic["P1"]["peak_rss"] > 0
        assert r.traffic["dealer"]["bytes_session_total"] > 0


def test_cli_run_writes_result_json(tmp_path):
    evalset = synthetic_evalset(m=200, clients=4, decimals=2, seed=9)
    write_evalset(tmp_path / "in.csv", evalset)
    out = tmp_path / "result.json"
    assert main(["run", "--input", str(tmp_path / "in.csv"), "--protocol", "mpc-exact", "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert abs(record["auc"] - roc_auc_score(evalset.label, evalset.score)) < 1e-12
    assert "provider" not in record and record["method"] == "radix"
    assert record["input_summary"]["M"] == 200 and "P" not in record["input_summary"]  # only the public shape
    for role in ("P0", "P1"):
        assert record["traffic"][role]["bytes"] > 0 and record["traffic"][role]["rounds"] > 0
    assert record["wall_s"] > 0 and record["client_upload_bytes"] > 200 * 16


def test_float32_scores_generated_and_declared_give_sklearn_auc_on_30_bit_keys(tmp_path):
    source, out = tmp_path / "in.csv", tmp_path / "result.json"
    assert main(["generate", "--m", "3000", "--clients", "5", "--score-dtype", "float32", "--seed", "3",
                 "--out", str(source)]) == 0
    table = np.loadtxt(source, delimiter=",", skiprows=1, usecols=(1, 2))
    scores, labels = table[:, 0], table[:, 1]
    assert np.array_equal(scores.astype(np.float32).astype(np.float64), scores)  # every score is a float32
    assert ScoreEncoder(0.0, 1.0, "float32").key_bits == 30  # 15 radix digits instead of 31
    assert main(["run", "--input", str(source), "--score-dtype", "float32", "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert abs(record["auc"] - roc_auc_score(labels, scores)) < 1e-12
    assert record["encoding"] == {"dtype": "float32", "range": [0.0, 1.0], "exact": True}


def test_an_unknown_sort_is_refused_at_the_boundary():
    evalset = synthetic_evalset(m=20, clients=2, seed=1)
    with pytest.raises(InputError, match="method must be one of radix, bitonic"):
        mpc_auc.roc_auc_score(evalset.label, evalset.score, context=mpc_auc.Context(method="quick"))


def test_cli_delivers_each_client_a_file_of_its_own_ranks(tmp_path):
    evalset = synthetic_evalset(m=120, clients=3, decimals=1, seed=4)
    write_evalset(tmp_path / "in.csv", evalset)
    ranks_dir = tmp_path / "ranks"
    args = ["run", "--input", str(tmp_path / "in.csv"), "--out", str(tmp_path / "r.json"),
            "--ranks-dir", str(ranks_dir)]
    assert main(args) == 0
    global_ranks = rankdata(evalset.score, method="average")  # 1-based mid-ranks
    files = sorted(p.name for p in ranks_dir.iterdir())
    assert files == [f"{i:05d}-{c}.ranks.csv" for i, (c, _, _) in enumerate(evalset.clients())]
    for i, (client, _, _) in enumerate(evalset.clients()):
        got = np.loadtxt(ranks_dir / f"{i:05d}-{client}.ranks.csv", delimiter=",", skiprows=2, ndmin=2)
        assert np.array_equal(got[:, 1], global_ranks[evalset.client == client])
    assert main(args) == 2  # the directory exists now: refused before any MPC run
