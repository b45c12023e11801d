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

The laws, their privacy and their variance: circuits.noise_laws.
"""
import secrets

import numpy as np
import torch

from .crypten_compat import crypten
from .dealer import unpack_bits
from .noise_laws import ROUNDING_BITS, DiscreteLaplace, RandomizedResponse
from .shares import from_share

BinarySharedTensor = crypten.mpc.primitives.BinarySharedTensor

LANES = 64


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
