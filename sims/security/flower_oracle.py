"""A server that chooses the model reads labels off the global AUC: the crafted-model attack on Flower's
evaluation rounds, and what the DP default leaves of it (docs/flower.md, "What a server that chooses the model
can learn").

In a federated evaluation round the server sends the model every client scores its test rows with.  A crafted
model that scores one target row 1.0 and every other row 0.0 (the example's crafted_server_app sends one, in
examples/flower/mpcauc_flower) ranks the target on top of M - 1 tied rows, so the rank-sum statistic of mpc-central is
2T = M y_t - P (T = sum_i (r_i - (M - 1)/2) y_i, 0-based mid-ranks) and the exact AUC is 0.5 + 1/(2P) when the
target is positive, 0.5 - 1/(2N) when negative: an exact round reads one label for certain (the issue's 4 of 4).

The DP default releases (2T + Z_T, P + Z_P) at epsilon per round, label neighbours (protocols.dp.central_law):
for any reading of one round, P(read 1 | y = 1) <= e^eps P(read 1 | y = 0) + delta, so the balanced accuracy of
reading a label is at most e^eps / (1 + e^eps) (+ delta); k rounds on one target compose to e^(k eps) /
(1 + e^(k eps)).  A client's own budget B (and the parties' ``--budget``) allows floor(B / eps) rounds.  This
module samples the circuit's own noise law (circuits.noise_laws, the coins the MPC draws) and measures two
readers: the server's, from the released AUC (read 1 when it exceeds 0.5), and the strongest one, the
likelihood-ratio test on both opened values that knows every other label.  The sampling generator is a
simulation's (not a secret): the parties draw their noise inside the MPC from the CSPRNG.
"""
import argparse
import json
import math

import numpy as np

from ...protocols.dp.central_law import CentralNoise, auc_from_release


def crafted_release(m: int, others_positive: int, label: int, noise: CentralNoise, draws: int, rng) -> tuple:
    """``draws`` releases (2T~, P~) of a round whose model puts the target (``label``) on top of M - 1 tied rows,
    ``others_positive`` of them positive, sampled with the circuit's noise law."""
    positives = others_positive + label
    stat = m * label - positives  # 2T: the target's 2(r - (M-1)/2) = M - 1, every other row's -1
    return (stat + noise.statistic_noise(m).sample(rng, draws), positives + noise.count_noise().sample(rng, draws))


def server_reads(stat, noisy_p, m: int) -> np.ndarray:
    """The server's reading from the round's released AUC: positive when it exceeds 0.5."""
    return np.array([auc_from_release(int(s), int(p), m, "label") > 0.5 for s, p in zip(stat, noisy_p)])


def strongest_reads(stat, noisy_p, m: int, others_positive: int, noise: CentralNoise) -> np.ndarray:
    """The likelihood-ratio test between y = 1 and y = 0 on both opened values, every other label known (the
    discrete Laplace's log-density is -rate |z|): the best reading there is at a uniform prior."""
    rate_t, rate_p = noise.statistic_noise(m).rate, noise.count_noise().rate
    one = -rate_t * np.abs(stat - (m - others_positive - 1)) - rate_p * np.abs(noisy_p - others_positive - 1)
    zero = -rate_t * np.abs(stat + others_positive) - rate_p * np.abs(noisy_p - others_positive)
    return one > zero


def balanced_accuracy(reads_if_one, reads_if_zero) -> float:
    """(P(read 1 | y = 1) + P(read 0 | y = 0)) / 2."""
    return float((np.mean(reads_if_one) + 1 - np.mean(reads_if_zero)) / 2)


def bound(epsilon: float) -> float:
    """The most balanced accuracy any reading of an epsilon-DP release attains: e^eps / (1 + e^eps)."""
    return math.exp(epsilon) / (1 + math.exp(epsilon))


def oracle_rates(m: int, positives: int, epsilon: float, budget: float, draws: int, rng) -> dict:
    """The crafted-model attack on M rows with P positives, one DP release at ``epsilon`` per round, as many rounds
    as ``budget`` allows: each reader's balanced accuracy per round (a new target each round) beside the bound,
    the strongest reader's on one target over every allowed round, and the exact round's (the old default)."""
    noise = CentralNoise(epsilon)
    rounds = int(budget / epsilon + 1e-9)
    others = positives - 1  # the other rows' positives when the target is positive (the same P either way, +-1)
    releases = {y: crafted_release(m, others, y, noise, draws * max(1, rounds), rng) for y in (0, 1)}
    server = balanced_accuracy(*(server_reads(*releases[y], m) for y in (1, 0)))
    strongest = {y: strongest_reads(*releases[y], m, others, noise) for y in (0, 1)}
    per_round = balanced_accuracy(strongest[1], strongest[0])
    combined = None
    if rounds > 1:  # one target read in every allowed round: sum the rounds' log-likelihood ratios
        combined = _combined(releases, m, others, noise, rounds, draws)
    exact = {y: 0.5 + (1 / (2 * (others + 1)) if y else -1 / (2 * (m - others))) for y in (0, 1)}
    return {"m": m, "positives": positives, "epsilon": epsilon, "budget": budget, "rounds": rounds, "draws": draws,
            "server_per_round": server, "strongest_per_round": per_round, "bound_per_round": bound(epsilon),
            "strongest_one_target": combined, "bound_one_target": bound(rounds * epsilon),
            "exact_rounds": balanced_accuracy([exact[1] > 0.5], [exact[0] > 0.5])}


def _combined(releases, m, others, noise, rounds, draws) -> float:
    rate_t, rate_p = noise.statistic_noise(m).rate, noise.count_noise().rate
    scores = {}
    for y, (stat, noisy_p) in releases.items():
        stat, noisy_p = stat[:draws * rounds].reshape(draws, rounds), noisy_p[:draws * rounds].reshape(draws, rounds)
        one = -rate_t * np.abs(stat - (m - others - 1)) - rate_p * np.abs(noisy_p - others - 1)
        zero = -rate_t * np.abs(stat + others) - rate_p * np.abs(noisy_p - others)
        scores[y] = (one - zero).sum(axis=1) > 0
    return balanced_accuracy(scores[1], scores[0])


def main(argv=None) -> int:
    """``python -m mpc_auc.sims.security.flower_oracle``: the rates of :func:`oracle_rates`, as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--m", type=int, default=179, help="rows of the union of test sets (the example's: 179)")
    parser.add_argument("--positives", type=int, default=106, help="their positives (the example's: 106)")
    parser.add_argument("--epsilon", type=float, default=1.0, help="each round's epsilon (Flower's default: 1)")
    parser.add_argument("--budget", type=float, default=2.0, help="a client's own budget (the example's: 2)")
    parser.add_argument("--draws", type=int, default=1_000_000, help="sampled rounds per label and reading")
    parser.add_argument("--seed", type=int, default=2026, help="the simulation's seed (not a secret)")
    args = parser.parse_args(argv)
    rates = oracle_rates(args.m, args.positives, args.epsilon, args.budget, args.draws,
                         np.random.default_rng(args.seed))
    print(json.dumps(rates, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
