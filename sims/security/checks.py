"""The security checks of ``mpc-auc security``: DP audits, label inference, top-K and seed-recovery attacks.

Each function returns measurements or table rows, which the suite's steps
(sims.security.release_checks, collusion_checks) make check records; the
mechanisms are run through the project's own code (protocols.dp.fedauc,
protocols.mpc.central, protocols.dp.score_ldp), never re-implemented here.

Worst-case neighbours (label DP): K = M clients with one sample each, ranks
0..M-1 distinct, and the target sample at the top rank M-1, so one label flip
moves localSum (fedauc) by its whole sensitivity and 2T (mpc-central) by M-1.
Record DP (mpc-central): D holds one positive at the top and M-1 negatives,
D' the same record as a negative: 2U moves by 2(M-1), P by 1.
"""
import contextlib
import hashlib
import hmac
import math
import pickle
import secrets
from unittest import mock

import numpy as np
import torch

from ...circuits.crypten_compat import crypten
from ...circuits.streams import KEY_BYTES
from ...circuits.noise_laws import DiscreteLaplace
from ...protocols.clear_auc import rank_sum_auc
from ...protocols.dp import dpauc, fedauc, score_ldp
from ...protocols.dp.central_law import CentralNoise
from ...protocols.dp.curve_law import CurveNoise, slice_counts, tree_nodes
from ...protocols.dp.suite import THRESHOLDS
from ...protocols.metric_catalogue import cut_positions
from ...protocols.mpc.central import mpc_central_auc
from ...protocols.runtime.csprng import TUPLES, KeyedGenerator
from ...protocols.runtime.dealer import COMPUTE_PARTIES, Dealer
from ...protocols.runtime.session import Placement
from ...protocols.ustat.two_party import pair_noise, user_privacy
from .dp_audit import epsilon_lower_bound, gaussian_llr, laplace_llr

AUDIT_MARGIN = 0.05  # eps_lb may exceed the claim by this much (relative) before a claim counts as broken


def _ranked(labels) -> fedauc.RankedClients:
    m = len(labels)
    return fedauc.RankedClients(np.arange(m), np.arange(m, dtype=np.float64), np.asarray(labels, dtype=np.int64),
                                m, "audit")


def _neighbours(m: int, rng):
    """(labels of D, labels of D'): random labels, the top-ranked sample positive in D and negative in D'."""
    labels = rng.integers(0, 2, m)
    d, d2 = labels.copy(), labels.copy()
    d[-1], d2[-1] = 1, 0
    return d, d2


# ------------------------------------------------------------------ audits

def audit_rr(epsilon: float, draws: int, rng, flip_epsilon: float = None):
    """fedauc-rr's view of the target: its randomized label (flip probability 1/(1+e^eps))."""
    d, d2 = _neighbours(8, rng)
    q = fedauc.flip_probability(flip_epsilon or epsilon)
    views = [fedauc.flip_labels(labels, q, draws, rng)[:, -1].astype(float) for labels in (d, d2)]
    return epsilon_lower_bound(*views), 0.0


def audit_laplace(sensitivity: str, epsilon: float, draws: int, rng, noise_epsilon: float = None):
    """FedAUC_Lap's release for the target client (localSum', localP'), reduced to the auditor's LLR."""
    d, d2 = _neighbours(8, rng)
    honest = fedauc.laplace_statistics(_ranked(d), epsilon, 1, rng, sensitivity)
    scales = np.array([honest.noise["localSum"][1][-1], honest.noise["localP"][1][-1]])
    released = [fedauc.laplace_statistics(_ranked(labels), noise_epsilon or epsilon, draws, rng, sensitivity)
                for labels in (d, d2)]
    means = [np.array([s.local_sum[-1], s.local_p[-1]]) for s in released]
    views = [laplace_llr(np.stack([s.released_sum[:, -1], s.released_p[:, -1]], axis=1), means[0], means[1], scales)
             for s in released]
    return epsilon_lower_bound(*views), 0.0


def _label_statistics(labels) -> tuple:
    """(2T, P) of mpc-central for labels at ranks 0..M-1."""
    m = len(labels)
    return int(((2 * np.arange(m) - (m - 1)) * labels).sum()), int(labels.sum())


