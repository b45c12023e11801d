"""Built-in data: the binormal generator hits its target AUC; partitions follow the papers."""
import numpy as np

from mpc_auc.protocols.clear_auc import rank_sum_auc
from mpc_auc.synthetic import CRITEO_M, CRITEO_P, binormal_scores, partition, synthetic_evalset


def test_criteo_shape_and_auc():
    rng = np.random.default_rng(3)
    scores, labels = binormal_scores(CRITEO_M, CRITEO_P, 0.77, rng)
    assert len(scores) == CRITEO_M and labels.sum() == CRITEO_P
    assert abs(rank_sum_auc(scores, labels) - 0.77) < 0.005  # sampling sd ~ 0.001
    assert 0 < scores.min() and scores.max() < 1


def test_iid_partition_uses_uniform_clients():
    owner = partition(100_000, 10, "iid", np.random.default_rng(0))
    counts = np.bincount(owner)
    assert len(counts) == 10 and abs(counts - 10_000).max() < 600  # 6 sigma


def test_non_iid_partition_is_contiguous_in_score_order():
    rng = np.random.default_rng(1)
    scores = rng.random(1000)
    owner = partition(1000, 7, "non-iid", rng, scores)
    assert np.all(np.diff(owner[np.argsort(scores)]) >= 0)
    assert len(np.unique(owner)) == 7


def test_k_at_least_m_gives_one_sample_per_client():
    es = synthetic_evalset(m=50, clients=80, seed=2)
    assert len(es.clients()) == 50


def test_rounding_creates_ties():
    es = synthetic_evalset(m=2000, decimals=2, seed=4)
    assert len(np.unique(es.score)) < 200
