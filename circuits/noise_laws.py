"""The noise laws of the in-circuit gadgets (circuits.noise), as public parameters: coin thresholds,
randomized response and the truncated discrete Laplace, with their exact privacy and variance.

Imported by the coordinator and the clear-side simulations without torch or CrypTen.
Each law guards its own parameters (they are also decoded from a peer's message): a finite epsilon > 0, an
integer sensitivity >= 1, a bias in [0, 1], refused in protocols.validation's words (circuits.intervals).

Privacy of the discrete Laplace as implemented (stated by :class:`DiscreteLaplace`):
B is the least width with lam^(2^B) <= 2^-L.  Coupling coin by coin, the
sampled Z~ is within total variation tau = |p~_nz - p_nz| + lam^(2^B) +
sum_i |p~_i - p_i| of the exact discrete Laplace Z (the truncation costs
P(G >= 2^B) = lam^(2^B), each rounding at most 2^-(L+1)).  f(x) + Z is
eps-DP when |f(x) - f(x')| <= Delta, so f(x) + Z~ is (eps, delta)-DP with
delta = (1 + e^eps) tau:  P[f(x)+Z~ in S] <= P[f(x)+Z in S] + tau
<= e^eps P[f(x')+Z in S] + tau <= e^eps P[f(x')+Z~ in S] + (1 + e^eps) tau.
Its variance is exact: Var Z~ = p~_nz E[(1 + G~)^2].
"""
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .intervals import EPSILON, Interval, admitted

ROUNDING_BITS = 48  # L: every coin's bias is a multiple of 2^-L
MAX_WIDTH = 60  # B: noise magnitudes below 2^60 leave room in the 64-bit ring for the statistic
BIAS = Interval(float, 0, 1, what="a coin's bias")
SENSITIVITY = Interval(int, 1, what="a sensitivity in integer units")


def coin_threshold(p: float, bits: int = ROUNDING_BITS, up: bool = False) -> int:
    """T with T / 2^bits the nearest (``up``: the least not below) multiple of 2^-bits to p."""
    admitted("p", p, BIAS)
    scaled = Fraction(p) * 2**bits
    return math.ceil(scaled) if up else round(scaled)


@dataclass(frozen=True)
class RandomizedResponse:
    """RR flip coin for a requested eps: q~ = ceil(q 2^L) / 2^L >= q = 1/(1+e^eps), pure eps~-DP, eps~ <= eps."""
    epsilon: float
    bits: int = ROUNDING_BITS

    def __post_init__(self):
        admitted("epsilon", self.epsilon, EPSILON)

    @property
    def threshold(self) -> int:
        return coin_threshold(1.0 / (1.0 + math.exp(self.epsilon)), self.bits, up=True)

    @property
    def flip(self) -> float:
        """q~: the exact flip probability of the circuit."""
        return self.threshold / 2**self.bits

    @property
    def effective_epsilon(self) -> float:
        return math.log((1.0 - self.flip) / self.flip)

    def sample(self, rng: np.random.Generator, size) -> np.ndarray:
        """Flips with the circuit's exact law, drawn in the clear (for simulations only)."""
        return (_uniform(rng, self.bits, size) < self.threshold).astype(np.int64)


