"""In-circuit noise on CrypTen shares: joint random words, biased coins, randomized response, discrete Laplace.

No noise is ever sampled in floating point inside MPC.  Every gadget is
built from one primitive (DESIGN.md §4; ustats App. C.2; Dwork et al. 2006,
"Our data, ourselves"):

* **Joint random L-bit values.** Each compute party draws its XOR share of
  u with the OS CSPRNG (``secrets``); u = u0 XOR u1 is uniform on [0, 2^L)
  and unknown to either party (and to the dealer, which never sees a share).
* **Biased coin** [u < T] for a public L-bit threshold T: exactly
  Bernoulli(T / 2^L).  The comparison is bit-sliced: lane l of word w holds
  coin 64 w + l, and bit level j of all coins is one array of words.  From
  the top level down, with eq = [u and T agree above level j],

      t = eq AND NOT u_j;   if T_j = 1: lt ^= t, eq ^= t   else: eq = t,

  one secret AND per level (the two branches are public, so local), L - 1
  rounds in all, about L/64 word-ANDs per coin.
* **Randomized response** on a XOR-shared bit b: b XOR [u < T] with
  T = ceil(q 2^L), q = 1/(1 + e^eps).  The flip probability q~ = T/2^L is
  >= q, so the released bit is eps~-DP with eps~ = ln((1 - q~)/q~) <= eps:
  pure DP, rounding only makes it (slightly) more private.
* **Discrete Laplace** (two-sided geometric, P(Z = z) ~ lam^|z|,
  lam = e^(-eps/Delta)) in sign-magnitude form: Z = 0 with probability
  (1 - lam)/(1 + lam), else Z = +-(1 + G) with a fair sign and G geometric,
  P(G = g) = (1 - lam) lam^g.  A geometric G truncated to B bits has
  independent bits with P(bit_i = 1) = p_i = lam^(2^i) / (1 + lam^(2^i)) (the
  pmf lam^g factorises over the bits of g), so Z costs B + 2 coins: "non-zero"
  with bias 2 lam/(1 + lam), the sign (bias 1/2, exact) and the B bits of G,
  each bias rounded to the nearest multiple of 2^-L.  The packed bits become
  additive shares by the dealer's bit correlation (circuits.bits); one
  multiplication joins sign and magnitude.

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
import secrets
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import torch

from .crypten_compat import crypten
from .dealer import unpack_bits
from .shares import from_share

BinarySharedTensor = crypten.mpc.primitives.BinarySharedTensor

ROUNDING_BITS = 48  # L: every coin's bias is a multiple of 2^-L
MAX_WIDTH = 60  # B: noise magnitudes below 2^60 leave room in the 64-bit ring for the statistic
LANES = 64


# ----------------------------------------------------------- public parameters

def coin_threshold(p: float, bits: int = ROUNDING_BITS, up: bool = False) -> int:
    """T with T / 2^bits the nearest (``up``: the least not below) multiple of 2^-bits to p."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"a coin's bias must lie in [0, 1], not {p}")
    scaled = Fraction(p) * 2**bits
    return math.ceil(scaled) if up else round(scaled)


@dataclass(frozen=True)
class RandomizedResponse:
    """RR flip coin for a requested eps: q~ = ceil(q 2^L) / 2^L >= q = 1/(1+e^eps), pure eps~-DP, eps~ <= eps."""
    epsilon: float
    bits: int = ROUNDING_BITS

    def __post_init__(self):
        if not self.epsilon > 0:
            raise ValueError(f"epsilon must be > 0, not {self.epsilon}")

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
        if not self.epsilon > 0:
            raise ValueError(f"epsilon must be > 0, not {self.epsilon}")
        if self.sensitivity < 1 or int(self.sensitivity) != self.sensitivity:
            raise ValueError(f"the sensitivity must be a positive integer, not {self.sensitivity}")
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
    def variance(self) -> float:
        """Var Z~ = p~_nz E[(1 + G~)^2] (exact for the sampler; the sign is exactly fair)."""
        nonzero, _, p = self.rounded[0], self.rounded[1], self.rounded[2:]
        scale = 2.0 ** np.arange(self.width)
        mean = float((scale * p).sum())
        var = float((scale**2 * p * (1 - p)).sum())
        return nonzero * (var + (1 + mean) ** 2)

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """Draws with the circuit's exact law (the same L-bit coins), in the clear, for simulations only."""
        t = self.thresholds
        nonzero, sign = (_uniform(rng, self.bits, (2, size)) < t[:2, None])
        magnitude = np.ones(size, dtype=np.int64)
        for i, threshold in enumerate(t[2:]):
            magnitude += (_uniform(rng, self.bits, size) < threshold).astype(np.int64) << i
        return np.where(nonzero, np.where(sign, -magnitude, magnitude), 0)

    def pmf(self) -> tuple:
        """(support z, P(Z~ = z)) of the sampler (for tests; B small)."""
        nonzero, geometric = self.rounded[0], np.ones(1)
        for p in self.rounded[2:]:  # bit i doubles the support: g and g + 2^i
            geometric = np.concatenate([geometric * (1 - p), geometric * p])
        side = geometric * nonzero / 2
        return np.arange(-len(side), len(side) + 1), np.concatenate([side[::-1], [1 - nonzero], side])


