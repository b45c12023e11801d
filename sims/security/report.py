"""The report of ``mpc-auc security`` (sims.security.suite): the check record every step returns, the verdict
over the checks, and report.md.

Every check: name, kind (attack | audit | view | collusion | control),
protocol, claimed_epsilon, claimed_delta, measured, bound, pass_if (the direction: one of PASS_IF), passed,
chance (whether it can fail by chance while its claim holds: a statistical test), details.  Controls are
deliberately weakened variants; each must *fail* its check
(the check catches the weakness), every other check must pass.
"""
import math

from .false_alarms import CHECK_ALPHA, FAMILY_ALPHA, MAX_CHECKS

PASS_IF = {  # a check's direction -> when it passes, as report.md's "pass if" column says it
    "<=": "measured <= bound",
    ">": "measured > bound",
    "==": "measured = bound",
    "|<=|": "|measured| <= bound",
    "recorded": "always (a documented limit, recorded)",
}


def check(name, kind, protocol, claimed_epsilon, claimed_delta, measured, bound, passed, details=None,
          pass_if="<=", chance=True) -> dict:
    """One check's record (the fields of this module's docstring), as every step of the suite returns it;
    ``pass_if``: the direction in which ``measured`` against ``bound`` passes (a key of PASS_IF); ``chance``:
    False for a check that cannot fail while its claim holds (an exact count, a deterministic attack, a recorded
    limit), which takes no share of the false-alarm budget (sims.security.false_alarms)."""
    if pass_if not in PASS_IF:
        raise ValueError(f"pass_if must be one of {', '.join(PASS_IF)}, not {pass_if!r}")
    return {"name": name, "kind": kind, "protocol": protocol, "claimed_epsilon": claimed_epsilon,
            "claimed_delta": claimed_delta, "measured": measured, "bound": bound, "pass_if": pass_if,
            "passed": bool(passed), "chance": bool(chance) and pass_if != "recorded", "details": details or {}}


def holds(record: dict) -> bool:
    """Whether a check's measured value against its bound passes in its stated direction (what ``passed`` says)."""
    measured, bound, direction = record["measured"], record["bound"], record["pass_if"]
    return {"<=": lambda: measured <= bound, ">": lambda: measured > bound,
            "==": lambda: math.isclose(measured, bound, rel_tol=1e-9, abs_tol=1e-12),
            "|<=|": lambda: abs(measured) <= bound, "recorded": lambda: True}[direction]()


def summary(checks) -> dict:
    """The verdict: every non-control check passed and every control was caught."""
    regular = [c for c in checks if c["kind"] != "control"]
    controls = [c for c in checks if c["kind"] == "control"]
    failed = [c["name"] for c in regular if not c["passed"]]
    missed = [c["name"] for c in controls if c["passed"]]
    statistical = sum(c.get("chance", True) for c in regular)
    if statistical > MAX_CHECKS:  # the per-check alpha would no longer keep the stated family-wise rate
        raise RuntimeError(f"{statistical} statistical checks: more than the {MAX_CHECKS} that the false-alarm "
                           "budget (sims.security.false_alarms) is split over")
    return {"checks": len(regular), "statistical_checks": statistical, "passed": len(regular) - len(failed),
            "failed": failed,
            "controls": len(controls), "controls_caught": len(controls) - len(missed), "controls_missed": missed,
            "false_alarm_rate": {"family": FAMILY_ALPHA, "per_check": CHECK_ALPHA, "split_over": MAX_CHECKS,
                                 "note": "P(a run fails any regular check while every claim holds) <= family "
                                         "(Bonferroni; sims/security/false_alarms.py)"},
            "verdict": "ok" if not failed and not missed else "problems found"}


def markdown(report: dict) -> str:
    s = report["summary"]
    lines = [f"# mpc-auc security evaluation ({report['config']['suite']} suite)", "",
             f"Version {report['version']}, seed {report['seed']}, {report['machine']['platform']}, "
             f"{report['seconds']:.0f} s.", "",
             f"**Verdict: {s['verdict']}.** {s['passed']} of {s['checks']} checks passed; "
             f"{s['controls_caught']} of {s['controls']} deliberately weakened controls were caught "
             "(a control must fail its check). Family-wise false-alarm rate at most "
             f"{s['false_alarm_rate']['family']:g} per run ({s['false_alarm_rate']['per_check']:g} per check; "
             f"{s['statistical_checks']} of the checks are statistical, the others exact).", ""]
    for name in s["failed"]:
        lines.append(f"* FAILED: {name}")
    for name in s["controls_missed"]:
        lines.append(f"* CONTROL NOT CAUGHT: {name}")
    lines += ["A check passes when its measured value stands to its bound as its \"pass if\" column says; a control "
              "is caught when its check fails.", "",
              "| check | kind | claimed eps | measured | bound | pass if | result |", "|---|---|---|---|---|---|---|"]
    for c in report["checks"]:
        verdict = ("caught" if not c["passed"] else "NOT caught") if c["kind"] == "control" else (
            "pass" if c["passed"] else "FAIL")
        claimed = "" if c["claimed_epsilon"] is None else f"{c['claimed_epsilon']:g}"
        lines.append(f"| {c['name']} | {c['kind']} | {claimed} | {_fmt(c['measured'])} | {_fmt(c['bound'])} | "
                     f"{PASS_IF[c['pass_if']]} | {verdict} |")
    lines += ["", "Tables: checks.csv, label_inference.csv, top_k.csv; plots: label_inference.png/pdf, "
                  "top_k.png/pdf. Method: docs/security-evaluation.md.", ""]
    return "\n".join(lines)


def _fmt(value) -> str:
    return "" if value is None else f"{value:.4g}"
