"""CrypTen's communicator, reimplemented over the roles' TLS links (protocols.runtime.link).

CrypTen's own ``DistributedCommunicator`` runs torch.distributed/gloo, whose
traffic is plaintext and whose rendezvous store listens on every interface
without authentication; the torch CPU wheel has no TLS transport for gloo.
This class keeps CrypTen's interface (send/recv, the collectives, objects,
groups, traffic counters) and moves every byte over the mutually
authenticated, encrypted links of one session: ranks are 0 = P0, 1 = P1
and 2 = the dealer (CrypTen's TTP rank).  With two compute parties each
collective is a direct exchange; frames carry the group they belong to,
so traffic of different groups never mixes.

Objects (the dealer's requests and replies) are pickled as CrypTen does and
read back with CrypTen's restricted unpickler (crypten.common.serial), which
builds only allow-listed types.
"""
import pickle

import numpy as np
import torch

from ...circuits.crypten_compat import crypten
from ..errors import PeerLost

_GROUP_CHANNEL = {"main": 1, "ttp": 2, "ttp_comm": 3, "permutations": 4}


class Group:
    """A set of ranks; CrypTen passes these back to the communicator as ``group=``."""

    def __init__(self, name: str, ranks):
        self.name, self.ranks, self.channel = name, tuple(ranks), _GROUP_CHANNEL[name]


class _Done:
    """What isend/irecv return: the transfer already happened (links are asynchronous underneath)."""

    def __init__(self, finish=None):
        self._finish = finish

    def wait(self):
        if self._finish is not None:
            self._finish()
            self._finish = None

    def is_completed(self):
        return self._finish is None


def _sum(a, b):
    return a + b


def _xor(a, b):
    return a ^ b


_logging = crypten.communicator.communicator._logging  # CrypTen's traffic counting decorator


