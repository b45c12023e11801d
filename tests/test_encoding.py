"""The order-preserving integer encoding keeps order and ties exactly (property tests)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mpc_auc.protocols.inputs.encoding import PAD_KEY, ScoreEncoder, ordered_bits
from mpc_auc.protocols.errors import InputError

F32_MAX = float(np.finfo(np.float32).max)


def _same_order(values, keys):
    values, keys = np.asarray(values), np.asarray(keys)
    # compare, never subtract: int64 key differences overflow
    less_v, less_k = values[:, None] < values[None, :], keys[:, None] < keys[None, :]
    equal_v, equal_k = values[:, None] == values[None, :], keys[:, None] == keys[None, :]
    return np.array_equal(less_v, less_k) and np.array_equal(equal_v, equal_k)


@settings(max_examples=300)
@given(st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=1, max_size=40))
def test_float32_order_and_ties_exact(values):
    values = np.asarray(values, dtype=np.float32)
    encoder = ScoreEncoder(-F32_MAX, F32_MAX, "float32")
    assert encoder.exact
    keys = encoder.encode(values)
    assert _same_order(values.astype(np.float64), keys)
    assert keys.min() >= -PAD_KEY and keys.max() < PAD_KEY


@settings(max_examples=300)
@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=40))
def test_float64_unit_interval_order_and_ties_exact(values):
    encoder = ScoreEncoder(0.0, 1.0, "float64")
    assert encoder.exact
    keys = encoder.encode(values)
    assert _same_order(values, keys)
    assert keys.min() >= -PAD_KEY and keys.max() < PAD_KEY


@settings(max_examples=200)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=40))
def test_ordered_bits_strictly_monotone_on_all_finite_float64(values):
    assert _same_order(values, ordered_bits(values, "float64"))


@settings(max_examples=200)
@given(st.lists(st.floats(min_value=-1.0, max_value=1.0), min_size=2, max_size=40))
def test_wide_float64_range_keeps_order_weakly(values):
    encoder = ScoreEncoder(-1.0, 1.0, "float64")
    assert not encoder.exact and encoder.shift == 1
    values = np.asarray(values)
    keys = encoder.encode(values)
    order = np.argsort(values, kind="stable")
    assert np.all(np.diff(keys[order]) >= 0)


def test_signed_zero_is_one_key():
    keys = ScoreEncoder(-1.0, 1.0, "float32").encode([-0.0, 0.0])
    assert keys[0] == keys[1]


def test_adjacent_float64_stay_distinct_in_unit_interval():
    x = np.array([0.5, np.nextafter(0.5, 1.0), 1.0, np.nextafter(1.0, 0.0), 0.0, 5e-324])
    keys = ScoreEncoder().encode(x)
    assert len(set(keys.tolist())) == len(x)


@pytest.mark.parametrize("bad, word", [(float("nan"), "not a finite"), (float("inf"), "not a finite"),
                                        (-float("inf"), "not a finite"), (1.5, "outside the declared range"),
                                        (-0.1, "outside the declared range")])
def test_bad_scores_are_named(bad, word):
    with pytest.raises(InputError, match=word):
        ScoreEncoder().encode([0.2, bad])


def test_bad_range_is_rejected():
    with pytest.raises(InputError, match="lo < hi"):
        ScoreEncoder(1.0, 0.0)
