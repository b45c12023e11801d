"""Client shares: uniform masks, exact reconstruction, sealed bundles only the addressee opens."""
import numpy as np
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from mpc_auc.protocols.inputs import sharing
from mpc_auc.protocols.inputs.bundles import (INPUT_TAG, RANK_TAG, JobId, SealedBundle, client_mac_keys, open_bundle,
                                              open_ranks, seal_client, seal_ranks)
from mpc_auc.protocols.errors import BundleIntegrityError
from mpc_auc.protocols.runtime.sealing import KeyPair

JOB = JobId("evaluation-1", bytes(range(32)))


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
    keys = [KeyPair(), KeyPair()]
    values = np.array([5, -3, 2**61 - 1], dtype=np.int64)
    labels = np.array([1, 0, 1], dtype=np.int64)
    return keys, values, labels, seal_client("hospital-7", JOB, values, values + 7, labels, [k.public for k in keys],
                                                  KeyPair().public)


def test_parties_recover_the_clients_data_together(sealed):
    keys, values, labels, bundles = sealed
    opened = [open_bundle(keys[p], p, bundles[p]) for p in (0, 1)]
    assert opened[0].client == opened[1].client == "hospital-7"
    assert np.array_equal(sharing.combine(opened[0].key_shares, opened[1].key_shares), values[None])
    assert np.array_equal(sharing.combine(opened[0].label_shares, opened[1].label_shares), labels)
    assert np.array_equal(opened[0].key_xor_shares ^ opened[1].key_xor_shares, values[None] + 7)


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


def test_rank_bundles_open_only_for_their_client():
    alice, bob = KeyPair(), KeyPair()
    signers = [Ed25519PrivateKey.generate() for _ in range(2)]
    verify = [k.public_key() for k in signers]
    twice_ranks = np.array([0, 7, 12, 3], dtype=np.int64)  # ranks 0, 3.5, 6, 1.5
    s0, s1 = sharing.split(twice_ranks)
    bundles = [seal_ranks(0, JOB, "alice", alice.public, s0, signers[0].sign),
               seal_ranks(1, JOB, "alice", alice.public, s1, signers[1].sign)]
    assert np.array_equal(open_ranks(alice, "alice", JOB, bundles, verify), [1, 4.5, 7, 2.5])  # 1-based
    assert bundles[0].fields(RANK_TAG).rows == 4  # exactly alice's row count, nothing more
    with pytest.raises(BundleIntegrityError, match="another job"):
        open_ranks(alice, "alice", JobId("evaluation-1", bytes(32)), bundles, verify)  # ranks of another job
    with pytest.raises(BundleIntegrityError, match="authentication"):
        open_ranks(bob, "alice", JOB, bundles, verify)  # bob cannot read alice's ranks
    with pytest.raises(BundleIntegrityError, match="addressed to client 'alice'"):
        open_ranks(alice, "bob", JOB, bundles, verify)
    with pytest.raises(BundleIntegrityError, match="one rank bundle from each"):
        open_ranks(alice, "alice", JOB, bundles[:1], verify)
    with pytest.raises(BundleIntegrityError):
        open_ranks(alice, "alice", JOB, [SealedBundle(*_input_like(bundles[0])), bundles[1]], verify)


def test_a_forged_rank_bundle_is_refused():
    """A relay can seal ranks to the client's public reply key, but cannot sign as a party."""
    alice = KeyPair()
    signers = [Ed25519PrivateKey.generate() for _ in range(2)]
    verify = [k.public_key() for k in signers]
    s0, s1 = sharing.split(np.array([2, 4], dtype=np.int64))
    honest = seal_ranks(1, JOB, "alice", alice.public, s1, signers[1].sign)
    relay = Ed25519PrivateKey.generate()
    forged = seal_ranks(0, JOB, "alice", alice.public, np.zeros(2, dtype=np.int64) - s1, relay.sign)  # ranks 0, 0
    with pytest.raises(BundleIntegrityError, match="not signed by P0"):
        open_ranks(alice, "alice", JOB, [forged, honest], verify)
    unsigned = SealedBundle(forged.header, forged.sealed)
    with pytest.raises(BundleIntegrityError, match="not signed by P0"):
        open_ranks(alice, "alice", JOB, [unsigned, honest], verify)
    genuine = seal_ranks(0, JOB, "alice", alice.public, s0, signers[0].sign)
    assert np.array_equal(open_ranks(alice, "alice", JOB, [genuine, honest], verify), [2, 3])  # control


