"""ustat-2pc through the MPC (P0, P1 and the dealer over TCP): MSE against ustats Thm. 5, pairs, estimates.

Each MSE test runs DRAWS independent draws (fresh data from a discrete
population, fresh pairs, fresh in-circuit noise) in one vectorised session
and compares the empirical MSE against the population parameter with the
formula.  With ~Gaussian errors the MSE estimate's relative std is
sqrt(2/DRAWS) = 4.5%, so +-15% is a 3.3-sigma band.
"""
import json

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from mpc_auc.sims.papers import ustat_data
from mpc_auc.protocols.ustat import theory
from mpc_auc.protocols.errors import InputError
from mpc_auc.protocols.ustat.two_party import (Sample, clear_kernel, cross_pairs, kernel_inputs, permutation_pairs,
                                               simulate, ustat_2pc, user_privacy)

DRAWS = 1000
N = 1000
K = 2


def _draws(make, seed):
    rng = np.random.default_rng(seed)
    return [make(rng) for _ in range(DRAWS)]


def _relative_error(estimates, truth, predicted):
    mse = float(np.mean((np.asarray(estimates) - truth) ** 2))
    return mse, mse / predicted - 1


def test_gini_mse_matches_theorem_5():
    pop = ustat_data.gini_grid()
    theta, s1, s2 = theory.moments(pop, theory.gini_kernel)
    eps = 10.0
    out = ustat_2pc("gini", _draws(lambda r: Sample(pop.sample(N, r)), 1), eps, K, timeout_s=120)
    predicted = theory.predicted_mse(s1, s2, N, K, theory.noise_variance("gini", eps, K))
    mse, rel = _relative_error([o.estimate for o in out], theta, predicted)
    print(f"gini: theta {theta:.5f} MSE {mse:.3e} predicted {predicted:.3e} ({rel:+.1%})")
    assert abs(rel) < 0.15
    assert out[0].pairs == K * N // 2


def test_kendall_mse_matches_theorem_5():
    pop = ustat_data.ratings()
    theta, s1, s2 = theory.moments(pop, theory.kendall_kernel)
    eps = 4.0
    out = ustat_2pc("kendall", _draws(lambda r: Sample(pop.sample(N, r)), 2), eps, K, timeout_s=120)
    predicted = 4 * theory.predicted_mse(s1, s2, N, K, theory.noise_variance("kendall", eps, K))  # tau = 2 theta - 1
    mse, rel = _relative_error([o.estimate for o in out], 2 * theta - 1, predicted)
    print(f"kendall: tau {2 * theta - 1:.4f} MSE {mse:.3e} predicted {predicted:.3e} ({rel:+.1%})")
    assert abs(rel) < 0.15


def test_auc_rr_mse_matches_the_two_sample_analogue():
    """Positives ~ U(grid), negatives ~ U(grid) shifted down: the two-sample formula with the tie-coin bit."""
    grid = ustat_data.gini_grid(6)
    neg = ustat_data.Population(grid.support * 0.8, grid.pmf)
    theta, s10, s01, _ = theory.two_sample_moments(grid, neg)
    eps, m = 4.0, N // 2

    def make(r):
        return Sample(np.concatenate([grid.sample(m, r), neg.sample(m, r)]), np.repeat([1, 0], m))

    out = ustat_2pc("auc", _draws(make, 3), eps, K, timeout_s=120)
    predicted = theory.predicted_mse_two_sample(s10, s01, theta * (1 - theta), m, K,
                                                theory.noise_variance("auc", eps, K))
    mse, rel = _relative_error([o.estimate for o in out], theta, predicted)
    print(f"auc: theta {theta:.4f} MSE {mse:.3e} predicted {predicted:.3e} ({rel:+.1%})")
    assert abs(rel) < 0.15


def test_private_label_auc_estimates_the_auc():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 4000)
    s = np.clip(rng.normal(0.4 + 0.2 * y, 0.2), 0, 1).round(2)  # with ties
    out = ustat_2pc("auc-private", [Sample(s, y)], 30.0, 4, seed=5, timeout_s=60)
    # 8,000 pairs, about half of them mixed: sampling error ~0.01
    assert abs(out[0].estimate - roc_auc_score(y, s)) < 0.04


