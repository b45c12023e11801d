"""mpc-central: discrete Laplace inside the MPC (P0, P1, dealer over TCP); std vs analytic; sensitivities."""
import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from mpc_auc.protocols.clear_auc import twice_mid_ranks
from mpc_auc.protocols.errors import InputError
from mpc_auc.protocols.dp.central_law import CentralNoise, analytic_std, simulate_release
from mpc_auc.protocols.mpc.central import mpc_central_auc
from mpc_auc.synthetic import binormal_scores, partition

M, P, REPS = 2000, 500, 2000  # std of a std estimate from 2000 draws: 1.6%, at any M


@pytest.fixture(scope="module")
def releases():
    rng = np.random.default_rng(21)
    scores, labels = binormal_scores(M, P, 0.77, rng, decimals=3)  # with ties
    datasets, keys = [], []
    for clients in (1, 40, M):
        owner = partition(M, clients, "iid", rng, scores)
        data = [(f"c{c}", scores[owner == c], labels[owner == c]) for c in np.unique(owner)]
        for neighbours in ("label", "record"):
            keys.append((clients, neighbours))
            datasets.append((data, CentralNoise(1.0, neighbours=neighbours, repetitions=REPS)))
    out = {}
    for (clients, neighbours), (data, noise) in zip(keys, datasets):
        if clients != 40 and neighbours == "record":
            continue  # record neighbours on one partition: the label runs show the partition does not matter
        out[(clients, neighbours)] = (noise, mpc_central_auc([data], noise, timeout_s=60)[0])
    return roc_auc_score(labels, scores), out, scores, labels


@pytest.mark.parametrize("neighbours", ["label", "record"])
def test_std_is_within_1_2_of_analytic_and_unbiased(releases, neighbours):
    auc, out, _, _ = releases
    for (clients, nb), (noise, release) in out.items():
        if nb != neighbours:
            continue
        a = np.asarray(release.aucs)
        expected = analytic_std(M, P, auc, noise)
        print(f"K={clients} {nb}: std {a.std(ddof=1):.3e} analytic {expected:.3e} mean-AUC {a.mean() - auc:+.1e}")
        assert 1 / 1.2 < a.std(ddof=1) / expected < 1.2
        assert abs(a.mean() - auc) < 4 * expected / np.sqrt(REPS) + 1e-6  # delta-method bias is O(1/P^2)


def test_std_does_not_depend_on_the_number_of_clients(releases):
    _, out, _, _ = releases
    stds = {k: np.std(r.aucs, ddof=1) for k, (_, r) in out.items() if k[1] == "label"}
    # Laplace-like noise (kurtosis ~6): a std from 2000 draws has sd ~2.5%, a ratio of two ~3.5%
    assert max(stds.values()) / min(stds.values()) < 1.15


def test_only_the_noisy_statistic_and_count_are_opened(releases):
    _, out, _, _ = releases
    noise, release = out[(40, "label")]
    assert len(release.opened) == REPS and all(len(o) == 2 for o in release.opened)
    assert release.clients == 40 and release.delta < 1e-12
    stats_opened = np.array([o[0] for o in release.opened])
    assert len(np.unique(stats_opened)) > REPS // 2  # noisy: no repeated exact value


def test_the_clear_simulation_draws_the_mpc_law(releases):
    """dp_suite's mpc-central samples the circuit's law in the clear: same std as the MPC run and the formula."""
    auc, out, scores, labels = releases
    for neighbours in ("label", "record"):
        noise, release = out[(40, neighbours)]
        sim = simulate_release(twice_mid_ranks(scores), labels, noise, REPS, np.random.default_rng(23))
        assert 1 / 1.15 < sim.std(ddof=1) / np.std(release.aucs, ddof=1) < 1.15
        assert 1 / 1.1 < sim.std(ddof=1) / analytic_std(M, P, auc, noise) < 1.1


def _twice_t(scores, labels):
    r2 = twice_mid_ranks(scores)
    return int(((r2 - (len(scores) - 1)) * labels).sum())


