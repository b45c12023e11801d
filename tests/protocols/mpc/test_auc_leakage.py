"""What the opened AUC reveals (docs/protocols/mpc-exact.md): the 52-bit AUC pins the class counts {P, N} in
most random sets (the attack of sims.security.auc_leakage against the value mpc-exact opens), the AUC rounded to 3
decimals leaves hundreds of splits; and mpc-exact with ``decimals`` opens exactly the rounded AUC."""
import numpy as np
import pytest
from scipy.stats import rankdata
from sklearn.metrics import roc_auc_score

from mpc_auc.protocols.inputs.encoding import ScoreEncoder
from mpc_auc.protocols.mpc.exact import mpc_exact_auc
from mpc_auc.protocols.release_spec import ReleaseSpec
from mpc_auc.sims.security.auc_leakage import consistent_splits, opened_exact, opened_rounded


def _twice_u_pn(scores, labels):
    p = int(labels.sum())
    twice_u = int(round(2 * rankdata(scores)[labels == 1].sum())) - p * (p + 1)
    return twice_u, 2 * p * (len(labels) - p)


def _random_sets(count=20, seed=7):
    rng = np.random.default_rng(seed)
    for m in rng.integers(500, 30_001, count):
        p = int(rng.integers(m // 20, m // 2))
        labels = np.zeros(m, dtype=np.int64)
        labels[rng.choice(m, p, replace=False)] = 1
        yield np.round(rng.normal(labels * 0.8, 1.0), 3), labels


def test_the_52_bit_auc_pins_the_class_counts():
    pinned = 0
    for scores, labels in _random_sets():
        twice_u, twice_pn = _twice_u_pn(scores, labels)
        p = min(int(labels.sum()), len(labels) - int(labels.sum()))
        splits = consistent_splits(opened_exact(twice_u, twice_pn), len(labels))
        assert p in splits  # the attack never rules out the truth
        pinned += splits == [p]
    print(f"{{P, N}} pinned in {pinned} of 20 sets")
    assert pinned >= 15


def test_three_decimals_leave_hundreds_of_splits():
    for scores, labels in list(_random_sets(count=5)):
        twice_u, twice_pn = _twice_u_pn(scores, labels)
        splits = consistent_splits(opened_rounded(twice_u, twice_pn, 3), len(labels), decimals=3)
        assert min(int(labels.sum()), len(labels) - int(labels.sum())) in splits
        assert len(splits) >= 100, len(splits)


@pytest.mark.parametrize("decimals", [2, 6])
def test_mpc_exact_opens_the_rounded_auc(decimals):
    rng = np.random.default_rng(decimals)
    scores, labels = np.round(rng.random(600), 2), (rng.random(600) < 0.3).astype(np.int64)
    clients = [("a", scores[:300], labels[:300]), ("b", scores[300:], labels[300:])]
    (result,) = mpc_exact_auc([clients], ScoreEncoder(), ReleaseSpec(decimals=decimals), timeout_s=60)
    twice_u, twice_pn = _twice_u_pn(scores, labels)
    assert result.auc == opened_rounded(twice_u, twice_pn, decimals) / 10 ** decimals
    assert result.auc == pytest.approx(roc_auc_score(labels, scores), abs=0.5 * 10 ** -decimals)
    assert result.revealed[0] == f"AUC rounded to {decimals} decimals"
