"""mpc-central's DP curve: the binary tree over the positives between public cuts (protocols.dp.curve_law), its
noise drawn inside the MPC; the released nodes against the circuit's law, the tree against its definition."""
import json
import math

import numpy as np
import pytest

import mpc_auc
from mpc_auc.cli import main
from mpc_auc.csv_io import write_evalset
from mpc_auc.protocols.dp.curve_law import CurveNoise, curve_from_nodes, prefix_sums, slice_counts, tree_nodes
from mpc_auc.protocols.errors import InputError
from mpc_auc.protocols.metric_catalogue import cut_positions
from mpc_auc.protocols.mpc.central import mpc_central_auc
from mpc_auc.protocols.runtime.session import Placement
from mpc_auc.synthetic import synthetic_evalset


@pytest.mark.parametrize("count", [1, 2, 3, 7, 8, 9, 33, 100])
def test_every_prefix_is_a_sum_of_at_most_one_node_per_level(count):
    leaves = np.random.default_rng(count).integers(0, 50, count)
    nodes = tree_nodes(leaves)
    assert np.array_equal(prefix_sums(nodes, count), np.cumsum(leaves))
    levels = CurveNoise(1.0, count).levels(10 * count)
    assert len(nodes) == 2 * (1 << (count - 1).bit_length()) - 1 == 2 ** levels - 1
    reads = prefix_sums(np.eye(len(nodes), dtype=np.int64), count)  # reads[i, k - 1]: the prefix of k reads node i
    assert set(np.unique(reads)) <= {0, 1} and (reads.sum(axis=0) <= levels).all()  # at most one node per level


def test_slices_count_the_positives_between_the_cuts():
    labels = np.array([1, 0, 0, 1, 1, 0, 1, 1, 0, 1])  # ascending sorted order: the top rows are last
    flagged = cut_positions(10, 4)
    assert flagged.tolist() == [3, 5, 8, 10]
    assert slice_counts(labels, flagged).tolist() == [2, 1, 2, 1]  # rows 7-9, 5-6, 2-4, 0-1


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    evalset = synthetic_evalset(m=300, clients=6, decimals=2, seed=21)
    noise = CurveNoise(2.0, points=20, repetitions=600)
    ledger = tmp_path_factory.mktemp("ledger")
    (release,) = mpc_central_auc([evalset.clients()], noise, placement=Placement(ledger=str(ledger)), timeout_s=120)
    order = np.concatenate([rows for _, rows in evalset.client_rows()])  # the rows as the parties hold them
    scores, labels = evalset.score[order], evalset.label[order]
    exact = tree_nodes(slice_counts(labels[np.argsort(scores, kind="stable")], cut_positions(300, 20)))
    return release, exact, noise


def test_the_released_nodes_carry_the_circuits_noise_law(released):
    release, exact, noise = released
    noisy = np.array(release.opened, dtype=np.float64)
    assert noisy.shape == (600, len(exact)) == (600, 63)
    error = noisy - exact
    variance = noise.node_noise(300).variance
    assert abs(error.mean()) < 5 * math.sqrt(variance / error.size)  # unbiased
    assert abs(error.var() / variance - 1) < 0.05  # 37,800 draws: the variance within 5%
    assert np.all(np.abs(np.corrcoef(error[:, :5].T) - np.eye(5)) < 0.15)  # independent nodes


def test_the_ledger_is_charged_the_curves_epsilon_and_delta(released):
    release, _, noise = released
    charged = release.ledger["charged"]
    assert math.isclose(charged["epsilon"], 600 * 2.0, rel_tol=1e-9)
    assert math.isclose(charged["delta"], 600 * noise.delta(300), rel_tol=1e-9)
    assert "binary tree" in release.revealed[0] and "label DP at epsilon 2" in release.revealed[0]


def test_the_curve_is_post_processing_of_the_nodes(released):
    release, exact, _ = released
    curve = release.curves[0]
    assert curve == curve_from_nodes(release.opened[0], cut_positions(300, 20), 300)
    assert all(0 <= v <= 1 for v in curve["tpr"] + curve["fpr"] + curve["precision"])
    truth = curve_from_nodes(exact, cut_positions(300, 20), 300)
    # the area under a noisy curve leans towards 0.5 (clamping, points sorted by FPR): at 300 rows and
    # epsilon 2 by about 0.01
    assert abs(np.mean([c["auc"] for c in release.curves]) - truth["auc"]) < 0.03


def test_the_api_and_the_cli_release_the_dp_curve(tmp_path):
    evalset = synthetic_evalset(m=400, clients=3, decimals=2, seed=22)
    roc = mpc_auc.roc_curve(evalset.label, evalset.score, clients=evalset.client, protocol="mpc-central",
                            epsilon=1.0, points=10)
    fpr, tpr, thresholds = roc
    assert roc.flagged.tolist() == [40 * k for k in range(11)] and len(fpr) == len(tpr) == 11
    assert fpr[0] == tpr[0] == 0 and np.isnan(thresholds[1:]).all()  # secret, as the exact curve's
    assert (np.diff(fpr) >= 0).all() and (np.diff(tpr) >= 0).all()  # monotone by post-processing
    assert roc.protocol == "mpc-central" and "noisy node sums" in roc.revealed[0]
    path, out = tmp_path / "d.csv", tmp_path / "r.json"
    write_evalset(str(path), evalset)
    assert main(["--quiet", "run", "--input", str(path), "--out", str(out), "--protocol", "mpc-central",
                 "--epsilon", "1", "--metrics", "roc,pr", "--points", "10", "--ledger", str(tmp_path / "l")]) == 0
    record = json.loads(out.read_text())
    assert set(record["metrics"]) == {"roc", "pr"} and record["privacy"]["epsilon"] == 1.0
    assert (tmp_path / "r.curves.png").exists() and (tmp_path / "r.curves.pdf").exists()


@pytest.mark.parametrize("kwargs, message", [
    ({"neighbours": "record"}, "the DP curve protects labels"),
    ({"epsilon": 0.0}, "epsilon must be"),
    ({"points": 0}, "points must be"),
])
def test_bad_curve_requests_are_refused(kwargs, message):
    with pytest.raises(InputError, match=message):
        CurveNoise(**{"epsilon": 1.0, **kwargs})