@dataclass(frozen=True)
class DiscreteLaplace:
    """The circuit's discrete Laplace for sensitivity ``sensitivity`` (integer units) at ``epsilon``.

    lam = exp(-epsilon / sensitivity); the bit probabilities, their L-bit
    thresholds, the width B, the stated delta and the exact variance of the
    sampler (module docstring).
    """
    epsilon: float
    sensitivity: int
    bits: int = ROUNDING_BITS

    def __post_init__(self):
        admitted("epsilon", self.epsilon, EPSILON)
        admitted("sensitivity", self.sensitivity, SENSITIVITY)
        if self.width > MAX_WIDTH:
            raise ValueError(f"epsilon {self.epsilon:g} is too small for sensitivity {self.sensitivity}: the noise "
                             f"would need {self.width} magnitude bits, at most {MAX_WIDTH} fit the 64-bit ring")
        try:
            delta = self.delta
        except OverflowError:
            delta = math.inf
        if not delta < 1:
            raise ValueError(f"epsilon {self.epsilon:g} is too large for the circuit's {self.bits}-bit coins: "
                             f"the stated delta (1 + e^epsilon) * tau would be {delta:.3g}, not below 1")

    @property
    def rate(self) -> float:
        """epsilon / sensitivity = -ln(lam)."""
        return self.epsilon / self.sensitivity

    @property
    def width(self) -> int:
        """B: the least number of bits with lam^(2^B) <= 2^-L."""
        return max(1, math.ceil(math.log2(self.bits * math.log(2) / self.rate)))

    @property
    def lam(self) -> float:
        return math.exp(-self.rate)

    @property
    def probabilities(self) -> np.ndarray:
        """Exact biases: [non-zero 2 lam/(1+lam), sign 1/2, p_i = lam^(2^i)/(1+lam^(2^i)) for i < B]."""
        powers = np.exp(-self.rate * 2.0 ** np.arange(self.width))
        return np.concatenate([[2 * self.lam / (1 + self.lam), 0.5], powers / (1.0 + powers)])

    @property
    def thresholds(self) -> np.ndarray:
        return np.array([coin_threshold(p, self.bits) for p in self.probabilities], dtype=np.int64)

    @property
    def rounded(self) -> np.ndarray:
        """The circuit's biases T / 2^L, in the order of ``probabilities``."""
        return self.thresholds / 2.0**self.bits

    @property
    def tail(self) -> float:
        """P(G >= 2^B) for the untruncated geometric: lam^(2^B)."""
        return math.exp(-self.rate * 2.0**self.width)

    @property
    def total_variation(self) -> float:
        """tau >= TV(sampled Z~, exact discrete Laplace Z)."""
        rounding = float(np.abs(self.rounded - self.probabilities).sum())
        return self.tail + rounding + len(self.rounded) * 2.0**-52  # + float error of each p

    @property
    def delta(self) -> float:
        return (1.0 + math.exp(self.epsilon)) * self.total_variation

    @property
    def delta_ceiling(self) -> float:
        """An upper bound of :attr:`delta` that grows with the width B, hence with the sensitivity at one epsilon:
        (1 + e^eps)(2^-L + (B + 2)(2^-L + 2^-52)) (the tail is at most 2^-L by the width's definition, each of
        the B + 2 coins' rounding at most 2^-L, its float error 2^-52), so that the ceiling at the largest
        sensitivity bounds the delta at every smaller one."""
        per_coin = 2.0**-self.bits + 2.0**-52
        return (1.0 + math.exp(self.epsilon)) * (2.0**-self.bits + (self.width + 2) * per_coin)

    @property
    def variance(self) -> float:
        """Var Z~ = p~_nz E[(1 + G~)^2] (exact for the sampler; the sign is exactly fair)."""
        nonzero, _, p = self.rounded[0], self.rounded[1], self.rounded[2:]
        scale = 2.0 ** np.arange(self.width)
        mean = float((scale * p).sum())
        var = float((scale**2 * p * (1 - p)).sum())
        return nonzero * (var + (1 + mean) ** 2)

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """Draws with the circuit's exact law (the same L-bit coins), in the clear, for simulations only."""
        return self.from_uniform(_uniform(rng, self.bits, (len(self.thresholds), size)))

    def from_uniform(self, u: np.ndarray) -> np.ndarray:
        """The draws the circuits make of uniform L-bit values ``u`` (B + 2, size), one row per coin in the order
        of :attr:`probabilities`: coin r is [u_r < T_r]; Z = 0 without "non-zero", else -(1 + G) with the sign
        coin, + (1 + G) without, G = sum_i 2^i (bit coin i)."""
        coins = np.asarray(u) < self.thresholds[:, None]
        magnitude = 1 + (coins[2:].astype(np.int64) << np.arange(self.width, dtype=np.int64)[:, None]).sum(axis=0)
        return np.where(coins[0], np.where(coins[1], -magnitude, magnitude), 0)

    def pmf(self) -> tuple:
        """(support z, P(Z~ = z)) of the sampler (for tests; B small)."""
        nonzero, geometric = self.rounded[0], np.ones(1)
        for p in self.rounded[2:]:  # bit i doubles the support: g and g + 2^i
            geometric = np.concatenate([geometric * (1 - p), geometric * p])
        side = geometric * nonzero / 2
        return np.arange(-len(side), len(side) + 1), np.concatenate([side[::-1], [1 - nonzero], side])


def _uniform(rng: np.random.Generator, bits: int, size) -> np.ndarray:
    return rng.integers(0, 2**bits, size=size, dtype=np.int64)
