"""The adversarial review of mpc-central under security with abort (circuits.auth_noise, protocols.mpc.malicious.
central_release): what a single deviating compute party can and cannot do to the release, against the real code.

* An offset of 2^63 (a word whose error vanishes mod 2^w, w the wide values' width) on a Beaver opening of the
  draw passes every MAC check in most jobs, unseen, and changes nothing released: the docs' "a party that adds an
  offset to any word it sends while the noise is drawn is caught" holds only for offsets nonzero mod 2^w
  (harmless, as SPDZ2k says: the release is opened mod 2^w).
* A party that bends its share of the release's own opening learns the release (its own view of the opening is
  right) while the honest party stops with DeviationDetected; the honest party's ledger keeps the charge, so the
  abort buys no free draw (no fairness with two parties: documented).
* Repetitions > 1 under security with abort: each release equals the exact statistic for a zero noise.
* The wide values' width for mpc-central never shrinks with M, so an authenticator made for the admitted rows
  stays wide enough when excluded clients lower M.
"""
import json
import os

import numpy as np
import pytest

from mpc_auc.protocols.dp.central_law import CentralNoise
from mpc_auc.protocols.errors import DeviationDetected
from mpc_auc.protocols.inputs.encoding import ScoreEncoder
from mpc_auc.protocols.mpc.central import central_release
from mpc_auc.protocols.mpc.ranking_job import dataset_id, run_ranking_jobs, simulated
from mpc_auc.protocols.release_spec import ReleaseSpec
from mpc_auc.protocols.runtime.ledger import Ledger
from mpc_auc.protocols.runtime.session import Placement
from mpc_auc.sims.security.deviating_jobs import exact_release

from test_malicious_central import _clients, _zero_noise

RELEASE_PHASE = "the MAC check after everything before the DP release"  # Authenticator.release's opening


def _deviating_jobs(ctx, fraction_bits: int, cheater: int, phase: str, frame: int, offset: int, zero: bool,
                    record: str):
    """The real job loop (malicious) in which ``cheater`` adds ``offset`` to word 3 of its ``frame``-th frame of
    ``phase``; ``zero``: both draws made under a zero law; ``record``: a file the cheater writes the DP release
    it opened itself to (its own view, before the check of the opening)."""
    from mpc_auc.protocols.mpc import malicious, ranking_party
    from mpc_auc.sims.security.deviating_party import Cheat, crypten_link

    if zero:
        def drawn(auth, noise, count, draw=malicious.discrete_laplace):
            return draw(auth, _zero_noise(noise), count)

        malicious.discrete_laplace = drawn
    honest, link = malicious.authenticator, crypten_link(ctx)

    def cheating(ctx, m, *args):
        auth = honest(ctx, m, *args)
        if ctx.rank == cheater:
            Cheat(auth, link).arm(phase, frame, 3, offset)
            opening = auth.open_small

            def seen(x, kind):
                opened = opening(x, kind)
                if kind == "DP release":
                    w = auth.wide_bits
                    signed = np.where(opened >= 1 << (w - 1), opened - (1 << w), opened)
                    with open(record, "w") as f:
                        json.dump(signed.tolist(), f)
                return opened

            auth.open_small = seen
        return auth

    malicious.authenticator = cheating
    return ranking_party.serve_jobs(ctx, fraction_bits)


def _job(clients, noise, cheater, phase, frame, offset, zero, record, ledger=None):
    request = simulated(clients, ScoreEncoder(), (dataset_id(clients),), ReleaseSpec(security="malicious"))
    try:
        run, = run_ranking_jobs([request], "radix", False, noise, Placement(ledger=ledger), 90.0, None,
                                party=_deviating_jobs, party_args=(cheater, phase, frame, offset, zero, record))
        return central_release(run, noise).opened[0]
    except DeviationDetected as stopped:
        return stopped


