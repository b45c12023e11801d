"""A slice of each kind of security check, so that a regression fails the test run.

Audit: the Clopper-Pearson bound never exceeds a true epsilon and catches a
doubled one; fedauc-rr and FedAUC_Lap pass while their weakened controls are
caught.  Attack: the likelihood-ratio attacker reaches the RR bound exactly
and vanilla 100%; MPC gives base-rate top-K precision; the exact AUC gives
away a last unknown label.  Collusion/control: our dealer passes the key
independence check and a real session's triples expand the keys it sent;
the stock dealer and the three Dealers deriving k_1 from k_0 are caught
(tests/sims/test_dealer_independence.py: the check itself).  View: the command's run checks
the radix sort's transcripts and catches the open-sigma variant (also
tests/circuits/test_radix.py).  The command writes strict JSON, Markdown, CSV and
PNG+PDF.

make test runs each step that starts parties on its own at small sizes (collusion, the network observer and the
audits here; the views in test_security_views.py; the deviating party's on the authenticated sort in
test_security_deviation.py, its cheats on whole jobs in tests/protocols/mpc/test_malicious.py), and the command
with those steps stood in for; the whole command on the small configuration is make test-all's.
"""
import json
import math

import numpy as np
import pytest

from mpc_auc.cli import main
from mpc_auc.sims.security import checks as sc
from mpc_auc.sims.security import suite
from mpc_auc.sims.security.collusion_checks import collusion, dealer_keys, network_observer
from mpc_auc.sims.security.report import check, holds
from mpc_auc.sims.security.dp_audit import clopper_pearson, epsilon_lower_bound
from mpc_auc.sims.security.release_checks import across_evaluations, audits
from mpc_auc.sims.security.view_distributions import homogeneity
from security_steps import SMALL, run_step


def test_clopper_pearson_covers_the_proportion():
    lo, hi = clopper_pearson(30, 100, 0.05)
    assert 0.21 < lo < 0.3 < hi < 0.4
    assert clopper_pearson(0, 50, 0.05)[0] == 0 and clopper_pearson(50, 50, 0.05)[1] == 1


@pytest.mark.parametrize("true_epsilon", [0.5, 2.0])
def test_the_bound_stays_below_a_true_laplace_epsilon_and_approaches_it(true_epsilon):
    rng = np.random.default_rng(3)
    on_d, on_d2 = rng.laplace(1, 1 / true_epsilon, 100_000), rng.laplace(0, 1 / true_epsilon, 100_000)
    result = epsilon_lower_bound(on_d, on_d2)
    assert 0.75 * true_epsilon < result.epsilon_lb <= true_epsilon


def test_audits_pass_honest_mechanisms_and_catch_their_weakened_controls():
    rng = np.random.default_rng(4)
    assert sc.audit_rr(1.0, 100_000, rng)[0].epsilon_lb <= 1.0
    assert sc.audit_rr(1.0, 100_000, rng, flip_epsilon=2.0)[0].epsilon_lb > 1.5
    assert sc.audit_laplace("local", 1.0, 100_000, rng)[0].epsilon_lb <= 1.0
    assert sc.audit_laplace("local", 1.0, 100_000, rng, noise_epsilon=2.0)[0].epsilon_lb > 1.5
    assert sc.audit_central("record", 1.0, 100_000, rng)[0].epsilon_lb <= 1.0
    assert sc.audit_central("record", 1.0, 100_000, rng, calibrated_for="label")[0].epsilon_lb > 1.2
    assert sc.audit_curve(1.0, 100_000, rng)[0].epsilon_lb <= 1.0  # the DP curve's tree of noisy counts
    assert sc.audit_curve(1.0, 100_000, rng, calibrated_levels=1)[0].epsilon_lb > 2.0  # noise for one level only


def test_label_inference_reaches_the_rr_bound_and_vanilla_reveals_every_label():
    rng = np.random.default_rng(5)
    assert sc.label_inference("fedauc-vanilla", 1.0, 100, 10, rng) == 1.0
    accuracy = sc.label_inference("fedauc-rr", 1.0, 200, 200, rng)
    assert abs(accuracy - sc.inference_bound(1.0)) < 0.01  # RR is exactly as strong as its bound allows
    assert sc.label_inference("fedauc-lap-local", 1.0, 200, 200, rng) < sc.inference_bound(1.0)
    assert sc.label_inference("mpc-central", 1.0, 200, 200, rng) < sc.inference_bound(1.0)


def test_the_exact_auc_gives_away_the_last_unknown_label():
    assert sc.enumeration_attack(100, 40, np.random.default_rng(8)) >= 0.95


def test_top_k_is_informative_on_clear_scores_and_base_rate_for_mpc():
    rng = np.random.default_rng(6)
    scores, labels = np.arange(10_000.0), (np.arange(10_000) >= 7_500).astype(int)
    assert sc.top_k_precision(scores, labels, [10, 100]) == [1.0, 1.0]
    random_pick = sc.top_k_precision(rng.random(10_000), labels, [2_000])[0]
    assert abs(random_pick - 0.25) < 3 * math.sqrt(0.25 * 0.75 / 2_000)


