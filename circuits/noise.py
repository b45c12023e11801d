"""In-circuit noise on the compute parties' shares: joint random words, biased coins, randomized response and
discrete Laplace.

No noise is ever sampled in floating point inside MPC.  Every gadget is
built from one primitive (ustats App. C.2; Dwork2006 in docs/references.md,
"Our data, ourselves"):

* **Joint random L-bit values.** Each compute party draws its XOR share of
  u from AES-256-CTR (circuits.streams) under a fresh key of its own
  (``secrets``, never sent); u = u0 XOR u1 is uniform on [0, 2^L) and
  unknown to either party (and to the dealer, which never sees a share).
* **Biased coin** [u < T] for a public L-bit threshold T: exactly
  Bernoulli(T / 2^L).  Bit-sliced (lane l of word w holds coin 64 w + l),
  compared by the prefix tree of circuits.comparators: ceil(log2 L) rounds
  (6 for L = 48), about 2 L / 64 word-ANDs per coin (circuits.gates).
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
  each bias rounded to the nearest multiple of 2^-L.  One AND layer forms
  (non-zero and +, non-zero and -), one bit conversion makes the bits
  additive and one product joins sign and magnitude: 9 rounds in all.

Shares are numpy int64 arrays: XOR shares of packed words (64 lanes per
word) for bits, additive shares mod 2^64 for the discrete Laplace.  The
laws, their privacy and their variance: circuits.noise_laws.
"""
import secrets

import numpy as np

from .bits import LANES, unpack_bits
from .comparators import flip, less_than_public
from .noise_laws import ROUNDING_BITS, DiscreteLaplace, RandomizedResponse
from .shares import public_share
from .streams import KEY_BYTES, OWN_NOISE, KeyStream


# ------------------------------------------------------------------ gadgets

def joint_random_words(shape) -> np.ndarray:
    """This party's XOR share of uniform 64-bit words: AES-256-CTR under a fresh key from its OS CSPRNG
    (``secrets``), used for this call only and never sent (5x faster than reading the OS CSPRNG itself)."""
    return KeyStream(secrets.token_bytes(KEY_BYTES)).words(OWN_NOISE, 0, shape)


def packed_coins(gates, thresholds, words: int, bits: int = ROUNDING_BITS) -> np.ndarray:
    """(R, words) XOR shares of words; lane l of word w in row r is the coin [u < T_r], u a joint L-bit value.

    Exactly Bernoulli(T_r / 2^L) per lane, independent across lanes and rows.
    """
    t = np.asarray(thresholds, dtype=np.int64)
    if t.ndim != 1 or (t < 0).any() or (t > 2**bits).any() or not 1 <= bits <= 62:
        raise ValueError("thresholds must be a vector of integers in [0, 2^L], 1 <= L <= 62")
    full = t == 2**bits  # [u < 2^L] is always 1
    u = joint_random_words((bits, len(t), words))  # plane j: bit L-1-j of every u (the order does not matter)
    coin = less_than_public(gates, u, np.where(full, 0, t))
    if gates.rank == 0:
        coin ^= np.where(full, -1, 0).astype(np.int64)[:, None]
    return coin


def coins(gates, thresholds, count: int, bits: int = ROUNDING_BITS) -> np.ndarray:
    """(R, count) XOR-shared 0/1 coins, row r ~ Bernoulli(T_r / 2^L)."""
    return unpack_bits(packed_coins(gates, thresholds, -(-count // LANES), bits), count)


def randomized_response(gates, packed: np.ndarray, rr: RandomizedResponse) -> np.ndarray:
    """b XOR coin(q~) on XOR-shared packed bits (any shape of words): rr.effective_epsilon-DP per bit."""
    flips = packed_coins(gates, [rr.threshold], packed.size, rr.bits)
    return packed ^ flips.reshape(packed.shape)


def discrete_laplace(gates, noise: DiscreteLaplace, count: int) -> np.ndarray:
    """This party's additive shares (count,) of ``count`` independent draws of the circuit's discrete Laplace."""
    words = -(-count // LANES)
    gates.reserve("and", 2 * words)
    gates.reserve("mul", count)
    drawn = packed_coins(gates, noise.thresholds, words, noise.bits)  # non-zero, sign, bits of G
    nonzero, sign = drawn[0], drawn[1]
    plus, minus = gates.and_((nonzero, flip(sign, gates.rank)), (nonzero, sign))
    bits = gates.to_additive(np.concatenate([plus[None], minus[None], drawn[2:]]), count)
    weights = (2 ** np.arange(noise.width, dtype=np.int64))[:, None]
    magnitude = (bits[2:] * weights).sum(0) + public_share(1, gates.rank)
    (z,) = gates.multiply((bits[0] - bits[1], magnitude))
    return z
