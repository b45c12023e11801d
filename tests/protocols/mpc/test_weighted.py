"""The weighted AUC (scikit-learn's ``sample_weight``) inside the MPC: equal to scikit-learn's on weights of the
declared precision, within the stated bound on any other, and a client's out-of-domain weights refused inside
the MPC (a weakened party without that check opens an AUC above 1)."""
import numpy as np
import pytest
from sklearn.metrics import roc_auc_score as sk_auc

import mpc_auc
from mpc_auc.planner import plan
from mpc_auc.protocols.errors import InputError
from mpc_auc.protocols.inputs.encoding import ScoreEncoder
from mpc_auc.protocols.inputs.submission import Declaration, Roster
from mpc_auc.protocols.inputs.weights import bits_for, error_bound
from mpc_auc.protocols.mpc import ranking_party
from mpc_auc.protocols.mpc.exact import exact_result, mpc_exact_auc
from mpc_auc.protocols.mpc.ranking_job import Request, run_ranking_jobs
from mpc_auc.protocols.runtime.identity import Identity, client_role
from mpc_auc.protocols.runtime.session import Placement

RNG = np.random.default_rng(2026)


def _split(scores, labels, weights, clients=3):
    owner = RNG.integers(0, clients, len(labels))
    return ([(f"c{k}", scores[owner == k], labels[owner == k]) for k in range(clients)],
            [weights[owner == k] for k in range(clients)])


def _sets():
    out = []
    for m, levels, weights in [(400, 8, lambda m: RNG.integers(0, 6, m) / 4.0),  # heavy ties, zero weights
                               (300, 300, lambda m: RNG.integers(1, 20, m).astype(float)),  # frequency weights
                               (250, 3, lambda m: np.ldexp(RNG.integers(1, 9, m), -RNG.integers(0, 6, m))),
                               (500, 1000, lambda m: RNG.exponential(1.0, m))]:  # not on any grid
        y = (RNG.random(m) < 0.35).astype(np.int64)
        s = np.round(RNG.random(m) * levels) / levels
        out.append((s, y, weights(m)))
    return out


def test_the_weighted_auc_equals_scikit_learns():
    sets = _sets()
    datasets, weights = zip(*[_split(s, y, w) for s, y, w in sets])
    results = mpc_exact_auc(list(datasets), weights=list(weights))
    for (s, y, w), result in zip(sets, results):
        exact = sk_auc(y, s, sample_weight=w)
        bound = error_bound(w, bits_for(w))
        assert abs(result.auc - exact) <= max(1e-12, bound)
        if bound == 0:  # weights on the grid: the fraction itself, to 2^-52
            assert abs(result.auc - exact) < 1e-12
        else:
            assert abs(result.auc - exact) < 1e-7 and bound < 1e-3  # the bound is a worst case
        assert result.revealed[0].startswith("weighted AUC")
    assert error_bound(sets[0][2], bits_for(sets[0][2])) == 0


def test_the_api_takes_sample_weight_binary_and_one_vs_rest():
    m = 240
    y = RNG.integers(0, 4, m)
    scores = RNG.multinomial(20, [0.25] * 4, m) / 20  # rows sum to 1 (as scikit-learn asks), many ties
    w = RNG.integers(1, 5, m) / 2.0
    clients = RNG.choice(["north", "south"], m)
    binary = mpc_auc.roc_auc_score(y == 2, scores[:, 2], clients=clients, sample_weight=w)
    assert abs(binary.auc - sk_auc(y == 2, scores[:, 2], sample_weight=w)) < 1e-12
    assert binary.weight_error == 0.0 and binary.std is None  # ci="auto": left out when weighted
    for average in ("macro", "weighted"):
        ovr = mpc_auc.roc_auc_score(y, scores, clients=clients, multi_class="ovr", average=average, sample_weight=w)
        assert abs(ovr.auc - sk_auc(y, scores, multi_class="ovr", average=average, sample_weight=w)) < 1e-12
        clear = mpc_auc.roc_auc_score(y, scores, multi_class="ovr", average=average, sample_weight=w,
                                      protocol="clear")
        assert abs(clear.auc - ovr.auc) < 1e-12


@pytest.mark.parametrize("options, why", [
    (dict(ci=True), "without ranks, DeLong's interval"), (dict(max_fpr=0.2), "max_fpr or other metrics"),
    (dict(protocol="mpc-central", epsilon=1.0), "mpc-exact or clear"),
    (dict(sample_weight=np.r_[np.ones(9), -1.0]), r"sample_weight\[9\]: weight -1.0 is negative"),
    (dict(sample_weight=np.ones(3)), "one per row: 10 rows"),
    (dict(sample_weight=np.r_[np.ones(9), np.nan]), "is not a finite number"),
    (dict(sample_weight=np.zeros(10)), "must not all be 0"),
    (dict(sample_weight=np.r_[np.ones(5), np.zeros(5)], protocol="clear"), "without positive weight on both")])
