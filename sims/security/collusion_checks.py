"""The steps of ``mpc-auc security`` (sims.security.suite) on what parties learn beyond their views: the
dealer colluding with P0 and P0 alone (sims.security.collusion), a network observer of real role processes
(sims.security.network), and the dealer's keys (stock CrypTen's seeds, the project's Dealer and weakened Dealers);
the records are sims.security.report.check.
"""
import hashlib
import math

import numpy as np

from ...protocols.inputs.encoding import ScoreEncoder
from ...protocols.inputs.sharing import split, split_xor
from ...protocols.mpc.ranking_job import simulated
from ...protocols.runtime.dealer import Dealer
from ...protocols.runtime.session import run_parties
from . import checks as sc
from .collusion import collusion_party, kendall, recovered
from .false_alarms import Z_ONE_SIDED, Z_TWO_SIDED
from .network import captured_jobs, differences, exposure, observer_view, weakened_link
from .report import check


def collusion(cfg: dict, rng) -> list:
    """What dealer + P0 and P0 alone recover of the radix sort's secret order and labels."""

    m, bits = cfg["collusion_m"], 8
    keys, labels = rng.integers(0, 2 ** bits, m), rng.integers(0, 2, m)
    p0, p1 = run_parties(collusion_party, (split_xor(keys), split(labels), bits), provider="TTP", timeout_s=120)
    truth = np.empty(m, dtype=np.int64)
    truth[np.argsort(keys, kind="stable")] = np.arange(m)
    found = recovered(p0, p1)
    order, guessed = found["dealer + P0"]
    exact, accuracy = bool(np.array_equal(order, truth)), float(np.mean(guessed == labels))
    details = {"M": m, "kendall_tau_of_the_true_order": kendall(truth, keys), "recovered_exactly": exact}
    return [check("collusion: dealer + P0 recover the sorted order (documented as not protected)", "collusion",
                  "mpc-exact, mpc-central", None, None, kendall(order, keys), kendall(truth, keys), exact, details,
                  pass_if="==", chance=False),
            check("collusion: dealer + P0 recover every label (documented as not protected)", "collusion",
                  "mpc-central", None, None, accuracy, 1.0, accuracy == 1.0, {"M": m}, pass_if="==", chance=False)
            ] + _no_better_than_chance("collusion: P0 alone", *found["P0 alone"], keys, labels, details)


