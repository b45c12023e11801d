"""How often the bitonic view check fails on a sort that leaks nothing: its false-alarm rate over many seeds.

The hardening release saw one quick-suite run fail "view of P0: bitonic sort messages" (layer 25's swap bits carried)
and the re-run pass.  This experiment runs the check's recording (sims.security.view_parties.bitonic_view_party:
the real bitonic sort between P0 and P1 with the dealer, fresh CSPRNG randomness per run) on ``--seeds``
key sets and counts, per run and party, the tests and the runs flagged

* by the earlier rule: equal positions above chance + 5 normal standard deviations, and at least
  4 positions (or 0.1%) more;
* by the suite's rule now: Bernstein's bound on the tail at most CHECK_ALPHA / tests (sims.security.false_alarms).

A leak would be flagged again and again at the same layer and secret; a false alarm at random places.
Output: one JSON line per run, then a summary (``--out`` also writes them to a JSON file).

    python -m mpc_auc.sims.security.view_false_alarms --seeds 200 --m 1024 --out results/view_false_alarms.json
"""
import argparse
import json
import sys
import time
from collections import Counter

import numpy as np

from ...protocols.inputs.encoding import PAD_KEY
from ...protocols.inputs.sharing import split
from ...protocols.runtime.session import run_parties
from .false_alarms import CHECK_ALPHA
from .view_leaks import bitonic_layers, bitonic_secrets, bitonic_tests, carry_moments, carry_pvalues
from .view_parties import bitonic_view_party


def _both_rules(vectors, secret, values, freq) -> np.ndarray:
    """Rows (Bernstein bound, 1 if the earlier normal rule flags it) per vector."""

    matches, mean, _ = carry_moments(vectors, secret, values, freq)
    n = len(secret)
    chance = mean / n
    old = matches / n > chance + 5 * np.sqrt(np.maximum(chance * (1 - chance), 1e-12) / n) + max(1e-3, 4 / n)
    return np.stack([carry_pvalues(vectors, secret, values, freq), (old & (matches > 0)).astype(np.float64)], 1)


def one_run(seed: int, m: int) -> dict:

    keys = np.random.default_rng(seed).integers(0, 2 ** 40, m)
    outs = run_parties(bitonic_view_party, (split(keys),), provider="TTP", timeout_s=300)
    hidden, layers = bitonic_secrets(keys), bitonic_layers(keys, PAD_KEY)
    row = {"seed": seed, "m": m}
    for role, party in zip(("P0", "P1"), outs):
        tested = bitonic_tests(party["views"], party["layer_ends"], hidden, layers, m, _both_rules)
        smallest = min(tested, key=lambda t: t[2][0])
        row[role] = {"tests": len(tested), "smallest_bound": smallest[2][0], "at": smallest[1],
                     "flagged_now": sum(p <= CHECK_ALPHA / len(tested) for _, _, (p, _) in tested),
                     "flagged_before": [name for _, name, (_, old) in tested if old]}
    return row


def summary(rows) -> dict:
    runs = len(rows)
    before = [r for r in rows if any(r[role]["flagged_before"] for role in ("P0", "P1"))]
    now = [r for r in rows if any(r[role]["flagged_now"] for role in ("P0", "P1"))]
    places = Counter(name for r in rows for role in ("P0", "P1") for name in r[role]["flagged_before"])
    smallest = min(min(r["P0"]["smallest_bound"], r["P1"]["smallest_bound"]) for r in rows)
    tests = max(max(r["P0"]["tests"], r["P1"]["tests"]) for r in rows)
    return {"runs": runs, "runs_failing_the_rule_before": len(before), "runs_failing_now": len(now),
            "where_the_rule_before_flagged": dict(places.most_common()),
            "smallest_bound_over_all_runs": smallest, "threshold_now": CHECK_ALPHA / tests, "tests_per_party": tests}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200, help="runs (key sets), each with fresh MPC randomness")
    parser.add_argument("--m", type=int, default=1024, help="keys per sort (a power of two; the quick suite's)")
    parser.add_argument("--first-seed", type=int, default=0, help="seed of the first key set")
    parser.add_argument("--out", help="also write the rows and the summary to this JSON file")
    args = parser.parse_args(argv)
    rows, began = [], time.perf_counter()
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        rows.append(one_run(seed, args.m))
        print(json.dumps(rows[-1]), flush=True)
    result = {"summary": summary(rows), "seconds": time.perf_counter() - began, "rows": rows}
    print(json.dumps(result["summary"], indent=1))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
