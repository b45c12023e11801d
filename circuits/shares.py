"""Small helpers for integer (precision 0) CrypTen tensors and for this party's own shares."""
import numpy as np
import torch

from .crypten_compat import crypten

MPCTensor = crypten.mpc.MPCTensor


def from_share(share) -> "MPCTensor":
    """Wrap this party's additive share (int64 tensor or array, mod 2^64) as an integer MPC tensor."""
    return MPCTensor.from_shares(torch.as_tensor(share).to(torch.int64), precision=0)


def share_of(x: "MPCTensor"):
    """This party's int64 share of an integer MPC tensor, as a numpy array (no copy)."""
    return x._tensor.share.numpy()


def public(values: torch.Tensor) -> "MPCTensor":
    """A publicly known integer tensor as a sharing: party 0 holds it, party 1 holds 0."""
    rank = crypten.communicator.get().get_rank()
    values = values.to(torch.int64)
    return from_share(values if rank == 0 else torch.zeros_like(values))


def public_share(value, rank: int):
    """This party's additive share (numpy) of a public constant: party 0 holds it, party 1 holds 0."""
    return value if rank == 0 else np.zeros_like(value)


def reveal_int(x: "MPCTensor") -> torch.Tensor:
    """Open an integer sharing to both compute parties."""
    return x.get_plain_text().to(torch.int64)


def exchange(comm, own: np.ndarray, kind: str) -> np.ndarray:
    """Send this party's array to the other compute party and return the other's of the same shape (one round)."""
    own = np.ascontiguousarray(own)
    rank = comm.get_rank()
    comm.send_array(own, 1 - rank)
    return comm.recv_array(own.shape, own.dtype, 1 - rank, operation=kind)
