"""Pairwise U-statistic kernels in 2PC, with their noise drawn inside the circuit (ustats §5, App. C.2).

One call evaluates many independent 2PCs at once: pair-party 0 holds the
first user's input of every pair, pair-party 1 the second's (a vectorised
simulation of one small 2PC per pair; no value crosses pairs).  Inputs are
integers in [0, bound].  A party holding its own value in the clear needs
no input message: XOR shares of x's bits are (x, 0), additive shares of
x - y are (x, -y).  The output of each pair is a sharing, and the shares
go to the aggregator alone.  Every kernel takes the party's
circuits.gates.Gates; comparisons are circuits.comparators's prefix trees.

Kernels (each returns this party's output share per pair):
* AUC, classes public (first user positive, second negative): the bit
  b = [x >* y], which is [x > y] off ties and a fair coin on ties, so
  E[b] = [x > y] + 1/2 [x = y] = h(x, y).  One private comparison:
  b = [4 x + 2 c0 > 4 y + 1 - c1] (= [4(x - y) + 2 c0 + c1 - 2 >= 0]) with
  c_p a private random bit of party p.  Released by randomized response:
  b XOR coin(q~).  XOR shares.  7 + 6 rounds at 52-bit scores.
* AUC, labels private too: g = y_i XOR y_j (free: each party holds one
  label) marks a positive/negative pair, h = g AND (b XOR y_i XOR 1) is its
  kernel (oriented to the positive user); both bits by randomized response.
* Gini mean difference: |x - y| = (x - y)(2 [x > y] - 1), plus discrete
  Laplace.
* Kendall's tau: 1 + sgn((a_i - a_j)(b_i - b_j)) in {0, 1, 2} (the kernel
  rescaled to [0, 1] in units of 1/2), plus discrete Laplace.  With
  G_a = [a_i > a_j], L_a = [a_j > a_i] (four private comparisons in one),
  the pair is concordant when (G_a AND G_b) XOR (L_a AND L_b) and
  discordant when (G_a AND L_b) XOR (L_a AND G_b); the kernel is
  1 + concordant - discordant.
"""
import secrets

import numpy as np

from .bits import LANES, pack_bits, unpack_bits
from .comparators import greater_private
from .noise import discrete_laplace, randomized_response
from .noise_laws import DiscreteLaplace, RandomizedResponse
from .shares import public_share


def private_bits(count: int) -> np.ndarray:
    """count fair bits from this party's OS CSPRNG."""
    return np.unpackbits(np.frombuffer(secrets.token_bytes(-(-count // 8)), dtype=np.uint8))[:count].astype(np.int64)


def _checked(own, bound: int) -> np.ndarray:
    own = np.asarray(own, dtype=np.int64)
    if own.size and (own.min() < 0 or own.max() > bound):
        raise ValueError(f"kernel inputs must be integers in [0, {bound}]")
    return own


def greater_tie_coin(gates, own: np.ndarray, bound: int) -> np.ndarray:
    """XOR-shared packed b = [x >* y] per pair (a fair joint coin where x = y); x, y integers in [0, bound]."""
    own = _checked(own, bound)
    coin = private_bits(len(own))
    shifted = 4 * own + 2 * coin if gates.rank == 0 else 4 * own + 1 - coin
    return greater_private(gates, shifted, (4 * bound + 2).bit_length())


def auc_public_classes(gates, own_scores: np.ndarray, rr: RandomizedResponse, bound: int) -> np.ndarray:
    """Randomized response on b = [x+ >* x-]; this party's XOR share of the released bit (int8 per pair)."""
    released = randomized_response(gates, greater_tie_coin(gates, own_scores, bound), rr)
    return unpack_bits(released[None], len(own_scores))[0].astype(np.int8)


def auc_private_labels(gates, own_scores: np.ndarray, own_labels: np.ndarray, rr: RandomizedResponse,
                       bound: int) -> np.ndarray:
    """(2, pairs) XOR shares of RR(h), RR(g): h the pair's oriented AUC bit, g = [labels differ]."""
    labels = pack_bits(np.asarray(own_labels, dtype=np.int64))
    gates.reserve("and", labels.size)
    b = greater_tie_coin(gates, own_scores, bound)
    if gates.rank == 0:  # orient to the positive user: b XOR y_i XOR 1 (P0 holds y_i)
        b = b ^ ~labels
    (h,) = gates.and_((labels, b))  # g's XOR shares are the two labels themselves
    released = randomized_response(gates, np.stack([h, labels]), rr)
    return unpack_bits(released, len(own_scores)).astype(np.int8)


def gini(gates, own_values: np.ndarray, noise: DiscreteLaplace, bound: int) -> np.ndarray:
    """|x - y| + Z per pair (x, y integers in [0, bound]); this party's additive share."""
    own = _checked(own_values, bound)
    gates.reserve("mul", len(own))
    above = gates.to_additive(greater_private(gates, own, bound.bit_length())[None], len(own))[0]
    d = own if gates.rank == 0 else -own  # additive shares of x - y
    (product,) = gates.multiply((d, above))
    return 2 * product - d + discrete_laplace(gates, noise, len(own))


def kendall(gates, own_pairs: np.ndarray, noise: DiscreteLaplace, bound: int) -> np.ndarray:
    """1 + sgn((a_i - a_j)(b_i - b_j)) + Z per pair; own_pairs is (pairs, 2) integer ratings in [0, bound]."""
    own = _checked(own_pairs, bound)
    bits = bound.bit_length()
    gates.reserve("and", 4 * -(-len(own) // LANES))
    both = np.concatenate([own.T, bound - own.T])  # a, b, then the complements (x > y iff bound-x < bound-y)
    above_a, above_b, below_a, below_b = greater_private(gates, both, bits)
    same_up, same_down, up_down, down_up = gates.and_((above_a, above_b), (below_a, below_b),
                                                      (above_a, below_b), (below_a, above_b))
    sides = gates.to_additive(np.stack([same_up ^ same_down, up_down ^ down_up]), len(own))
    kernel = sides[0] - sides[1] + public_share(1, gates.rank)  # 1 + concordant - discordant
    return kernel + discrete_laplace(gates, noise, len(own))