def audit_gaussian(epsilon: float, delta: float, draws: int, rng):
    """FedAUC's analytic-Gaussian release for the target client, reduced to the auditor's LLR ((eps, delta) claim)."""
    d, d2 = _neighbours(8, rng)
    released = [fedauc.gaussian_statistics(_ranked(labels), epsilon, delta, draws, rng) for labels in (d, d2)]
    sigma = np.array([released[0].noise["localSum"][1][-1], released[0].noise["localP"][1][-1]])
    means = [np.array([s.local_sum[-1], s.local_p[-1]]) for s in released]
    views = [gaussian_llr(np.stack([s.released_sum[:, -1], s.released_p[:, -1]], axis=1), means[0], means[1], sigma)
             for s in released]
    return epsilon_lower_bound(*views, delta=delta), delta


def audit_adaptive(epsilon: float, draws: int, rng, delta: float = 0.0):
    """Adaptive FedAUC (fedauc §5.3; Gaussian when delta > 0) for the target client: localP' and the residual
    localSum' - mean(r) localP' = <v', y> + ||v'|| s2, each with its own noise, reduced to the LLR."""
    d, d2 = _neighbours(8, rng)
    released = []
    for labels in (d, d2):
        ranked = _ranked(labels)
        stats = fedauc.adaptive_gaussian_statistics(ranked, epsilon, delta, draws, rng) if delta else \
            fedauc.adaptive_statistics(ranked, epsilon, draws, rng)
        mean_rank = ranked.rank[-1]  # one sample per client: its mean rank is its rank
        view = np.stack([stats.released_p[:, -1], stats.released_sum[:, -1] - mean_rank * stats.released_p[:, -1]],
                        axis=1)
        centre = np.array([stats.local_p[-1], stats.local_sum[-1] - mean_rank * stats.local_p[-1]])
        scales = np.array([term[1][-1] for term in stats.noise.values()])
        released.append((view, centre, scales))
    llr = gaussian_llr if delta else laplace_llr
    views = [llr(view, released[0][1], released[1][1], released[0][2]) for view, _, _ in released]
    return epsilon_lower_bound(*views, delta=delta), delta


def audit_dpauc_rr(epsilon: float, draws: int, rng):
    """DPAUC_RR: the server's positives per score bin after randomized response; the target has its own bin."""
    m = 8
    thresholds = dpauc.paper_thresholds(THRESHOLDS)
    scores = (np.arange(m) + 0.5) / m
    counts = [dpauc.confusion_counts(np.zeros(m, dtype=np.int64), scores, labels, thresholds, 1)
              for labels in _neighbours(m, rng)]
    target = int(np.searchsorted(np.sort(thresholds), scores[-1], side="right"))
    views = [dpauc.observed_positives(c, epsilon, draws, rng)[:, target].astype(float) for c in counts]
    return epsilon_lower_bound(*views), 0.0


def audit_cldp(alpha: float, draws: int, rng, levels: int = 100):
    """score-cldp between adjacent levels (d = 1, so the claim is alpha): the reported level."""
    views = [score_ldp.cldp_reports(np.full(draws, level), levels, alpha, rng).astype(float) for level in (51, 50)]
    return epsilon_lower_bound(*views), 0.0


def audit_k_ary(epsilon: float, draws: int, rng):
    """label-rr-onehot (mindspore-label-dp, n = 2): the target's reported class."""
    d, d2 = _neighbours(8, rng)
    views = [fedauc.k_ary_randomized_response(labels, 2, epsilon, draws, rng)[:, -1].astype(float)
             for labels in (d, d2)]
    return epsilon_lower_bound(*views), 0.0


def audit_score_dp(epsilon: float, draws: int, rng):
    """score-dp: one score moved across the whole declared range [0, 1] (sensitivity 1); the noisy score."""
    views = [laplace_llr(score_ldp.laplace_scores(np.full(draws, s), epsilon, rng)[:, None], 1.0, 0.0, 1 / epsilon)
             for s in (1.0, 0.0)]
    return epsilon_lower_bound(*views), 0.0