def _input_like(bundle):
    """The rank bundle relabelled as an input bundle: its tag no longer matches."""
    return bundle.header.replace(RANK_TAG, INPUT_TAG), bundle.sealed, bundle.signature


def test_ranks_under_security_with_abort_are_checked_against_the_clients_mac_key():
    """A compute party that changes its share of a client's doubled rank (it signs its own bundle: the signature
    cannot tell) must change its share of beta_0 times it by beta_0 times the change, and beta_0 derives from the
    client's reply key: the client refuses the ranks.  Read as plain ranks (the weakened variant, no MAC words), the
    same change goes through."""
    alice = KeyPair()
    signers = [Ed25519PrivateKey.generate() for _ in range(2)]
    verify = [k.public_key() for k in signers]
    twice = np.array([0, 7, 12, 3], dtype=np.int64)
    s0, s1 = sharing.split(np.stack([twice, twice * client_mac_keys(alice)[0]]))
    honest = seal_ranks(1, JOB, "alice", alice.public, s1, signers[1].sign, 8)
    genuine = seal_ranks(0, JOB, "alice", alice.public, s0, signers[0].sign, 8)
    assert np.array_equal(open_ranks(alice, "alice", JOB, [genuine, honest], verify, True), [1, 4.5, 7, 2.5])
    bent = s0.copy()
    bent[0, 2] += 2  # row 2's rank moved by one place
    changed = seal_ranks(0, JOB, "alice", alice.public, bent, signers[0].sign, 8)
    with pytest.raises(BundleIntegrityError, match="fail their MAC or range check: a compute party changed them"):
        open_ranks(alice, "alice", JOB, [changed, honest], verify, True)
    high = s0.copy().view(np.uint64)  # 2^63 more, and its MAC word to match (beta_0 2^63 is 0 for an even beta_0:
    high[0, 2:3] += np.uint64(2 ** 63)  # the review's attack then passes the MAC check): only the range check sees it
    high[1, 2:3] += np.uint64(2 ** 63) * (client_mac_keys(alice)[:1].view(np.uint64) & np.uint64(1))  # array: wraps
    raised = seal_ranks(0, JOB, "alice", alice.public, high.view(np.int64), signers[0].sign, 8)
    with pytest.raises(BundleIntegrityError, match="range check"):
        open_ranks(alice, "alice", JOB, [raised, honest], verify, True)
    with pytest.raises(BundleIntegrityError, match="of one job"):  # the parties state different row counts
        open_ranks(alice, "alice", JOB, [seal_ranks(0, JOB, "alice", alice.public, s0, signers[0].sign, 9), honest],
                   verify, True)
    plain = [seal_ranks(p, JOB, "alice", alice.public, share[0], signers[p].sign) for p, share in enumerate((bent, s1))]
    assert open_ranks(alice, "alice", JOB, plain, verify)[2] == 8  # weakened: the moved rank is taken
    assert client_mac_keys(alice)[0] == client_mac_keys(alice)[0] != client_mac_keys(KeyPair())[0]


