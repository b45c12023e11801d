"""Both sides of a deployed evaluation from Python (mpc_auc.Evaluation, mpc_auc.submit) against three
``mpc-auc party`` processes on 127.0.0.2-4: the CLI's result, ranks keyed by the clients' ids, the result shared
with every client, and a client that refuses a looser release than its max_epsilon."""
import json
import subprocess
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from scipy.stats import rankdata
from sklearn.metrics import roc_auc_score

import mpc_auc
from mpc_auc.synthetic import synthetic_evalset
from roles_on_hosts import CLI, client_keys

NAMES = ("north", "south", "east")


@pytest.fixture
def study(deployed):
    """Each client's key and roster, fresh for each test (new owners in the parties' ledgers), and its rows (a
    tie-heavy set of 600) with ids."""
    directory = deployed[0]
    client_keys(directory, NAMES)
    split = synthetic_evalset(m=600, clients=3, seed=27, decimals=2).clients()
    return directory, {name: (np.asarray(s), np.asarray(y), np.array([f"{name}-{i:03d}" for i in range(len(y))]))
                       for name, (_, s, y) in zip(NAMES, split)}


def _submit_all(directory, evaluation, rows, **options):
    with ThreadPoolExecutor(len(rows)) as pool:
        futures = {name: pool.submit(mpc_auc.submit, directory / "deployment.yaml", evaluation=evaluation,
                                     client=name, key=directory / f"{name}.key", y_true=y, y_score=s, ids=ids,
                                     **options)
                   for name, (s, y, ids) in rows.items()}
        return {name: f.result() for name, f in futures.items()}


