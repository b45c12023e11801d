"""Privacy that follows the person, tried as an adversarial organiser would: sequences of evaluations on the same
people, decided by the compute parties' own accounting (protocols.mpc.accounting over protocols.runtime.ledger,
the code each party runs before any MPC work), and by the per-evaluation rules the parties had before
(the weakened control, :func:`charge_by_set`).

* **DP** (:func:`dp_sequence`): parties at a budget of 1, epsilon 1 per release.  After the first release on
  {c0, c1}, the organiser tries a ghost key of its own on the roster (silent, or with two dummy rows), c0 with
  one more row, a new ``--dataset-id``, and c1 dropped.  Measured: the epsilon released on c0's rows.
* **Exact** (:func:`exact_sequences`), on the same rows each time: curves at 100, 99 and 98 cuts (cuts that
  move by a row), two partial AUCs whose max FPR fall inside one ROC step, and the exact AUC with and
  without a one-row client.  The openings of each admitted evaluation are computed in the clear with the
  functions the MPC's openings equal (protocols.clear_metrics, protocols.clear_auc; tests/protocols/mpc/
  test_metrics.py checks them against the MPC); measured: the single labels the organiser reads off them,
  and how many are right.

The decisions are the parties' own: a Job and the admitted clients as the intake hands them over, charged to a
real ledger directory.  What a release would open is the clear computation; nothing here runs the MPC.
"""
import dataclasses
import json
import os
import secrets
import tempfile

import numpy as np

from ...protocols.clear_auc import rank_sum_auc
from ...protocols.clear_metrics import curve_at_cuts, partial_area
from ...protocols.dp.central_law import CentralNoise
from ...protocols.inputs.submission import Accepts, Admitted, Declaration, Roster
from ...protocols.metric_catalogue import cut_positions
from ...protocols.release_spec import ReleaseSpec
from ...protocols.mpc import accounting
from ...protocols.mpc.ranking_job import Job
from ...protocols.runtime.identity import Identity, client_role
from ...protocols.runtime.ledger import Budget, LedgerPlace
from .auc_leakage import consistent_splits, opened_exact


def charge_as_parties(job, m: int, admitted):
    """The parties' accounting (protocols.mpc.accounting.charge)."""
    return accounting.charge(job, m, admitted)


def charge_by_set(job, m: int, admitted):
    """The weakened control, the rules before releases followed the person: a DP release charged to the roster's
    key set and any declared id only, an exact release to nobody (each evaluation judged alone, by its slices)."""
    found = accounting.charge(job, m, admitted)
    if found is None or found.release.exact is not None:
        return None
    return dataclasses.replace(found, owners=())



class Parties:
    """A ledger directory decided on by ``charge`` (the parties' accounting, or a control), with clients' keys."""

    def __init__(self, directory: str, charge=charge_as_parties, budget: Budget = None):
        self.ledger = LedgerPlace(directory, budget).open("P0")
        self.charge = charge
        self.keys = {}

    def client(self, name: str):
        if name not in self.keys:
            self.keys[name] = Identity(client_role(name)).public
        return self.keys[name]

    def evaluate(self, rows: dict, central=None, dataset: str = None, metrics=("auc",), points: int = 100,
                 max_fpr: float = None, accepts: Accepts = Accepts(), roster=()) -> str:
        """Decide one direct evaluation of ``rows`` (name -> its row count; on the roster with ``roster``'s
        silent names), as both parties would once the submissions are agreed; "" when admitted (and charged),
        else the refusal."""
        roster = Roster(tuple(self.client(name) for name in list(rows) + list(roster)))
        evaluation = Declaration(f"organiser-{secrets.token_hex(4)}", roster, direct=True, deadline_s=60.0,
                                 allow_missing=True, spec=ReleaseSpec(metrics, points, max_fpr))
        job = Job(evaluation, "radix", False, None, central, (f"declared:{dataset}",) if dataset else ())
        admitted = [Admitted(name, count, "", None, self.client(name), accepts) for name, count in rows.items()]
        found = self.charge(job, sum(rows.values()), admitted)
        if found is None:
            return ""
        verdict = self.ledger.charge(found)
        return verdict["message"]


def dp_sequence(directory: str, charge=charge_as_parties) -> dict:
    """The DP attempts of the module docstring, decided by ``charge``: each attempt's refusal ("" if released) and
    the epsilon released on c0's rows in all (1.0 at the most under the parties' accounting)."""
    parties = Parties(directory, charge, Budget(1.0))
    noise = CentralNoise(1.0)
    attempts = {
        "first release on {c0, c1}": dict(rows={"c0": 300, "c1": 316}),
        "a ghost key on the roster, silent": dict(rows={"c0": 300, "c1": 316}, roster=("ghost",)),
        "a ghost key with two dummy rows": dict(rows={"c0": 300, "c1": 316, "ghost": 2}),
        "c0 with one more row": dict(rows={"c0": 301, "c1": 316}),
        "a new dataset id": dict(rows={"c0": 300, "c1": 316}, dataset="study-2"),
        "c1 dropped": dict(rows={"c0": 300}),
    }
    outcomes, released = {}, 0.0
    for name, attempt in attempts.items():
        outcomes[name] = parties.evaluate(central=noise, **attempt)
        released += noise.epsilon if not outcomes[name] else 0.0
    return {"attempts": outcomes, "epsilon_on_c0": released}


