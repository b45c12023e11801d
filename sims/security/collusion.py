"""Collusion experiments on the radix sort: what a coalition recovers of the secret order and labels.

The parties sort secret keys (XOR-shared) carrying secret labels (additively
shared), both split with CSPRNG masks as clients split them.  The sort ends
with one shuffle of the columns (sigma, labels, keys) by a fresh joint
permutation pi = pi0 then pi1.  Its first step (circuits.shuffle): P1 sends
P0 its shares masked with words a of its own stream, expanded from its
dealer key k_1; P0 permutes by pi0.  The last opening is s = sigma[pi].

* **Dealer + P0**: the dealer holds k_1, so it regenerates a; with the
  masked shares P0 received and P0's own shares, the coalition unmasks every
  column: the keys (hence the whole sorted order) and every label
  (docs/architecture.md, "Collusion", says this coalition learns everything).
* **P0 alone** knows neither a nor pi1.  Its best reading of the order is
  s read through pi0 (sigma[pi0] = s), and of a label the parity of its
  share plus the masked share: both independent of the secrets.

Measured: Kendall's tau-b between the recovered order and the true keys (1:
the order itself; about 0: chance), and the fraction of labels recovered
(against the majority-class rate, the best guess without information).
"""
import numpy as np
from scipy.stats import kendalltau

from ...circuits.correlations import unmask
from ...circuits.gates import Gates
from ...circuits.radix import RadixRanking
from ...circuits.shuffle import Shuffler
from ...circuits.streams import MASK_IN, KeyStream


class IndexRecordingShuffler(Shuffler):
    """The real shuffler, also noting in its view the index of each fresh permutation and of each shuffle's
    masks (which the protocol's fixed schedule tells any party anyway)."""

    def fresh(self, n: int):
        pi = super().fresh(n)
        if self.view is not None:
            self.view.append(("permutation index", pi.index))
        return pi

    def _run(self, shares, pi, inverse_order: bool, xor_from: int, widths, fold=None, reveal=False):
        if self.view is not None:
            self.view.append(("mask index", (self._mask_count, inverse_order, xor_from)))
        return super()._run(shares, pi, inverse_order, xor_from, widths, fold, reveal)


def collusion_party(ctx, key_shares, label_shares, bits: int) -> dict:
    """In a party: one radix sort of the keys carrying the labels, from this party's shares (index = rank);
    its view, its own shares and its dealer key as the dealer holds it."""

    keys, labels = key_shares[ctx.rank], label_shares[ctx.rank]
    shuffler = IndexRecordingShuffler(ctx.stream_key, view=[])
    RadixRanking(shuffler, Gates(ctx.stream_key), bits).sort(None, keys, [labels])
    return {"view": shuffler.view, "dealer_key": ctx.stream_key, "keys": keys, "labels": labels}


def _final_shuffle(view) -> tuple:
    """(mask index, xor_from, masked shares P0 received, permutation index, opened s) of the final apply."""
    permutation, masks = None, None
    for kind, value in view:
        if kind == "permutation index":
            permutation = value
        elif kind == "mask index":
            masks = value
        elif kind == "masked shares" and not masks[1]:  # a forward shuffle: P1's shares, masked, to P0
            received = (masks[0], masks[2], value)
        elif kind == "destinations":
            opened = (permutation, value)
    return (*received, *opened)


def recovered(p0: dict, p1: dict) -> dict:
    """{adversary: (recovered destination order, recovered labels)} from P0's view (and the dealer's k_1)."""
    mask_index, xor_from, masked, permutation, s = _final_shuffle(p0["view"])
    m = len(s)
    a = KeyStream(p1["dealer_key"]).elements(MASK_IN, 2 * mask_index, masked.shape, 0, m)  # the dealer regenerates it
    theirs = unmask(masked, a, xor_from)  # P1's shares of (sigma, labels, keys), in input order
    keys = p0["keys"] ^ theirs[:, 2]
    labels = p0["labels"] + theirs[:, 1]
    order = np.empty(m, dtype=np.int64)
    order[np.argsort(keys, kind="stable")] = np.arange(m)
    alone = np.empty(m, dtype=np.int64)
    alone[KeyStream(p0["dealer_key"]).permutation(permutation, m)] = s  # P0 reads s through pi0 only
    guessed = (p0["labels"] + masked[:, 1]) & 1
    return {"dealer + P0": (order, labels), "P0 alone": (alone, guessed)}


def kendall(recovered_order: np.ndarray, keys: np.ndarray) -> float:
    return float(kendalltau(recovered_order, keys).statistic)