def network_observer(cfg: dict, rng) -> list:
    """A capture of the links of real role processes (sims.security.network), on two inputs of one shape."""

    m, encoder = cfg["observer_m"], ScoreEncoder()
    inputs = [(rng.integers(0, 100, m) / 100, rng.integers(0, 2, m)) for _ in range(2)]
    captures = captured_jobs([simulated([("c0", s[:m // 2], y[:m // 2]), ("c1", s[m // 2:], y[m // 2:])], encoder)
                              for s, y in inputs])
    clear = [v.tobytes() for s, y in inputs for v in (s, encoder.encode(s), y.astype(np.int64))]
    material = [item for _, items in captures for item in items]  # dealer keys and input shares, both parties
    hidden = clear + material
    streams = [stream for capture, _ in captures for _, up, down in capture for stream in (up, down)]
    outside, found = exposure(streams, hidden)
    clear_outside, clear_found = exposure([weakened_link(clear[2] + material[0])], hidden)
    views = [observer_view(capture) for capture, _ in captures]
    other, timing = differences(*views)
    guess = np.random.default_rng(list(hashlib.sha256(repr(sorted(views[0].items())).encode()).digest()))
    common = {"M": m, "sessions": 2, "links": "coordinator, dealer and P0-P1 links to P0 and P1: TLS 1.3 "
                                                   "handshake, then sealed AES-256-GCM records",
              "captured_bytes": sum(len(s) for s in streams)}
    return [
        check("network observer: the capture holds TLS and sealed records only, no secret in the clear",
              "collusion", "mpc-exact, mpc-central", None, None, outside + found, 0, outside + found == 0,
              {**common, "bytes_outside_records": outside, "secrets_in_the_clear": found,
               "searched_for": "16-byte windows of the scores, keys and labels, both parties' dealer keys and every "
                               "input share they opened"}, chance=False),
        check("network observer: its view (record types and lengths) is the same for two inputs of one shape",
              "collusion", "mpc-exact, mpc-central", None, None, other, 0, other == 0,
              {**common, "records": sum(views[0].values()), "heartbeat_sized_records_that_differ": timing,
               "note": "records of one bare frame (heartbeats) follow timing, not data"}, chance=False),
        check("a link whose sealing is weakened to the identity: the same capture checks", "control",
              "weakened link (sims.security.network.weakened_link)", None, None,
              clear_outside + clear_found, 0, clear_outside + clear_found == 0,
              {"bytes_outside_records": clear_outside, "secrets_in_the_clear": clear_found}),
    ] + _no_better_than_chance("network observer", guess.permutation(m), guess.integers(0, 2, m), *inputs[0],
                               {**common, "guess": "a function of its view (the same for both inputs)"})


def _no_better_than_chance(adversary, order, guessed, keys, labels, details) -> list:
    """An adversary's recovered order (Kendall tau against the keys) and labels, against chance."""

    m = len(keys)
    tau = kendall(order, keys)
    tau_chance = Z_TWO_SIDED * math.sqrt(2 * (2 * m + 5) / (9 * m * (m - 1)))  # standard deviations under chance
    base = max(labels.mean(), 1 - labels.mean())  # the majority class: the best guess without information
    accuracy = float(np.mean(guessed == labels))
    label_chance = base + Z_ONE_SIDED * math.sqrt(base * (1 - base) / m)
    return [check(f"{adversary} recovers nothing of the sorted order", "collusion", "mpc-exact, mpc-central", None,
                  None, tau, tau_chance, abs(tau) <= tau_chance, details, pass_if="|<=|"),
            check(f"{adversary} infers labels no better than the majority class", "collusion", "mpc-central",
                  None, None, accuracy, label_chance, accuracy <= label_chance, {**details, "majority_class_rate": base})]



def dealer_keys(cfg: dict, rng) -> list:
    """Stock CrypTen's seeds (a control); the project's Dealer's key set-up under the key-independence check
    (sims.security.checks.key_independence), the same Dealer weakened to derive k_1 from k_0 three ways (the
    controls), and a real session in which each party's triples expand the key the Dealer sent it."""

    bits = cfg["seed_bits"]
    dealer_seed = int(rng.integers(2 ** bits))
    seed0, seed1 = sc.stock_dealer_seeds(dealer_seed)
    recovered = sc.seed_recovery(seed0, sc.stock_share(seed1), bits)
    trials = cfg["dealer_trials"]
    p0, p1 = run_parties(sc.dealer_key_party, (1000,), provider="TTP", timeout_s=120)
    wired = sc.expands_its_key(p0) and sc.expands_its_key(p1) and p0["key"] != p1["key"]
    return [
        check(f"stock CrypTen TTP: P0 rebuilds P1's triples from its seed ({bits}-bit dealer seed)", "control",
              "stock CrypTen TTP", None, None, float(recovered), 0.0, not recovered,
              {"attack": "search dealer seeds for P0's, regenerate P1's triple shares (torch MT19937)"}),
        _independence_check("dealer key independence, our Dealer: no draw moves both P0's and P1's keys",
                            "collusion", "mpc-exact, mpc-central", sc.key_independence(Dealer, trials, rng),
                            {"dealer": "protocols.runtime.dealer.Dealer"}),
        *[_independence_check(f"dealer key independence, a Dealer with {name}", "control",
                              "weakened dealer", sc.key_independence(dealer, trials, rng),
                              {"weakening": f"sims.security.checks.{dealer.__name__}: the project's Dealer with "
                                            f"{name}"})
          for name, dealer in sc.WEAKENED_DEALERS.items()],
        check("our dealer in a real session: each party's triples expand the key the dealer sent it", "collusion",
              "mpc-exact, mpc-central", None, None, float(not wired), 0.0, wired,
              {"session": "P0, P1 and protocols.runtime.dealer.Dealer as processes; the first 1,000 words of "
                          "each party's triple generator against its key under the triples' purpose"}, chance=False),
    ]


def _independence_check(name: str, kind: str, protocol: str, found: dict, details: dict) -> dict:
    """A check record of sims.security.checks.key_independence: passed when no trial was flagged."""
    return check(f"{name} ({found['trials']} trials)", kind, protocol, None, None, float(found["flagged"]), 0.0,
                 not found["flagged"], dict(details, **found), chance=False)
