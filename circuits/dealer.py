"""The dealer: CrypTen's trusted-third-party server plus permutation and one-hot correlations.

The dealer serves CrypTen's Beaver triples and conversion randomness as
before (it sees no input), and additionally the correlations of the
oblivious shuffle (DESIGN.md §4; Chida et al. 2019, "permutation pairs").
At start-up it draws a 256-bit key per compute party with ``secrets`` and
sends it to that party only; CrypTen's triples (circuits.csprng) and these
correlations (circuits.streams) are expanded from it.

A shuffle by pi = pi0 then pi1 is two re-sharing steps.  In the step where
party h permutes with its own permutation p and the other party o supplies
masks, the dealer expands o's stream into masks a, b and h's stream into p,
and sends h alone the correction

    delta = a[p] - b            (mod 2^64; rows are elements).

o sends x_o - a to h; h's new share is (x_h + x_o - a)[p] + delta = x[p] - b
and o's new share is b.  h sees x_o - a (uniform, a is unknown to h) and
delta (uniform, b is unknown to h); o sees nothing new.  The dealer sees
only its own randomness.  Undoing the shuffle runs the inverse
permutations in the reverse order with fresh masks.  Columns may be
XOR-shared instead of additively shared: the same step with XOR in place
of + and -.

One-hot correlation (for selecting by a secret 2-bit digit, circuits.select):
a random digit r = r0 XOR r1 (r_p from party p's stream), additive shares
of the one-hot vector e of r (P1's from its stream, P0's sent), Beaver masks
b = b0 + b1 (4 per element, from the streams) and shares of b[r] (P1's from
its stream, P0's sent).  P0 receives 4 words per element; P1 nothing.
"""
import secrets

import numpy as np
import torch

from .crypten_compat import crypten
from .csprng import TUPLES, KeyedGenerator
from .streams import (BIT_MASK, BIT_SHARE, DIGIT_MASK, KEY_BYTES, MASK_IN, MASK_OUT, ONEHOT_SHARE, PRODUCT_MASK,
                      PRODUCT_SHARE, KeyStream, permute)

TTPServer = crypten.mpc.provider.TTPServer
COMPUTE_PARTIES = (0, 1)


def step_plan(inverse_order: bool):
    """(permuting party, other party) for the two steps of a shuffle or its inverse."""
    return ((1, 0), (0, 1)) if inverse_order else ((0, 1), (1, 0))


def mask(x: np.ndarray, a: np.ndarray, xor_from: int) -> np.ndarray:
    """x - a on the additive columns [0, xor_from), x XOR a on the XOR-shared ones (rows are elements)."""
    out = x - a
    out[:, xor_from:] = x[:, xor_from:] ^ a[:, xor_from:]
    return out


def unmask(x: np.ndarray, a: np.ndarray, xor_from: int) -> np.ndarray:
    """x + a on the additive columns, x XOR a on the XOR-shared ones."""
    out = x + a
    out[:, xor_from:] = x[:, xor_from:] ^ a[:, xor_from:]
    return out


def correction(mask_stream: KeyStream, perm: np.ndarray, backwards: bool, mask_index: int, shape,
               xor_from: int) -> np.ndarray:
    """delta = a[perm] - b (or a[perm^-1] - b; XOR columns: a[perm] ^ b) for the masks of ``mask_stream``."""
    a = mask_stream.words(MASK_IN, mask_index, shape)
    b = mask_stream.words(MASK_OUT, mask_index, shape)
    return mask(permute(a, perm, backwards), b, xor_from)


def unpack_bits(words: np.ndarray, count: int) -> np.ndarray:
    """(R, W) int64 words -> (R, count) 0/1 int64: lane l of word w is bit 64 w + l."""
    bits = np.unpackbits(words.view(np.uint8).reshape(words.shape[0], -1), axis=1, bitorder="little")
    return bits[:, :count].astype(np.int64)


def dealer_request(function: str, *args) -> np.ndarray:
    """P0 only: ask the dealer for ``function(*args)`` and return what it sends back."""
    from crypten.mpc.provider.ttp_provider import TTPClient

    return TTPClient.get().ttp_request(function, None, *args).numpy()


class Dealer(TTPServer):
    """TTPServer with CSPRNG keys (circuits.csprng) and three more request types: permutation, one-hot
    digit and bit correlations."""

    def _setup_generators(self):
        """Draw k_0, k_1 independently with ``secrets``; send k_p to party p alone (over their TLS link)."""
        comm = crypten.communicator.get()
        keys = [secrets.token_bytes(KEY_BYTES) for _ in COMPUTE_PARTIES]
        for party, key in zip(COMPUTE_PARTIES, keys):
            comm.send_obj(key, party, comm.ttp_group)
        self.generators = [KeyedGenerator(k, TUPLES) for k in keys]
        self.generators_cuda = [None for _ in keys]
        self._streams = [KeyStream(k) for k in keys]
        self._perms = {}

    def _permutations(self, perm_index: int, n: int):
        """Both parties' permutations for ``perm_index`` (kept for the matching inverse)."""
        if perm_index not in self._perms:
            self._perms = {perm_index: [s.permutation(perm_index, n) for s in self._streams]}
        return self._perms[perm_index]

    def permutation_correlation(self, shape, perm_index, mask_index, inverse_order, xor_from):
        """Send P1 its correction and return P0's (CrypTen forwards it to P0)."""
        shape = tuple(shape)  # (M, columns): one row per element
        perms = self._permutations(perm_index, shape[0])
        deltas = {}
        for step, (holder, other) in enumerate(step_plan(inverse_order)):
            deltas[holder] = correction(self._streams[other], perms[holder], inverse_order,
                                        2 * mask_index + step, shape, xor_from)
        comm = crypten.communicator.get()
        comm.send_obj(deltas[1].tobytes(), 1, comm.ttp_group)
        return torch.from_numpy(deltas[0])

    def onehot_correlation(self, m, index):
        """P0's part of the one-hot correlation of ``index``: its shares of e_1..e_3 and of b[r]."""
        p0, p1 = self._streams
        r = (p0.words(DIGIT_MASK, index, (m,)) ^ p1.words(DIGIT_MASK, index, (m,))) & 3
        onehot = (r[:, None] == np.arange(1, 4)[None, :]).astype(np.int64)
        masks = p0.words(PRODUCT_MASK, index, (m, 4)) + p1.words(PRODUCT_MASK, index, (m, 4))
        picked = np.take_along_axis(masks, r[:, None], axis=1)[:, 0]
        out = np.empty((m, 4), dtype=np.int64)
        out[:, :3] = onehot - p1.words(ONEHOT_SHARE, index, (m, 3))
        out[:, 3] = picked - p1.words(PRODUCT_SHARE, index, (m,))
        return torch.from_numpy(out)

    def bit_correlation(self, words_shape, count, index):
        """P0's additive shares of the bits of r = rho0 XOR rho1 ((R, count), lanes beyond count dropped)."""
        p0, p1 = self._streams
        r = p0.words(BIT_MASK, index, tuple(words_shape)) ^ p1.words(BIT_MASK, index, tuple(words_shape))
        bits = unpack_bits(r, count)
        return torch.from_numpy(bits - p1.words(BIT_SHARE, index, bits.shape))
