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


def test_a_narrower_float32_encoding_is_offered_only_where_it_keeps_order_and_ties():
    rng = np.random.default_rng(2)
    exact = rng.random(1000).astype(np.float32).astype(np.float64)
    narrow = ScoreEncoder().narrower(exact)
    assert narrow == ScoreEncoder(0.0, 1.0, "float32") and narrow.key_bits == 30 < ScoreEncoder().key_bits
    assert _same_order(exact, narrow.encode(exact)) and _same_order(exact, ScoreEncoder().encode(exact))
    assert ScoreEncoder().narrower(exact + 1e-12) is None  # not float32 values
    assert ScoreEncoder(0.0, 1.0, "float32").narrower(exact) is None  # already float32
    assert ScoreEncoder(-1e300, 1e300).narrower(exact) is None  # the range holds no float32 encoder


def test_run_notes_that_float32_scores_could_be_declared(tmp_path, capsys):
    from mpc_auc.cli import main

    source = tmp_path / "in.csv"
    assert main(["generate", "--m", "300", "--clients", "3", "--score-dtype", "float32", "--out", str(source)]) == 0
    capsys.readouterr()
    assert main(["run", "--input", str(source), "--protocol", "clear", "--out", str(tmp_path / "clear.json")]) == 0
    assert "note" not in capsys.readouterr().err  # no sort, no hint
    assert main(["run", "--input", str(source), "--out", str(tmp_path / "exact.json")]) == 0
    assert "--score-dtype float32 gives the same AUC on 30-bit keys instead of 62" in capsys.readouterr().err