def _uniform(rng: np.random.Generator, bits: int, size) -> np.ndarray:
    return rng.integers(0, 2**bits, size=size, dtype=np.int64)


# ------------------------------------------------------------------ gadgets

def joint_random_words(shape) -> "BinarySharedTensor":
    """XOR-shared uniform 64-bit words: each party's share comes from its own OS CSPRNG."""
    count = int(np.prod(shape))
    own = np.frombuffer(secrets.token_bytes(8 * count), dtype=np.int64).reshape(shape)
    return BinarySharedTensor.from_shares(torch.from_numpy(own.copy()), precision=0)


def _not(x: "BinarySharedTensor") -> "BinarySharedTensor":
    """Bitwise NOT of a XOR sharing (party 0 flips its share)."""
    out = x.clone()
    if crypten.communicator.get().get_rank() == 0:
        out.share = ~out.share
    return out


def _public_mask(rows_bit: np.ndarray) -> torch.Tensor:
    """(R, 1) words: all ones where the row's threshold bit is 1."""
    return torch.from_numpy(np.where(rows_bit, -1, 0).astype(np.int64)[:, None])


def packed_coins(thresholds, words: int, bits: int = ROUNDING_BITS) -> "BinarySharedTensor":
    """(R, words) XOR-shared words; lane l of word w in row r is the coin [u < T_r], u a joint L-bit value.

    Exactly Bernoulli(T_r / 2^L) per lane, independent across lanes and rows.
    """
    t = np.asarray(thresholds, dtype=np.int64)
    if t.ndim != 1 or (t < 0).any() or (t > 2**bits).any() or not 1 <= bits <= 62:
        raise ValueError("thresholds must be a vector of integers in [0, 2^L], 1 <= L <= 62")
    full = t == 2**bits  # [u < 2^L] is always 1
    t = np.where(full, 0, t)
    levels = joint_random_words((bits, len(t), words))  # level j: bit j of every u
    top = _public_mask((t >> (bits - 1)) & 1 == 1)
    not_top = _not(levels[bits - 1])  # eq starts all ones, so the first level needs no AND
    lt = not_top & top
    eq = not_top ^ top
    for j in range(bits - 2, -1, -1):
        ones = _public_mask((t >> j) & 1 == 1)
        t_and = eq & _not(levels[j])
        lt = lt ^ (t_and & ones)
        eq = t_and ^ (eq & ones)  # T_j = 1: eq AND u_j = eq ^ t;  T_j = 0: t
    return lt ^ _public_mask(full)


def coins(thresholds, count: int, bits: int = ROUNDING_BITS) -> "BinarySharedTensor":
    """(R, count) XOR-shared coins, row r ~ Bernoulli(T_r / 2^L)."""
    packed = packed_coins(thresholds, -(-count // LANES), bits)
    return BinarySharedTensor.from_shares(torch.from_numpy(unpack_bits(packed.share.numpy(), count)), precision=0)


def randomized_response(bit: "BinarySharedTensor", rr: RandomizedResponse) -> "BinarySharedTensor":
    """b XOR coin(q~) on XOR-shared 0/1 values of any shape: rr.effective_epsilon-DP per bit."""
    flips = coins([rr.threshold], bit.numel(), rr.bits)
    return bit ^ flips.view(bit.size())


def discrete_laplace(noise: DiscreteLaplace, count: int, converter) -> "MPCTensor":
    """``count`` independent draws of the circuit's discrete Laplace, as an arithmetic (precision 0) sharing.

    converter: this party's circuits.bits.BitConverter (the dealer's bit correlations).
    """
    drawn = packed_coins(noise.thresholds, -(-count // LANES), noise.bits)  # rows: non-zero, sign, bits of G
    nonzero, sign = drawn[0], drawn[1]
    signed = nonzero & BinarySharedTensor.stack([_not(sign), sign])  # (non-zero and +, non-zero and -): one AND
    rows = torch.cat([signed.share, drawn.share[2:]]).numpy()
    bits = converter.to_additive(rows, count)
    weights = (2 ** np.arange(noise.width, dtype=np.int64))[:, None]
    magnitude = from_share((bits[2:] * weights).sum(0)) + 1
    return from_share(bits[0] - bits[1]) * magnitude
