"""Oblivious bitonic sorting network on secret-shared integer keys with payload rows.

Reference implementation (Batcher 1968): O(M log^2 M) compare-exchanges in
log2(n)(log2(n)+1)/2 layers, n the next power of two >= M.  Each layer is
one batched secure comparison of n/2 key pairs and one batched
multiplication that swaps keys and payloads together.  The access pattern is
fixed by n alone, so nothing about the data is revealed.
"""
import math
from typing import Callable, Optional

import numpy as np
import torch

from .crypten_compat import crypten
from .rank_auc import group_starts_from_keys
from .shares import from_share, public, share_of


def padded_size(m: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(m, 1))))


def layer_count(m: int) -> int:
    k = int(math.log2(padded_size(m)))
    return k * (k + 1) // 2


def bitonic_sort(keys, payloads, pad_key: int, progress: Optional[Callable[[int, int], None]] = None):
    """Sort shared ``keys`` ascending, carrying each payload row along.

    keys: 1-D integer MPCTensor of length M (any M >= 1).  Keys must lie in
      [-2^62, pad_key) so that secure comparison of two keys is exact.
    payloads: list of 1-D integer MPCTensors of length M.
    pad_key: a public value larger than every real key; up to n - M copies are
      appended and, being largest, end in positions M..n-1, which are dropped.
    progress: optional callback(done_layers, total_layers).

    Returns (sorted_keys, [sorted payloads]).  Equal keys end adjacent in an
    unspecified order.
    """
    m = keys.size(0)
    n = padded_size(m)
    rows = crypten.stack([keys] + list(payloads))
    if n > m:
        pad = torch.zeros(1 + len(payloads), n - m, dtype=torch.int64)
        pad[0] = pad_key
        rows = crypten.cat([rows, public(pad)], dim=1)
    r = rows.size(0)
    total, done = layer_count(m), 0
    k = 2
    while k <= n:
        j = k // 2
        while j >= 1:
            rows = _compare_exchange_layer(rows, r, n, k, j)
            done += 1
            if progress is not None:
                progress(done, total)
            j //= 2
        k *= 2
    return rows[0, :m], [rows[i, :m] for i in range(1, r)]


def _compare_exchange_layer(rows, r: int, n: int, k: int, j: int):
    """One layer: element i meets i XOR j; blocks with (i AND k) != 0 sort descending."""
    blocks = n // (2 * j)
    view = rows.view(r, blocks, 2, j)
    lo, hi = view[:, :, 0, :], view[:, :, 1, :]
    descending = (((torch.arange(blocks) * 2 * j) & k) != 0).to(torch.int64).unsqueeze(1)
    swap = _swap_bits(lo[0], hi[0], descending)
    delta = crypten.stack([swap] * r) * (hi - lo)
    return crypten.stack([lo + delta, hi - delta], dim=2).reshape(r, n)


def _swap_bits(lo_keys, hi_keys, descending):
    """[swap] per compared pair: (lo > hi) XOR descending; descending is public, so the XOR is linear."""
    greater = lo_keys > hi_keys
    return greater * (1 - 2 * descending) + descending


class BitonicRanking:
    """The reference ranking: bitonic sort carrying the input position, and a second sort to return."""

    def __init__(self, pad_key: int, progress: Optional[Callable[[int, int], None]] = None):
        self.pad_key, self.progress = pad_key, progress
        self._origin = None

    def sort(self, keys, key_xor, payloads):
        """(group-start bits, [sorted payloads]) in sorted order, as this party's int64 shares; keys: the MPC
        keys; payloads: int64 additive shares; key_xor is not needed here."""
        m = keys.size(0)
        position = public(torch.arange(m, dtype=torch.int64))
        sorted_keys, moved = bitonic_sort(keys, [from_share(p) for p in payloads] + [position], self.pad_key,
                                          self.progress)
        self._origin = moved[-1]
        return group_starts_from_keys(sorted_keys), [share_of(x) for x in moved[:-1]]

    def to_input_order(self, sorted_column):
        """Sort (input position, column) by position: the column's shares in input order; a (k, M) array of
        columns moves together."""
        rows = np.atleast_2d(sorted_column)
        m = rows.shape[1]
        _, columns = bitonic_sort(self._origin, [from_share(row) for row in rows], m)
        moved = np.stack([share_of(column) for column in columns])
        return moved if np.ndim(sorted_column) == 2 else moved[0]
