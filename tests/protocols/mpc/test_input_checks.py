"""The parties check every client's rows inside the MPC (circuits.validity) before anything is opened.

A client that skips its own checks (here: simulated clients whose rows bypass ``check_client``) and sends
a label of 400 or 10^6, or a score key outside the declared range, is named and the job stops (InputError,
exit 2 from the CLI), with no ε spent.  Against a weakened party without the check the same inputs give the
the red team's attacks: an AUC of about 2, and one row that moves a record-DP release by hundreds of noise
standard deviations.
"""
import dataclasses
import json

import numpy as np
import pytest

from mpc_auc.protocols.errors import InputError
from mpc_auc.protocols.inputs.encoding import ScoreEncoder
from mpc_auc.protocols.mpc import ranking_party
from mpc_auc.protocols.runtime.ledger import Ledger
from mpc_auc.protocols.dp.central_law import CentralNoise
from mpc_auc.protocols.mpc.central import central_release
from mpc_auc.protocols.mpc.exact import exact_result
from mpc_auc.protocols.mpc.ranking_job import Request, run_ranking_jobs
from mpc_auc.protocols.inputs.submission import Declaration, Roster
from mpc_auc.protocols.refused import Refused
from mpc_auc.protocols.runtime.identity import Identity, client_role
from mpc_auc.protocols.runtime.session import Placement

RNG = np.random.default_rng(24)
HONEST = [(f"h{i}", np.round(RNG.random(200), 2), (RNG.random(200) < 0.3).astype(np.int64)) for i in range(2)]


def _unchecked(clients, datasets=()):
    """A Request whose simulated clients seal their rows as given (with the ``bypass`` fixture, a malicious
    client's: no check_client, keys straight from the encoding's bit map)."""
    identities = [Identity(client_role(name)) for name, _, _ in clients]
    evaluation = Declaration("local-domain", Roster(tuple(i.public for i in identities)), ScoreEncoder())
    return Request(evaluation, [(i, s, y) for i, (_, s, y) in zip(identities, clients)], tuple(datasets))


@pytest.fixture
def bypass(monkeypatch):
    from mpc_auc.protocols.inputs import submission

    monkeypatch.setattr(submission, "check_client", lambda *a, **k: None)
    monkeypatch.setattr(ScoreEncoder, "check", lambda *a, **k: None)


def weakened_party(ctx, fraction_bits):
    """The real party loop with the in-MPC input check removed (the loop as it was before the check)."""
    ranking_party._invalid_clients = lambda *args: []
    return ranking_party.serve_jobs(ctx, fraction_bits)


def _cheat(label=1, score=0.5):
    return ("cheat", np.array([score, 0.3]), np.array([label, 0]))


def _exact(requests, method="radix", party=None, ledger=None, central=None):
    return run_ranking_jobs(requests, method, False, central, Placement(ledger=ledger), 60, None,
                            party=party)


@pytest.mark.parametrize("method", ["radix", "bitonic"])
def test_out_of_domain_rows_are_named_and_nothing_is_opened(bypass, method):
    cases = {"label 400": _cheat(label=400), "label -1": _cheat(label=-1), "key past the range": _cheat(score=2.0),
             "negative key": _cheat(score=-1.0)}
    runs = _exact([_unchecked(HONEST + [c]) for c in cases.values()] + [_unchecked(HONEST)], method)
    for name, run in zip(list(cases) + ["honest"], runs):
        if name == "honest":
            assert 0 < exact_result(run, method).auc < 1
            continue
        with pytest.raises(InputError, match=r"client\(s\) 'cheat' submitted rows outside the protocol's domain"):
            exact_result(run, method)
        assert all(isinstance(out, Refused) and out.invalid == ("cheat",) for out in run.outs)


def test_the_weakened_party_without_the_check_opens_an_auc_above_one(bypass):
    (run,) = _exact([_unchecked(HONEST + [_cheat(label=150, score=0.999)])], party=weakened_party)
    assert exact_result(run, "radix").auc > 1.2  # the red team's first attack: no AUC exceeds 1


def test_a_record_dp_release_with_an_out_of_domain_row_is_refused_and_charges_nothing(bypass, tmp_path):
    """The red team's record-DP case: one row with label 10^6 at score 0 would move the release by ~176 noise
    stds; the check refuses it, and the voided charge leaves the whole budget."""
    noise = CentralNoise(1.0, neighbours="record")
    data = HONEST + [("cheat", np.array([0.0]), np.array([10**6]))]
    (run,) = _exact([_unchecked(data, ["declared:rows-of-the-test"])], ledger=str(tmp_path), central=noise)
    with pytest.raises(InputError, match="'cheat'"):
        central_release(run, noise)
    for role in ("P0", "P1"):
        ledger = Ledger(str(tmp_path), role)
        (release,) = ledger.state("declared:rows-of-the-test")["releases"]
        assert release["void"] and not Ledger.releases(ledger.state("declared:rows-of-the-test"))


def test_the_weakened_party_lets_one_row_void_everyones_record_dp(bypass, tmp_path):
    """Against the weakened party the out-of-domain row dominates the statistic: the release is shifted by
    far more than its noise, so one honest client's label flip is visible."""
    noise = CentralNoise(1.0, neighbours="record")
    data = HONEST + [("cheat", np.array([0.0]), np.array([10**6]))]
    (run,) = _exact([_unchecked(data)], ledger=str(tmp_path), party=weakened_party, central=noise)
    release = central_release(run, noise)
    positives = sum(int(y.sum()) for _, _, y in HONEST)
    assert release.opened[0][1] > positives + 10**5  # P + Z_P with Z_P's std ~1.4: 10^6 rows' worth
    json.dumps(release.opened)  # the release happened: that is the attack


def first_column_party(ctx, fraction_bits):
    """The real party loop checking only the first score column's keys (a weakened check)."""
    check = ranking_party._invalid_clients
    ranking_party._invalid_clients = lambda ctx, job, gates, held: check(
        ctx, job, gates, dataclasses.replace(held, keys=held.keys[:1], key_xor=held.key_xor[:1]))
    return ranking_party.serve_jobs(ctx, fraction_bits)


def test_an_out_of_range_key_in_a_later_score_column_is_named(bypass):
    """Two score columns (DeLong's test): every column's keys are checked; a party checking only the first
    lets the cheat's second column into the sort and opens a result."""
    honest = [(name, np.c_[s, s[::-1]], y) for name, s, y in HONEST]
    cheat = ("cheat", np.array([[0.5, 2.0], [0.3, 0.4]]), np.array([1, 0]))

    def request():
        identities = [Identity(client_role(name)) for name, _, _ in honest + [cheat]]
        evaluation = Declaration("local-columns", Roster(tuple(i.public for i in identities)), ScoreEncoder(),
                                columns=2)
        return Request(evaluation, [(i, s, y) for i, (_, s, y) in zip(identities, honest + [cheat])])

    (run,) = _exact([request()])
    with pytest.raises(InputError, match=r"client\(s\) 'cheat' submitted rows outside the protocol's domain"):
        exact_result(run, "radix")
    (weak,) = _exact([request()], party=first_column_party)
    assert 0 <= exact_result(weak, "radix").others[0]["auc"] <= 1  # computed: the check was the guard
