"""circuits.validity: the in-MPC checks of the clients' rows (labels in {0, 1}, keys in their encoding's range),
between P0 and P1 over TCP with the TTP dealer, against the clear, on the values a malicious client would send.
"""
import secrets

import numpy as np
import pytest

from mpc_auc.circuits.bits import unpack_bits
from mpc_auc.protocols.runtime.session import run_parties

KEY_BITS = 30
OFFSET = 1 << 61


def _words(values):
    """Python integers as int64 words mod 2^64."""
    return np.array([v % 2**64 for v in values], dtype=np.uint64).view(np.int64)


LABELS = _words([0, 1, 1, 0, 2, 400, -1, 10**6, 1 << 63, 3, 0, 1, 0, 1, 1, 0])
SHIFTED = _words([0, 5, (1 << KEY_BITS) - 1, 1 << KEY_BITS, 1 << 62, -1, 1 << 63, 12, 7, (1 << KEY_BITS) + 5, 8,
                  1, 2, 3, 4, 9])  # k + 2^61, as the XOR shares carry it
ROWS = [3, 2, 5, 6]  # clients in input order


def _split(values, xor=False):
    mask = np.frombuffer(secrets.token_bytes(8 * len(values)), dtype=np.int64)
    return (values ^ mask, mask) if xor else (values - mask, mask)


def _party(ctx, labels, keys, key_xor, chunk=None, rows=ROWS):
    from mpc_auc.circuits import validity
    from mpc_auc.circuits.gates import Gates
    from mpc_auc.circuits.validity import client_verdicts, valid_rows

    validity.CHECK_ROWS = chunk or validity.CHECK_ROWS
    gates = Gates(ctx.stream_key)
    mine = [labels[ctx.rank], keys[ctx.rank], key_xor[ctx.rank]]
    radix = valid_rows(gates, mine[0], key_xor=mine[2], key_bits=KEY_BITS)
    bitonic = valid_rows(gates, mine[0], keys=mine[1], key_bits=KEY_BITS)
    return {"radix": gates.open(radix, xor=True), "bitonic": gates.open(bitonic, xor=True),
            "clients": gates.open(client_verdicts(gates, radix, rows)),
            "left": gates.left("and")}


@pytest.fixture(scope="module")
def opened():
    keys = SHIFTED - np.int64(OFFSET)
    out = run_parties(_party, (_split(LABELS), _split(keys), _split(SHIFTED, xor=True)), provider="TTP",
                      timeout_s=120)
    assert all(np.array_equal(out[0][k], out[1][k]) for k in ("radix", "bitonic", "clients"))
    return out[0]


def _expected():
    labels_ok = (LABELS == 0) | (LABELS == 1)
    keys_ok = SHIFTED.view(np.uint64) < (1 << KEY_BITS)
    return labels_ok & keys_ok


def test_every_row_verdict_matches_the_clear(opened):
    n = len(LABELS)
    assert np.array_equal(unpack_bits(opened["radix"][None], n)[0].astype(bool), _expected())
    assert np.array_equal(unpack_bits(opened["bitonic"][None], n)[0].astype(bool), _expected())
    assert not _expected()[[4, 5, 7]].any() and _expected()[[0, 1, 2]].all()  # the red team's cases are covered


def test_one_bit_per_client(opened):
    ok, bounds = _expected(), np.cumsum([0] + ROWS)
    clients = [int(ok[a:b].all()) for a, b in zip(bounds[:-1], bounds[1:])]
    assert list(opened["clients"]) == clients
    assert clients == [1, 0, 0, 1]  # the test holds a valid client after invalid ones


def test_reserved_triples_are_used(opened):
    assert opened["left"] == 0


def test_rows_checked_in_chunks_get_the_same_verdicts():
    """Ten copies of the rows checked 64 at a time (circuits.validity.CHECK_ROWS): three chunks, the last partial;
    every row's verdict and every client's bit as the clear says."""
    copies = 10
    labels, shifted = np.tile(LABELS, copies), np.tile(SHIFTED, copies)
    rows = ROWS * copies
    out = run_parties(_party, (_split(labels), _split(shifted - np.int64(OFFSET)), _split(shifted, xor=True), 64, rows),
                      provider="TTP", timeout_s=120)[0]
    expected = np.tile(_expected(), copies)
    for sort in ("radix", "bitonic"):
        assert np.array_equal(unpack_bits(out[sort][None], len(labels))[0].astype(bool), expected)
    assert list(out["clients"]) == [1, 0, 0, 1] * copies and out["left"] == 0
