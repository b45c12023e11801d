"""Client shares: uniform masks, exact reconstruction, sealed bundles only the addressee opens."""
import numpy as np
import pytest

from mpc_auc.protocols import sharing
from mpc_auc.protocols.bundles import SealedBundle, open_bundle, seal_client
from mpc_auc.protocols.errors import BundleIntegrityError
from mpc_auc.protocols.sealing import PartyKey


def test_shares_reconstruct_mod_2_64():
    values = np.array([0, 1, -1, 2**62, -(2**62), 2**63 - 1, -(2**63)], dtype=np.int64)
    s0, s1 = sharing.split(values)
    assert np.array_equal(sharing.combine(s0, s1), values)


def test_each_share_alone_looks_uniform():
    # the top bit of a share of an all-zero vector must be a fair coin
    s0, s1 = sharing.split(np.zeros(20000, dtype=np.int64))
    for share in (s0, s1):
        top = (share.view(np.uint64) >> np.uint64(63)).mean()
        assert abs(top - 0.5) < 0.02  # 6 sigma
    assert not np.array_equal(sharing.split(np.zeros(4, dtype=np.int64))[0],
                              sharing.split(np.zeros(4, dtype=np.int64))[0])


@pytest.fixture
def sealed():
    keys = [PartyKey(), PartyKey()]
    values = np.array([5, -3, 2**61 - 1], dtype=np.int64)
    labels = np.array([1, 0, 1], dtype=np.int64)
    return keys, values, labels, seal_client("hospital-7", values, labels, [k.public for k in keys])


def test_parties_recover_the_clients_data_together(sealed):
    keys, values, labels, bundles = sealed
    opened = [open_bundle(keys[p], p, bundles[p]) for p in (0, 1)]
    assert opened[0][0] == opened[1][0] == "hospital-7"
    assert np.array_equal(sharing.combine(opened[0][1], opened[1][1]), values)
    assert np.array_equal(sharing.combine(opened[0][2], opened[1][2]), labels)


def test_a_party_cannot_open_the_other_partys_bundle(sealed):
    keys, _, _, bundles = sealed
    with pytest.raises(BundleIntegrityError, match="addressed to P1"):
        open_bundle(keys[0], 0, bundles[1])
    # even when it ignores the header's address, the AEAD refuses
    with pytest.raises(BundleIntegrityError, match="authentication"):
        keys[0].open(bundles[1].sealed, bundles[1].header)


@pytest.mark.parametrize("where", ["ciphertext", "tag", "ephemeral key", "header"])
def test_tampered_bundle_is_rejected(sealed, where):
    keys, _, _, bundles = sealed
    header, body = bytearray(bundles[0].header), bytearray(bundles[0].sealed)
    if where == "header":
        header[-1] ^= 1  # another client id
    else:
        body[{"ciphertext": 50, "tag": -1, "ephemeral key": 0}[where]] ^= 1
    with pytest.raises(BundleIntegrityError):
        open_bundle(keys[0], 0, SealedBundle(bytes(header), bytes(body)))


def test_truncated_bundle_is_rejected(sealed):
    keys, _, _, bundles = sealed
    with pytest.raises(BundleIntegrityError):
        open_bundle(keys[0], 0, SealedBundle(bundles[0].header, bundles[0].sealed[:20]))
