"""Comparisons on authenticated shares (circuits.auth_compare): [x >= 0] equals the clear sign at the edges of the
range (0, -1, +-(2^L - 1), every odd and even width) and on random values, the maximum equals numpy's, and a party
that adds an offset to the masked opening or to a product of the comparison is caught by the next MAC check (a
weakened variant that skips the check releases a wrong sign).  P0, P1 and the dealer as processes over TCP."""
import numpy as np
import pytest

from mpc_auc.protocols.runtime.session import run_parties

WIDTH = 40  # the authenticator's wide values


def _entered(auth, values: np.ndarray) -> np.ndarray:
    """Wide authenticated shares of P0's values (the tests' inputs)."""
    return auth.input(values if auth.rank == 0 else None, 0, values.shape, wide=True)


def _compare_party(ctx, cases: list):
    from mpc_auc.circuits.auth_compare import maximum, nonnegative
    from mpc_auc.circuits.macs import Authenticator

    auth = Authenticator(ctx.stream_key, 16, WIDTH)
    out = []
    for values, bits in cases:
        x = _entered(auth, np.asarray(values, dtype=np.int64))
        signs = nonnegative(auth, x, bits)
        out.append((auth.release(signs, "the signs"), auth.release(maximum(auth, x, bits + 1), "the maximum")))
    return out


def test_signs_and_maxima_equal_the_clear_ones():
    rng = np.random.default_rng(5)  # test data, not a secret
    cases = []
    for bits in (1, 2, 5, 8, 23, 37):
        edge = 2 ** bits - 1
        values = np.concatenate([[0, -1, 1, edge, -edge], rng.integers(-edge, edge + 1, size=200)])
        cases.append((values, bits))
    both = run_parties(_compare_party, (cases,), timeout_s=300)
    assert all(np.array_equal(a, b) for pair_a, pair_b in zip(*both) for a, b in zip(pair_a, pair_b))
    for (values, _), (signs, largest) in zip(cases, both[0]):
        assert np.array_equal(signs, (values >= 0).astype(np.int64))
        top = int(largest[0])
        assert (top if top < 1 << (WIDTH - 1) else top - (1 << WIDTH)) == values.max()


def _cheating_party(ctx, weakened: bool):
    """P0 adds 2^L to its share of the masked opening c (the sign's bit flips); ``weakened``: both skip the checks.
    (the released signs, or the deviation's phase)."""
    from mpc_auc.circuits.auth_compare import nonnegative
    from mpc_auc.circuits.macs import Authenticator, Deviation

    auth = Authenticator(ctx.stream_key, 16, WIDTH)
    x = _entered(auth, np.array([5, -5, 0, 7], dtype=np.int64))
    opening = auth.open

    def bent(shares, kind):
        if ctx.rank == 0 and kind.startswith("masked"):
            shares = shares.copy()
            shares[0] += np.int64(1) << np.int64(8)
        return opening(shares, kind)

    auth.open = bent
    if weakened:
        auth.check = lambda phase: None
    try:
        return auth.release(nonnegative(auth, x, 7), "signs")
    except Deviation as deviation:
        return deviation.phase


def test_a_bent_opening_is_caught_and_without_the_check_it_flips_the_sign():
    assert run_parties(_cheating_party, (False,), timeout_s=120) == ["everything before the signs"] * 2
    weakened = run_parties(_cheating_party, (True,), timeout_s=120)[0]
    assert np.array_equal(weakened, [0, 1, 0, 0])  # every sign flipped: x >= 0 read as x < 0


def _too_wide_party(ctx):
    from mpc_auc.circuits.auth_compare import nonnegative
    from mpc_auc.circuits.macs import Authenticator

    auth = Authenticator(ctx.stream_key, 16, WIDTH)
    try:
        nonnegative(auth, auth.public(0, (3,), wide=True), 39)
    except ValueError as error:
        return str(error)


def test_a_comparison_too_wide_for_the_macs_is_refused():
    assert all("needs 41-bit wide values" in r for r in run_parties(_too_wide_party, (), timeout_s=120))


KS_PHASE = "the KS statistic's comparisons"


def _phases_party(ctx):
    """The tournament of circuits.auth_compare.maximum with its batch made small (8: a check after every batch of
    2 or more, as a job of 2^14 rows or more meets BATCH = 2^15), under the phase ks_gap sets: the phase each of its
    openings runs under."""
    from mpc_auc.circuits import auth_compare
    from mpc_auc.circuits.macs import Authenticator

    auth_compare.BATCH = 8
    auth = Authenticator(ctx.stream_key, 16, WIDTH)
    values = np.arange(64, dtype=np.int64)[::-1].copy()
    x = _entered(auth, values)
    phases, opening = [], auth.open

    def recorded(shares, kind):
        phases.append(auth.phase)
        return opening(shares, kind)

    auth.open = recorded
    auth.phase = KS_PHASE
    top = auth.release(auth_compare.maximum(auth, x, 8, KS_PHASE), "the maximum")
    return int(top[0]), phases


def test_the_tournaments_openings_run_under_its_phase_across_its_batch_checks():
    """The review found the batch checks leaving "the MAC check after ..." as the phase, so that the deviation rows,
    which match the phase a frame is sent in, could not reach the later levels of a large job's tournament."""
    (top, phases), _ = run_parties(_phases_party, (), timeout_s=300)
    assert top == 63 and len(phases) > 40
    assert all(p.startswith(KS_PHASE) or p.startswith("the MAC check after everything") for p in phases)
