"""The bounded (logit-transformed) DeLong interval beside the Wald one: ``roc_auc_score(..., ci="logit")``."""
import math

import pytest

import mpc_auc
from mpc_auc.protocols.clear_metrics import delong_auc, delong_interval
from mpc_auc.protocols.errors import InputError

# 20 rows, one negative above three positives: AUC 0.97, whose Wald interval runs past 1
LABELS = [0] * 10 + [1] * 10
SCORES = [v / 20 for v in (0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19)]


def test_logit_interval_is_the_hand_computation_and_stays_inside_0_1():
    found = delong_auc(SCORES, LABELS)
    assert found.value == 0.97 and found.ci[1] > 1  # Wald: 1.036
    logit, half = math.log(0.97 / 0.03), 1.959963984540054 * found.std / (0.97 * 0.03)
    hand = (1 / (1 + math.exp(-(logit - half))), 1 / (1 + math.exp(-(logit + half))))
    low, high = delong_interval(found.value, found.std, "logit")
    assert (low, high) == pytest.approx(hand, abs=1e-15)
    assert 0 < low < found.value < high < 1
    assert delong_interval(1.0, 0.0, "logit") == (1.0, 1.0)  # DeLong's std is 0 at AUC 1: the point
    assert delong_interval(1.0, 0.02, "logit") == pytest.approx((1 - 1.959963984540054 * 0.02, 1.0))  # rounded


def test_unknown_interval_is_named():
    with pytest.raises(InputError, match="'wilson'"):
        delong_interval(0.5, 0.1, "wilson")
    with pytest.raises(InputError, match="ci must be 'auto', True, False, 'wald' or 'logit'"):
        mpc_auc.roc_auc_score(LABELS, SCORES, protocol="clear", ci="wilson")
    with pytest.raises(InputError, match="mpc-central's interval is its noise's"):
        mpc_auc.roc_auc_score(LABELS, SCORES, protocol="mpc-central", epsilon=1.0, ci="logit")


@pytest.mark.parametrize("protocol", ["clear", "mpc-exact"])
def test_api_gives_the_logit_interval_on_both_paths(protocol):
    found = delong_auc(SCORES, LABELS)
    wald = mpc_auc.roc_auc_score(LABELS, SCORES, protocol=protocol, ci=True)
    logit = mpc_auc.roc_auc_score(LABELS, SCORES, protocol=protocol, ci="logit")
    assert wald.ci == pytest.approx(found.ci, abs=1e-9) and wald.ci[1] > 1
    assert logit.ci == pytest.approx(delong_interval(found.value, found.std, "logit"), abs=1e-9)
    assert 0 < logit.ci[0] < logit.ci[1] < 1 and logit.std == wald.std