def exact_sequences(directory: str, charge=charge_as_parties, m: int = 1000, seed: int = 37) -> dict:
    """The three exact sequences of the module docstring on one set of ``m`` rows (clients that accept 10 exact
    releases each), decided by ``charge``: per sequence the evaluations admitted, the labels read and how many
    of them are right."""
    rng = np.random.default_rng(seed)  # the test rows: a simulation's, not a secret
    scores, labels = rng.random(m), (rng.random(m) < 0.3).astype(np.int64)
    accepts = Accepts(max_exact=10)
    out = {}
    with tempfile.TemporaryDirectory(dir=directory) as place:
        parties = Parties(place, charge)
        admitted = [parties.evaluate({"c0": m // 2, "c1": m - m // 2}, metrics=("auc", "roc"), points=points,
                                     accepts=accepts) == "" for points in (100, 99, 98)]
        cuts = [(c, tp) for ok, points in zip(admitted, (100, 99, 98)) if ok
                for c, tp in _true_positives(scores, labels, cut_positions(m, points))]
        out["cuts 100/99/98"] = _read(_labels_from_cuts(cuts), scores, labels, admitted)
    with tempfile.TemporaryDirectory(dir=directory) as place:
        parties = Parties(place, charge)
        negatives = np.sort(scores[labels == 0])[::-1]
        n, p, k = len(negatives), int(labels.sum()), len(negatives) // 3  # the step after the k-th negative
        stops = ((k + 0.25) / n, (k + 0.75) / n)
        admitted = [parties.evaluate({"c0": m // 2, "c1": m - m // 2}, max_fpr=f, accepts=accepts) == ""
                    for f in stops]
        read = {}
        if all(admitted):  # the TPR of the step, times P (the exact AUC opens {P, N}), by two partial areas
            above = round((partial_area(scores, labels, stops[1]) - partial_area(scores, labels, stops[0]))
                          / (stops[1] - stops[0]) * p)
            read[k + above] = 0  # 0-based from the top: k negatives and `above` positives outrank it
        out["two max FPR in one ROC step"] = _read(read, scores, labels, admitted)
    with tempfile.TemporaryDirectory(dir=directory) as place:
        parties = Parties(place, charge)
        rows = {"c0": m // 2, "c1": m - m // 2 - 1, "c2": 1}  # c2: one row, the last
        admitted = [parties.evaluate(rows, accepts=accepts) == "",
                    parties.evaluate({k: v for k, v in rows.items() if k != "c2"}, accepts=accepts) == ""]
        read = {}
        if all(admitted):
            read = _label_from_dropped(scores, labels)
        out["re-run without a one-row client"] = _read(read, scores, labels, admitted, by_rank=False)
    return out


def _true_positives(scores, labels, flagged) -> list:
    """(cut, positives in the top ``cut`` rows) as one evaluation's curves open them (TPR times P)."""
    tpr = curve_at_cuts(scores, labels, flagged)["tpr"]
    return [(int(c), round(t * int(labels.sum()))) for c, t in zip(flagged, tpr)]


def _labels_from_cuts(cuts) -> dict:
    """Rank from the top (0-based) -> label, wherever two opened cuts lie one row apart."""
    counts = dict(cuts)
    return {c: counts[c + 1] - counts[c] for c in counts if c + 1 in counts}


def _label_from_dropped(scores, labels) -> dict:
    """Row index -> label of the one-row client (the last row), from the {P, N} candidates of the exact AUC with
    and without it."""
    m = len(labels)

    def splits(s, y):
        twice_u = round(2 * rank_sum_auc(s, y) * y.sum() * (len(y) - y.sum()))
        found = consistent_splits(opened_exact(twice_u, 2 * int(y.sum()) * (len(y) - int(y.sum()))), len(y))
        return {frozenset((p, len(y) - p)) for p in found}

    with_row, without = splits(scores, labels), splits(scores[:-1], labels[:-1])
    if len(with_row) != 1 or len(without) != 1:
        return {}
    (a,), (b,) = with_row, without
    p = min(a)  # the attacker knows the positives are the minority (a public prevalence), not their count
    return {m - 1: int(b == frozenset((p - 1, m - p)))}  # positive: P drops by one; negative: N does


def _read(read: dict, scores, labels, admitted, by_rank: bool = True) -> dict:
    """The evaluations admitted, the labels read and how many are right (``read``: rank from the top, or row)."""
    order = np.argsort(-scores, kind="stable")
    truth = [int(labels[order[k]] if by_rank else labels[k]) for k in read]
    return {"admitted": sum(admitted), "of": len(admitted), "labels_read": len(read),
            "right": sum(int(v == t) for v, t in zip(read.values(), truth))}


def main() -> int:
    """``python -m mpc_auc.sims.security.person_ledger``: both sequences under the parties' accounting and the set-keyed
    control, as JSON (the ledgers in a temporary directory)."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="mpc-auc-person-") as directory:
        for name, charge in (("parties", charge_as_parties), ("set-keyed control", charge_by_set)):
            dp = dp_sequence(os.path.join(directory, name.replace(" ", "-")), charge)
            out[name] = {"dp": {"epsilon_on_c0": dp["epsilon_on_c0"],
                                "attempts": {k: v or "released" for k, v in dp["attempts"].items()}},
                         "exact": exact_sequences(directory, charge)}
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
