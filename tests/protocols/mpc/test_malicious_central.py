"""mpc-central under security with abort (protocols.mpc.malicious.central_release, circuits.auth_noise), as jobs: P0,
P1 and the dealer as processes over TLS.  For the same noise the release equals the semi-honest job's bit for bit
(the noise made 0 in both circuits, label and record neighbours) and the exact statistic; with the real noise it
lies within the noise's support, states its security and is charged as any DP release; a party that adds an offset
to one word it sends while the noise is drawn stops the job (DeviationDetected), while with the checks skipped,
and on the semi-honest job, the same offset releases a value the noise could never have made, without an error.
The DP curve, from one authenticated sort of the keys, equals the semi-honest one for the same noise; a release too
wide for the MACs is refused by name."""
import json
from types import SimpleNamespace

import numpy as np
import pytest

from mpc_auc import Context, roc_curve
from mpc_auc import roc_auc_score as private_auc
from mpc_auc.cli import main
from mpc_auc.protocols.dp.central_law import CentralNoise
from mpc_auc.protocols.dp.curve_law import CurveNoise
from mpc_auc.protocols.errors import DeviationDetected
from mpc_auc.protocols.inputs.encoding import ScoreEncoder
from mpc_auc.protocols.mpc.central import central_release, curve_release, mpc_central_auc
from mpc_auc.protocols.mpc.ranking_job import run_ranking_jobs, simulated
from mpc_auc.protocols.release_spec import ReleaseSpec
from mpc_auc.protocols.runtime.session import LOCAL
from mpc_auc.sims.security.deviating_jobs import (NOISE_FRAMES, NOISE_PHASE, SEMI_HONEST_NOISE,
                                                  SEMI_HONEST_NOISE_FRAME, central_noise, cheating_job, exact_release,
                                                  noise_bent)

NOISE = central_noise()


def _clients(seed: int, m: int, parts: int) -> list:
    rng = np.random.default_rng(seed)
    scores, labels = np.round(rng.random(m), 2), rng.integers(0, 2, m)
    labels[:2] = (0, 1)
    cuts = np.linspace(0, m, parts + 1).astype(int)
    return [(f"c{i}", scores[a:b], labels[a:b]) for i, (a, b) in enumerate(zip(cuts, cuts[1:]))]


def _zero_noise(noise) -> SimpleNamespace:
    """A law of the same width whose coins are all 0: the draw is 0 in either circuit."""
    return SimpleNamespace(bits=noise.bits, width=noise.width, thresholds=np.zeros(noise.width + 2, dtype=np.int64))


def _zero_noise_jobs(ctx, fraction_bits: int):
    """The parties' job loop with both circuits' draws made under :func:`_zero_noise` laws."""
    from mpc_auc.protocols.mpc import malicious, ranking_party

    for module in (malicious, ranking_party):
        def drawn(circuit, noise, count, draw=module.discrete_laplace):
            return draw(circuit, _zero_noise(noise), count)

        module.discrete_laplace = drawn
    return ranking_party.serve_jobs(ctx, fraction_bits)


def _same_noise_releases(sets, neighbours: str) -> list:
    """(clients, the malicious release, the semi-honest one) per set, each mode's jobs in one session, the noise
    made 0 in both circuits."""
    noise = CentralNoise(1.0, neighbours=neighbours)
    opened = {}
    for security in ("malicious", "semi-honest"):
        requests = [simulated(c, ScoreEncoder(), spec=ReleaseSpec(security=security)) for c in sets]
        runs = run_ranking_jobs(requests, "radix", False, noise, LOCAL, 120.0, None, party=_zero_noise_jobs)
        opened[security] = [central_release(run, noise) for run in runs]
    return list(zip(sets, opened["malicious"], opened["semi-honest"]))


@pytest.mark.parametrize("neighbours", ["label", pytest.param("record", marks=pytest.mark.slow)])  # both: 200 below
def test_for_the_same_noise_the_release_equals_the_semi_honest_one_bit_for_bit(neighbours):
    sets = [_clients(seed, m, parts) for seed, m, parts in ((1, 2, 1), (2, 41, 2), (3, 150, 3))]
    for clients, mine, theirs in _same_noise_releases(sets, neighbours):
        assert mine.opened == theirs.opened == [exact_release(clients, neighbours)]
        assert mine.security["mode"] == "malicious" and theirs.security is None


def test_for_the_same_noise_the_dp_curve_equals_the_semi_honest_one_bit_for_bit():
    """The DP curve's tree nodes over the positives between public cuts, ties in row order (the stable sort's rule):
    the one authenticated sort of the keys, the same nodes as the semi-honest job and the clear ones."""
    noise = CurveNoise(1.0, points=7)
    sets = [_clients(seed, m, parts) for seed, m, parts in ((5, 3, 1), (6, 60, 2), (7, 131, 3))]
    opened = {}
    for security in ("malicious", "semi-honest"):
        requests = [simulated(c, ScoreEncoder(), spec=ReleaseSpec(security=security)) for c in sets]
        runs = run_ranking_jobs(requests, "radix", False, noise, LOCAL, 120.0, None, party=_zero_noise_jobs)
        opened[security] = [curve_release(run, noise) for run in runs]
    for clients, mine, theirs in zip(sets, opened["malicious"], opened["semi-honest"]):
        scores, labels = (np.concatenate([c[i] for c in clients]) for i in (1, 2))
        exact = noise.nodes(labels[np.argsort(ScoreEncoder().encode(scores), kind="stable")])
        assert mine.opened == theirs.opened == [exact.tolist()]
        assert mine.security["mode"] == "malicious" and theirs.security is None