@pytest.mark.slow  # up to thirteen jobs; test_malicious_central.py runs the offsets that are caught
def test_an_offset_of_2_63_on_the_draw_mostly_passes_unseen_and_changes_nothing(tmp_path):
    """Frame 1 of the draw (the first comparison round's Beaver openings), word 3, + 2^63: the error reaches only
    the top bit of the words it touches, and a check fails only when the key alpha and that check's sum of
    coefficients over them are both odd (the draw's check, then the release's: about 5/8 of the jobs pass, one
    key at 40 rows).  Jobs run until one passes (at most twelve: all caught by chance with probability about
    1e-5); whenever a job ends without an error the release is the exact statistic (zero noise): the offset
    vanishes mod 2^w."""
    noise = CentralNoise(1.0)
    outcomes = []
    for seed in range(12):
        clients = _clients(20 + seed, 40, 2)
        found = _job(clients, noise, 1, "the noise draw", 1, -(1 << 63), True, str(tmp_path / "unused"))
        outcomes.append((clients, found))
        if not isinstance(found, Exception):
            break
    passed = [(c, r) for c, r in outcomes if not isinstance(r, Exception)]
    assert passed, [str(r) for _, r in outcomes]  # one of the jobs: the offset went unseen
    assert all(r == exact_release(c) for c, r in passed)  # ... and bent nothing
    assert all(isinstance(r, DeviationDetected) for _, r in outcomes if isinstance(r, Exception))
    control = _job(_clients(20, 40, 2), noise, 1, "the noise draw", 1, 5, True, str(tmp_path / "unused"))
    assert isinstance(control, DeviationDetected)  # the same frame and word, offset 5: the cheat is made, and caught


@pytest.mark.slow  # the no-fairness of two parties, as documented
def test_the_cheater_learns_the_release_the_honest_party_refuses_and_the_charge_stays(tmp_path):
    """P1 adds 5 to its share of the release's opening: its own view of the opening is the true release (zero
    noise: the exact statistic), the honest party's MAC check of the opening fails, nothing is released to the
    coordinator, and each party's ledger keeps the charge (not void)."""
    clients = _clients(5, 40, 2)
    record = str(tmp_path / "learnt.json")
    found = _job(clients, CentralNoise(1.0), 1, RELEASE_PHASE, 0, 5, True, record, str(tmp_path / "ledger"))
    assert isinstance(found, DeviationDetected) and "nothing is released" in str(found)
    learnt = json.load(open(record))
    assert (learnt[0][0], learnt[1][0]) == exact_release(clients)  # the cheater holds the release it stopped
    for role in ("P0", "P1"):
        state = Ledger(str(tmp_path / "ledger"), role).state(dataset_id(clients))
        assert len(state["releases"]) == 1 and "void" not in state["releases"][0], (role, state)
        assert os.path.exists(record)


def test_repetitions_under_security_with_abort_each_equal_the_exact_statistic():
    from test_malicious_central import _zero_noise_jobs

    noise = CentralNoise(1.0, repetitions=2)
    clients = _clients(8, 30, 2)
    request = simulated(clients, ScoreEncoder(), spec=ReleaseSpec(security="malicious"))
    run, = run_ranking_jobs([request], "radix", False, noise, Placement(), 90.0, None, party=_zero_noise_jobs)
    assert central_release(run, noise).opened == [exact_release(clients)] * 2


@pytest.mark.parametrize("neighbours", ["label", "record"])
def test_the_release_width_never_shrinks_with_m(neighbours):
    """The authenticator is made for every admitted row (AuthenticatedRows.enter); excluded clients then lower M.
    release_bits(M) non-decreasing in M: the keys and the width made for the larger M hold the smaller M's
    release."""
    from mpc_auc.protocols.mpc.malicious import release_bits

    for epsilon in (0.05, 1.0, 8.0):
        noise = CentralNoise(epsilon, neighbours=neighbours)
        widths = [release_bits(m, noise) for m in range(2, 3000)]
        assert all(a <= b for a, b in zip(widths, widths[1:])), epsilon
