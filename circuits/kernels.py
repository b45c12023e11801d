"""Pairwise U-statistic kernels in 2PC, with their noise drawn inside the circuit (ustats §5, App. C.2).

One call evaluates many independent 2PCs at once: pair-party 0 holds the
first user's input of every pair, pair-party 1 the second's (a vectorised
simulation of one small 2PC per pair; no value crosses pairs).  Inputs are
integers.  A party holding its own value in the clear needs no input
message: the shares of x - y are simply (x, -y).  The output of each pair
is a sharing, and the shares go to the aggregator alone.

Kernels (each returns this party's output share per pair; the Laplace ones
take the party's circuits.bits.BitConverter):
* AUC, classes public (first user positive, second negative): the bit
  b = [x >* y], which is [x > y] off ties and a fair coin on ties, so
  E[b] = [x > y] + 1/2 [x = y] = h(x, y).  One comparison:
  b = [4(x - y) + 2 c0 + c1 - 2 >= 0] with c_p a private random bit of
  party p (2 c0 + c1 is uniform on {0..3}).  Released by randomized
  response: b XOR coin(q~).  XOR shares.
* AUC, labels private too: g = y_i XOR y_j (free: each party holds one
  label) marks a positive/negative pair, h = g AND (b XOR y_i XOR 1) is its
  kernel (oriented to the positive user); both bits by randomized response.
* Gini mean difference: |x - y| = d (1 - 2 [d < 0]), plus discrete Laplace.
* Kendall's tau: 1 + sgn((a_i - a_j)(b_i - b_j)) in {0, 1, 2} (the kernel
  rescaled to [0, 1] in units of 1/2), plus discrete Laplace.
"""
import secrets

import numpy as np
import torch

from .crypten_compat import crypten
from .noise import BinarySharedTensor, discrete_laplace, randomized_response
from .noise_laws import DiscreteLaplace, RandomizedResponse
from .shares import from_share, share_of

convert = crypten.mpc.primitives.converters.convert
BINARY = crypten.mpc.ptype.binary


def _rank() -> int:
    return crypten.communicator.get().get_rank()


def difference(own: np.ndarray):
    """Shares (x, -y) of x - y: pair-party 0 holds the first users' x, pair-party 1 the second users' y."""
    own = np.asarray(own, dtype=np.int64)
    return from_share(own if _rank() == 0 else -own)


def private_bits(count: int) -> np.ndarray:
    """count fair bits from this party's OS CSPRNG."""
    return np.unpackbits(np.frombuffer(secrets.token_bytes(-(-count // 8)), dtype=np.uint8))[:count].astype(np.int64)


def greater_tie_coin(own: np.ndarray) -> "BinarySharedTensor":
    """XOR-shared b = [x >* y] per pair (a fair joint coin where x = y); |x - y| < 2^60."""
    coin = private_bits(len(own))
    offset = 2 * coin - 2 if _rank() == 0 else coin  # 2 c0 + c1 - 2, split between the parties
    z = from_share(share_of(difference(own)) * 4 + offset)
    sign = (convert(z._tensor, BINARY) >> 63) & 1
    return sign ^ torch.ones(1, dtype=torch.int64)  # [z >= 0]


def auc_public_classes(own_scores: np.ndarray, rr: RandomizedResponse) -> np.ndarray:
    """Randomized response on b = [x+ >* x-]; this party's XOR share of the released bit."""
    return randomized_response(greater_tie_coin(own_scores), rr).share.numpy().astype(np.int8)


def auc_private_labels(own_scores: np.ndarray, own_labels: np.ndarray, rr: RandomizedResponse) -> np.ndarray:
    """(2, pairs) XOR shares of RR(h), RR(g): h the pair's oriented AUC bit, g = [labels differ]."""
    labels = np.asarray(own_labels, dtype=np.int64)
    b = greater_tie_coin(own_scores)
    if _rank() == 0:  # orient to the positive user: b XOR y_i XOR 1 (P0 holds y_i)
        b.share = b.share ^ torch.from_numpy(labels ^ 1)
    g = BinarySharedTensor.from_shares(torch.from_numpy(labels), precision=0)
    h = g & b
    released = randomized_response(BinarySharedTensor.stack([h, g]), rr)
    return released.share.numpy().astype(np.int8)


def gini(own_values: np.ndarray, noise: DiscreteLaplace, converter) -> np.ndarray:
    """|x - y| + Z per pair (x, y integers in [0, sensitivity]); this party's additive share."""
    d = difference(own_values)
    absolute = d * (1 - 2 * (d < 0))
    return share_of(absolute + discrete_laplace(noise, len(own_values), converter))


def kendall(own_pairs: np.ndarray, noise: DiscreteLaplace, converter) -> np.ndarray:
    """1 + sgn((a_i - a_j)(b_i - b_j)) + Z per pair; own_pairs is (pairs, 2) integer ratings."""
    own = np.asarray(own_pairs, dtype=np.int64)
    product = difference(own[:, 0]) * difference(own[:, 1])
    lt = crypten.stack([product, -product]) < 0  # [p < 0], [p > 0]
    kernel = lt[1] - lt[0] + 1
    return share_of(kernel + discrete_laplace(noise, len(own), converter))