def test_our_dealer_keys_resist_p0_and_the_weakened_dealers_do_not():
    checks = dealer_keys({"seed_bits": 8, "dealer_trials": 4}, np.random.default_rng(7))
    assert [c["passed"] for c in checks if c["kind"] == "collusion"] == [True, True]  # the check, the session
    controls = [c for c in checks if c["kind"] == "control"]
    assert [c["passed"] for c in controls] == [False] * 4  # stock CrypTen and the three derived-key Dealers
    assert [c["details"]["flagged"] for c in controls[1:]] == [4] * 3
    assert any('SHA-256("k1" || k_0)' in c["name"] for c in controls)


# the steps that start parties, each tested on its own (below, in test_security_views.py and, the deviating party's,
# in test_security_deviation.py; the whole-jobs step's cheats, each party in each phase, in
# tests/protocols/mpc/test_malicious.py)
PARTY_STEPS = ("views", "bitonic_views", "job_views", "full_report_views", "malicious_job_views", "noise_views",
               "ustat_views", "collusion", "network_observer", "audits", "deviation_checks", "job_deviation_checks")


def _run_command(tmp_path) -> tuple:
    """``mpc-auc security --suite quick`` on the small configuration: (its report, its directory)."""
    config = tmp_path / "small.yaml"
    config.write_text(json.dumps(SMALL))  # YAML reads JSON
    out = tmp_path / "report"
    assert main(["security", "--suite", "quick", "--config", str(config), "--out", str(out), "--seed", "9"]) == 0
    text = (out / "report.json").read_text()
    return json.loads(text, parse_constant=lambda name: pytest.fail(f"non-strict JSON: {name}")), out


def _check_report(report, out, kinds) -> None:
    """The report's verdict, its records' fields and directions, and every file the command writes."""
    assert report["seed"] == 9 and report["config"]["audit_draws"] == SMALL["audit_draws"]
    assert {c["kind"] for c in report["checks"]} == kinds
    assert report["summary"]["verdict"] == "ok" and report["summary"]["controls_missed"] == []
    fields = {"name", "kind", "protocol", "claimed_epsilon", "claimed_delta", "measured", "bound", "pass_if",
              "passed", "chance", "details"}
    assert all(set(c) == fields for c in report["checks"])
    assert report["summary"]["statistical_checks"] == sum(c["chance"] for c in report["checks"]
                                                          if c["kind"] != "control")
    assert [c["name"] for c in report["checks"] if c["passed"] != holds(c)] == []  # each direction as stated
    for name in ("report.md", "checks.csv", "label_inference.csv", "top_k.csv", "label_inference.png",
                 "label_inference.pdf", "top_k.png", "top_k.pdf"):
        assert (out / name).stat().st_size > 0, name
    assert "Verdict: ok" in (out / "report.md").read_text()


def test_the_command_writes_the_report_and_its_verdict(tmp_path, monkeypatch):
    """Every step runs in its place, those that start parties stood in for by one passed check each."""
    ran = []

    def stand_in(name):
        def step(cfg, rng):
            ran.append(name)
            return [check(f"stand-in for {name}", "view", "mpc-exact", None, None, 1.0, 0.0, True, {}, pass_if=">")]
        return step

    for name in PARTY_STEPS:
        monkeypatch.setattr(suite, name, stand_in(name))
    report, out = _run_command(tmp_path)
    assert ran == list(PARTY_STEPS)  # each in the command's order
    _check_report(report, out, {"attack", "collusion", "control", "view"})
    across = [c for c in report["checks"] if c["name"].startswith(("an organiser's", "sequences of exact",
                                                                    "crafted-model oracle"))]
    assert len(across) == 6 and all(c["passed"] == (c["kind"] == "attack") for c in across)  # controls caught


@pytest.mark.slow  # it measures: the whole command, every step, on the small configuration (minutes)
def test_the_whole_command_passes_every_check_and_catches_every_control(tmp_path):
    report, out = _run_command(tmp_path)
    _check_report(report, out, {"audit", "attack", "collusion", "control", "view"})
    views = {c["name"] for c in report["checks"] if c["kind"] == "view"}
    for protocol in ("mpc-central, every message", "mpc-exact --ranks, every message", "rank share",
                     "mpc-exact --security malicious --ranks, every message",
                     "discrete Laplace gadgets", "bitonic", "radix", "ustat-2pc"):
        assert any(protocol in name for name in views), protocol


def test_dealer_and_p0_recover_what_is_documented_and_p0_alone_nothing():
    found = {c["name"]: c for c in run_step(collusion, 12)}
    assert len(found) == 4 and all(name.startswith("collusion:") for name in found)
    coalition = [c for name, c in found.items() if "dealer + P0" in name]
    assert coalition[0]["details"]["recovered_exactly"] and coalition[1]["measured"] == 1.0  # the documented limit


