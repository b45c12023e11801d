"""Clients on their own machines: ``mpc-auc client submit`` processes against three ``mpc-auc party`` processes.

``mpc-auc evaluation open`` declares the evaluation (roster, protocol,
deadline); each client submits over its own TLS links.  The AUC equals
sklearn's and each client gets exactly its own mid-ranks; a missing client
refuses the job at the deadline naming it (or is left out when the
evaluation allows it); a replayed submission, a second submission, a
substituted party key and a client off the roster are each refused with
exit 2 and a message naming the cause, and nothing is written.
"""
import csv
import subprocess
import time

import numpy as np
import pytest
from scipy.stats import rankdata
from sklearn.metrics import average_precision_score, roc_auc_score

from mpc_auc.protocols.inputs import submission, submitter
from mpc_auc.protocols.runtime.deployment import Deployment
from mpc_auc.protocols.runtime.identity import Identity, PublicIdentity
from mpc_auc.protocols.runtime.ledger import Ledger, default_directory
from mpc_auc.protocols.mpc.accounting import key_account
from mpc_auc.protocols.inputs.submission import Roster
from mpc_auc.protocols.inputs.submitter import JobRefused
from mpc_auc.synthetic import synthetic_evalset
from roles_on_hosts import CLI, cli_in_process, client_keys

CLIENTS = ("north", "south", "east")