def test_the_api_gives_the_clis_result_ranks_by_id_and_the_shared_result(study, tmp_path):
    directory, rows = study
    rosters = [directory / f"{n}.roster.yaml" for n in NAMES]
    opened = mpc_auc.Evaluation.open(directory / "deployment.yaml", id="api-study", roster=rosters,
                                     metrics=("auc", "ci", "ap"), ranks=True,
                                     intake=mpc_auc.Intake(deadline=60, share_result=True))
    receipts = _submit_all(directory, "api-study", rows)
    result = opened.result(timeout=120)
    scores = np.concatenate([rows[n][0] for n in NAMES])
    labels = np.concatenate([rows[n][1] for n in NAMES])
    assert abs(result["auc"] - roc_auc_score(labels, scores)) < 1e-12 and result["ci"]["std"] > 0
    assert result.m == 600 and result.clients == 3 and result.missing == () and result.epsilon is None
    mid = dict(zip(np.concatenate([rows[n][2] for n in NAMES]), rankdata(scores)))
    for name, receipt in receipts.items():
        assert receipt.status == "computed" and "result shared with every client" in receipt.terms
        assert receipt.result.value == result.value  # the parties' copy: what the organiser got
        assert receipt.ranks.index.name == "id" and receipt.ranks.to_dict() == {i: mid[i] for i in rows[name][2]}
    # the same evaluation through the command line: the same AUC
    for name, (s, y, ids) in rows.items():
        (tmp_path / f"{name}.csv").write_text("record,score,label\n" + "".join(
            f"{i},{v!r},{int(t)}\n" for i, v, t in zip(ids, s.tolist(), y)))
    out, deployment = tmp_path / "cli.json", str(directory / "deployment.yaml")
    organiser = subprocess.Popen(CLI + ["--quiet", "evaluation", "open", "--deployment", deployment, "--id",
                                        "cli-study", "--roster", *map(str, rosters), "--metrics", "auc,ci,ap",
                                        "--deadline", "60", "--share-result", "--out", str(out)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    clients = [subprocess.Popen(CLI + ["client", "submit", "--deployment", deployment,
                                       "--evaluation", "cli-study", "--client", n, "--key", str(directory / f"{n}.key"),
                                       "--input", str(tmp_path / f"{n}.csv"), "--max-exact", "2"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n in NAMES]
    answers = [p.communicate(timeout=120) for p in [organiser] + clients]
    assert organiser.returncode == 0, answers[0][1]
    record = json.loads(out.read_text())
    assert record["auc"] == result["auc"] and record["metrics"]["ap"] == result["ap"] and record["result_shared"]
    assert all(f"released to every client: AUC = {result['auc']:.15f}" in out_ for out_, _ in answers[1:])


def test_an_evaluation_under_security_malicious_serves_clients_that_require_it(study):
    """Evaluation.open under Context(security="malicious"): the tickets state it, clients that require it submit
    their authenticated bundles over their own links, the released AUC equals scikit-learn's with the security
    stated and each client's ranks are scipy's; a client that requires it refuses a semi-honest evaluation before
    sending anything."""
    directory, rows = study
    rosters = [directory / f"{n}.roster.yaml" for n in NAMES]
    context = mpc_auc.Context(deployment=str(directory / "deployment.yaml"), security="malicious")
    opened = mpc_auc.Evaluation.open(context, id="api-malicious", roster=rosters, ranks=True,
                                     intake=mpc_auc.Intake(deadline=60))
    receipts = _submit_all(directory, "api-malicious", rows, terms=mpc_auc.ClientTerms(require_security="malicious"))
    result = opened.result(timeout=180)
    labels, scores = np.concatenate([rows[n][1] for n in NAMES]), np.concatenate([rows[n][0] for n in NAMES])
    assert abs(result["auc"] - roc_auc_score(labels, scores)) < 1e-12
    mid = dict(zip(np.concatenate([rows[n][2] for n in NAMES]), rankdata(scores)))
    for name, receipt in receipts.items():  # each client's ranks, checked against its own MAC key
        assert receipt.ranks.to_dict() == {i: mid[i] for i in rows[name][2]}
    assert result.security["positives"] == labels.sum() and result.security["statistical_bits"] >= 40
    assert all(r.status == "computed" and "under security with abort" in r.terms for r in receipts.values())
    plain = mpc_auc.Evaluation.open(directory / "deployment.yaml", id="api-plain", roster=rosters[:1],
                                    intake=mpc_auc.Intake(deadline=30))
    name = NAMES[0]
    with pytest.raises(mpc_auc.InputError, match="runs under security semi-honest and this client requires "
                                                 "malicious"):
        mpc_auc.submit(directory / "deployment.yaml", evaluation="api-plain", client=name,
                       key=directory / f"{name}.key", y_true=rows[name][1], y_score=rows[name][0],
                       terms=mpc_auc.ClientTerms(require_security="malicious"))
    with pytest.raises(mpc_auc.InputError):  # nobody submitted: the evaluation is refused at its deadline
        plain.result(timeout=60)


def test_a_dp_release_under_security_malicious_through_the_deployment(study):
    """mpc-central under Context(security="malicious") on the deployed parties: the clients that require the mode
    submit, the release states its security (no count of positives: it opens only the noisy values)."""
    directory, rows = study
    context = mpc_auc.Context(deployment=str(directory / "deployment.yaml"), security="malicious")
    opened = mpc_auc.Evaluation.open(context, id="api-malicious-dp", roster=[directory / f"{n}.roster.yaml"
                                                                              for n in NAMES],
                                     protocol="mpc-central", epsilon=4.0, intake=mpc_auc.Intake(deadline=60))
    receipts = _submit_all(directory, "api-malicious-dp", rows,
                           terms=mpc_auc.ClientTerms(require_security="malicious", max_epsilon=4.0))
    result = opened.result(timeout=180)
    assert 0 <= result["auc"] <= 1 and result.security["mode"] == "malicious" and "positives" not in result.security
    assert all(r.status == "computed" and "under security with abort" in r.terms for r in receipts.values())


def test_a_client_refuses_a_looser_release_than_its_max_epsilon(study):
    directory, rows = study
    opened = mpc_auc.Evaluation.open(directory / "deployment.yaml", id="api-dp", roster=[
        directory / f"{n}.roster.yaml" for n in NAMES], protocol="mpc-central", epsilon=2.0,
        intake=mpc_auc.Intake(deadline=8, allow_missing=True))
    s, y, ids = rows["north"]
    with pytest.raises(mpc_auc.InputError, match=r"looser than ClientTerms.max_epsilon 1: not submitting"):
        mpc_auc.submit(directory / "deployment.yaml", evaluation="api-dp", client="north",
                       key=directory / "north.key", y_true=y, y_score=s,
                       terms=mpc_auc.ClientTerms(max_epsilon=1.0))
    with pytest.raises(mpc_auc.InputError, match="no client submitted"):
        opened.result(timeout=60)


def test_bad_requests_are_refused_before_anything_is_sent(study):
    directory, rows = study
    with pytest.raises(mpc_auc.InputError, match="it needs epsilon"):
        mpc_auc.Evaluation.open(directory / "deployment.yaml", id="x", roster=directory / "north.roster.yaml",
                                protocol="mpc-central")
    s, y, _ = rows["north"]
    with pytest.raises(mpc_auc.InputError, match="not of client:south"):
        mpc_auc.submit(directory / "deployment.yaml", evaluation="x", client="south", key=directory / "north.key",
                       y_true=y, y_score=s)
    from mpc_auc.planner import open_evaluation, plan

    with pytest.raises(mpc_auc.InputError, match="needs a deployment"):  # the planner's rule, for every front end
        open_evaluation(plan(), "x", [str(directory / "north.roster.yaml")], 10)
    with pytest.raises(mpc_auc.InputError, match="one per row"):
        mpc_auc.submit(directory / "deployment.yaml", evaluation="x", client="north", key=directory / "north.key",
                       y_true=y, y_score=s, ids=["a"])
    twice = np.array([f"r{i}" for i in range(len(y))], dtype=object)
    twice[9] = twice[3]
    with pytest.raises(mpc_auc.InputError, match=r"duplicate id 'r3' at ids\[3\] and ids\[9\]"):
        mpc_auc.submit(directory / "deployment.yaml", evaluation="x", client="north", key=directory / "north.key",
                       y_true=y, y_score=s, ids=twice)


def test_the_docs_example_runs_in_a_deployments_directory(study):
    """docs/api.md's deployed example (its ```py block), run as a plain script where deployment.yaml, the
    coordinator's key and the clients' keys and rosters lie."""
    import re
    import sys
    from pathlib import Path

    docs = (Path(__file__).parents[2] / "docs" / "api.md").read_text()
    (code,) = re.findall(r"```py\n(.*?)```", docs, re.S)
    directory, _ = study
    (directory / "deployed_example.py").write_text(code)
    proc = subprocess.run([sys.executable, "deployed_example.py"], cwd=directory, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Report(auc=" in proc.stdout and "north-0" in proc.stdout


def test_a_clients_own_budget_refuses_its_second_submission_against_parties_with_no_budget(study, tmp_path):
    """The parties enforce no budget and the organiser asks none; the client's own ledger (its file, locked,
    durable) holds it to epsilon 1: the second release is refused before anything is sent, and the parties stop
    at once instead of waiting for it until the deadline."""
    directory, rows = study
    s, y, _ = rows["north"]
    ledger = tmp_path / "north.ledger.json"
    for evaluation in ("own-1", "own-2"):
        opened = mpc_auc.Evaluation.open(directory / "deployment.yaml", id=evaluation,
                                         roster=directory / "north.roster.yaml", protocol="mpc-central", epsilon=1.0,
                                         intake=mpc_auc.Intake(deadline=120))
        if evaluation == "own-1":
            receipt = mpc_auc.submit(directory / "deployment.yaml", evaluation=evaluation, client="north",
                                     key=directory / "north.key", y_true=y, y_score=s,
                                     terms=mpc_auc.ClientTerms(budget=1.0, ledger=ledger))
            assert receipt.status == "computed" and opened.result(timeout=120).epsilon == 1.0
            assert [st.spent_epsilon for st in receipt.standings] == [0.0, 0.0]  # each party's, before the job
            continue
        with pytest.raises(mpc_auc.InputError, match=r"this client's own budget \(1, 1e-09\) would be passed"):
            mpc_auc.submit(directory / "deployment.yaml", evaluation=evaluation, client="north",
                           key=directory / "north.key", y_true=y, y_score=s,
                           terms=mpc_auc.ClientTerms(budget=1.0, ledger=ledger))
        with pytest.raises(mpc_auc.InputError, match="'north' declined the job") as declined:
            opened.result(timeout=60)  # long before its 120 s deadline
        assert "own privacy ledger refuses" in str(declined.value) and "1e-09" not in str(declined.value)
    (release,) = json.loads(ledger.read_text())["releases"]
    assert release["epsilon"] == 1.0 and release["evaluation"] == "own-1"


def test_a_client_whose_rows_are_all_one_class_submits(study):
    """A client's test rows may all be negative (common in federated test sets): it submits; the evaluation needs
    both classes overall, which the other clients bring."""
    directory, rows = study
    rows = dict(rows, north=(rows["north"][0], np.zeros_like(rows["north"][1]), rows["north"][2]))
    opened = mpc_auc.Evaluation.open(directory / "deployment.yaml", id="one-class",
                                     roster=[directory / f"{n}.roster.yaml" for n in NAMES],
                                     intake=mpc_auc.Intake(deadline=60))
    receipts = _submit_all(directory, "one-class", rows)
    result = opened.result(timeout=120)
    assert all(r.status == "computed" for r in receipts.values())
    scores = np.concatenate([rows[n][0] for n in NAMES])
    labels = np.concatenate([rows[n][1] for n in NAMES])
    assert abs(result["auc"] - roc_auc_score(labels, scores)) < 1e-12


def test_the_evaluations_total_rows_bound_what_the_parties_hold_first_come(study):
    """Three clients of about 200 rows submitting at once, max_total_rows two more than the largest two: two get
    room, the last to ask is refused by name before its shares leave it; with allow_missing the release is over
    the two, equal to sklearn's; a client past max_rows (the ticket states both limits) is refused by its own
    check, naming it."""
    directory, rows = study
    sizes = {name: len(y) for name, (_, y, _) in rows.items()}
    total = sum(sorted(sizes.values())[1:]) + 2
    opened = mpc_auc.Evaluation.open(directory / "deployment.yaml", id="total-rows",
                                     roster=[directory / f"{n}.roster.yaml" for n in NAMES],
                                     intake=mpc_auc.Intake(deadline=60, allow_missing=True, max_rows=300,
                                                           max_total_rows=total))
    with ThreadPoolExecutor(len(NAMES)) as pool:
        futures = {name: pool.submit(mpc_auc.submit, directory / "deployment.yaml", evaluation="total-rows",
                                     client=name, key=directory / f"{name}.key", y_true=y, y_score=s,
                                     timeout=60)  # a party's silence limit well past any wait under load
                   for name, (s, y, _) in rows.items()}
        errors = {name: f.exception(timeout=120) for name, f in futures.items()}
    refused = [name for name, err in errors.items() if err is not None]
    assert len(refused) == 1, errors
    (late,) = refused
    left = total - sum(n for name, n in sizes.items() if name != late)
    assert str(errors[late]).endswith(f"refused the submission: client {late!r} would send {sizes[late]} rows when "
                                      f"{left} are left of the evaluation's {total} over all its clients (first come)")
    result = opened.result(timeout=120)
    first = [n for n in NAMES if n != late]
    assert result.missing == (late,) and result.clients == 2
    assert all(futures[n].result().status == "computed" for n in first)
    scores = np.concatenate([rows[n][0] for n in first])
    labels = np.concatenate([rows[n][1] for n in first])
    assert abs(result["auc"] - roc_auc_score(labels, scores)) < 1e-12
    small = mpc_auc.Evaluation.open(directory / "deployment.yaml", id="max-rows",
                                    roster=directory / "north.roster.yaml",
                                    intake=mpc_auc.Intake(deadline=60, max_rows=100))
    s, y, _ = rows["north"]
    with pytest.raises(mpc_auc.InputError, match=f"this client has {len(y)} rows; evaluation 'max-rows' takes at "
                                                 "most 100 per client"):
        mpc_auc.submit(directory / "deployment.yaml", evaluation="max-rows", client="north",
                       key=directory / "north.key", y_true=y, y_score=s)
    with pytest.raises(mpc_auc.InputError, match="'north' declined the job"):
        small.result(timeout=60)


def test_a_client_gets_room_once_however_many_links_it_opens(study):
    """A rostered client that dials P0 twice and states its rows on both links holds room once: the second link
    is refused, so one client cannot take the evaluation's total from the others."""
    from mpc_auc.protocols.inputs.submitter import _connect
    from mpc_auc.protocols.runtime.control import recv_message, send_message
    from mpc_auc.protocols.runtime.deployment import Deployment
    from mpc_auc.protocols.runtime.identity import Identity

    directory, _ = study
    opened = mpc_auc.Evaluation.open(directory / "deployment.yaml", id="room-once",
                                     roster=directory / "north.roster.yaml",
                                     intake=mpc_auc.Intake(deadline=10, max_rows=100, max_total_rows=1000))
    identity, deployment = Identity.load(str(directory / "north.key")), Deployment.load(directory / "deployment.yaml")
    links = [_connect(identity, deployment, "P0", "room-once", 20, 60)[0] for _ in range(2)]
    answers = []
    for link in links:
        send_message(link, "rows", 100)
        answers.append(recv_message(link, "room"))
    assert answers[0] == ("room", None)
    assert answers[1] == ("refused", "client 'north' already submitted to this job or holds room for 100 rows in "
                                     "it: a second submission is refused")
    for link in links:
        link.close(flush_s=0.2)
    with pytest.raises(mpc_auc.InputError, match="no client submitted to both parties"):
        opened.result(timeout=60)


def test_max_rows_counts_rows_n_admitted_n_plus_1_refused_by_name(study):
    """max_rows=500 counts rows, not bytes: a client of 500 rows is computed; one of 501 is refused by its own
    check against the ticket, and a client that skips it and states 501 rows is refused by the party, each
    naming the count and the limit (each party also caps the submission's message at the stated rows' size)."""
    from mpc_auc.protocols.inputs.submitter import _connect
    from mpc_auc.protocols.runtime.control import recv_message, send_message
    from mpc_auc.protocols.runtime.deployment import Deployment
    from mpc_auc.protocols.runtime.identity import Identity

    directory, _ = study
    deployment, key = directory / "deployment.yaml", directory / "north.key"
    y = np.arange(501) % 2
    s = np.linspace(0, 1, 501)
    opened = mpc_auc.Evaluation.open(deployment, id="rows-500", roster=directory / "north.roster.yaml",
                                     intake=mpc_auc.Intake(deadline=60, max_rows=500))
    receipt = mpc_auc.submit(deployment, evaluation="rows-500", client="north", key=key, y_true=y[:500],
                             y_score=s[:500], timeout=60)
    assert receipt.status == "computed" and receipt.rows == 500
    assert abs(opened.result(timeout=120)["auc"] - roc_auc_score(y[:500], s[:500])) < 1e-12
    opened = mpc_auc.Evaluation.open(deployment, id="rows-501", roster=directory / "north.roster.yaml",
                                     intake=mpc_auc.Intake(deadline=60, max_rows=500))
    with pytest.raises(mpc_auc.InputError, match="^this client has 501 rows; evaluation 'rows-501' takes at most 500 "
                                                 "per client$"):
        mpc_auc.submit(deployment, evaluation="rows-501", client="north", key=key, y_true=y, y_score=s)
    with pytest.raises(mpc_auc.InputError, match="'north' declined the job"):
        opened.result(timeout=60)
    opened = mpc_auc.Evaluation.open(deployment, id="rows-501-stated", roster=directory / "north.roster.yaml",
                                     intake=mpc_auc.Intake(deadline=10, max_rows=500))
    link, _ = _connect(Identity.load(str(key)), Deployment.load(deployment), "P0", "rows-501-stated", 20, 60)
    send_message(link, "rows", 501)
    assert recv_message(link, "room") == ("refused", "client 'north' stated 501 rows; the evaluation takes 1 to 500 "
                                                     "per client")
    link.close(flush_s=0.2)
    with pytest.raises(mpc_auc.InputError, match="stated 501 rows"):
        opened.result(timeout=60)
