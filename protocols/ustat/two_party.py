"""ustat-2pc: the subsampled U-statistic with per-pair 2PC and in-circuit noise (ustats §5, Thm. 5).

1. The aggregator draws k random permutations of the users (OS CSPRNG seed
   unless one is given); permutation t pairs (pi_t(2s), pi_t(2s+1)), so
   every user lies in at most k of the kn/2 pairs.  Two-sample AUC with
   public classes: in each of k rounds, positives and negatives are
   permuted and matched, min(P, N) pairs per round.
2. Each pair's two users evaluate the kernel and its noise in 2PC
   (circuits.kernels).  Here all pairs run as one vectorised 2-party CrypTen
   computation: P0 plays the first user of every pair, P1 the second, and a
   separate dealer process serves the Beaver triples and bit conversions.
   It is a simulation of many independent 2PCs: no value crosses pairs.
3. Each pair-party sends its output share to the aggregator, who alone sees
   the noisy kernel values, and averages (debiasing randomized response).

Privacy per user (basic composition over its <= k pairs): real kernels in
[0, 1] get discrete Laplace of scale k/eps (epsilon/k per pair, sensitivity
the kernel's integer range), so (eps, k delta_pair)-DP with the delta of
circuits.noise_laws.DiscreteLaplace; binary kernels get randomized response at
eps/k per pair (eps/2k per bit for AUC with private labels, two bits per
pair): pure DP, at the effective epsilon of the rounded flip probability.
"""
import time
from dataclasses import dataclass

import numpy as np

from ...circuits.noise_laws import DiscreteLaplace, RandomizedResponse
from ..errors import InputError, PartyFailure
from ..dp.fedauc import generator
from ..validation import checked
from ..dp.swamping import swamped
from ..runtime.control import Service
from ..runtime.metrics import plain
from ..runtime.session import PARTIES, Session
from ..runtime import wire
from ..scalar import ScalarResult

AUC_BITS = 52  # AUC scores in [0, 1] enter as round(s * 2^52)
GINI_BITS = 12  # Gini values in [0, 1] enter as round(x * 2^12): the kernel in units of 2^-12
wire.register(DiscreteLaplace, RandomizedResponse)  # each job carries its per-pair noise law
SERVICE = Service("ustat-pairs", "mpc_auc.protocols.ustat.pair_party")  # the pair-parties' loop
CHUNK = 1 << 19  # pairs per pass of the kernel circuit: bounds the parties' and the dealer's memory
KENDALL_SHIFT = 2**20  # Kendall ratings within +-2^20 enter shifted to [0, 2^21]
KERNELS = ("auc", "auc-private", "gini", "kendall")


@dataclass(frozen=True)
class Sample:
    """One data set: ``values`` (n,) in [0, 1], or (n, 2) integer ratings for kendall; ``labels`` for AUC."""
    values: np.ndarray
    labels: np.ndarray = None


@dataclass(frozen=True)
class Pairs:
    first: np.ndarray
    second: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class UstatRelease(ScalarResult):
    """One ustat-2pc release: a ``float`` (the estimate) with how it was obtained (docs/api.md, "Results are
    numbers")."""
    estimate: float
    kernel: str
    pairs: int
    k: int
    epsilon: float  # per user, as requested
    effective_epsilon: float  # per user, after rounding the circuit's coins
    delta: float  # per user
    received: str  # what the aggregator received
    std: float = None  # the estimate's standard error (standard_error)
    swamped: bool = False  # the noise leaves the estimate uninformative (swamped)
    wall_s: float = 0.0  # the whole vectorised run (all samples of the call): job sent to shares back
    traffic: dict = None  # per pair-party: bytes, rounds, sent_bytes, peak_rss (the whole run)

    @property
    def value(self) -> float:
        """The estimate, under the name every result's value has."""
        return self.estimate

    def __repr__(self) -> str:
        std = "" if self.std is None else f", std={self.std:.3g}"
        return (f"UstatRelease({self.kernel}={self.estimate:.6f}{std}, pairs={self.pairs}, k={self.k}, "
                f"epsilon={self.epsilon:g})")


# ------------------------------------------------------------------ input

def _check(kernel: str, sample: Sample) -> None:
    if kernel not in KERNELS:
        raise InputError(f"kernel must be one of {KERNELS}, not {kernel!r}")
    v = np.asarray(sample.values)
    if kernel == "kendall":
        if v.ndim != 2 or v.shape[1] != 2 or not np.issubdtype(v.dtype, np.integer):
            raise InputError("kendall needs an (n, 2) array of integer ratings")
        if np.abs(v).max(initial=0) >= KENDALL_SHIFT:
            raise InputError("kendall ratings must lie within +-2^20")
    else:
        if v.ndim != 1 or not np.issubdtype(v.dtype, np.number):
            raise InputError(f"{kernel} needs a vector of numbers")
        if not np.all(np.isfinite(v)):
            raise InputError(f"{kernel} values must be finite (NaN or inf found)")
        if v.size and (v.min() < 0 or v.max() > 1):
            raise InputError(f"{kernel} values must lie in [0, 1]")
    if len(v) < 2:
        raise InputError("a U-statistic needs at least two users")
    if kernel.startswith("auc"):
        y = np.asarray(sample.labels)
        if y is None or y.shape != (len(v),):
            raise InputError("labels and scores have mismatched lengths")
        if not np.isin(y, (0, 1)).all():
            raise InputError("labels must be 0 or 1")
        if y.min() == y.max():
            raise InputError("the AUC needs both classes: one class is missing")


