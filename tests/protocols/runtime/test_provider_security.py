"""CrypTen's stock TTP randomness is recoverable by P0; ours comes from independent 256-bit CSPRNG keys.

The attack on stock CrypTen (issue "Real security"): TTPServer draws both
parties' seeds in a row from torch's default generator, and a torch
Generator (MT19937) uses only the low 32 bits of its seed.  So P0, which
receives its own seed, can search the dealer's 32-bit seed space, derive
P1's seed and regenerate all of P1's triple shares.  Here at reduced scale
(a 16-bit dealer seed), then the same attacker against our dealer.
"""
import secrets

import numpy as np
import pytest
import torch

from mpc_auc.protocols.runtime import csprng, dealer
from mpc_auc.protocols.runtime.csprng import TUPLES, KeyedGenerator
from mpc_auc.protocols.errors import PartyFailure
from mpc_auc.protocols.runtime.session import run_parties
from mpc_auc.sims.security.checks import stock_dealer_seeds, stock_share

TRIPLE = (1000,)


def test_a_torch_generator_uses_only_32_bits_of_its_seed():
    seed = secrets.randbits(62)
    low = seed % 2 ** 32
    assert torch.equal(stock_share(seed), stock_share(low))
    assert torch.equal(stock_share(low), stock_share(low + 2 ** 32))
    assert not torch.equal(stock_share(low), stock_share(low + 1))


def test_p0_recovers_p1s_triples_from_the_stock_dealer_at_reduced_scale():
    dealer_seed = secrets.randbelow(2 ** 16)  # reduced from 2^32 (3 min 20 s in C) to 2^16
    seed0, seed1 = stock_dealer_seeds(dealer_seed)
    p1_share = stock_share(seed1)
    found = [s for s in range(2 ** 16) if stock_dealer_seeds(s)[0] == seed0]  # P0 knows only seed0
    assert found
    assert torch.equal(stock_share(stock_dealer_seeds(found[0])[1]), p1_share)  # every P1 triple share


def _dealer_keys(monkeypatch):
    """Run our dealer's key set-up with a recording communicator; return (drawn, sent, dealer)."""
    drawn, sent, draw = [], {}, secrets.token_bytes

    def token_bytes(n):
        drawn.append(draw(n))
        return drawn[-1]

    class Comm:
        ttp_group = "ttp"

        def send_obj(self, obj, dst, group):
            sent[dst] = obj

    monkeypatch.setattr(dealer.secrets, "token_bytes", token_bytes)
    monkeypatch.setattr(dealer.crypten.communicator, "get", lambda: Comm())
    server = dealer.Dealer.__new__(dealer.Dealer)
    server._setup_generators()
    return drawn, sent, server


def _p1_triple_share(server) -> np.ndarray:
    return server.generators[1].words(TRIPLE)


def test_our_dealer_sends_each_party_its_own_independent_256_bit_key(monkeypatch):
    drawn, sent, server = _dealer_keys(monkeypatch)
    assert len(drawn) == 2 and all(len(k) * 8 >= 128 for k in drawn) and drawn[0] != drawn[1]
    assert sent == {0: drawn[0], 1: drawn[1]}  # k_p to party p only, each a fresh secrets draw
    assert np.array_equal(_p1_triple_share(server), KeyedGenerator(drawn[1], TUPLES).words(TRIPLE))
    # that no bit of P0's key moves P1's (any derivation): sims.security.checks.key_dependence,
    # tests/sims/test_dealer_independence.py


def _report_keys(ctx):
    from mpc_auc.circuits.crypten_compat import crypten
    from mpc_auc.circuits.shares import from_share, reveal_int

    gens = crypten.generators
    assert all(isinstance(gens[k][torch.device("cpu")], KeyedGenerator) for k in gens)
    x = from_share(np.arange(8) if ctx.rank == 0 else np.zeros(8, dtype=np.int64))
    product = reveal_int(x * x).numpy()  # a Beaver multiplication with dealer triples
    return {"dealer key": ctx.stream_key, "product": product}


def test_a_live_session_uses_csprng_keys_and_still_computes():
    out = run_parties(_report_keys, provider="TTP", timeout_s=30)
    keys = [o["dealer key"] for o in out]
    assert all(len(k) == 32 for k in keys) and keys[0] != keys[1]
    assert all(np.array_equal(o["product"], np.arange(8) ** 2) for o in out)


def _draws_from_torch(ctx):
    return torch.randint(0, 10, (3,)).numpy()


def test_torch_rng_is_disabled_in_the_roles():
    with pytest.raises(PartyFailure, match="not a cryptographic generator"):
        run_parties(_draws_from_torch, provider="TTP", timeout_s=30)


def test_keyed_generators_are_sequential_and_reproducible():
    key = secrets.token_bytes(32)
    a, b = KeyedGenerator(key, TUPLES), KeyedGenerator(key, TUPLES)
    first = a.words((4, 3))
    assert np.array_equal(first, b.words((4, 3)))
    assert not np.array_equal(a.words((4, 3)), first)  # the stream moves on
    assert not np.array_equal(KeyedGenerator(key, csprng.PAIRWISE).words((4, 3)), first)  # purposes differ
    with pytest.raises(RuntimeError, match="refusing"):
        csprng.random_ring_element((3,), generator=torch.Generator())
