"""Deliberately weakened variants of the shuffle's fold and of the one-hot correlation (controls for the view audit).

Two claims of docs/protocols/oblivious-ranking.md rest on a mask the other
party draws fresh, and each control removes that mask while keeping the sort
correct, so that only the view audit (sims.security.view_parties, view_distributions) can tell:

* **StaleFold** (with StaleFoldDealer): in a shuffle whose first column is
  folded (circuits.shuffle.Shuffler.shuffle), P1 keeps its old share b_old
  of that column instead of taking fresh words b_new.  P0's correction is
  then b_old[p0] - b_old: zero wherever p0 fixes an element, and P0's share
  moves by sigma[p0] - sigma, which follows the input.
* **ClearOnehot** (with ClearOnehotDealer): the party that does not receive a
  one-hot correlation (circuits.select.onehot_receiver) holds zero shares of
  e and of sum_u e_u b_u, so the receiver's words are e itself and the
  opened c = d XOR r shows it the digits (:func:`decoded_digits`).

A weakened variant changes the words both its dealer and its parties expand
from the stream keys (:class:`_Weakened`), so the dealer class goes in
``Placement(dealer=...)`` and the shuffler class in the parties.
"""
import numpy as np

from ...circuits.correlations import position_bits
from ...circuits.gates import Gates
from ...circuits.shuffle import Shuffler
from ...circuits.streams import MASK_OUT, ONEHOT_SHARE, PRODUCT_SHARE, KeyStream
from ...protocols.runtime.dealer import Dealer
from .view_parties import sort_views


class _Weakened:
    """A key stream whose words a control changes (:meth:`change`); everything else is the stream's."""

    def __init__(self, stream):
        self._stream = stream

    def __getattr__(self, name):
        return getattr(self._stream, name)

    def words(self, purpose: int, index: int, shape, dtype=np.int64, first: int = 0) -> np.ndarray:
        return self.change(purpose, index, self._stream.words(purpose, index, shape, dtype, first), first)

    slots = KeyStream.slots  # through the changed words
    elements = KeyStream.elements

    def change(self, purpose: int, index: int, words: np.ndarray, first: int) -> np.ndarray:
        """The words of (purpose, index) from its word ``first`` on, as the control changes them."""
        raise NotImplementedError


class _StaleFoldStream(_Weakened):
    """P1's fresh words of a folded step's column 0 replaced by the words it already holds there."""
    folding = None  # (stream index of the folded step, stream index of the unshuffle step folded into it, M)

    def change(self, purpose, index, words, first):
        # column 0 of a shuffle's masks is its stream's first M words (KeyStream.elements: one column a call)
        if self.folding is not None and purpose == MASK_OUT and index == self.folding[0] and first < self.folding[2]:
            words[...] = self._stream.words(MASK_OUT, self.folding[1], words.shape, words.dtype, first)
        return words


class _ZeroOnehotShares(_Weakened):
    """The non-receiving party's shares of the one-hot correlation all zero."""

    def change(self, purpose, index, words, first):
        return np.zeros_like(words) if purpose in (ONEHOT_SHARE, PRODUCT_SHARE) else words


def _folding(mask_index: int, fold, m: int) -> tuple:
    return None if fold is None else (2 * mask_index, 2 * fold + 1, m)


class StaleFold(Shuffler):
    def __init__(self, stream_key: bytes, view=None):
        super().__init__(stream_key, view)
        self.stream = _StaleFoldStream(self.stream)

    def _run(self, shares, pi, inverse_order, xor_from, widths, fold=None, reveal=False):
        self.stream.folding = _folding(self._mask_count, fold, len(shares))
        try:
            return super()._run(shares, pi, inverse_order, xor_from, widths, fold, reveal)
        finally:
            self.stream.folding = None


class StaleFoldDealer(Dealer):
    def _setup_generators(self):
        super()._setup_generators()
        self._streams = [_StaleFoldStream(s) for s in self._streams]

    def permutation_correlation(self, shape, perm_index, mask_index, inverse_order, xor_from, dtype="int64",
                                announced=False, widths=None, fold=None, reveal=False):
        for stream in self._streams:
            stream.folding = _folding(mask_index, fold, shape[0])
        try:
            return super().permutation_correlation(shape, perm_index, mask_index, inverse_order, xor_from, dtype,
                                                   announced, widths, fold, reveal)
        finally:
            for stream in self._streams:
                stream.folding = None


class ClearOnehot(Shuffler):
    def __init__(self, stream_key: bytes, view=None):
        super().__init__(stream_key, view)
        self.stream = _ZeroOnehotShares(self.stream)


class ClearOnehotDealer(Dealer):
    def _setup_generators(self):
        super()._setup_generators()
        self._streams = [_ZeroOnehotShares(s) for s in self._streams]


SHUFFLERS = {"real": Shuffler, "stale fold": StaleFold, "clear one-hot": ClearOnehot}
DEALERS = {"real": None, "stale fold": StaleFoldDealer, "clear one-hot": ClearOnehotDealer}


def variant_views(ctx, variant: str, inputs, bits: int, runs: int) -> dict:
    """In a party: "views", its view (every (kind, value) it opens or receives) of ``runs`` radix sorts of each
    input by the shuffler of ``variant``, run beside the dealer of the same variant (DEALERS); "destinations",
    each input's sigma from its last run, opened (a weakened variant still sorts)."""
    shuffler, gates = SHUFFLERS[variant](ctx.stream_key), Gates(ctx.stream_key)
    out = {"views": [], "destinations": []}
    for keys in inputs:
        seen, ranking = sort_views(ctx, shuffler, gates, keys, bits, runs)
        out["views"].append(seen)
        out["destinations"].append(shuffler.open(ranking.sigma, width=position_bits(len(keys))).astype(np.int64))
    return out


def decoded_digits(views) -> list:
    """The receiver's attack on the one-hot correlation, run by run: read r off its words as if they were e
    (r = u where word u - 1 is 1, else 0) and open each digit as c XOR r.  Against the real correlation the
    words are uniform and c XOR r is uniform; against ClearOnehot it is the digit."""
    out = []
    for run in views:
        decoded, pending = [], None
        for kind, value in run:
            if kind == "one-hot part":
                words = np.asarray(value)[:, :3]
                pending = np.where(words == 1, np.arange(1, 4), 0).max(axis=1)
            elif kind == "digit" and pending is not None:
                decoded.append(("decoded digit", (np.asarray(value).astype(np.int64) ^ pending)[:, None]))
                pending = None
        out.append(decoded)
    return out


def only(views, kind: str) -> list:
    """The views cut to one kind of entry, run by run."""
    return [[(k, value) for k, value in run if k == kind] for run in views]