def audit_dpauc(kind: str, epsilon: float, draws: int, rng):
    """dpauc's released counts (one client: its noise is one Laplace per count), label flip of the top sample.

    kind "histogram": positives and negatives per score bin, Lap(2/eps) each; "threshold": TP, FP, FN, TN at
    each of the |Theta| thresholds, Lap(4 |Theta| / eps) each (the paper's accounting).
    """
    return epsilon_lower_bound(*dpauc_views(kind, epsilon, draws, rng)), 0.0


def threshold_inference(epsilon: float, draws: int, rng) -> float:
    """Threshold-difference inference on dpauc's per-threshold counts: the attacker knows every other sample
    and reads the target's label from the counts around its score (likelihood ratio over all of them)."""
    on_positive, on_negative = dpauc_views("threshold", epsilon, draws, rng)
    return float((np.mean(on_positive > 0) + np.mean(on_negative < 0)) / 2)


def dpauc_views(kind: str, epsilon: float, draws: int, rng, chunk: int = 20_000) -> list:
    """The auditor's LLR of dpauc's release on D (target positive) and on D' (target negative).

    Drawn in chunks (each release holds hundreds of counts), keeping only the counts that differ between
    D and D': the others add nothing to the LLR."""
    m = 8
    thresholds = dpauc.paper_thresholds(THRESHOLDS)
    counts = [dpauc.confusion_counts(np.zeros(m, dtype=np.int64), (np.arange(m) + 0.5) / m, labels, thresholds, 1)
              for labels in _neighbours(m, rng)]
    if kind == "histogram":
        means = [np.concatenate([c.bins_pos[0], c.bins_neg[0]]) for c in counts]
    else:
        means = [np.concatenate([c.tp[0], c.fp[0], c.positives[0] - c.tp[0], c.negatives[0] - c.fp[0]])
                 for c in counts]
    differ = means[0] != means[1]
    views = [[], []]
    for start in range(0, draws, chunk):
        n = min(chunk, draws - start)
        for side, c in enumerate(counts):
            parts, scale = (dpauc.noisy_histograms if kind == "histogram" else dpauc.noisy_threshold_counts)(
                c, epsilon, n, rng)
            released = np.concatenate(parts, axis=1)[:, differ]
            views[side].append(laplace_llr(released, means[0][differ], means[1][differ], scale))
    return [np.concatenate(v) for v in views]


def enumeration_attack(m: int, targets: int, rng) -> float:
    """Stoddard et al. 2014 on an exact released AUC (mpc-exact's output): the attacker knows every score and
    every label but the target's, computes the AUC under both labels and keeps the one that was released."""
    scores, labels = rng.random(m), rng.integers(0, 2, m)
    labels[:2] = (0, 1)  # both classes, whatever the target
    released = rank_sum_auc(scores, labels)
    correct = 0
    for k in rng.choice(np.arange(2, m), targets, replace=False):
        candidates = []
        for value in (0, 1):
            trial = labels.copy()
            trial[k] = value
            candidates.append(abs(rank_sum_auc(scores, trial) - released))
        correct += int(int(np.argmin(candidates)) == labels[k])
    return correct / targets


def central_statistics(neighbours: str, m: int, rng):
    """(2T or 2U, P) on D and on D' (module docstring)."""
    if neighbours == "label":
        return [_label_statistics(y) for y in _neighbours(m, rng)]
    return [(2 * (m - 1), 1), (0, 0)]


def _central_views(released, exact, noise: CentralNoise, m: int):
    """The auditor's LLR of each released (2T~, P~) pair."""
    scales = np.array([1 / noise.statistic_noise(m).rate, 1 / noise.count_noise().rate])
    return laplace_llr(released, np.array(exact[0]), np.array(exact[1]), scales)


def audit_central(neighbours: str, epsilon: float, draws: int, rng, calibrated_for: str = None):
    """mpc-central's two opened values under the circuit's noise law, reduced to the auditor's LLR.

    calibrated_for: the neighbour relation whose sensitivity the noise uses (a control: record
    neighbours with noise for label DP).
    """
    m = 8
    noise = CentralNoise(epsilon, neighbours=calibrated_for or neighbours)
    stat, count = noise.statistic_noise(m), noise.count_noise()
    exact = central_statistics(neighbours, m, rng)
    views = [_central_views(np.stack([s + stat.sample(rng, draws), p + count.sample(rng, draws)], axis=1), exact,
                            noise, m) for s, p in exact]
    return epsilon_lower_bound(*views), noise.delta(m)


