"""report.md's check table states each check's pass direction (sims.security.report.PASS_IF)."""
import pytest

from mpc_auc.sims.security.false_alarms import MAX_CHECKS
from mpc_auc.sims.security.report import PASS_IF, check, holds, markdown, summary


def _report(checks):
    return {"summary": summary(checks), "config": {"suite": "quick"}, "version": "0", "seed": 1,
            "machine": {"platform": "test"}, "seconds": 1.0, "checks": checks}


def test_the_table_has_a_pass_if_column_with_each_checks_direction():
    checks = [check("audit", "audit", "mpc-central", 1.0, 0.0, 0.9, 1.05, True),
              check("view", "view", "radix", None, None, 0.3, 1e-5, True, pass_if=">"),
              check("order", "collusion", "mpc-exact", None, None, -0.01, 0.05, True, pass_if="|<=|"),
              check("limit", "collusion", "mpc-central", None, None, 1.0, 1.0, True, pass_if="=="),
              check("enumeration", "attack", "mpc-exact", None, None, 1.0, 1.0, True, pass_if="recorded"),
              check("weakened", "control", "weakened", None, None, 3.78, 1.05, False)]
    lines = markdown(_report(checks)).splitlines()
    header = lines.index("| check | kind | claimed eps | measured | bound | pass if | result |")
    rows = {line.split(" | ")[0][2:]: line.split(" | ") for line in lines[header + 2:header + 2 + len(checks)]}
    assert rows["audit"][5] == "measured <= bound" and rows["audit"][6] == "pass |"
    assert rows["view"][5] == "measured > bound"
    assert rows["order"][5] == "|measured| <= bound"
    assert rows["limit"][5] == "measured = bound"
    assert rows["enumeration"][5].startswith("always")
    assert rows["weakened"][5] == "measured <= bound" and rows["weakened"][6] == "caught |"
    assert all(c["passed"] == holds(c) for c in checks)
    assert set(PASS_IF) == {c["pass_if"] for c in checks}


def test_a_direction_that_disagrees_with_passed_is_seen_and_an_unknown_one_refused():
    assert not holds(check("x", "view", "radix", None, None, 0.3, 1e-5, True))  # p-value stated as "<=": wrong
    with pytest.raises(ValueError, match="pass_if must be one of"):
        check("x", "view", "radix", None, None, 0.3, 1e-5, True, pass_if=">=")


def test_the_false_alarm_budget_counts_the_statistical_checks_only():
    """Exact checks (a deterministic attack, an exact count, a recorded limit) cannot fail by chance and take no
    share of the family-wise rate; more statistical checks than MAX_CHECKS are refused."""
    exact = [check(f"stops {i}", "attack", "x", None, None, 1.0, 1.0, True, pass_if="==", chance=False)
             for i in range(MAX_CHECKS + 20)]
    recorded = check("enumeration", "attack", "x", None, None, 1.0, 1.0, True, pass_if="recorded")
    views = [check(f"view {i}", "view", "x", None, None, 0.3, 1e-5, True, pass_if=">") for i in range(MAX_CHECKS)]
    done = summary(exact + [recorded] + views)
    assert done["statistical_checks"] == MAX_CHECKS and done["checks"] == 2 * MAX_CHECKS + 21
    assert "100 of the checks are statistical" in markdown(_report(exact + [recorded] + views))
    with pytest.raises(RuntimeError, match="101 statistical checks"):
        summary(exact + views + [check("one more", "audit", "x", 1.0, 0.0, 0.9, 1.05, True)])
