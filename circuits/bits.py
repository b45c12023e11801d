"""XOR-shared bits to additive shares with one dealer correlation per batch (packed openings).

For packed XOR-shared bits x (64 lanes per word) the dealer's bit
correlation (circuits.dealer) gives random packed bits r, XOR-shared
through the two parties' streams, and additive shares of each bit of r.
The parties open c = x XOR r -- one word per 64 bits, uniform because r
is -- and then, c being public, x = c + r - 2 c r = c + (1 - 2c) r per bit
is a local linear map of the shares of r.  Each party sees only c.  Cost
per bit: 1/8 byte sent by each party, 8 bytes from the dealer to P0
(CrypTen's own conversion opens a 64-bit word per bit).
"""
import numpy as np
import torch

from .crypten_compat import crypten
from .dealer import dealer_request, unpack_bits
from .streams import BIT_MASK, BIT_SHARE, KeyStream


class BitConverter:
    """One compute party's end of the dealer's bit correlations (needs the TTP dealer's stream key)."""

    def __init__(self, stream_key: bytes):
        if stream_key is None:
            raise RuntimeError("bit conversion needs the separate dealer (provider TTP) and its stream key")
        self.comm = crypten.communicator.get()
        self.rank = self.comm.get_rank()
        self.stream = KeyStream(stream_key)
        self.count = 0  # correlations used so far; both parties advance it in step

    def to_additive(self, packed: np.ndarray, count: int) -> np.ndarray:
        """This party's additive shares (R, count) of the bits whose XOR shares are packed in ``packed`` (R, W)."""
        packed = np.ascontiguousarray(packed, dtype=np.int64)
        index = self.count
        self.count += 1
        own = packed ^ self.stream.words(BIT_MASK, index, packed.shape)
        total = self.comm.all_reduce(torch.from_numpy(own)).numpy()  # own0 + own1; own ^ (total - own) = c
        c = unpack_bits(own ^ (total - own), count)
        if self.rank == 0:
            r_share = dealer_request("bit_correlation", packed.shape, count, index)
        else:
            r_share = self.stream.words(BIT_SHARE, index, c.shape)
        return (1 - 2 * c) * r_share + (c if self.rank == 0 else 0)