def _twice_u(scores, labels):
    p = int(labels.sum())
    return int((twice_mid_ranks(scores) * labels).sum()) - p * (p - 1)


def test_sensitivities_hold_for_every_neighbour():
    """Brute force on small tied sets: |d 2T| <= M - 1 over label flips, |d 2U| <= 2(M - 1) over record swaps."""
    rng = np.random.default_rng(22)
    for _ in range(30):
        m = int(rng.integers(3, 12))
        s = rng.integers(0, 4, m) / 4
        y = rng.integers(0, 2, m)
        t, u = _twice_t(s, y), _twice_u(s, y)
        for k in range(m):
            flipped = y.copy()
            flipped[k] ^= 1
            assert abs(_twice_t(s, flipped) - t) <= m - 1
            for new_score in (0.0, 0.25, 0.5, 1.0):
                for new_label in (0, 1):
                    s2, y2 = s.copy(), y.copy()
                    s2[k], y2[k] = new_score, new_label
                    assert abs(_twice_u(s2, y2) - u) <= 2 * (m - 1)
    s = np.arange(5) / 4  # a flip at the top rank attains M - 1
    assert abs(_twice_t(s, np.array([0, 0, 0, 0, 1])) - _twice_t(s, np.zeros(5, int))) == 4


@pytest.mark.parametrize("kwargs, match", [({"epsilon": 0.0}, "epsilon"), ({"epsilon": 1.0, "alpha": 1.0}, "alpha"),
                                           ({"epsilon": 1.0, "neighbours": "user"}, "neighbours"),
                                           ({"epsilon": 1.0, "repetitions": 0}, "repetitions")])
def test_bad_parameters_are_refused(kwargs, match):
    with pytest.raises(InputError, match=match):
        CentralNoise(**kwargs)


def test_cli_runs_mpc_central_and_refuses_a_bad_epsilon(tmp_path):
    import json

    from mpc_auc.cli import main

    data = tmp_path / "data.csv"
    assert main(["generate", "--out", str(data), "--m", "400", "--decimals", "2"]) == 0
    out = tmp_path / "r.json"
    assert main(["run", "--input", str(data), "--protocol", "mpc-central", "--epsilon", "2", "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["privacy"]["neighbours"] == "label" and record["privacy"]["delta"] < 1e-12
    assert len(record["revealed"]) == 2 and 0 <= record["auc"] <= 1.2
    bad = tmp_path / "bad.json"
    with pytest.raises(SystemExit) as stop:  # refused by the option's own range check, with the usage
        main(["run", "--input", str(data), "--protocol", "mpc-central", "--epsilon", "0", "--out", str(bad)])
    assert stop.value.code == 2 and not bad.exists()


def test_a_swamped_release_is_clamped_flagged_and_warned(tmp_path, capsys):
    """--epsilon 1e-4 on 400 rows: the noise std is far past the AUC's range.  The release (before clamping:
    values like -3791.5 the red team saw) lies in [0, 1], the JSON says ``swamped`` and stderr warns."""
    import json

    from mpc_auc.cli import main
    from mpc_auc.csv_io import write_evalset
    from mpc_auc.synthetic import synthetic_evalset

    write_evalset(tmp_path / "in.csv", synthetic_evalset(m=400, clients=2, seed=3))
    out = tmp_path / "r.json"
    assert main(["run", "--input", str(tmp_path / "in.csv"), "--protocol", "mpc-central", "--epsilon", "1e-4",
                 "--out", str(out), "--ledger", str(tmp_path / "ledger")]) == 0
    record = json.loads(out.read_text())
    assert 0.0 <= record["auc"] <= 1.0 and record["swamped"] is True and record["std"] > 1
    assert "warning: the noise swamps the release" in capsys.readouterr().err
    calm = simulate_release(np.arange(400) * 2, np.arange(400) % 2, CentralNoise(1e-4), 200, np.random.default_rng(0))
    assert calm.min() >= 0 and calm.max() <= 1 and {0.0, 1.0} <= set(calm)  # the law clamps too