def test_under_security_with_abort_the_clients_keys_are_sealed_to_the_dealer_alone():
    """Both bundles carry the same MAC keys sealed to the dealer, bound to the job and client: the parties forward
    them, only the dealer opens them, and for no other job; P1's shares expand from a seed; a deployment without
    the dealer's sealing key is refused by name before anything is sealed."""
    from mpc_auc.protocols.errors import DeploymentError
    from mpc_auc.protocols.inputs.bundles import client_keys_aad, seal_authenticated
    from mpc_auc.protocols.inputs.encoding import ScoreEncoder
    from mpc_auc.protocols.inputs.submission import ReleaseTerms, Ticket, make_submission
    from mpc_auc.protocols.runtime.identity import Identity, client_role

    parties, dealer, reply, job = [KeyPair(), KeyPair()], KeyPair(), KeyPair(), JobId("e", b"n" * 32)
    made, sealed = seal_authenticated("a", job, np.arange(6).reshape(2, 3) % 4, [0, 1, 1],
                                      [k.public for k in parties], reply, dealer.public)
    opened = [open_bundle(parties[p], p, made[p], digits=2) for p in (0, 1)]
    assert opened[0].sealed_keys == opened[1].sealed_keys and opened[0].sealed_keys[1] == sealed
    (x0, y0), (x1, y1) = (b.shares() for b in opened)
    values = sharing.combine(x0, x1)
    assert values.tolist() == [[0, 1, 2], [3, 0, 1], [0, 1, 1]]  # the digits and the labels
    assert np.array_equal(sharing.combine(y0, y1)[:3], values * client_mac_keys(reply)[0])
    assert len(made[1].sealed) < 200 < 8 * 3 * 9  # P1's shares travel as a seed: no word per row
    aad, keys = opened[0].sealed_keys
    assert aad == client_keys_aad(job, "a")
    assert np.array_equal(np.frombuffer(dealer.open(keys, aad), np.int64), client_mac_keys(reply))
    for wrong_key, wrong_aad in ((parties[0], aad), (dealer, client_keys_aad(JobId("e", b"m" * 32), "a"))):
        with pytest.raises(BundleIntegrityError):
            wrong_key.open(keys, wrong_aad)
    ticket = Ticket("e", b"n" * 32, ScoreEncoder(), False, ReleaseTerms("mpc-exact", security="malicious"), 1, 1)
    with pytest.raises(DeploymentError, match="gives the dealer no sealing key"):
        make_submission(Identity(client_role("a")), ticket, [0.1, 0.9], [0, 1], [k.public for k in parties], reply)


def _malicious_submissions(rows: int, max_rows: int = 10, split_keys: bool = False):
    """A client's two submissions to a job under security with abort, and the evaluation both parties hold;
    ``split_keys``: the client hands P1 a bundle whose keys are sealed apart from P0's (the statement names P0's)."""
    from unittest import mock

    from mpc_auc.protocols.inputs import submission
    from mpc_auc.protocols.inputs.encoding import ScoreEncoder
    from mpc_auc.protocols.inputs.submission import Declaration, ReleaseTerms, Roster, Ticket
    from mpc_auc.protocols.release_spec import ReleaseSpec
    from mpc_auc.protocols.runtime.identity import Identity, client_role

    client, parties, dealer = Identity(client_role("a")), [KeyPair(), KeyPair()], KeyPair()
    evaluation = Declaration("e", Roster((client.public,)), max_rows=max_rows, spec=ReleaseSpec(security="malicious"))
    ticket = Ticket("e", b"n" * 32, ScoreEncoder(), False, ReleaseTerms("mpc-exact", security="malicious"), 1, 1)
    real = submission.seal_authenticated

    def split(*args):
        (p0, _), keys = real(*args)
        return [p0, real(*args)[0][1]], keys

    with mock.patch.object(submission, "seal_authenticated", split if split_keys else real):
        made = submission.make_submission(client, ticket, np.linspace(0, 1, rows), np.arange(rows) % 2,
                                          [k.public for k in parties], KeyPair(), dealer_key=dealer.public)
    return made, parties, evaluation


def test_p1s_seed_expands_only_after_the_rows_are_admitted_and_a_client_cannot_split_its_keys():
    """The review's findings on the seeded bundle and the sealed keys: a statement of more rows than the evaluation
    takes is refused before P1's seed is expanded (a 300-byte bundle could otherwise ask for gigabytes), P1's
    admitted bundle holds the seed, not the words; a client that seals its keys apart for P1 is refused by name
    (its signed statement names the digest of one copy)."""
    from mpc_auc.protocols.inputs.submission import SubmissionRefused, admit

    made, parties, evaluation = _malicious_submissions(4)
    admitted = [admit(made[p], p, parties[p], evaluation, b"n" * 32) for p in (0, 1)]
    assert isinstance(admitted[1].opened.body, bytes) and len(admitted[1].opened.body) == 32
    made, parties, evaluation = _malicious_submissions(12)
    for p in (0, 1):
        with pytest.raises(SubmissionRefused, match=r"states 12 rows, outside 1..10"):
            admit(made[p], p, parties[p], evaluation, b"n" * 32)
    made, parties, evaluation = _malicious_submissions(4, split_keys=True)
    admit(made[0], 0, parties[0], evaluation, b"n" * 32)
    with pytest.raises(SubmissionRefused, match="MAC keys sealed to the dealer are not the ones its signed statement"):
        admit(made[1], 1, parties[1], evaluation, b"n" * 32)
