"""Privacy that follows the person, against three ``mpc-auc party`` processes on 127.0.0.2-4 that enforce a budget
of their own (``--budget 1``), with clients submitting from their own threads through the Python API.

An organiser who has had one release of epsilon 1 on {c0, c1} tries a ghost key of its own on the roster (silent
under allow_missing, or submitting two dummy rows), a new dataset id and c1 dropped: every attempt is refused
naming c0's budget, and c0's key carries exactly one release of epsilon 1 at both parties.  Exact curves at 100
cuts and then at 99 on the same clients are refused by both parties (the cuts are pinned to the first).  The
same sequences decided by the rule before releases followed the person are in tests/sims/test_person_ledger.py."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import mpc_auc
from mpc_auc.protocols.mpc.accounting import key_account
from mpc_auc.protocols.runtime.identity import Identity
from mpc_auc.protocols.runtime.ledger import Ledger
from roles_on_hosts import client_keys, deploy


@pytest.fixture(scope="module")
def strict(tmp_path_factory):
    """Parties whose own budget is 1 for every client key, with ledgers of their own."""
    ledgers = tmp_path_factory.mktemp("strict-ledgers")
    for directory, procs, logs, ports in deploy(tmp_path_factory, extra=("--budget", "1", "--ledger", str(ledgers))):
        yield directory, ledgers


def _evaluate(directory, evaluation, rows: dict, roster=(), **options):
    """Open ``evaluation`` for ``rows``' clients and ``roster``'s silent ones; every client in ``rows`` submits
    from its own thread.  Returns (the organiser's result or its error, each client's receipt or error)."""
    names = list(rows) + list(roster)
    intake = mpc_auc.Intake(**{k: options.pop(k) for k in ("deadline", "allow_missing") if k in options})
    context = mpc_auc.Context(deployment=str(directory / "deployment.yaml"), timeout=5,
                              dataset_id=options.pop("dataset_id", None))
    opened = mpc_auc.Evaluation.open(context, id=evaluation, roster=[directory / f"{n}.roster.yaml" for n in names],
                                     intake=intake, **options)

    def submit(name):
        scores, labels = rows[name]
        try:
            return mpc_auc.submit(directory / "deployment.yaml", evaluation=evaluation, client=name,
                                  key=directory / f"{name}.key", y_true=labels, y_score=scores,
                                  terms=mpc_auc.ClientTerms(max_exact=5), timeout=5)
        except mpc_auc.InputError as err:
            return err

    with ThreadPoolExecutor(len(rows)) as pool:
        receipts = dict(zip(rows, pool.map(submit, rows)))
    try:
        return opened.result(timeout=180), receipts
    except mpc_auc.InputError as err:
        return err, receipts


def _rows(m: int, seed: int):
    rng = np.random.default_rng(seed)
    return np.round(rng.random(m), 3), (rng.random(m) < 0.3).astype(np.int64)


def test_no_roster_trick_spends_more_than_one_epsilon_of_c0s_key(strict):
    directory, ledgers = strict
    client_keys(directory, ["c0", "c1", "ghost"])
    rows = {"c0": _rows(300, 1), "c1": _rows(316, 2)}
    dp = dict(protocol="mpc-central", epsilon=1.0, deadline=60)
    first, receipts = _evaluate(directory, "dp-first", rows, **dp)
    assert not isinstance(first, Exception) and first.epsilon == 1.0, first
    attempts = {
        "a silent ghost key": _evaluate(directory, "dp-ghost", rows, roster=("ghost",), allow_missing=True,
                                        **{**dp, "deadline": 8}),
        "a ghost with two dummy rows": _evaluate(directory, "dp-dummy",
                                                 {**rows, "ghost": (np.array([0.1, 0.9]), np.array([0, 1]))}, **dp),
        "a new dataset id": _evaluate(directory, "dp-new-id", rows, dataset_id="study-2", **dp),
        "c1 dropped": _evaluate(directory, "dp-dropped", {"c0": rows["c0"]}, **dp),
    }
    for what, (result, receipts) in attempts.items():
        assert isinstance(result, mpc_auc.InputError), what
        assert "privacy budget exceeded for client 'c0'" in str(result), (what, result)
        assert "this party's own budget" in str(result)
        assert all(isinstance(r, mpc_auc.InputError) for r in receipts.values()), (what, receipts)
    key = key_account(Identity.load(str(directory / "c0.key")).public)
    for role in ("P0", "P1"):  # one release of epsilon 1 on c0's key, whatever the organiser tried
        (release,) = Ledger.releases(Ledger(str(ledgers), role).state(key))
        assert release.epsilon == pytest.approx(1.0)


def test_exact_curves_at_other_cuts_on_the_same_clients_are_refused(strict):
    directory, _ = strict
    client_keys(directory, ["e0", "e1"])
    rows = {"e0": _rows(500, 3), "e1": _rows(500, 4)}
    first, _ = _evaluate(directory, "cuts-100", rows, metrics=("auc", "roc"), points=100, deadline=60)
    assert not isinstance(first, Exception) and len(first["roc"]["tpr"]) == 100, first
    second, receipts = _evaluate(directory, "cuts-99", rows, metrics=("auc", "roc"), points=99, deadline=60)
    assert isinstance(second, mpc_auc.InputError) and "pinned to 100 cuts" in str(second), second
    assert all("pinned to 100 cuts" in str(r) for r in receipts.values()), receipts