def kernel_inputs(kernel: str, sample: Sample) -> np.ndarray:
    """The integers the circuit sees for each user."""
    v = np.asarray(sample.values)
    if kernel == "kendall":
        return v.astype(np.int64) + KENDALL_SHIFT
    return np.rint(v.astype(np.float64) * 2.0**_bits(kernel)).astype(np.int64)


def _bits(kernel: str) -> int:
    return GINI_BITS if kernel == "gini" else AUC_BITS


def bound(kernel: str) -> int:
    """The largest integer the circuit sees for a user (kernel_inputs' range is [0, bound])."""
    return 2 * KENDALL_SHIFT if kernel == "kendall" else 2**_bits(kernel)


# --------------------------------------------------------------- sampling

def permutation_pairs(n: int, k: int, rng: np.random.Generator) -> Pairs:
    """k permutations of n users, each cut into floor(n/2) disjoint pairs: k floor(n/2) pairs."""
    half = n // 2
    perms = np.stack([rng.permutation(n)[:2 * half] for _ in range(k)]).reshape(k, half, 2)
    return Pairs(perms[:, :, 0].ravel(), perms[:, :, 1].ravel())


def cross_pairs(labels: np.ndarray, k: int, rng: np.random.Generator) -> Pairs:
    """k rounds of min(P, N) (positive, negative) pairs, each user in at most one pair per round."""
    pos, neg = np.flatnonzero(labels == 1), np.flatnonzero(labels == 0)
    m = min(len(pos), len(neg))
    first = np.concatenate([rng.permutation(pos)[:m] for _ in range(k)])
    second = np.concatenate([rng.permutation(neg)[:m] for _ in range(k)])
    return Pairs(first, second)


def sample_pairs(kernel: str, sample: Sample, k: int, rng: np.random.Generator) -> Pairs:
    if kernel == "auc":
        return cross_pairs(np.asarray(sample.labels), k, rng)
    return permutation_pairs(len(sample.values), k, rng)


# ------------------------------------------------------------------ noise

def pair_noise(kernel: str, epsilon: float, k: int):
    """The per-pair mechanism: RandomizedResponse (binary kernels) or DiscreteLaplace (real kernels)."""
    k = checked("k", k)
    if kernel == "auc":
        return RandomizedResponse(epsilon / k)
    if kernel == "auc-private":
        return RandomizedResponse(epsilon / (2 * k))
    return DiscreteLaplace(epsilon / k, 2**GINI_BITS if kernel == "gini" else 2)


def user_privacy(kernel: str, epsilon: float, k: int) -> tuple:
    """(effective epsilon, delta) per user by basic composition over its <= k pairs."""
    noise = pair_noise(kernel, epsilon, k)
    if isinstance(noise, RandomizedResponse):
        per_pair = noise.effective_epsilon * (2 if kernel == "auc-private" else 1)
        return per_pair * k, 0.0
    return epsilon, k * noise.delta


# --------------------------------------------------------------- estimate

def debiased(kernel: str, released: np.ndarray, noise) -> np.ndarray:
    """Each pair's released value as an unbiased kernel value on the statistic's scale (RR: fedauc eq. 4)."""
    if kernel.startswith("auc"):
        return (released - noise.flip) / (1 - 2 * noise.flip)  # auc-private: rows h and g
    if kernel == "gini":
        return released / 2**GINI_BITS
    return released - 1.0  # kendall: 1 + tau kernel


def estimate(kernel: str, released: np.ndarray, noise) -> float:
    """The aggregator's average of the released values (auc-private: the ratio of the two averages)."""
    values = debiased(kernel, released, noise)
    if kernel == "auc-private":
        h, g = values.mean(axis=1)
        return float(h / g) if g > 0 else float("nan")
    return float(values.mean())


def standard_error(kernel: str, released: np.ndarray, noise) -> float:
    """The estimate's standard error from the released values alone, pairs taken as independent.

    Noise and kernel spread both enter; the covariance of pairs that share a user is left out, so
    the figure is a slight underestimate when the kernel's own spread dominates (ustats Thm. 5's
    sigma1 term), and exact in the noise-dominated regime.  auc-private: the delta method on h/g.
    """
    values = debiased(kernel, released, noise)
    n = values.shape[-1]
    if kernel == "auc-private":
        h, g = values
        ratio = h.mean() / g.mean() if g.mean() > 0 else 0.0
        return float(np.std(h - ratio * g, ddof=1) / (abs(g.mean()) * np.sqrt(n))) if g.mean() > 0 else \
            float("inf")
    return float(np.std(values, ddof=1) / np.sqrt(n))


