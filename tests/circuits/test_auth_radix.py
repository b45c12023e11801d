"""The authenticated radix sort (circuits.auth_radix, circuits.macs): honest runs equal numpy's stable sort, and a
compute party that adds an offset to one word it sends, in any phase, is caught (P0, P1, dealer over TCP).

The cheat is made where a malicious party can always make it: on the frame it hands its link, after the
protocol built it.  The weakened variant (the MAC checks skipped) releases wrong ranks under the same cheats:
the check is what catches them."""
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import rankdata

from mpc_auc.protocols.runtime.session import run_parties
from mpc_auc.sims.security.deviating_party import (CHEAT_BITS, CHEAT_M, PHASES, Cheat, cheat_runs, digits_of,
                                                   expected_ranks, keys_for, outcomes, skip_checks, sort_party)

HONEST_CASES = [(1, 4), (2, 2), (9, 6), (64, 8), (300, 12), (257, 3)]
CHEAT_RUNS = 20  # per phase and cheating party (make test-all; make test: QUICK_CHEAT_RUNS)
QUICK_CHEAT_RUNS = 2
HONEST_RUNS = 200  # sizes 1 to 89, keys of 2 to 8 bits


@pytest.fixture(scope="module")
def runs():
    return cheat_runs(QUICK_CHEAT_RUNS)


def test_honest_authenticated_sorts_equal_numpys_stable_sort():
    results = run_parties(sort_party, (HONEST_CASES, [], True))
    assert results[0]["s"] >= 40
    for (m, bits), p0, p1 in zip(HONEST_CASES, results[0]["honest"], results[1]["honest"]):
        assert not isinstance(p0, str), p0
        ranks, order = expected_ranks(keys_for(m, m, bits))
        for ranks_seen, origins in (p0, p1):
            np.testing.assert_array_equal(ranks_seen, ranks)
            np.testing.assert_array_equal(origins, order)


def test_a_replayed_frame_and_a_substituted_share_are_caught_in_every_phase():
    cheats = [(party, phase, True, mode) for mode in ("replay", "substitute") for party in (0, 1)
              for phase in PHASES]
    p0, p1 = run_parties(sort_party, ([], cheats, False))
    for n, (party, phase, _, mode) in enumerate(cheats):
        if (p0, p1)[party]["armed"][n]:  # a replay needs an earlier frame of the same length
            assert all("a compute party deviated" in r["cheats"][n] for r in (p0, p1)), (party, phase, mode)
    assert sum(bool((p0, p1)[c[0]]["armed"][n]) for n, c in enumerate(cheats)) >= len(cheats) - 4


@pytest.mark.slow
def test_honest_runs_never_abort():
    rng = np.random.default_rng(2026)
    cases = [(int(rng.integers(1, 90)), int(rng.choice([2, 4, 6, 8]))) for _ in range(HONEST_RUNS)]
    p0, p1 = run_parties(sort_party, (cases, [], True))
    for (m, bits), seen0, seen1 in zip(cases, p0["honest"], p1["honest"]):
        ranks, order = expected_ranks(keys_for(m, m, bits))
        for seen in (seen0, seen1):
            assert not isinstance(seen, str), seen
            np.testing.assert_array_equal(seen[0], ranks)
            np.testing.assert_array_equal(seen[1], order)


def test_a_reused_correlation_index_is_refused_by_the_dealer():
    """P0 asks the dealer again for an authenticated correlation it was served: the dealer refuses and the job
    stops in bounded time (P1's account of the request does not match either)."""
    from mpc_auc.protocols.errors import PartyFailure

    with pytest.raises(PartyFailure, match="refused"):
        run_parties(_reuse_party, (), timeout_s=60)


def _reuse_party(ctx):
    from mpc_auc.circuits.dealer_line import dealer_line
    from mpc_auc.circuits.macs import Authenticator

    auth = Authenticator(ctx.stream_key, 8)
    auth.correlation("uniform", (5,))
    if ctx.rank == 0:
        dealer_line().request("authenticated", "input", 0, (5,), 0, 1)  # index 0 again, as an input mask
    else:
        auth.correlation("uniform", (5,))
    return True


def test_a_cheat_is_caught_with_the_dealers_correlations_posted_ahead():
    for party in (0, 1):
        results = run_parties(sort_party, ([], [(party, "the one-hot products of digit", True)], True))
        assert all("the MAC check after the shuffle of" in r["cheats"][0] for r in results), results