def test_the_network_observer_sees_sealed_records_only_and_the_weakened_link_is_caught():
    found = run_step(network_observer, 13)
    observer = [c for c in found if c["name"].startswith("network observer")]
    assert len(observer) == 4 and [c["kind"] for c in found if c not in observer] == ["control"]


def test_every_dp_audit_stays_within_its_epsilon_and_catches_its_weakened_control():
    found = run_step(audits, 14, audit_draws=20_000, mpc_audit_draws=500)
    assert {c["kind"] for c in found} == {"audit", "control"} and sum(c["kind"] == "control" for c in found) == 4
    assert any("through the real MPC" in c["name"] for c in found)


def test_an_organisers_sequences_and_the_crafted_model_read_nothing_beyond_the_budget():
    found = run_step(across_evaluations, 15)
    assert len(found) == 6 and sorted(c["kind"] for c in found) == ["attack"] * 3 + ["control"] * 3


def test_the_homogeneity_test_passes_one_law_and_catches_one_element_or_a_schedule_that_differ():
    rng = np.random.default_rng(11)

    def runs(n, fixed=None, extra=False):
        out = []
        for _ in range(n):
            run = [("message", rng.integers(0, 2 ** 62, (1, 64)))]
            if fixed is not None:
                run.append(("message", np.array([[fixed, 5]])))
            out.append(run + ([("message", np.zeros((1, 1), dtype=np.int64))] if extra else []))
        return out

    assert homogeneity(runs(40, 1), runs(40, 1)) > 0.01
    assert homogeneity(runs(40, 1), runs(40, 2)) < 1e-6  # one element that differs among 130
    assert homogeneity(runs(40, 1), runs(40, 1, extra=True)) == 0.0  # one more message for input B


def test_a_bad_config_is_refused_naming_the_parameter(tmp_path, capsys):
    config = tmp_path / "bad.yaml"
    config.write_text("audit_drawz: 5\n")
    assert main(["security", "--config", str(config), "--out", str(tmp_path / "r")]) == 2
    assert "audit_drawz" in capsys.readouterr().err and not (tmp_path / "r").exists()
    config.write_text("bitonic_view_m: 1000\n")
    assert main(["security", "--config", str(config), "--out", str(tmp_path / "r")]) == 2
    assert "bitonic_view_m must be a power of two" in capsys.readouterr().err and not (tmp_path / "r").exists()


def test_ustat_2pc_per_user_noise_keeps_its_epsilon_and_the_aggregator_stays_under_the_bound():
    rng = np.random.default_rng(10)
    for kernel in ("auc", "gini"):
        result, claimed, _ = sc.audit_ustat(kernel, 1.0, 2, 100_000, rng)
        assert result.epsilon_lb <= claimed * 1.05
        accuracy, bound = sc.ustat_inference(kernel, 1.0, 1, 50_000, rng)
        assert 0.6 < accuracy <= bound + 0.01


def test_the_job_view_audit_reads_the_packed_wire_layouts(monkeypatch):
    """Messages travel packed to the bits that matter (circuits.correlations.narrow: w = ceil(log2 M) bits a
    position, 2 a digit): a secret sent in any of those layouts, alone or beside a masked column, is found by
    the leak audit, as the whole-job views record it too, and masked ones are not; an audit that reads positions as
    whole bytes (not decoding the packed bits) misses every planted secret."""
    from mpc_auc.circuits.correlations import narrow, position_bits
    from mpc_auc.sims.security import view_leaks
    from mpc_auc.sims.security.view_leaks import job_secrets, leaks
    from mpc_auc.sims.security.view_parties import as_recorded

    rng = np.random.default_rng(4)
    m = 300  # 9-bit positions: no layout of them is a plain reshape of the bytes
    keys, labels = rng.integers(0, 10 ** 6, m), rng.integers(0, 2, m)
    secrets_ = job_secrets(keys, labels)
    w = position_bits(m)
    destinations = secrets_["destinations"]
    masked = rng.integers(0, 2 ** 31, m)
    carriers = {"one column": narrow(destinations[:, None], (w,)),
                "three columns": narrow(np.stack([masked, destinations, masked], axis=1), (w,) * 3),
                "position then digit": narrow(np.stack([masked, labels], axis=1), (w, 2)),
                "position then words": narrow(np.stack([masked, keys], axis=1), (w, 64)),
                "digits four to a byte": narrow(labels[:, None], (2,))}
    for name, message in carriers.items():
        assert leaks([message], secrets_, m, 1e-3) and leaks([as_recorded(message)], secrets_, m, 1e-3), name
    assert not leaks([narrow(np.stack([masked, rng.integers(0, 4, m)], axis=1), (w, 2))], secrets_, m, 1e-3)
    monkeypatch.setattr(view_leaks, "position_bits", lambda pairs: -(-w // 8) * 8)  # whole bytes, as before
    for name, message in carriers.items():
        if name != "digits four to a byte":  # (2-bit digits: no position in their layout)
            assert not leaks([message], secrets_, m, 1e-3), name