def kernel_swamped(kernel: str, estimate_: float, std: float) -> bool:
    """protocols.dp.swamping on the kernel's range (tau: [-1, 1]; the others: [0, 1])."""
    return swamped(estimate_, std, *((-1.0, 1.0) if kernel == "kendall" else (0.0, 1.0)))


def clear_kernel(kernel: str, a: np.ndarray, b: np.ndarray, la=None, lb=None, rng=None) -> np.ndarray:
    """The kernel per pair in the clear, in the circuit's integer units (AUC: the tie-coin bit(s))."""
    if kernel == "gini":
        return np.abs(a - b)
    if kernel == "kendall":
        return 1 + np.sign((a[:, 0] - b[:, 0]) * (a[:, 1] - b[:, 1]))
    bit = np.where(a == b, rng.integers(0, 2, size=len(a)), a > b).astype(np.int64)
    if kernel == "auc":
        return bit
    g = la ^ lb
    return np.stack([g & (bit ^ la ^ 1), g])


def simulate(kernel: str, sample: Sample, epsilon: float, k: int, rng: np.random.Generator) -> float:
    """The protocol with its 2PC replaced by the clear kernel and the circuit's exact noise law (sims only).

    The simulation's boundary: sims.ustat_experiments hands over its config's epsilon, checked here."""
    _check(kernel, sample)
    pairs = sample_pairs(kernel, sample, k, rng)
    x = kernel_inputs(kernel, sample)
    labels = None if sample.labels is None else np.asarray(sample.labels, dtype=np.int64)
    la, lb = (None, None) if labels is None else (labels[pairs.first], labels[pairs.second])
    values = clear_kernel(kernel, x[pairs.first], x[pairs.second], la, lb, rng)
    noise = pair_noise(kernel, checked("epsilon", epsilon), k)
    if isinstance(noise, RandomizedResponse):
        released = values ^ noise.sample(rng, values.shape)
    else:
        released = values + noise.sample(rng, len(values))
    return estimate(kernel, released, noise)


# ------------------------------------------------------------ party side

@wire.message
@dataclass(frozen=True)
class PairJob:
    kernel: str
    inputs: np.ndarray  # this pair-party's users' integers, one row per pair
    labels: np.ndarray  # auc-private: this pair-party's users' labels
    noise: object


# ------------------------------------------------------ aggregator side

def ustat_2pc(kernel: str, samples: list, epsilon: float, k: int = 1, seed=None, timeout_s: float = 60.0,
              on_progress=None) -> list:
    """Run ustat-2pc on each sample (independent data sets or draws) in one session of the parties.

    Returns one UstatRelease per sample.  Raises InputError on bad input
    (before any process starts) and PartyFailure if a role fails.  The protocol's boundary: the API, the
    CLI and sims.bench_ustat hand over the user's epsilon, checked here.
    """
    epsilon = checked("epsilon", epsilon)
    if not samples:
        raise InputError("no sample to evaluate")
    for s in samples:
        _check(kernel, s)
    rng = generator(seed)
    noise = pair_noise(kernel, epsilon, k)
    pairs = [sample_pairs(kernel, s, k, rng) for s in samples]
    encoded = [kernel_inputs(kernel, s) for s in samples]
    sides = []
    for side in ("first", "second"):
        rows = [x[getattr(p, side)] for x, p in zip(encoded, pairs)]
        labels = None
        if kernel == "auc-private":
            labels = np.concatenate([np.asarray(s.labels, dtype=np.int64)[getattr(p, side)]
                                     for s, p in zip(samples, pairs)])
        sides.append(PairJob(kernel, np.concatenate(rows), labels, noise))
    with Session(SERVICE, (), provider="TTP", timeout_s=timeout_s, on_progress=on_progress) as session:
        start = time.perf_counter()
        for role, job in zip(PARTIES, sides):
            session.send(role, "job", job)
        (share0, meter0), (share1, meter1) = [session.recv(role, "result") for role in PARTIES]
        wall = time.perf_counter() - start
        for role in PARTIES:
            session.send(role, "job", None)
    released = share0 ^ share1 if share0.dtype == np.int8 else share0 + share1
    if released.dtype == np.int8 and not np.isin(released, (0, 1)).all():
        raise PartyFailure("P1", "the pair-parties' output shares do not combine to bits")
    eff, delta = user_privacy(kernel, epsilon, k)
    results, start = [], 0
    for p in pairs:
        count = len(p.first)
        part = released[..., start:start + count].astype(np.int64)
        start += count
        value, std = estimate(kernel, part, noise), standard_error(kernel, part, noise)
        results.append(UstatRelease(value, kernel, count, k, epsilon, eff, delta,
                                    received="one noisy kernel value per pair (its two shares)", std=std,
                                    swamped=kernel_swamped(kernel, value, std), wall_s=wall,
                                    traffic=plain(dict(zip(PARTIES, (meter0, meter1))))))
    return results