def audit_central_mpc(epsilon: float, draws: int, rng, ledger_dir: str):
    """mpc-central (label DP) through the real MPC: local roles over TLS, the noise drawn in the circuit,
    ``draws`` repetitions of the release per data set (charged to a throwaway ledger in ``ledger_dir``)."""

    m = 8
    labels = _neighbours(m, rng)
    datasets = [[(f"client-{i}", [i / m], [int(y[i])]) for i in range(m)] for y in labels]
    noise = CentralNoise(epsilon, repetitions=draws)
    releases = mpc_central_auc(datasets, noise, placement=Placement(ledger=ledger_dir), timeout_s=300)
    exact = [_label_statistics(y) for y in labels]
    views = [_central_views(np.array(r.opened, dtype=np.float64), exact, noise, m) for r in releases]
    return epsilon_lower_bound(*views), CentralNoise(epsilon).delta(m)


CURVE_POINTS = 8  # the audited DP curve: M = 8 rows, one per cut (every slice a single row)


def _curve_views(released, exact, scale: float):
    """The auditor's LLR of each released vector of tree nodes."""
    return laplace_llr(released, np.asarray(exact[0]), np.asarray(exact[1]), scale)


def audit_curve(epsilon: float, draws: int, rng, calibrated_levels: int = None):
    """mpc-central's DP curve under the circuit's noise law: the tree nodes of D and D' (the top-ranked row's
    label flipped: one node per level moves) plus each node's discrete Laplace, reduced to the LLR.

    calibrated_levels: the number of levels the noise is spread over (a control: 1 instead of L + 1, the
    scale a release per cut without the tree's accounting would use for one level)."""
    m = CURVE_POINTS
    noise = CurveNoise(epsilon, CURVE_POINTS)
    node = noise.node_noise(m) if calibrated_levels is None else DiscreteLaplace(epsilon / calibrated_levels, 1)
    flagged = cut_positions(m, CURVE_POINTS)
    exact = [tree_nodes(slice_counts(labels, flagged)) for labels in _neighbours(m, rng)]
    views = [_curve_views(e + node.sample(rng, draws * len(e)).reshape(draws, len(e)), exact, 1 / node.rate)
             for e in exact]
    return epsilon_lower_bound(*views), noise.delta(m)


def audit_curve_mpc(epsilon: float, draws: int, rng, ledger_dir: str):
    """The DP curve through the real MPC: local roles over TLS, the nodes' noise drawn in the circuit, ``draws``
    repetitions of the release per data set (charged to a throwaway ledger in ``ledger_dir``)."""
    m = CURVE_POINTS
    labels = _neighbours(m, rng)
    datasets = [[(f"client-{i}", [i / m], [int(y[i])]) for i in range(m)] for y in labels]
    noise = CurveNoise(epsilon, CURVE_POINTS, repetitions=draws)
    releases = mpc_central_auc(datasets, noise, placement=Placement(ledger=ledger_dir), timeout_s=300)
    flagged = cut_positions(m, CURVE_POINTS)
    exact = [tree_nodes(slice_counts(y, flagged)) for y in labels]
    scale = 1 / noise.node_noise(m).rate
    views = [_curve_views(np.array(r.opened, dtype=np.float64), exact, scale) for r in releases]
    return epsilon_lower_bound(*views), CurveNoise(epsilon, CURVE_POINTS).delta(m)


def ustat_views(kernel: str, epsilon: float, k: int, draws: int, rng) -> tuple:
    """ustat-2pc: the aggregator's view of one user's k pairs when the user's value moves to the other end
    of its range (every one of its pair kernels moves by the kernel's sensitivity, or its bits flip), under
    the circuit's per-pair noise law; reduced to the LLR.  Returns (views on D and D', claimed eps, delta)."""

    noise = pair_noise(kernel, epsilon, k)
    claimed, delta = user_privacy(kernel, epsilon, k)
    if kernel.startswith("auc"):  # one RR bit per pair (two for auc-private), all flipped by the neighbour
        bits = k * (2 if kernel == "auc-private" else 1)
        weight = math.log((1 - noise.flip) / noise.flip)
        views = [weight * np.sum(2 * ((value ^ noise.sample(rng, (draws, bits))) == 1) - 1, axis=1).astype(float)
                 for value in (1, 0)]
    else:
        shift = noise.sensitivity
        views = [laplace_llr((value + noise.sample(rng, draws * k)).reshape(draws, k), shift, 0.0, 1 / noise.rate)
                 for value in (shift, 0)]
    return views, claimed, delta


