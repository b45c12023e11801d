"""Oblivious shuffle of secret-shared columns, and moving columns by a shared permutation.

A shuffle applies pi = pi0 then pi1 (pi0 known to P0 only, pi1 to P1 only,
both fresh per shuffle) to every column of a (c, M) sharing: x -> x[pi].
Neither party knows pi, so a vector opened after a shuffle shows its values
in uniformly random order.  The protocol of one step is in circuits.dealer;
it costs one message of c*M words from the masking party to the permuting
party, and the dealer sends each party c*M correction words.

On top of it, a shared destination vector sigma (sigma[i] = new position of
element i, a permutation) moves columns without revealing sigma
(Chida et al. 2019, ApplyPerm / its inverse): shuffle (sigma, columns) by a
fresh pi, open s = sigma[pi] -- a uniform permutation whatever sigma is --
and scatter locally; the inverse gathers at s and unshuffles.
"""
import numpy as np
import torch

from .crypten_compat import crypten
from .dealer import step_plan
from .shares import from_share, share_of
from .streams import MASK_IN, MASK_OUT, KeyStream, permute


class Shuffler:
    """One compute party's end of the shuffle service (needs the TTP dealer)."""

    def __init__(self, view=None):
        comm = crypten.communicator.get()
        if not getattr(comm, "ttp_initialized", False):
            raise RuntimeError("the oblivious shuffle needs the separate dealer (provider TTP)")
        self.rank = comm.get_rank()
        self._comm = comm
        self._stream = KeyStream(comm.recv_obj(comm.get_ttp_rank(), comm.ttp_group))
        self._perm_count = 0
        self._mask_count = 0
        self.view = view  # optional list: every value this party opens is appended (for audits)

    # moving shared columns by a shared permutation -----------------------
    def apply(self, sigma, columns) -> list:
        """MPC columns moved to their destinations: out[sigma[i]] = column[i]."""
        s, _, moved = self.open_shuffled(sigma, columns)
        out = np.empty((len(moved), len(s)), dtype=np.int64)
        out[:, s] = moved
        return [from_share(row) for row in out]

    def unapply(self, sigma, moved_columns) -> list:
        """The inverse of ``apply``: out[i] = moved_column[sigma[i]]."""
        s, pi, _ = self.open_shuffled(sigma, [])
        rows = np.stack([share_of(c) for c in moved_columns])
        return [from_share(row) for row in self.gather_back(s, pi, rows)]

    def open_shuffled(self, sigma, columns):
        """(s = sigma[pi] opened, pi, this party's shares of the columns[pi]) for a fresh pi."""
        m = sigma.size(0)
        pi = self.fresh(m)
        shuffled = self.shuffle(np.stack([share_of(sigma)] + [share_of(c) for c in columns]), pi)
        s = self.open(shuffled[0])
        if s.min() < 0 or s.max() >= m or np.bincount(s, minlength=m).max() > 1:
            raise RuntimeError("opened destinations are not a permutation: the parties' shares disagree")
        return s, pi, shuffled[1:]

    def gather_back(self, s, pi, rows: np.ndarray) -> np.ndarray:
        """Shares of z with z[i] = v[sigma[i]], from shares of rows v, the opened s = sigma[pi], and pi."""
        return self.unshuffle(rows[:, s], pi)  # rows[:, s] = z[pi]

    # the shuffle itself --------------------------------------------------
    def fresh(self, n: int) -> "JointPermutation":
        """A new joint permutation of n positions, unknown to either party."""
        index = self._perm_count
        self._perm_count += 1
        return JointPermutation(index, self._stream.permutation(index, n))

    def shuffle(self, shares: np.ndarray, pi: "JointPermutation") -> np.ndarray:
        """This party's share of x[pi] for its share of x (shape (c, M))."""
        return self._run(shares, pi, inverse_order=False)

    def unshuffle(self, shares: np.ndarray, pi: "JointPermutation") -> np.ndarray:
        """This party's share of y with y[pi] = x, i.e. undo ``shuffle`` (fresh masks)."""
        return self._run(shares, pi, inverse_order=True)

    def open(self, shares: np.ndarray) -> np.ndarray:
        """Open a sharing to both parties (one exchange)."""
        opened = self._comm.all_reduce(torch.from_numpy(np.ascontiguousarray(shares))).numpy()
        if self.view is not None:
            self.view.append(opened.copy())
        return opened

    def _run(self, shares, pi, inverse_order: bool) -> np.ndarray:
        shares = np.ascontiguousarray(np.atleast_2d(shares).T, dtype=np.int64)  # (M, c): elements as rows
        shape = shares.shape
        mask_index = self._mask_count
        self._mask_count += 1
        delta = self._correction(shape, pi.index, mask_index, inverse_order)
        for step, (holder, other) in enumerate(step_plan(inverse_order)):
            stream_index = 2 * mask_index + step
            if self.rank == other:
                a = self._stream.words(MASK_IN, stream_index, shape)
                self._comm.send(torch.from_numpy(shares - a), holder)
                shares = self._stream.words(MASK_OUT, stream_index, shape)
            else:
                masked = self._comm.recv(torch.empty(shape, dtype=torch.int64), other).numpy()
                shares = permute(shares + masked, pi.own, inverse_order) + delta
        return np.ascontiguousarray(shares.T)

    def _correction(self, shape, perm_index, mask_index, inverse_order) -> np.ndarray:
        comm = self._comm
        if self.rank == 0:
            from crypten.mpc.provider.ttp_provider import TTPClient

            got = TTPClient.get().ttp_request(
                "permutation_correlation", None, shape, perm_index, mask_index, inverse_order)
            return got.numpy()
        raw = comm.recv_obj(comm.get_ttp_rank(), comm.ttp_group)
        return np.frombuffer(raw, dtype=np.int64).reshape(shape)


class JointPermutation:
    """A handle on one shuffle permutation: its index and this party's own part of it."""

    def __init__(self, index: int, own: np.ndarray):
        self.index, self.own = index, own