@pytest.fixture(scope="module")
def shared_rows(deployed):
    """Each client's own CSV (a tie-heavy set of 300 rows in all: two decimals) beside the deployment."""
    directory = deployed[0]
    evalset = synthetic_evalset(m=300, clients=3, seed=11, decimals=2)
    rows = {}
    for name, (_, scores, labels) in zip(CLIENTS, evalset.clients()):
        with open(directory / f"{name}.csv", "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["client", "score", "label"])
            writer.writerows([name, repr(float(s)), int(y)] for s, y in zip(scores, labels))
        rows[name] = (np.asarray(scores), np.asarray(labels))
    return directory, rows


@pytest.fixture
def clients(shared_rows):
    """The clients' rows and, for this test alone, fresh keys and roster files (NAME.key, NAME.roster.yaml)
    beside the deployment: each test's clients are new owners in the parties' ledgers, so that one test's exact
    releases neither count towards nor pin another's."""
    directory, rows = shared_rows
    client_keys(directory, CLIENTS)
    return directory, rows


def _open(directory, evaluation, *extra, names=CLIENTS):
    return subprocess.Popen(CLI + ["evaluation", "open", "--deployment", str(directory / "deployment.yaml"),
                                   "--id", evaluation, "--roster", *[str(directory / f"{n}.roster.yaml")
                                                                     for n in names],
                                   "--out", str(directory / f"{evaluation}.json"), "--timeout", "5", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _submit(directory, evaluation, name, *extra, deployment="deployment.yaml"):
    return subprocess.Popen(CLI + ["client", "submit", "--deployment", str(directory / deployment),
                                   "--evaluation", evaluation, "--client", name, "--key", str(directory / f"{name}.key"),
                                   "--input", str(directory / f"{name}.csv"), "--timeout", "5", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(*procs, timeout=120):
    return [(p.wait(timeout), *p.communicate()) for p in procs]


def _read_ranks(path):
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")][1:]
    return np.array([float(line.split(",")[1]) for line in lines])


def test_clients_submit_from_their_own_processes_and_get_their_own_ranks(clients):
    directory, rows = clients
    opened = _open(directory, "full", "--ranks", "--deadline", "60")
    subs = [_submit(directory, "full", n, "--ranks-out", str(directory / f"{n}.ranks.csv")) for n in CLIENTS]
    (code, out, err), *answers = _finish(opened, *subs)
    assert code == 0, err
    assert all(c == 0 and "computed" in o for c, o, _ in answers), answers
    scores = np.concatenate([rows[n][0] for n in CLIENTS])
    labels = np.concatenate([rows[n][1] for n in CLIENTS])
    result = __import__("json").loads((directory / "full.json").read_text())
    assert abs(result["auc"] - roc_auc_score(labels, scores)) < 1e-12
    assert result["input_summary"]["clients"] == 3 and result["input_summary"]["missing"] == []
    roster = Roster.load([str(directory / f"{n}.roster.yaml") for n in CLIENTS])
    accounts = sorted(key_account(m) for m in roster.members)
    for role in ("P0", "P1"):  # the exact release is on each party's ledger, in each client's account, pinned
        for member in roster.members:
            (release,) = Ledger(default_directory(), role).state(key_account(member))["releases"]
            assert release["protocol"] == "mpc-exact" and release["epsilon"] == 0
            assert release["exact"] == {"clients": accounts, "points": None, "max_fpr": None, "decimals": None,
                                        "weight_bits": None}
    mid = rankdata(scores)  # global 1-based mid-ranks, in roster order
    start = 0
    for name in CLIENTS:
        size = len(rows[name][0])
        assert np.array_equal(_read_ranks(directory / f"{name}.ranks.csv"), mid[start:start + size]), name
        start += size


def test_a_missing_client_refuses_the_job_at_the_deadline_naming_it(clients):
    directory, _ = clients
    opened = _open(directory, "partial", "--deadline", "6")
    subs = [_submit(directory, "partial", n) for n in CLIENTS[:2]]
    (code, _, err), *answers = _finish(opened, *subs)
    assert code == 2 and "no submission from 'east'" in err and "nothing was computed" in err, err
    assert all(c == 2 and "no submission from 'east'" in e for c, _, e in answers), answers
    assert not (directory / "partial.json").exists()


def test_with_allow_missing_the_present_clients_are_computed(clients):
    directory, rows = clients
    opened = _open(directory, "allowed", "--deadline", "6", "--allow-missing")
    subs = [_submit(directory, "allowed", n) for n in CLIENTS[:2]]
    (code, _, err), *answers = _finish(opened, *subs)
    assert code == 0 and all(c == 0 for c, _, _ in answers), (err, answers)
    result = __import__("json").loads((directory / "allowed.json").read_text())
    scores = np.concatenate([rows[n][0] for n in CLIENTS[:2]])
    labels = np.concatenate([rows[n][1] for n in CLIENTS[:2]])
    assert abs(result["auc"] - roc_auc_score(labels, scores)) < 1e-12
    assert result["input_summary"]["missing"] == ["east"] and result["input_summary"]["M"] == len(scores)


def test_a_second_submission_from_the_same_client_is_refused(clients):
    directory, rows = clients
    opened = _open(directory, "twice", "--deadline", "60", names=CLIENTS[:2])
    first = _submit(directory, "twice", "north")
    assert "the job releases the exact AUC" in first.stderr.readline()  # the ticket's terms, ...
    shown = [first.stderr.readline() for _ in range(3)]  # ... each party's standing, then the admission
    assert "P0: your key has spent epsilon 0 (no budget), 0 exact release(s)" in shown[0], shown
    assert "P1: your key has spent epsilon 0" in shown[1] and "both parties admitted" in shown[2], shown
    (code, _, err), = _finish(_submit(directory, "twice", "north", "--max-exact", "5"))  # past its own ledger
    assert code == 2 and "already submitted" in err, err
    (code, _, err), (first_code, _, _), (south, _, _) = _finish(opened, first, _submit(directory, "twice", "south"))
    assert code == 0 and first_code == 0 and south == 0, err


def test_a_substituted_party_key_is_refused_by_that_party_and_a_client_off_the_roster_cannot_even_connect(clients):
    """One evaluation (roster: north) and two refused clients at once: north was handed a deployment file whose P1
    sealing key is the attacker's, and mallory, whose key is on no roster, tries to connect."""
    directory, _ = clients
    deployment = Deployment.load(str(directory / "deployment.yaml"))
    forged = dict(deployment.publics)
    forged["P1"] = PublicIdentity("P1", forged["P1"].certificate, submission.NONCE_BYTES * b"\x07")
    Deployment(forged, deployment.addresses).save(str(directory / "forged.yaml"))
    client_keys(directory, ["mallory"])  # on a roster of its own, not the evaluation's
    (directory / "mallory.csv").write_text("client,score,label\nmallory,0.5,1\n")
    opened = _open(directory, "substituted", "--deadline", "8", names=CLIENTS[:1])
    victim = _submit(directory, "substituted", "north", deployment="forged.yaml")
    intruder = _submit(directory, "substituted", "mallory", "--connect-timeout", "4")
    (code, _, err), (victim_code, _, victim_err), (intruder_code, _, intruder_err) = _finish(opened, victim, intruder)
    assert victim_code == 2 and "P1 refused" in victim_err and "substituted party key" in victim_err, victim_err
    assert intruder_code == 2 and "did not let this client in" in intruder_err, intruder_err
    assert code == 2 and "no client submitted to both parties" in err and "substituted party key" in err, err
    assert not (directory / "substituted.json").exists()


def test_a_submission_replayed_into_a_later_job_is_refused(clients, monkeypatch):
    """The client's own key replays its submission of an earlier job of the same evaluation and roster."""
    directory, rows = clients
    deployment = Deployment.load(str(directory / "deployment.yaml"))
    identity = Identity.load(str(directory / "north.key"))
    recorded, honest = [], submission.make_submission
    monkeypatch.setattr(submitter, "make_submission", lambda *a, **k: recorded.append(honest(*a, **k)) or recorded[-1])
    opened = _open(directory, "again", "--deadline", "60", names=CLIENTS[:1])
    policy = submitter.Policy(accepts=submission.Accepts(max_exact=5))  # its own ledger lets it try again
    assert submitter.submit_rows(identity, deployment, "again", *rows["north"], timeout_s=5, policy=policy).status == \
        "computed"
    assert _finish(opened)[0][0] == 0
    monkeypatch.setattr(submitter, "make_submission", lambda *a, **k: recorded[0])  # the next job: replay
    opened = _open(directory, "again", "--deadline", "8", names=CLIENTS[:1])
    with pytest.raises(JobRefused, match="made for another job"):
        submitter.submit_rows(identity, deployment, "again", *rows["north"], timeout_s=5, policy=policy)
    (code, _, err), = _finish(opened)
    assert code == 2 and "no client submitted to both parties" in err and "another job" in err, err


def test_the_parties_ledgers_refuse_a_release_past_the_rosters_budget(clients):
    """Two mpc-central evaluations on the same roster at epsilon 1 under a budget of 1.5: the second is refused."""
    directory, _ = clients
    names = CLIENTS[1:]
    for attempt, expected in (("dp-1", 0), ("dp-2", 2)):
        opened = _open(directory, attempt, "--protocol", "mpc-central", "--epsilon", "1", "--budget", "1.5",
                       "--deadline", "60", names=names)
        (code, _, err), *answers = _finish(opened, *[_submit(directory, attempt, n) for n in names])
        assert code == expected and all(c == expected for c, _, _ in answers), (err, answers)
    assert "privacy budget exceeded" in err and "spent epsilon 1" in err and "requests epsilon 1" in err, err
    assert "nothing was computed" in err and not (directory / "dp-2.json").exists()
    assert all("privacy budget exceeded" in e for _, _, e in answers)
    first = __import__("json").loads((directory / "dp-1.json").read_text())
    assert first["privacy"]["ledger"]["remaining_epsilon"] == pytest.approx(0.5, abs=1e-6)
    assert "P" not in first["input_summary"] and "N" not in first["input_summary"]


def test_bad_client_and_evaluation_input_exits_2_naming_it(clients, tmp_path, capsys):
    """Each refused before any link is made: run by the command line's own entry point in this process (the
    exit status ``python -m mpc_auc`` exits with), not a process each."""
    directory, _ = clients
    (tmp_path / "mixed.csv").write_text("client,score,label\nnorth,0.5,1\nsouth,0.4,0\n")
    (tmp_path / "bad.roster.yaml").write_text("format: mpc-auc-roster/1\nclients: {x: {certificate: nope}}\n")
    deployment = str(directory / "deployment.yaml")
    cases = [
        (["client", "keygen", "--name", "bad\tname", "--key", str(tmp_path / "k")], "control character"),
        (["client", "keygen", "--name", "north", "--key", str(directory / "north.key")], "exists already"),
        (["client", "submit", "--deployment", deployment, "--evaluation", "e", "--client", "north", "--key",
          str(directory / "north.key"), "--input", str(tmp_path / "mixed.csv"), "--client-col", "client"],
         "not among the declared clients"),
        (["client", "submit", "--deployment", deployment, "--evaluation", "e", "--client", "south", "--key",
          str(directory / "north.key"), "--input", str(tmp_path / "mixed.csv")], "not of client:south"),
        (["evaluation", "open", "--deployment", deployment, "--id", "e", "--roster", str(tmp_path / "bad.roster.yaml"),
          "--out", str(tmp_path / "r.json")], "bad.roster.yaml"),
        (["evaluation", "open", "--deployment", deployment, "--id", "e", "--roster",
          str(directory / "north.roster.yaml"), str(directory / "north.roster.yaml"), "--out",
          str(tmp_path / "r.json")], "appears twice"),
        (["evaluation", "open", "--deployment", deployment, "--id", "e", "--roster",
          str(directory / "north.roster.yaml"), "--protocol", "mpc-central", "--out", str(tmp_path / "r.json")],
         "it needs epsilon"),
    ]
    for argv, message in cases:
        code, err = cli_in_process(argv, capsys)
        assert code == 2 and message in err, (argv, err)
    assert not (tmp_path / "r.json").exists() and not (tmp_path / "k").exists()


@pytest.mark.parametrize("case", ["label", "key"])
def test_a_client_outside_the_domain_is_named_and_no_auc_is_written(clients, case):
    """A rostered client that skips its own checks (tests/malicious_client.py: label 400, or a score key past
    the declared range) through the real evaluation open / client submit flow: the parties' in-MPC check
    names it, exit 2, no AUC written; the honest clients are told the job was refused."""
    directory, _ = clients
    evaluation = f"domain-{case}"
    opened = _open(directory, evaluation, "--deadline", "60")
    honest = [_submit(directory, evaluation, n) for n in CLIENTS[:2]]
    cheat = subprocess.Popen([CLI[0], str(__import__("pathlib").Path(__file__).parents[2] / "malicious_client.py"),
                              str(directory / "deployment.yaml"), evaluation, str(directory / "east.key"), case],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    (code, _, err), *answers = _finish(opened, *honest, cheat)
    assert code == 2, err
    assert "'east'" in err and "outside the protocol's domain" in err
    assert not (directory / f"{evaluation}.json").exists()
    assert all(c == 2 and "'east'" in e for c, _, e in answers), answers
    for name in CLIENTS:  # every row is checked before a direct release is charged: nothing was charged
        key = key_account(Identity.load(str(directory / f"{name}.key")).public)
        for role in ("P0", "P1"):
            assert Ledger(default_directory(), role).state(key)["releases"] == []


def test_exclude_invalid_leaves_a_malicious_client_out_and_releases_over_the_other_three(clients):
    """Four rostered clients, one of them malicious (label 400), evaluation opened with --exclude-invalid: the
    malicious client is named and left out, the AUC equals sklearn's over the other three, every ticket stated
    the rule, the result names who was left out, and only the clients included are charged."""
    import json

    directory, rows = clients
    names = CLIENTS + ("west",)
    client_keys(directory, ["west"])
    _, scores, labels = synthetic_evalset(m=100, clients=1, seed=12, decimals=2).clients()[0]
    with open(directory / "west.csv", "w", newline="") as f:
        csv.writer(f).writerows([["client", "score", "label"]] + [["west", repr(float(s)), int(y)]
                                                                    for s, y in zip(scores, labels)])
    rows = {**rows, "west": (np.asarray(scores), np.asarray(labels))}
    honest_names = ("north", "south", "west")
    opened = _open(directory, "exclude", "--deadline", "60", "--exclude-invalid", names=names)
    honest = [_submit(directory, "exclude", n) for n in honest_names]
    cheat = subprocess.Popen([CLI[0], str(__import__("pathlib").Path(__file__).parents[2] / "malicious_client.py"),
                              str(directory / "deployment.yaml"), "exclude", str(directory / "east.key"), "label"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    (code, _, err), *answers = _finish(opened, *honest, cheat)
    assert code == 0, err
    record = json.loads((directory / "exclude.json").read_text())
    expected = roc_auc_score(np.concatenate([rows[n][1] for n in honest_names]),
                             np.concatenate([rows[n][0] for n in honest_names]))
    assert abs(record["auc"] - expected) < 1e-12
    assert record["input_summary"]["excluded"] == ["east"] and record["input_summary"]["clients"] == 3
    for c, _, e in answers[:3]:  # each honest client saw the rule in its ticket's terms before it sent anything
        assert c == 0 and "a client whose rows fail the domain check is left out" in e, e
    c, _, e = answers[3]
    assert c == 2 and "'east'" in e and "leaves such clients out" in e, e
    for name in names:  # charged: the three included clients' exact release, nothing to the one left out
        key = key_account(Identity.load(str(directory / f"{name}.key")).public)
        for role in ("P0", "P1"):
            releases = Ledger(default_directory(), role).state(key)["releases"]
            assert len(releases) == (name != "east") and all(r["exact"] and not r.get("void") for r in releases)


def test_a_client_sees_the_release_terms_and_refuses_a_looser_release(clients):
    """The ticket states the release; ``--max-epsilon 1`` refuses an exact release (no DP) before sending
    anything, and a client without it sees the terms on stderr."""
    directory, _ = clients
    opened = _open(directory, "terms", "--deadline", "90", "--auc-decimals", "3")  # ends when north declines
    shown = _submit(directory, "terms", "south")
    terms = shown.stderr.readline()  # before north declines, which ends the job at once
    strict = _submit(directory, "terms", "north", "--max-epsilon", "1")
    (code, _, err), (strict_code, _, strict_err), _ = _finish(opened, strict, shown)
    assert code == 2 and "'north' declined the job" in err, err
    assert strict_code == 2 and "looser than --max-epsilon 1" in strict_err, strict_err
    assert "the exact AUC rounded to 3 decimals (no differential privacy)" in terms, terms


def test_clients_submitting_directly_get_the_metrics_and_the_dp_curve_they_were_shown(clients):
    """An evaluation opened with metrics (exact) and one with the DP curve (mpc-central): each client's ticket
    states what is released, and the organiser's record holds it (scikit-learn's values for the exact one)."""
    directory, rows = clients
    scores = np.concatenate([rows[n][0] for n in CLIENTS])
    labels = np.concatenate([rows[n][1] for n in CLIENTS])
    opened = _open(directory, "report", "--deadline", "60", "--metrics", "all", "--points", "20", "--max-fpr", "0.5")
    subs = [_submit(directory, "report", n) for n in CLIENTS]
    (code, _, err), *answers = _finish(opened, *subs)
    assert code == 0, err
    assert "also ci, ap, roc, pr, ks, pauc (20 cuts for curves); the partial AUC to FPR 0.5" in answers[0][2]
    metrics = __import__("json").loads((directory / "report.json").read_text())["metrics"]
    assert abs(metrics["ap"] - average_precision_score(labels, scores)) < 1e-9
    assert abs(metrics["pauc"]["mcclish"] - roc_auc_score(labels, scores, max_fpr=0.5)) < 1e-9
    assert len(metrics["roc"]["fpr"]) == 20 and metrics["ci"]["std"] > 0
    opened = _open(directory, "thin", "--deadline", "60", "--metrics", "roc", "--points", "40")  # 7.5 rows a slice
    subs = [_submit(directory, "thin", n, "--max-exact", "2") for n in CLIENTS]  # each accepts a second exact one
    (code, _, err), *answers = _finish(opened, *subs)
    assert code == 2 and "slices of fewer than 10 rows: a direct evaluation takes at most 30 cuts here" in err, err
    assert not (directory / "thin.json").exists()
    opened = _open(directory, "dp-curve", "--deadline", "60", "--protocol", "mpc-central", "--epsilon", "2",
                   "--metrics", "roc,pr", "--points", "30")
    subs = [_submit(directory, "dp-curve", n) for n in CLIENTS]
    (code, _, err), *answers = _finish(opened, *subs)
    assert code == 0, err
    assert "one DP release at epsilon 2 (label neighbours" in answers[0][2]
    assert "the ROC curve's counts at 30 cuts" in answers[0][2]
    record = __import__("json").loads((directory / "dp-curve.json").read_text())
    assert len(record["metrics"]["roc"]["tpr"]) == 30 and record["privacy"]["epsilon"] == 2.0
    assert record["privacy"]["ledger"]["charged"]["epsilon"] == pytest.approx(2.0)


def _admitted(proc) -> None:
    """Read a client's progress until both parties have admitted its rows (fails if it ends first)."""
    line = proc.stderr.readline()
    while "both parties admitted" not in line:
        assert line, "the client ended before both parties admitted its rows"
        line = proc.stderr.readline()


def test_a_score_outside_the_declared_range_is_named_to_its_client_and_ends_the_job_for_the_others(clients):
    """A client whose file holds a score outside the evaluation's range is told its file line, the range and that
    the organiser sets it (not the organiser's option); the parties are told only that its rows do not fit, and
    end the job at once: the organiser and the clients already admitted learn it was refused, naming the client
    and nothing of its rows, long before the deadline (600 s)."""
    directory, _ = clients
    bad = directory / "east-out-of-range.csv"
    bad.write_text("score,label\n0.25,0\n0.5,1\n0.75,0\n1.5,1\n0.125,0\n")
    started = time.monotonic()
    opened = _open(directory, "range", "--deadline", "600")
    honest = [_submit(directory, "range", n) for n in CLIENTS[:2]]
    for proc in honest:
        _admitted(proc)
    east = subprocess.Popen(CLI + ["client", "submit", "--deployment", str(directory / "deployment.yaml"),
                                   "--evaluation", "range", "--client", "east", "--key", str(directory / "east.key"),
                                   "--input", str(bad), "--timeout", "5"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    (code, _, err), *answers, (east_code, _, east_err) = _finish(opened, *honest, east)
    assert time.monotonic() - started < 300
    assert east_code == 2 and east_err.strip().splitlines()[-1] == (
        f"mpc-auc: error: {bad} line 5: score 1.5 is outside the range [0.0, 1.0] that evaluation 'range' declares; "
        "its organiser sets the range (ask them to declare one that holds these scores, or map the scores into it)")
    told = f"client 'east' declined the job: {submitter.ROWS_DECLINED}"
    assert code == 2 and told in err and "nothing was computed" in err, err
    assert all(c == 2 and told in e for c, _, e in answers), answers
    for text in [err] + [e for _, _, e in answers]:
        assert "1.5" not in text and "line 5" not in text and "--score-range" not in text
    assert not (directory / "range.json").exists()

