"""The keys' true tie groups on authenticated shares (security with abort), from the sort of both orders and without
the keys: for the metrics that count a tie group whole, average precision (circuits.auth_ap) and the partial AUC
(circuits.auth_pauc).  The curves' runs (circuits.auth_curves) split a group of one class into rows, which leaves
their proportional points as they are but not AP's or the partial AUC's integers.

* **Where a group starts.**  Each row's two destinations in the sort of both orders (circuits.auth_auc.both_orders)
  add up to twice its mid-rank 2R = 2a + s - 1 (a its group's start, s its size): equal inside a tie group and
  increasing from one group to the next.  So with u_j the second-order destination of the row at first-order
  position j (moved along with the labels), 2R_j - 2R_{j-1} = 1 + u_j - u_{j-1}, and position j starts a group iff
  that is not 0: a zero test of a position-sized value (circuits.auth_compare.is_zero: c = x + R opened, uniform, and
  the equality read from the dealer's one-hot digits of R, which carry every MAC key, so the bit comes out wide).
* **The compaction** of circuits.auth_curves.compacted: a stable partition by the one digit 1 - e (a dealer shuffle
  whose destinations are opened after a MAC check: a uniform permutation whatever the data), slot t < G holding group
  t's start a_t and the positives below it Pex_t, every later slot (M, P), as circuits.rank_auc.TieGroups' slots.

What each role sees: the zero tests' masked openings (uniform) and the partition's (its masked digit, uniform; its
opened destinations).  The zero tests read the opened word modulo 2^k, the authenticator's positions' bits, which
must be even (k/2 digits; protocols.mpc.malicious rounds k up when a metric of these groups is asked: s >= 40 still
holds up to 2^23 rows).
"""
from collections import namedtuple

import numpy as np

from .auth_auc import positives_before
from .auth_compare import in_batches, is_zero
from .auth_curves import compacted

TieGroups = namedtuple("TieGroups", "compaction sigma later start pex below")
TieGroups.__doc__ = """The compacted tie groups: the partition's sort and its [sigma], and per slot t (1 + keys, M) each
[t >= G], the start a_t and the positives below it Pex_t; ``below`` each first-order position's positives before it."""


def tie_groups(ranking, moved: np.ndarray, partners: np.ndarray, n1: int, phase: str) -> TieGroups:
    """The true tie groups (module docstring) from circuits.auth_auc.both_orders' moved labels (1 + keys, 2M) and
    moved partner destinations (2, 2M), and the opened count of positives ``n1``; the zero tests run under ``phase``,
    the partition's phases are named after it."""
    auth, m = ranking.auth, moved.shape[-1] // 2
    below = positives_before(moved)[:, :m]  # Pex_j in the first order
    auth.phase = phase
    starts = _group_starts(auth, partners[:, :m], phase)
    return TieGroups(*compacted(ranking, starts, below, n1, f"{phase}'s partition"), below)


def _group_starts(auth, partners: np.ndarray, phase: str) -> np.ndarray:
    """[e_j] (1 + keys, M): 1 where a tie group starts in the first order, 1 - [1 + u_j - u_{j-1} = 0] for j >= 1
    (module docstring), 1 at j = 0; ``partners`` (2, M) the moved u_j (narrow)."""
    gaps = auth.add_public(partners[:, 1:] - partners[:, :-1], 1)  # 2R_j - 2R_{j-1}, in [0, 2M)
    same = in_batches(auth, lambda part, _: is_zero(auth, part, phase), gaps, phase)
    return np.concatenate([auth.public(1, (1,), wide=True), auth.add_public(-same, 1)], axis=-1)