def audit_ustat(kernel: str, epsilon: float, k: int, draws: int, rng):
    views, claimed, delta = ustat_views(kernel, epsilon, k, draws, rng)
    return epsilon_lower_bound(*views, delta=delta), claimed, delta


def ustat_inference(kernel: str, epsilon: float, k: int, draws: int, rng) -> tuple:
    """Accuracy of the likelihood-ratio aggregator deciding between a user's two extreme values; its bound."""
    (on_d, on_d2), claimed, delta = ustat_views(kernel, epsilon, k, draws, rng)
    return float((np.mean(on_d > 0) + np.mean(on_d2 < 0) + np.mean(on_d == 0)) / 2), inference_bound(claimed,
                                                                                                        delta)


# ------------------------------------------------------- label inference

def label_inference(mechanism: str, epsilon: float, m: int, draws: int, rng, delta: float = 1e-5) -> float:
    """Accuracy of the optimal (likelihood-ratio) attacker who knows everything but one client's label,
    at K = M (one sample per client), over every client and ``draws`` releases."""
    labels = rng.integers(0, 2, m)
    ranked = _ranked(labels)
    if mechanism == "fedauc-vanilla":
        guess = np.tile(fedauc.exact_client_statistics(ranked)[1], (draws, 1))
    elif mechanism == "fedauc-rr":
        guess = fedauc.flip_labels(labels, fedauc.flip_probability(epsilon), draws, rng)
    elif mechanism in ("fedauc-lap-local", "fedauc-lap-global", "fedauc-gauss-local"):
        guess = _statistics_guess(mechanism, ranked, epsilon, delta, draws, rng)
    elif mechanism == "mpc-central":
        guess = _central_guess(labels, epsilon, draws, rng)
    else:
        raise ValueError(f"no label-inference attack for {mechanism!r}")
    return float(np.mean(guess == labels[None, :]))


def _statistics_guess(mechanism, ranked, epsilon, delta, draws, rng):
    sensitivity = "global" if mechanism.endswith("global") else "local"
    if mechanism == "fedauc-gauss-local":
        stats = fedauc.gaussian_statistics(ranked, epsilon, delta, draws, rng, sensitivity)
    else:
        stats = fedauc.laplace_statistics(ranked, epsilon, draws, rng, sensitivity)
    (_, sum_scale), (_, p_scale) = stats.noise["localSum"], stats.noise["localP"]
    one = np.stack([ranked.rank, np.ones_like(ranked.rank)], axis=-1)  # the client's (localSum, localP) if y = 1
    released = np.stack([stats.released_sum, stats.released_p], axis=-1)
    scales = np.stack([sum_scale, p_scale], axis=-1)
    llr = (gaussian_llr if mechanism == "fedauc-gauss-local" else laplace_llr)(released, one, np.zeros_like(one),
                                                                                scales)
    return (llr > 0).astype(int)


def _central_guess(labels, epsilon, draws, rng):
    m = len(labels)
    noise = CentralNoise(epsilon)
    stat, count = noise.statistic_noise(m), noise.count_noise()
    twice_rank = 2 * np.arange(m)
    exact = np.array([int(((twice_rank - (m - 1)) * labels).sum()), int(labels.sum())])
    released = exact + np.stack([stat.sample(rng, draws), count.sample(rng, draws)], axis=1)  # (draws, 2)
    contribution = np.stack([twice_rank - (m - 1), np.ones(m)], axis=1)  # a positive's share of (2T, P)
    with_one = exact[None, :] + (1 - labels)[:, None] * contribution  # the others' labels are known
    with_zero = with_one - contribution
    scales = np.array([1 / stat.rate, 1 / count.rate])
    llr = laplace_llr(released[:, None, :], with_one[None], with_zero[None], scales)
    return (llr > 0).astype(int)


