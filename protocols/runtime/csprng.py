"""Every random value CrypTen draws comes from ChaCha20 under 256-bit keys drawn with ``secrets``.

Stock CrypTen draws its secret randomness from ``torch.Generator`` objects
(MT19937, of whose 64-bit seed only the low 32 bits matter), and its TTP
dealer seeds them from torch's default generator: a party that receives its
own seed can search 2^32 dealer seeds and rebuild the other party's
triples (tests/protocols/runtime/test_provider_security.py shows the premise).  :func:`install`
replaces every source:

=====================  =======================================================
randomness             key it comes from (each drawn with ``secrets``, 256 bits)
=====================  =======================================================
Beaver triples,        party p's dealer key k_p (purpose TUPLES): the dealer
squares, binary        draws k_0 and k_1 independently and sends k_p to party p
triples, wrap and      alone over their TLS link; p expands its shares of a, b
B2A correlations       (and P1 of c) from k_p; the dealer sends P0 only the
                       correction c - c_1.  Nothing P0 receives is derived from k_1.
shuffle masks and      the same k_p under the purposes of circuits.streams
permutations, one-hot,
bit correlations
zero-sharings (PRZS)   pairwise key drawn by each party for its successor and
                       sent over their TLS link (CrypTen's "next"/"prev" seeds)
sync'd randomness      key drawn by P0, sent to P1 (CrypTen's "global" seed)
a party's own masks    local key, never sent (CrypTen's "local" seed)
=====================  =======================================================

In-circuit noise (circuits.noise) draws each party's shares from ChaCha20
under a fresh key of that party's, drawn with ``secrets`` per call and never
sent; the kernels' private tie coins come from ``secrets`` directly.  :func:`forbid_torch_rng` makes torch's own random
functions raise inside the roles, so a secret drawn from them would stop
the run instead of passing silently.
"""
import secrets
import struct

import numpy as np
import torch
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms

from ...circuits.crypten_compat import crypten
from ...circuits.dealer_line import ttp_request
from ...circuits.streams import KEY_BYTES, check_key
import importlib

TUPLES = 10  # nonce purposes of the sequential streams (circuits.streams uses 1..9 and 14..21)
PAIRWISE = 11
SYNCED = 12
LOCAL = 13
_CPU = torch.device("cpu")


class KeyedGenerator:
    """A sequential ChaCha20 keystream standing in for a torch.Generator wherever CrypTen takes one.

    Holders of the same key and purpose draw identical words in the same order.
    """

    def __init__(self, key: bytes, purpose: int):
        check_key(key)
        nonce = struct.pack("<IIQ", 0, purpose, 0)
        self._encryptor = Cipher(algorithms.ChaCha20(bytes(key), nonce), mode=None).encryptor()
        self.device = _CPU

    def words(self, shape) -> np.ndarray:
        """Uniform int64 words (mod 2^64) of ``shape``: the next 8 * prod(shape) keystream bytes."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        out = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=np.int64)
        buffer = memoryview(out).cast("B")
        self._encryptor.update_into(buffer, buffer)  # keystream XOR zeros
        return out.reshape(shape)


def _generator(generator) -> KeyedGenerator:
    if generator is None:
        generator = crypten.generators["local"][_CPU]
    if not isinstance(generator, KeyedGenerator):
        raise RuntimeError(f"refusing to draw CrypTen randomness from a {type(generator).__name__}")
    return generator


def _shape(size) -> tuple:
    return (size,) if isinstance(size, int) else tuple(size)


def random_ring_element(size, ring_size=2 ** 64, generator=None, **_kwargs) -> torch.Tensor:
    """Uniform elements of Z_{2^64} (CrypTen's generate_random_ring_element, from a KeyedGenerator)."""
    if ring_size != 2 ** 64:
        raise ValueError("only the ring Z_2^64 is supported")
    return torch.from_numpy(_generator(generator).words(_shape(size)))


def random_kbit_tensor(size, bitlength=None, generator=None, **_kwargs) -> torch.Tensor:
    """Uniform ``bitlength``-bit values (CrypTen's generate_kbit_random_tensor, from a KeyedGenerator)."""
    words = _generator(generator).words(_shape(size))
    if bitlength is not None and bitlength < 64:
        words &= (1 << bitlength) - 1
    return torch.from_numpy(words)


def _setup_prng() -> None:
    """Replacement of crypten._setup_prng: 256-bit keys from ``secrets``, exchanged over the secure links."""
    comm = crypten.communicator.get()
    rank, world = comm.get_rank(), comm.get_world_size()
    next_key = secrets.token_bytes(KEY_BYTES)
    comm.send_obj(next_key, (rank + 1) % world)
    prev_key = comm.recv_obj((rank - 1) % world)
    synced = comm.broadcast_obj(secrets.token_bytes(KEY_BYTES) if rank == 0 else None, 0)
    crypten.generators = {
        "prev": {_CPU: KeyedGenerator(prev_key, PAIRWISE)},
        "next": {_CPU: KeyedGenerator(next_key, PAIRWISE)},
        "local": {_CPU: KeyedGenerator(secrets.token_bytes(KEY_BYTES), LOCAL)},
        "global": {_CPU: KeyedGenerator(synced, SYNCED)},
    }


def _client_setup_generators(client) -> None:
    """Replacement of TTPClient's set-up: receive this party's dealer key k_p (protocols.runtime.dealer draws it)."""
    comm = crypten.communicator.get()
    key = comm.recv_obj(comm.get_ttp_rank(), comm.ttp_group)
    check_key(key)
    client.stream_key = key
    client.generator = KeyedGenerator(key, TUPLES)
    client.generator_cuda = None


def dealer_key() -> bytes:
    """This compute party's dealer key k_p (after crypten.init with the TTP provider)."""
    return crypten.mpc.provider.ttp_provider.TTPClient.get().stream_key


_PATCHED = (
    "crypten.common.rng",
    "crypten.mpc.provider.ttp_provider",
    "crypten.mpc.provider.tfp_provider",
    "crypten.mpc.primitives.arithmetic",
    "crypten.mpc.primitives.binary",
)


def install() -> None:
    """Route every CrypTen random draw through KeyedGenerator streams (idempotent)."""

    for name in _PATCHED:
        module = importlib.import_module(name)
        if hasattr(module, "generate_random_ring_element"):
            module.generate_random_ring_element = random_ring_element
        if hasattr(module, "generate_kbit_random_tensor"):
            module.generate_kbit_random_tensor = random_kbit_tensor
    crypten._setup_prng = _setup_prng
    client = crypten.mpc.provider.ttp_provider.TTPClient._TTPClient__TTPClient
    client._setup_generators = _client_setup_generators
    client.ttp_request = ttp_request  # one numbered line to the dealer for CrypTen, the shuffles and the gates


_FORBIDDEN = ("rand", "randn", "randint", "randperm", "rand_like", "randint_like", "randn_like", "bernoulli",
              "normal", "multinomial", "poisson", "manual_seed", "seed")


def forbid_torch_rng() -> None:
    """Make torch's random functions raise in this process (the roles): no secret may come from them."""

    def refuse(name):
        def raising(*_args, **_kwargs):
            raise RuntimeError(f"torch.{name} is not a cryptographic generator and is disabled in mpc-auc roles")

        return raising

    for name in _FORBIDDEN:
        setattr(torch, name, refuse(name))
