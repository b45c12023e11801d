"""P0's line to the dealer: requests posted in order, answers collected by ticket in any order.

The dealer answers P0's requests one after the other, in the order they
were sent, on one link.  Three clients share that link: CrypTen's own TTP
client (Beaver triples and conversions of MPC tensors), the shuffles
(circuits.shuffle) and the gates (circuits.gates), and the last two post
requests ahead so that the dealer computes while the parties work.  The
line numbers every request; an answer that arrives before its caller
collects it waits here, so a caller never reads another's answer, whatever
the order in which they interleave.  One line per session (per
communicator); only P0 uses it.
"""
import weakref
from collections import deque

import numpy as np
import torch

from .crypten_compat import crypten

_LINES = weakref.WeakKeyDictionary()  # communicator -> its DealerLine


class DealerLine:
    """The requests P0 has sent the dealer and the answers not yet collected."""

    def __init__(self, comm):
        self.comm = comm
        self._count = 0
        self._outstanding = deque()  # tickets whose answers have not arrived, oldest first
        self._arrived = {}  # ticket -> answer read off the link before its caller asked

    def post(self, function: str, *args, **kwargs) -> int:
        """Send the dealer ``function(*args, **kwargs)`` without waiting; returns the ticket of its answer."""
        self.comm.send_obj({"function": function, "device": None, "args": args, "kwargs": kwargs},
                           self.comm.get_ttp_rank(), self.comm.ttp_group)
        ticket, self._count = self._count, self._count + 1
        self._outstanding.append(ticket)
        return ticket

    def collect(self, ticket: int) -> np.ndarray:
        """The answer to ``ticket`` (int64 words), reading and keeping the answers to earlier requests."""
        while ticket not in self._arrived:
            if not self._outstanding:
                raise RuntimeError(f"dealer ticket {ticket} was never posted or was collected already")
            oldest = self._outstanding.popleft()
            size = self.comm.recv_obj(self.comm.get_ttp_rank(), self.comm.ttp_group)
            self._arrived[oldest] = self.comm.recv_array(size, np.int64, self.comm.get_ttp_rank(),
                                                         self.comm.ttp_comm_group, "dealer answer")
        return self._arrived.pop(ticket)

    def request(self, function: str, *args, **kwargs) -> np.ndarray:
        """Post and wait for the answer."""
        return self.collect(self.post(function, *args, **kwargs))


def dealer_line() -> DealerLine:
    """This session's line (P0 only)."""
    comm = crypten.communicator.get()
    if comm not in _LINES:
        _LINES[comm] = DealerLine(comm)
    return _LINES[comm]


def ttp_request(_client, func_name, device, *args, **kwargs) -> torch.Tensor:
    """CrypTen's TTPClient.ttp_request through the line (installed by protocols.runtime.csprng.install)."""
    if crypten.communicator.get().get_rank() != 0:
        raise RuntimeError("only party 0 talks to the dealer")
    return torch.from_numpy(dealer_line().request(func_name, *args, **kwargs))