@pytest.mark.slow  # 400 jobs in four sessions, about 3 minutes here
def test_two_hundred_honest_malicious_releases_never_abort_and_equal_the_semi_honest_ones():
    sizes = (2, 3, 5, 17, 40, 64, 97, 120)
    found = [pair for neighbours, offset in (("label", 0), ("record", 100)) for pair in _same_noise_releases(
        [_clients(300 + offset + n, sizes[n % 8], min(1 + n % 4, sizes[n % 8])) for n in range(100)], neighbours)]
    assert len(found) == 200
    assert all(mine.opened == theirs.opened == [exact_release(clients, mine.neighbours)] for clients, mine, theirs in found)


def test_the_real_noise_lies_in_its_support_and_the_release_is_charged_and_states_its_security(tmp_path):
    clients = _clients(4, 120, 3)
    release, = mpc_central_auc([clients], NOISE, timeout_s=120, security="malicious")
    (stat, count), = release.opened
    exact_stat, positives = exact_release(clients)
    assert abs(stat - exact_stat) <= 2 ** NOISE.statistic_noise(120).width
    assert abs(count - positives) <= 2 ** NOISE.count_noise().width
    assert release.security["statistical_bits"] >= 40 and release.ledger["charged"]["epsilon"] == NOISE.epsilon
    labels, scores = (np.concatenate([c[i] for c in clients]) for i in (2, 1))
    found = private_auc(labels, scores, clients=np.repeat([0, 1], 60), protocol="mpc-central", epsilon=1.0,
                        context=Context(security="malicious"))
    assert found.security["mode"] == "malicious" and "positives" not in found.security and 0 <= found <= 1
    data, out = tmp_path / "rows.csv", tmp_path / "curve.json"  # the command's record states it too
    data.write_text("client,score,label\n" + "".join(f"c{i % 2},{s:.3f},{y}\n" for i, (s, y) in
                                                     enumerate(zip(scores, labels))))
    assert main(["--quiet", "run", "--input", str(data), "--protocol", "mpc-central", "--epsilon", "2", "--metrics",
                 "roc", "--security", "malicious", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["security"]["statistical_bits"] >= 40


@pytest.mark.parametrize("cheater,frame", [(0, 0), (1, 19), *(pytest.param(*case, marks=pytest.mark.slow)
                                                                for case in ((0, 9), (1, 4)))])  # every frame: below
def test_a_party_that_changes_one_word_of_the_noise_draw_stops_the_job(cheater, frame):
    _, stopped = cheating_job(cheater, NOISE_PHASE, frame=frame, noise=NOISE)
    assert isinstance(stopped, DeviationDetected) and "nothing is released" in str(stopped)
    assert "the MAC check after the noise draw failed" in str(stopped) or "the coin of the noise draw" in str(stopped)


@pytest.mark.slow  # 2 x NOISE_FRAMES jobs, about 10 minutes here
def test_every_frame_of_the_noise_draw_is_caught_for_either_party():
    for cheater in (0, 1):
        caught = [isinstance(cheating_job(cheater, NOISE_PHASE, frame=f, seed=f, noise=NOISE)[1],
                             DeviationDetected) for f in range(NOISE_FRAMES)]
        assert all(caught), (cheater, caught)


@pytest.mark.parametrize("phase,check,frame", [(NOISE_PHASE, False, NOISE_FRAMES - 1),
                                               (SEMI_HONEST_NOISE, True, SEMI_HONEST_NOISE_FRAME)])
def test_without_the_checks_or_semi_honest_the_same_offset_bends_the_release_unseen(phase, check, frame):
    """The weakened variant (both parties' MAC checks skipped) and the semi-honest job: P0's offset on one word of the
    draw's last product (the count's magnitude; of the semi-honest draw, the statistic's) moves the release outside
    the noise's support, and the job ends without an error (in one of at most four jobs: under the weakened variant
    the release is opened mod 2^w, so the shift lands inside the support by chance, about 1% here)."""
    assert noise_bent(0, phase, check, frame)


def test_a_release_too_wide_for_the_macs_is_refused_by_name_and_the_api_runs_the_dp_curve():
    from mpc_auc.protocols.mpc.malicious import rows_refusal

    assert rows_refusal(10 ** 6, NOISE) == "" and rows_refusal(10 ** 6, CurveNoise(1.0)) == ""
    assert "too wide for MACs" in rows_refusal(10 ** 6, CentralNoise(1e-9))
    assert "too wide for MACs" in rows_refusal(10 ** 6, CurveNoise(1e-15))
    curve = roc_curve(np.tile([0, 1], 20), np.linspace(0, 1, 40), clients=np.repeat([0, 1], 20), points=4,
                      protocol="mpc-central", epsilon=2.0, context=Context(security="malicious"))
    fpr, tpr, _ = curve
    assert len(fpr) == len(tpr) == 5 and np.all(np.diff(tpr) >= 0)
    assert curve.security["mode"] == "malicious" and curve.security["statistical_bits"] >= 40