def inference_bound(epsilon: float, delta: float = 0.0) -> float:
    """Largest accuracy any attacker reaches on one label under (eps, delta)-label-DP with a fair prior."""
    return (math.exp(epsilon) + delta) / (math.exp(epsilon) + 1)


# ------------------------------------------------------------ top-K attack

def top_k_precision(scores_seen, labels, ks) -> list:
    """Precision of "the K highest scores the server sees are positives" (dpauc Table 2, fedauc Table 8)."""
    order = np.argsort(-np.asarray(scores_seen), kind="stable")
    return [float(labels[order[:k]].mean()) for k in ks]


def top_k_views(evalset, epsilon: float, rng) -> dict:
    """What each exposure gives the server per sample: clear scores, Laplace-noised scores (score-dp), or
    nothing (the MPC protocols: the attacker can only pick K samples at random)."""
    return {"clear scores (dpauc-threshold, dpauc-rr, fedauc's server sort)": evalset.score,
            f"score-dp (Lap(1/eps), eps={epsilon:g})": score_ldp.laplace_scores(evalset.score, epsilon, rng),
            "mpc-exact, mpc-central (no per-sample output)": rng.random(evalset.m)}


# ---------------------------------------------------- stock-CrypTen control

def stock_share(seed: int, size=(1000,)) -> torch.Tensor:
    """A party's share of Beaver's a as stock CrypTen draws it from its TTP seed (torch's MT19937)."""
    g = torch.Generator()
    g.manual_seed(seed)
    return torch.randint(-(2 ** 63), 2 ** 63 - 1, size, generator=g, dtype=torch.long)


def stock_dealer_seeds(dealer_seed: int) -> list:
    """Stock TTPServer._setup_generators: one seed per party, in a row, from one generator."""
    g = torch.Generator()
    g.manual_seed(dealer_seed)
    return [int(torch.randint(-(2 ** 63), 2 ** 63 - 1, (), generator=g)) for _ in range(2)]


# ------------------------------------------------- dealer key independence

class DerivedKeyDealer(Dealer):
    """A deliberately weakened dealer (the controls below): the project's Dealer with k_0 drawn as it draws it
    and k_1 = derive(k_0)."""

    @classmethod
    def draw_keys(cls) -> list:
        k0 = secrets.token_bytes(KEY_BYTES)
        return [k0, cls.derive(k0)]

    @staticmethod
    def derive(k0: bytes) -> bytes:
        raise NotImplementedError


class TaggedHashDealer(DerivedKeyDealer):
    """Control: k_1 = SHA-256("k1" || k_0)."""

    @staticmethod
    def derive(k0: bytes) -> bytes:
        return hashlib.sha256(b"k1" + k0).digest()


class HmacDealer(DerivedKeyDealer):
    """Control: k_1 = HMAC-SHA256 keyed with k_0 of "p1"."""

    @staticmethod
    def derive(k0: bytes) -> bytes:
        return hmac.new(k0, b"p1", hashlib.sha256).digest()


class XorDealer(DerivedKeyDealer):
    """Control: k_1 = k_0 XOR a constant (0x5c in every byte)."""

    @staticmethod
    def derive(k0: bytes) -> bytes:
        return bytes(b ^ 0x5C for b in k0)


WEAKENED_DEALERS = {'k_1 = SHA-256("k1" || k_0)': TaggedHashDealer, 'k_1 = HMAC-SHA256(k_0, "p1")': HmacDealer,
                    "k_1 = k_0 XOR 0x5c..5c": XorDealer}


