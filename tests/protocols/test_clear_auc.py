"""The clear reference AUC equals sklearn, ties included."""
import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from mpc_auc.protocols.clear_auc import rank_sum_auc
from mpc_auc.synthetic import binormal_scores


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("decimals", [None, 2, 1])
def test_rank_sum_auc_equals_sklearn(seed, decimals):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 2000))
    scores, labels = binormal_scores(m, int(rng.integers(1, m)), 0.75, rng, decimals)
    assert abs(rank_sum_auc(scores, labels) - roc_auc_score(labels, scores)) < 1e-15


def test_all_tied_scores_give_one_half():
    assert rank_sum_auc([0.3] * 5, [1, 0, 1, 0, 0]) == 0.5


def test_one_class_missing_is_an_error():
    with pytest.raises(ValueError, match="undefined"):
        rank_sum_auc([0.1, 0.2], [1, 1])