def test_an_offset_on_one_word_in_any_phase_is_caught_by_both_parties(runs):
    _assert_caught(*runs)


@pytest.mark.slow
def test_an_offset_on_one_word_in_any_phase_is_caught_in_20_runs_each():
    _assert_caught(*cheat_runs(CHEAT_RUNS))


def _assert_caught(cheats, results):
    for (party, phase), row in outcomes(cheats, results).items():
        assert row["made"] == row["checked"], (party, phase)  # every cheat was made
        assert row["caught"] == row["checked"], (party, phase, row)  # and both parties stopped


def test_without_the_mac_check_the_same_cheats_release_wrong_ranks(runs):
    wrong = {}
    for (party, phase), row in outcomes(*runs).items():
        wrong[phase] = wrong.get(phase, 0) + row["wrong"]
    assert all(wrong[phase] for phase in PHASES), wrong  # a wrong release in every phase


LEAK_RUNS, LEAK_ELEMENT = 5, 7


class _Revealing:
    """The ranking with every revealed vector of destinations kept (what the party saw)."""

    def _destinations(self, shuffled_sigma, t):
        s = super()._destinations(shuffled_sigma, t)
        self.revealed.append(s.copy())
        return s


def _leak_party(ctx, weakened: bool):
    """P1 adds 2^(k-1) to element LEAK_ELEMENT's destination word in the first message of digit 1's shuffle (its
    masked share, in input order) and reads that element's destination after digit 0 off the opened vector: the
    one position it lacks."""
    from mpc_auc.circuits.auth_radix import AuthRadixRanking
    from mpc_auc.circuits.macs import Authenticator, Deviation, value_bits
    from mpc_auc.circuits.shuffle import Shuffler, is_permutation

    class Early(_Revealing, AuthRadixRanking):  # the destinations opened at once, before any check
        def _destinations(self, shuffled_sigma, t):
            self._phase(f"opening the destinations of digit {t}")
            s = self.auth.open_small(shuffled_sigma, "destinations")
            self.revealed.append(s.copy())
            return s if is_permutation(s) else np.arange(len(s))

    class Checked(_Revealing, AuthRadixRanking):
        pass

    AuthRadixRanking.PREFETCH = False  # the session goes on after each abort
    shuffler = Shuffler(ctx.stream_key)
    auth = Authenticator(ctx.stream_key, value_bits(CHEAT_M))
    cheat = Cheat(auth, shuffler.comm.links[1 - ctx.rank])
    out = []
    for run in range(LEAK_RUNS):
        if auth.failed:  # caught: new MAC keys for the next run
            auth = cheat.auth = Authenticator(ctx.stream_key, auth.k)
        keys = keys_for(500 + run, CHEAT_M, CHEAT_BITS)
        if ctx.rank == 1:
            cheat.arm("the shuffle of digit 1", 0, LEAK_ELEMENT, 1 << (auth.k - 1))
        ranking = (Early if weakened else Checked)(shuffler, auth)
        ranking.revealed = []
        try:
            digits = np.stack([auth.input(d if ctx.rank == 0 else None, 0, (CHEAT_M,))
                               for d in digits_of(keys, CHEAT_BITS)])
            ranking.permutation(digits[:2])
            auth.check("the end")
            outcome = None
        except Deviation as failure:
            outcome = str(failure)
        guess = None
        if len(ranking.revealed):  # the opened vector with one word moved: the position it lacks
            missing = np.setdiff1d(np.arange(CHEAT_M), ranking.revealed[0])
            guess = int(missing[0]) if len(missing) == 1 else None
        out.append((guess, outcome, cheat.done))
        cheat.plan = None
    return out


@pytest.mark.parametrize("weakened", [True, False], ids=["destinations-opened-at-once", "checked-first"])
def test_an_error_planted_in_a_shuffle_shows_a_destination_only_if_destinations_open_before_a_check(weakened):
    results = run_parties(_leak_party, (weakened,))
    for run, (guess, outcome, made) in enumerate(results[1]):
        assert made
        keys = keys_for(500 + run, CHEAT_M, CHEAT_BITS)
        after_digit_0, _ = expected_ranks(keys & 3)
        if weakened:  # the cheater reads the element's destination off the opened vector, every run
            assert guess == after_digit_0[LEAK_ELEMENT]
        else:  # the check fails first: no destinations are opened, both parties stop
            assert guess is None and "the MAC check after the shuffle of digit 1 failed" in outcome
            assert "the MAC check after the shuffle of digit 1 failed" in results[0][run][1]