def test_clear_kernels_orient_and_count_the_auc():
    rng = np.random.default_rng(6)
    s = rng.integers(0, 5, 300) / 4
    y = rng.integers(0, 2, 300)
    x = kernel_inputs("auc-private", Sample(s, y))
    i, j = np.triu_indices(300, 1)
    h, g = clear_kernel("auc-private", x[i], x[j], y[i], y[j], np.random.default_rng(7))
    tie = (x[i] == x[j]) & (g == 1)
    exact = roc_auc_score(y, s) * g.sum()
    assert abs(h.sum() - exact) < 4 * np.sqrt(tie.sum() / 4) + 1  # ties are fair coins
    assert g.sum() == y.sum() * (300 - y.sum())


def test_pairs_use_each_user_at_most_k_times():
    rng = np.random.default_rng(8)
    p = permutation_pairs(101, 5, rng)
    assert len(p.first) == 5 * 50 and (p.first != p.second).all()
    assert np.bincount(np.concatenate([p.first, p.second]), minlength=101).max() <= 5
    labels = np.array([1] * 30 + [0] * 71)
    c = cross_pairs(labels, 3, rng)
    assert len(c.first) == 90 and (labels[c.first] == 1).all() and (labels[c.second] == 0).all()
    assert np.bincount(np.concatenate([c.first, c.second]), minlength=101).max() <= 3


def test_privacy_accounting():
    eps, delta = user_privacy("gini", 1.0, 5)
    assert eps == 1.0 and 0 < delta < 1e-10
    eps, delta = user_privacy("auc", 1.0, 5)
    assert delta == 0 and 1.0 - 1e-9 < eps <= 1.0
    eps, _ = user_privacy("auc-private", 2.0, 3)
    assert 2.0 - 1e-9 < eps <= 2.0


def test_simulation_and_mpc_share_one_noise_law():
    """The clear simulator (sims) draws the circuit's exact law: its MSE obeys the same formula."""
    pop = ustat_data.gini_grid()
    theta, s1, s2 = theory.moments(pop, theory.gini_kernel)
    rng = np.random.default_rng(9)
    est = [simulate("gini", Sample(pop.sample(N, rng)), 2.0, K, rng) for _ in range(3000)]
    predicted = theory.predicted_mse(s1, s2, N, K, theory.noise_variance("gini", 2.0, K))
    assert abs(_relative_error(est, theta, predicted)[1]) < 0.1


@pytest.mark.parametrize("kernel, sample, match", [
    ("gini", Sample(np.array([0.1, np.nan, 0.3])), "NaN"),
    ("gini", Sample(np.array([0.1, 1.2])), r"\[0, 1\]"),
    ("auc", Sample(np.array([0.1, 0.2, 0.3]), np.array([1, 2, 0])), "0 or 1"),
    ("auc", Sample(np.array([0.1, 0.2]), np.array([1, 1])), "class"),
    ("auc", Sample(np.array([0.1, 0.2]), np.array([1, 0, 1])), "mismatched"),
    ("gini", Sample(np.array([0.5])), "two users"),
    ("kendall", Sample(np.array([[1.5, 2.0], [1.0, 3.0]])), "integer"),
    ("median", Sample(np.array([0.1, 0.2])), "kernel"),
])
def test_bad_input_is_refused_before_any_process_starts(kernel, sample, match):
    with pytest.raises(InputError, match=match):
        ustat_2pc(kernel, [sample], 1.0)


@pytest.mark.parametrize("eps, k, match", [(0.0, 1, "epsilon"), (-1.0, 1, "epsilon"), (1.0, 0, "k must")])
def test_bad_budget_is_refused(eps, k, match):
    with pytest.raises(InputError, match=match):
        ustat_2pc("gini", [Sample(np.array([0.1, 0.2]))], eps, k)