def test_bad_weighted_requests_are_refused_before_any_mpc(options, why):
    y, s = np.r_[np.zeros(5), np.ones(5)], np.linspace(0, 1, 10)
    with pytest.raises(InputError, match=why):
        mpc_auc.roc_auc_score(y, s, **{"sample_weight": np.ones(10), **options})
    with pytest.raises(InputError, match="the weighted AUC alone"):
        mpc_auc.average_precision_score(y, s, sample_weight=np.ones(10))
    with pytest.raises(InputError, match="without ranks"):  # ranks come from global_ranks, never weighted
        plan(ranks=True, weighted=True)


def test_a_class_without_weight_leaves_the_auc_undefined():
    y, s = np.r_[np.zeros(5), np.ones(5)], np.linspace(0, 1, 10)
    with pytest.raises(InputError, match=r"no negatives \(of positive weight, when weighted\)"):
        mpc_auc.roc_auc_score(y, s, sample_weight=np.r_[np.zeros(5), np.ones(5)])


HONEST = [(f"h{i}", np.round(RNG.random(150), 2), (RNG.random(150) < 0.4).astype(np.int64)) for i in range(2)]
HONEST_WEIGHTS = [RNG.integers(1, 4, 150) for _ in HONEST]


def _request(cheat_units, bits=10):
    """A weighted job whose last client ("cheat", one negative row at the top score) sends ``cheat_units`` as
    its row's weight units, unchecked by its own software."""
    clients = HONEST + [("cheat", np.array([0.999]), np.array([0]))]
    identities = [Identity(client_role(name)) for name, _, _ in clients]
    evaluation = Declaration("local-weights", Roster(tuple(i.public for i in identities)), ScoreEncoder(),
                            weight_bits=bits)
    return Request(evaluation, [(i, s, y) for i, (_, s, y) in zip(identities, clients)], (),
                   HONEST_WEIGHTS + [np.array([cheat_units])])


@pytest.fixture
def raw_units(monkeypatch):
    """Clients send their weights as given, as units (a malicious client's software)."""
    from mpc_auc.protocols.inputs import submission

    monkeypatch.setattr(submission, "weight_units", lambda w, *a, **k: np.asarray(w, dtype=np.int64))


def no_weight_check_party(ctx, fraction_bits):
    """The real party loop with the weights' range check removed (every row's weight passes)."""
    ranking_party.valid_weights = lambda gates, weights, most: np.full(-(-len(weights) // 64),
                                                                       -1 if gates.rank == 0 else 0, np.int64)
    return ranking_party.serve_jobs(ctx, fraction_bits)


def _run(requests, party=None):
    return run_ranking_jobs(requests, "radix", False, None, Placement(), 60, None, party=party)


def test_out_of_domain_weights_are_named_and_a_weakened_party_opens_an_auc_above_one(raw_units):
    negatives = sum(int(((1 - y) * w).sum()) for (_, _, y), w in zip(HONEST, HONEST_WEIGHTS))
    cheat = -(negatives * 9 // 10)  # removes 90% of the negative mass, at the top of the ranking
    runs = _run([_request(cheat), _request(1 << 40), _request(1 << 20)])
    for run in runs[:2]:
        with pytest.raises(InputError, match=r"client\(s\) 'cheat' submitted rows outside the protocol's domain"):
            exact_result(run, "radix")
    honest = exact_result(runs[2], "radix").auc
    assert 0 < honest < 1
    (weak,) = _run([_request(cheat)], party=no_weight_check_party)
    assert exact_result(weak, "radix").auc > 2 * honest  # what the check stops: the AUC leaves [0, 1]


def test_a_total_past_the_bound_is_refused_with_one_bit(raw_units):
    (run,) = _run([_request(1 << 30)])  # each row within [0, 2^30], the total over it
    with pytest.raises(InputError, match=r"add up to more than 2\^30 units"):
        exact_result(run, "radix")


def test_the_command_line_takes_a_weight_column(tmp_path, capsys):
    """``mpc-auc run --weight-col``: the weighted AUC of a file, mpc-exact and clear, equal to scikit-learn's; a
    negative weight is named by its line, nothing written."""
    import json

    from mpc_auc.cli import main

    m = 300
    y, s, w = RNG.integers(0, 2, m), np.round(RNG.random(m), 2), RNG.integers(0, 9, m) / 8
    path = tmp_path / "weighted.csv"
    path.write_text("site,p,y,w\n" + "".join(f"c{i % 4},{a},{b},{c}\n" for i, (a, b, c) in enumerate(zip(s, y, w))))
    columns = ["--client-col", "site", "--score-col", "p", "--label-col", "y", "--weight-col", "w"]
    for protocol in ("mpc-exact", "clear"):
        out = tmp_path / f"{protocol}.json"
        assert main(["--quiet", "run", "--input", str(path), "--protocol", protocol, "--out", str(out), *columns]) == 0
        record = json.loads(out.read_text())
        assert abs(record["auc"] - sk_auc(y, s, sample_weight=w)) < 1e-12
        assert record["sample_weights"]["weight_error"] == 0.0  # eighths: on the grid
    path.write_text("site,p,y,w\nc0,0.5,1,1\nc1,0.2,0,-2\n")
    assert main(["run", "--input", str(path), "--out", str(tmp_path / "bad.json"), *columns]) == 2
    assert "weighted.csv line 3: weight -2.0 is negative" in capsys.readouterr().err and not (tmp_path / "bad.json").exists()