class SecureCommunicator(crypten.communicator.Communicator):
    """CrypTen communicator whose transport is a dict rank -> Link (protocols.runtime.link)."""

    BYTES_PER_ELEMENT = 8
    instance = None
    _pending = None

    def __init__(self, rank: int, world_size: int, links: dict, names: dict, with_dealer: bool):
        self.rank, self.world_size = rank, world_size
        self.links, self.names = links, names  # rank -> Link, rank -> role name
        self.main_group = Group("main", range(world_size))
        self.ttp_group = Group("ttp", range(world_size + (1 if with_dealer else 0)))
        self.ttp_comm_group = Group("ttp_comm", (0, world_size))
        self.permutation_group = Group("permutations", range(world_size + 1))  # a party's own shuffle permutations
        self.ttp_initialized = with_dealer
        self._name = names[rank]
        self.reset_communication_stats()

    # CrypTen's class-level interface ------------------------------------------
    @classmethod
    def install(cls, communicator: "SecureCommunicator") -> None:
        """Make ``communicator`` the one the next ``crypten.init()`` takes (then crypten.communicator.get())."""
        cls.instance, cls._pending = None, communicator
        crypten.communicator.DistributedCommunicator = cls  # crypten.communicator looks the class up by this name

    @classmethod
    def is_initialized(cls):
        return cls.instance is not None

    @classmethod
    def initialize(cls, rank, world_size, init_ttp=False):
        if cls._pending is None:
            raise RuntimeError("the secure communicator is installed by the role runtime before crypten.init")
        cls.instance, cls._pending = cls._pending, None

    @classmethod
    def get(cls):
        return cls.instance

    @classmethod
    def shutdown(cls):
        me = cls.instance
        if me is not None and me.rank == 0 and me.ttp_initialized:
            try:
                me.send_obj("terminate", me.get_ttp_rank(), me.ttp_group)
            except PeerLost:
                pass
        cls.instance = None

    def get_world_size(self):
        return self.world_size

    def get_rank(self):
        return self.rank

    def get_ttp_rank(self):
        return self.world_size

    def set_name(self, name):
        self._name = name

    def get_name(self):
        return self._name

    def bytes_sent(self) -> int:
        """Bytes written to the links with the other roles so far (TLS records included)."""
        return sum(link.bytes_sent for link in self.links.values())

    # transport ----------------------------------------------------------------
    def _put(self, tensor, dst: int, group: Group) -> None:
        # a copy: the link sends asynchronously and CrypTen may change the tensor in place meanwhile
        self.links[dst].send(group.channel, tensor.detach().numpy().tobytes())

    def _take(self, like, src: int, group: Group, operation: str) -> torch.Tensor:
        payload = self.links[src].recv(group.channel, f"{operation} from {self.names[src]}")
        expected = like.numel() * like.element_size()
        if len(payload) != expected:
            raise PeerLost([self.names[src]], operation, ValueError(
                f"received {len(payload)} bytes where {expected} were expected"))
        dtype = like.numpy().dtype if like.numel() else np.int64
        return torch.from_numpy(np.frombuffer(payload, dtype=dtype).reshape(tuple(like.shape)))

    def _others(self, group: Group):
        return [r for r in group.ranks if r != self.rank]

    def _group(self, group):
        return self.main_group if group is None else group

    # point to point -------------------------------------------------------------
    @_logging
    def send(self, tensor, dst):
        self._put(tensor, dst, self.main_group)

    @_logging
    def recv(self, tensor, src=None):
        return self._take(tensor, src, self.main_group, "recv")

    @_logging
    def isend(self, tensor, dst):
        self._put(tensor, dst, self.main_group)
        return _Done()

    @_logging
    def irecv(self, tensor, src=None):
        def finish():
            tensor.copy_(self._take(tensor, src, self.main_group, "irecv"))

        return _Done(finish)

    # collectives ------------------------------------------------------------------
    def _reduce_from_others(self, tensor, op, group):
        result = tensor.clone()
        for r in self._others(group):
            result = op(result, self._take(tensor, r, group, "reduce"))
        return result

    @staticmethod
    def _op(op):
        return _xor if op is not None and "XOR" in str(op).upper() else _sum

    @_logging
    def all_reduce(self, input, op=None, batched=False):
        combine = self._op(op)
        tensors = input if batched else [input]
        for t in tensors:
            for r in self._others(self.main_group):
                self._put(t, r, self.main_group)
        out = [self._reduce_from_others(t, combine, self.main_group) for t in tensors]
        return out if batched else out[0]

    @_logging
    def reduce(self, input, dst, op=None, batched=False):
        combine = self._op(op)
        tensors = input if batched else [input]
        if self.rank != dst:
            for t in tensors:
                self._put(t, dst, self.main_group)
            return None
        out = [self._reduce_from_others(t, combine, self.main_group) for t in tensors]
        return out if batched else out[0]

    @_logging
    def gather(self, tensor, dst):
        if self.rank != dst:
            self._put(tensor, dst, self.main_group)
            return [None]
        return [tensor.clone() if r == self.rank else self._take(tensor, r, self.main_group, "gather")
                for r in self.main_group.ranks]

    @_logging
    def all_gather(self, tensor):
        for r in self._others(self.main_group):
            self._put(tensor, r, self.main_group)
        return [tensor.clone() if r == self.rank else self._take(tensor, r, self.main_group, "all_gather")
                for r in self.main_group.ranks]

    @_logging
    def scatter(self, scatter_list, src, size=None, device=None):
        if self.rank == src:
            for r in self._others(self.main_group):
                self._put(scatter_list[r], r, self.main_group)
            return scatter_list[self.rank]
        shape = size if size is not None else scatter_list[self.rank].size()
        return self._take(torch.empty(shape, dtype=torch.long), src, self.main_group, "scatter")

    @_logging
    def broadcast(self, input, src, group=None, batched=False):
        group = self._group(group)
        tensors = input if batched else [input]
        for t in tensors:
            if self.rank == src:
                for r in self._others(group):
                    self._put(t, r, group)
            else:
                t.copy_(self._take(t, src, group, "broadcast"))
        return input

    @_logging
    def barrier(self):
        token = torch.zeros(1, dtype=torch.long)
        for r in self._others(self.main_group):
            self._put(token, r, self.main_group)
        for r in self._others(self.main_group):
            self._take(token, r, self.main_group, "barrier")

    # numpy arrays, without copies ------------------------------------------------------
    def send_array(self, array: np.ndarray, dst: int, group=None) -> None:
        """Send an array as it is, no copy (the caller leaves it unchanged); counted as one send."""
        array = np.ascontiguousarray(array)
        self._count(array.size)
        self.links[dst].send(self._group(group).channel, array)

    def recv_array(self, shape, dtype, src: int, group=None, operation: str = "recv_array") -> np.ndarray:
        """The next array from ``src`` of this shape and dtype, read in place from the received payload."""
        shape, dtype = tuple(shape), np.dtype(dtype)
        self._count(int(np.prod(shape, dtype=np.int64)))
        payload = self.links[src].recv(self._group(group).channel, f"{operation} from {self.names[src]}")
        expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if len(payload) != expected:
            raise PeerLost([self.names[src]], operation, ValueError(
                f"received {len(payload)} bytes where {expected} were expected"))
        return np.frombuffer(payload, dtype=dtype).reshape(shape)

    def _count(self, elements: int) -> None:
        if crypten.cfg.communicator.verbose:
            self._log_communication(elements)

    # objects --------------------------------------------------------------------
    def _put_obj(self, obj, dst, group):
        self.links[dst].send(group.channel, pickle.dumps(obj))

    def _take_obj(self, src, group, operation):
        return crypten.common.serial.restricted_loads(bytes(self.links[src].recv(group.channel,
                                                                  f"{operation} from {self.names[src]}")))

    @_logging
    def send_obj(self, obj, dst, group=None):
        self._put_obj(obj, dst, self._group(group))

    @_logging
    def recv_obj(self, src, group=None):
        return self._take_obj(src, self._group(group), "recv_obj")

    @_logging
    def broadcast_obj(self, obj, src, group=None):
        group = self._group(group)
        if self.rank == src:
            for r in self._others(group):
                self._put_obj(obj, r, group)
            return obj
        return self._take_obj(src, group, "broadcast_obj")
