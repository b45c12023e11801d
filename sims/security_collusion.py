"""Collusion experiments on the radix sort: what a coalition recovers of the secret sorted order.

The radix sort's last opening is s = sigma[pi]: sigma the secret destination
of every input (its position in sorted order), pi a fresh joint permutation
pi = pi0 then pi1 (pi0 from P0's dealer key k_0, pi1 from k_1).

* **Dealer + P0**: the dealer holds k_0 and k_1, so it regenerates pi0 and
  pi1; with P0's view (s and the permutation's index) the coalition solves
  sigma[pi] = s for sigma: the whole sorted order (docs/architecture.md,
  "Collusion", says exactly this).
* **P0 alone** knows pi0 only; its best reading of s (sigma[pi0] = s) is
  independent of sigma.
* **The network observer** sees TLS ciphertext of public length; it can only
  guess a uniform order.

Measured by Kendall's tau-b between the recovered destinations and the true
keys (1: the order itself; about 0: chance), against the chance level's
spread.
"""
import numpy as np
from scipy.stats import kendalltau

from ..circuits.shuffle import Shuffler
from ..circuits.streams import KeyStream


class IndexRecordingShuffler(Shuffler):
    """The real shuffler, also noting in its view the index of each fresh permutation (which the protocol's
    fixed schedule tells any party anyway)."""

    def fresh(self, n: int):
        pi = super().fresh(n)
        if self.view is not None:
            self.view.append(("permutation index", pi.index))
        return pi


def collusion_party(ctx, keys: np.ndarray, bits: int) -> dict:
    """In a party: one radix sort of ``keys`` (held by P0, XOR-shared with zeros); its view, and its dealer
    key as the dealer holds it."""
    from ..circuits.radix import RadixRanking

    shuffler = IndexRecordingShuffler(ctx.stream_key, view=[])
    RadixRanking(shuffler, bits).sort(None, keys if ctx.rank == 0 else np.zeros_like(keys), [])
    return {"view": shuffler.view, "dealer_key": ctx.stream_key}


def _last_opening(view) -> tuple:
    """(permutation index, opened s) of the final apply: the last destinations opening."""
    index = None
    for kind, value in view:
        if kind == "permutation index":
            index = value
        elif kind == "destinations":
            last = (index, value)
    return last


def recovered_orders(p0: dict, p1: dict, rng) -> dict:
    """What each adversary recovers of sigma: {adversary: destination vector}."""
    index, s = _last_opening(p0["view"])
    m = len(s)
    own0 = KeyStream(p0["dealer_key"]).permutation(index, m)
    own1 = KeyStream(p1["dealer_key"]).permutation(index, m)  # the dealer regenerates it from k_1
    coalition, alone = np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)
    coalition[own0[own1]] = s  # sigma[pi] = s with pi = pi0 then pi1
    alone[own0] = s  # P0 without pi1
    return {"dealer + P0": coalition, "P0 alone": alone, "network observer": rng.permutation(m)}


def kendall(recovered: np.ndarray, keys: np.ndarray) -> float:
    return float(kendalltau(recovered, keys).statistic)