AUC_CASES = [(2, 4), (7, 2), (50, 4), (64, 6), (301, 10)]  # (M, key bits): many ties at small widths


def _auc_party(ctx, cases, cheats):
    """The tie-aware rank sums on authenticated shares, opened; then cheats in the sort of both orders (and the
    weakened variant without checks)."""
    from mpc_auc.circuits.auth_auc import rank_sums, wide_bits
    from mpc_auc.circuits.auth_radix import AuthRadixRanking
    from mpc_auc.circuits.macs import Authenticator, Deviation, value_bits
    from mpc_auc.circuits.shuffle import Shuffler

    AuthRadixRanking.PREFETCH = not cheats
    largest = max(m for m, _ in cases)
    shuffler = Shuffler(ctx.stream_key)
    auth = Authenticator(ctx.stream_key, value_bits(2 * largest), wide_bits(largest))
    cheat = Cheat(auth, shuffler.comm.links[1 - ctx.rank])
    out = {"keys": auth.keys, "runs": []}
    for n, (m, bits) in enumerate(cases):
        if auth.failed:  # caught: new MAC keys for the next run
            auth = cheat.auth = Authenticator(ctx.stream_key, value_bits(2 * largest), wide_bits(largest))
        party, phase, check = cheats[n] if cheats else (None, None, True)
        if party == ctx.rank:
            cheat.arm(phase, 0, 3, 5)
        keys, labels = keys_for(m, m, bits), np.random.default_rng(m + 1).integers(0, 2, m)
        if not check:
            skip_checks(auth)
        try:
            auth.phase = "the input"
            digits = np.stack([auth.input(d if ctx.rank == 0 else None, 0, (m,)) for d in digits_of(keys, bits)])
            wide = auth.input(labels if ctx.rank == 0 else None, 0, (m,), wide=True)
            ranking = AuthRadixRanking(shuffler, auth)
            w, n1, _ = rank_sums(ranking, digits, wide)
            opened = auth.release(np.stack([w, n1], axis=1), "rank sums")
            out["runs"].append(tuple(int(v) for v in opened))
        except Deviation as failure:
            out["runs"].append(str(failure))
        finally:
            auth.__dict__.pop("check", None)
            cheat.plan = None
    return out


def test_the_tie_aware_auc_from_two_authenticated_sorts_equals_scikit_learns():
    from sklearn.metrics import roc_auc_score

    from mpc_auc.circuits.auth_auc import auc_from_sums

    p0, p1 = run_parties(_auc_party, (AUC_CASES, []))
    for (m, bits), seen0, seen1 in zip(AUC_CASES, p0["runs"], p1["runs"]):
        assert seen0 == seen1
        keys, labels = keys_for(m, m, bits), np.random.default_rng(m + 1).integers(0, 2, m)
        if 0 < labels.sum() < m:
            numerator, denominator = auc_from_sums(*seen0, m)
            ranks = rankdata(keys)  # mid-ranks, 1-based: the exact fraction by the clear formula
            n1 = int(labels.sum())
            assert Fraction(numerator, denominator) == Fraction(round(2 * ranks[labels == 1].sum()) - n1 * (n1 + 1),
                                                                2 * n1 * (m - n1))
            assert abs(numerator / denominator - roc_auc_score(labels, keys)) <= 1e-15
        assert seen0[1] == labels.sum()


def test_a_cheat_in_the_second_sort_is_caught_and_without_checks_gives_a_wrong_auc():
    from mpc_auc.circuits.auth_auc import auc_from_sums

    cases = [(64, 6)] * 4
    cheats = [(party, "moving the columns", check) for check in (True, False) for party in (0, 1)]
    p0, p1 = run_parties(_auc_party, (cases, cheats))
    keys, labels = keys_for(64, 64, 6), np.random.default_rng(65).integers(0, 2, 64)
    honest = p0["runs"][0]
    for (party, _, check), seen0, seen1 in zip(cheats, p0["runs"], p1["runs"]):
        if check:
            assert "a compute party deviated" in seen0 and "a compute party deviated" in seen1
        else:
            assert seen1 != honest  # the honest party's view