class _ControlledSetUp:
    """A dealer's key set-up (Dealer._setup_generators, run in this process) under the check's control: its
    randomness source ``secrets.token_bytes`` answers the i-th call with script[i] (``fresh(n)`` beyond the
    script or where the length asked differs), and CrypTen's communicator records what it sends each party."""
    ttp_group = "ttp"

    def __init__(self, dealer_cls: type, fresh):
        self.dealer_cls, self.fresh = dealer_cls, fresh
        self.script, self.answered, self.sent = [], [], {}

    def token_bytes(self, n=None) -> bytes:
        n = secrets.DEFAULT_ENTROPY if n is None else n
        i = len(self.answered)
        self.answered.append(self.script[i] if i < len(self.script) and len(self.script[i]) == n else self.fresh(n))
        return self.answered[-1]

    def send_obj(self, obj, dst, group):
        self.sent.setdefault(dst, []).append(obj)

    @contextlib.contextmanager
    def installed(self):
        """``secrets.token_bytes`` and CrypTen's communicator replaced by this object's, in this process."""
        with mock.patch.object(secrets, "token_bytes", self.token_bytes), \
                mock.patch.object(crypten.communicator, "get", lambda: self):
            yield self

    def run(self, script: list) -> tuple:
        """(What each compute party was sent, pickled; the draws answered) when the set-up runs on ``script``
        (inside :meth:`installed`)."""
        self.script, self.answered, self.sent = script, [], {}
        self.dealer_cls.__new__(self.dealer_cls)._setup_generators()
        return [pickle.dumps(self.sent.get(party, [])) for party in COMPUTE_PARTIES], self.answered


def _flip(script: list, i: int, bit: int) -> list:
    """The script with one bit of its i-th draw flipped."""
    draw = bytearray(script[i])
    draw[bit // 8] ^= 1 << bit % 8
    return script[:i] + [bytes(draw)] + script[i + 1:]


def key_dependence(dealer_cls: type, rng) -> dict:
    """One trial: which bits of the dealer's draws each compute party's set-up view (everything the dealer
    sends it) depends on.  The draws come from ``rng`` (the trial's script, not a secret); the set-up runs
    once on them, once more on the same draws (its views must be reproduced: a key from any other source or
    state is not), and once per bit of them with that bit flipped.  Independent: reproduced, no bit moves
    both parties' views, and each view moves with at least 256 bits."""
    moves = {party: set() for party in COMPUTE_PARTIES}
    with _ControlledSetUp(dealer_cls, rng.bytes).installed() as set_up:
        views, script = set_up.run([])
        reproduced = set_up.run(script)[0] == views
        for i, draw in enumerate(script):
            for bit in range(8 * len(draw)):
                flipped = set_up.run(_flip(script, i, bit))[0]
                for party in COMPUTE_PARTIES:
                    if flipped[party] != views[party]:
                        moves[party].add((i, bit))
    shared = moves[0] & moves[1]
    bits = [len(moves[party]) for party in COMPUTE_PARTIES]
    return {"draws": len(script), "reproduced": reproduced, "bits": bits, "shared": len(shared),
            "independent": reproduced and not shared and min(bits) >= 8 * KEY_BYTES}


def key_independence(dealer_cls: type, trials: int, rng) -> dict:
    """:func:`key_dependence` over ``trials`` independent scripts: how many were flagged, and the extremes."""
    runs = [key_dependence(dealer_cls, rng) for _ in range(trials)]
    return {"trials": trials, "flagged": sum(not r["independent"] for r in runs),
            "not reproduced": sum(not r["reproduced"] for r in runs),
            "draws": sorted({r["draws"] for r in runs}),
            "most shared bits": max(r["shared"] for r in runs),
            "fewest bits P0's view moves with": min(r["bits"][0] for r in runs),
            "fewest bits P1's view moves with": min(r["bits"][1] for r in runs)}


def dealer_key_party(ctx, words: int) -> dict:
    """Each compute party's dealer key and the first ``words`` words of its triple generator, as the dealer
    set them up in this session (protocols.runtime.csprng installs both into CrypTen's TTP client)."""

    client = crypten.mpc.provider.ttp_provider.TTPClient.get()
    return {"key": ctx.stream_key, "triple words": client.generator.words((words,))}


def expands_its_key(party: dict) -> bool:
    """Is a party's triple generator (:func:`dealer_key_party`) the expansion of the key it received?"""
    words = party["triple words"]
    return np.array_equal(KeyedGenerator(party["key"], TUPLES).words(words.shape), words)


def seed_recovery(seed0: int, p1_share: torch.Tensor, bits: int) -> bool:
    """P0's attack: search dealer seeds < 2^bits for one that gives P0's seed, rebuild P1's share from it."""
    for candidate in range(2 ** bits):
        seeds = stock_dealer_seeds(candidate)
        if seeds[0] == seed0 and torch.equal(stock_share(seeds[1], tuple(p1_share.shape)), p1_share):
            return True
    return False