def test_cli_ustat_writes_the_release_and_refuses_bad_rows(tmp_path, capsys):
    import json

    from mpc_auc.cli import main

    ratings = tmp_path / "ratings.csv"
    rows = ustat_data.ratings().sample(400, np.random.default_rng(10))
    ratings.write_text("user,a,b\n" + "".join(f"u{i},{a},{b}\n" for i, (a, b) in enumerate(rows)))
    out = tmp_path / "tau.json"
    assert main(["ustat", "--kernel", "kendall", "--input", str(ratings), "--epsilon", "50", "--k", "2",
                 "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["pairs"] == 400 and record["kernel"] == "kendall" and record["delta"] > 0
    assert abs(record["estimate"] - 0.43) < 0.2  # population tau 0.433; 400 pairs
    bad = tmp_path / "bad.csv"
    bad.write_text("user,a,b\nu1,1,2\nu2,3.5,1\n")
    for kernel, path, message in (("kendall", bad, "line 3: rating '3.5' is not an integer"),
                                  ("gini", ratings, "missing column")):
        target = tmp_path / f"{kernel}.json"
        assert main(["ustat", "--kernel", kernel, "--input", str(path), "--epsilon", "1", "--out", str(target)]) == 2
        assert message in capsys.readouterr().err
        assert not target.exists()


@pytest.mark.parametrize("kernel, epsilon", [("gini", 2.0), ("gini", 20.0), ("auc", 1.0), ("kendall", 1.0)])
def test_the_standard_error_matches_the_spread_over_runs(kernel, epsilon):
    """k = 1 pairs are disjoint, so the released values' standard error is the estimate's spread over
    fresh pairings and noise (noise-dominated at eps 2, kernel-dominated at eps 20)."""
    from mpc_auc.protocols.ustat.two_party import estimate, pair_noise, sample_pairs, standard_error

    rng = np.random.default_rng(5)
    if kernel == "kendall":
        sample = Sample(rng.integers(1, 6, (2000, 2)))
    elif kernel == "auc":
        sample = Sample(rng.random(2000), rng.integers(0, 2, 2000))
    else:
        sample = Sample(rng.random(2000))
    noise, x = pair_noise(kernel, epsilon, 1), kernel_inputs(kernel, sample)
    estimates, errors = [], []
    for _ in range(300):
        pairs = sample_pairs(kernel, sample, 1, rng)
        values = clear_kernel(kernel, x[pairs.first], x[pairs.second], rng=rng)
        released = values ^ noise.sample(rng, values.shape) if kernel == "auc" else \
            values + noise.sample(rng, len(values))
        estimates.append(estimate(kernel, released, noise))
        errors.append(standard_error(kernel, released, noise))
    assert 0.85 < np.std(estimates) / np.mean(errors) < 1.15


def test_ustat_reports_its_std_and_warns_when_the_noise_swamps_it(tmp_path):
    """`ustat --kernel gini --k 1000` on 300 users: eps/k per pair buries the estimate; the command says so
    (and stays quiet at k = 1, eps = 8)."""
    import subprocess
    import sys

    rng = np.random.default_rng(6)
    data = tmp_path / "gini.csv"
    data.write_text("user,value\n" + "".join(f"u{i},{v:.4f}\n" for i, v in enumerate(rng.random(300))))
    runs = {}
    for k, epsilon in ((1000, 1), (1, 8)):
        out = tmp_path / f"k{k}.json"
        runs[k] = subprocess.run([sys.executable, "-m", "mpc_auc", "ustat", "--kernel", "gini", "--input",
                                  str(data), "--epsilon", str(epsilon), "--k", str(k), "--out", str(out)],
                                 capture_output=True, text=True, timeout=300)
        assert runs[k].returncode == 0, runs[k].stderr[-2000:]
        runs[k] = (runs[k], json.loads(out.read_text()))
    (swamped, record), (fine, ok) = runs[1000], runs[1]
    assert "warning: the noise swamps the estimate" in swamped.stderr and record["swamped"] and record["std"] > 0.25
    assert "warning" not in fine.stderr and not ok["swamped"] and ok["std"] < 0.1
    assert "+-" in fine.stdout and ok["provenance"]["arguments"]["k"] == 1
