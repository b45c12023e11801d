"""A client's own ledger (protocols.inputs.own_ledger): a file of its own, locked and durable, that refuses a DP
release past the client's budget and an exact one past the number it accepts, whatever the parties say."""
import multiprocessing as mp

import pytest

from mpc_auc.protocols.errors import InputError
from mpc_auc.protocols.inputs.own_ledger import OwnLedger, ticket_release
from mpc_auc.protocols.inputs.submission import ReleaseTerms
from mpc_auc.protocols.runtime.ledger import Budget

DP = ReleaseTerms("mpc-central", 0.25, 1e-13, "label")
EXACT = ReleaseTerms("mpc-exact")


def _charge_many(path, results):
    ledger = OwnLedger(path)
    for _ in range(8):
        results.put(ledger.charge(ticket_release(DP), {"evaluation": "e"}, Budget(1.0))[1] == "")


def test_concurrent_submissions_spend_at_most_the_clients_own_budget(tmp_path):
    """Two processes race to record 8 releases of epsilon 0.25 each against the client's budget of 1: four fit."""
    context = mp.get_context("spawn")
    results = context.Queue()
    writers = [context.Process(target=_charge_many, args=(str(tmp_path / "own.json"), results)) for _ in range(2)]
    for w in writers:
        w.start()
    fits = [results.get(timeout=120) for _ in range(16)]
    for w in writers:
        w.join()
    assert sum(fits) == 4 and len(OwnLedger(str(tmp_path / "own.json")).releases()) == 4


def test_exact_releases_count_against_max_exact_and_a_void_spends_nothing(tmp_path):
    ledger = OwnLedger(str(tmp_path / "own.json"))
    stamp, why = ledger.charge(ticket_release(EXACT), {"evaluation": "a"}, max_exact=1)
    assert why == ""
    assert "accepts at most 1 exact release" in ledger.charge(ticket_release(EXACT), {}, max_exact=1)[1]
    ledger.void(stamp, "nothing was sent")
    assert ledger.charge(ticket_release(EXACT), {"evaluation": "b"}, max_exact=1)[1] == ""
    refused = ledger.charge(ticket_release(ReleaseTerms("mpc-central", 2.0, 1e-13, "label")), {}, Budget(1.5))[1]
    assert "own budget (1.5, 1e-09) would be passed" in refused  # exact releases spend no epsilon; this one is 2


def test_a_file_that_is_no_client_ledger_is_refused_by_name(tmp_path):
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(InputError, match="bad.json cannot be read"):
        OwnLedger(str(tmp_path / "bad.json"))
    (tmp_path / "other.json").write_text('{"format": "something else"}')
    with pytest.raises(InputError, match="is not a client ledger"):
        OwnLedger(str(tmp_path / "other.json"))
    with pytest.raises(InputError, match="cannot write there"):
        OwnLedger(str(tmp_path / "bad.json" / "below.json"))
