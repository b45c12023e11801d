"""Sealed bundles: a client's shares for one compute party, and a party's rank shares for one client.

Header (clear, authenticated as AEAD associated data): format tag, party
index, row count, the client's reply public key, the job nonce, the
evaluation id and the client name.  A bundle therefore opens only in the
job, evaluation and party it was made for, under the name it was made
for: change any of them and the AEAD refuses it.

* Input bundle (client -> party p): p's shares of the integer score keys
  (additive mod 2^64, and XOR shares of key + 2^61 for the radix sort), its
  additive shares of the labels and, in a weighted evaluation, of the
  weights' integer units (protocols.inputs.weights).  The client signs a statement that
  covers both of its bundles (protocols.inputs.submission).  The header is what a
  relay and the receiving party learn about a client besides its shares:
  who it is, how many rows it holds, and the key under which it accepts its
  ranks.
  Under security with abort (the evaluation's ``security`` is "malicious": circuits.auth_inputs) the body is
  instead p's additive shares of the key's 2-bit digits (least significant first) and the label, then of the same
  values times the client's MAC key beta_0 and of the label times beta_1..beta_3, then the
  :data:`CLIENT_MAC_KEYS` betas sealed to the dealer (the same bytes in both bundles, bound to the job and
  the client: :func:`client_keys_aad`), which the parties forward and the dealer alone opens.  P1's shares
  travel as a 32-byte seed (from ``secrets``) they expand from (AES-256-CTR, circuits.streams), P0's as the
  values less them: P1's bundle holds no word per row.
* Rank bundle (party p -> client): p's shares of twice the global 0-based mid-rank of
  each of the client's rows, in the client's row order, signed by p (Ed25519,
  its identity key pinned in the deployment).  Only the client can open it;
  with both parties' valid bundles of its own job it recovers its own ranks,
  nothing else.
"""
import secrets
import struct
from dataclasses import dataclass

import numpy as np
from cryptography.exceptions import InvalidSignature

from ...circuits.streams import CLIENT_SHARES, KEY_BYTES, KeyStream
from . import sharing
from ..runtime import sealing
from ..errors import BundleIntegrityError
from ..runtime import wire

INPUT_TAG = b"MPCAUC3"
RANK_TAG = b"MPCRNK2"
KEYS_TAG = b"MPCKEY1"  # a client's MAC keys sealed to the dealer
DEALER_INDEX = 2  # the party field of their associated data
CLIENT_MAC_KEYS = 4  # a client's MAC keys under security with abort: one over every value, three more over the label
SEALED_KEYS = sealing.sealed_size(8 * CLIENT_MAC_KEYS)  # their bytes sealed to the dealer
_FIXED = struct.Struct(">7sBQ32s32sHH")  # tag, party, rows, reply key, nonce, evaluation-id and client-name lengths


@wire.message
@dataclass(frozen=True)
class SealedBundle:
    header: bytes
    sealed: bytes
    signature: bytes = b""  # rank bundles: the making party's Ed25519 signature over header and ciphertext

    @property
    def signed_part(self) -> bytes:
        return len(self.header).to_bytes(4, "big") + self.header + self.sealed

    def fields(self, tag: bytes = INPUT_TAG) -> "Header":
        """The header's fields; raises on a malformed header."""
        if len(self.header) < _FIXED.size:
            raise BundleIntegrityError("bundle header is truncated")
        got, party, rows, reply_to, nonce, eval_len, id_len = _FIXED.unpack_from(self.header)
        names = self.header[_FIXED.size:]
        if got != tag or len(names) != eval_len + id_len:
            raise BundleIntegrityError("bundle header is malformed")
        try:
            return Header(party, rows, reply_to, nonce, names[:eval_len].decode(), names[eval_len:].decode())
        except UnicodeDecodeError:
            raise BundleIntegrityError("bundle header is malformed") from None


@dataclass(frozen=True)
class Header:
    """What a bundle's clear header says (authenticated with the ciphertext)."""
    party: int
    rows: int
    reply_to: bytes
    nonce: bytes
    evaluation: str
    client: str


@dataclass(frozen=True)
class JobId:
    """The job a bundle belongs to: its evaluation id and the nonce the parties drew for it."""
    evaluation: str
    nonce: bytes


@dataclass(frozen=True)
class OpenedBundle:
    client: str
    key_shares: np.ndarray  # (columns, rows): one row of keys per score column
    key_xor_shares: np.ndarray  # (columns, rows), of the non-negative radix keys
    label_shares: np.ndarray  # (rows,)
    reply_to: bytes  # the client's public key for its rank bundles
    weight_shares: np.ndarray = None  # (rows,) in a weighted evaluation


@dataclass(frozen=True)
class AuthenticatedBundle:
    """An input bundle under security with abort (circuits.auth_inputs): this party's shares of the client's
    values x (the key's digits, least significant first, then the label) and of their MAC words (beta_0 x, then
    beta_i times the label), and the betas sealed to the dealer with their associated data."""
    client: str
    rows: int
    digits: int
    body: object  # P0: its shares (values, macs); P1: the 32-byte seed they expand from (:meth:`shares`)
    sealed_keys: tuple  # (associated data, the betas sealed to the dealer): forwarded as they came
    reply_to: bytes

    def shares(self) -> tuple:
        """(values (digits + 1, rows), MAC words (digits + CLIENT_MAC_KEYS, rows)): P1's expanded from its seed
        only now, when its rows are entered (after the intake gave them room: the seed itself is 32 bytes)."""
        return _seeded_shares(self.body, self.digits, self.rows) if isinstance(self.body, bytes) else self.body


def _seal(tag, party, rows, reply_to, job: JobId, client, body, recipient) -> SealedBundle:
    evaluation, name = job.evaluation.encode("utf-8"), client.encode("utf-8")
    header = _FIXED.pack(tag, party, rows, reply_to, job.nonce, len(evaluation), len(name)) + evaluation + name
    return SealedBundle(header, sealing.seal(recipient, body, header))


def _open(key: sealing.KeyPair, tag: bytes, bundle: SealedBundle, words_per_row: int, extra: int = 0,
          tail: int = 0):
    """The header, the body's (words_per_row, rows) int64 words, its ``extra`` words after them and its last
    ``tail`` bytes."""
    header = bundle.fields(tag)
    body = key.open(bundle.sealed, bundle.header)
    if len(body) != 8 * (words_per_row * header.rows + extra) + tail:
        raise BundleIntegrityError(f"bundle of client {header.client!r} does not hold {header.rows} rows")
    words = np.frombuffer(body[:len(body) - tail], dtype=np.int64).copy()
    return (header, words[:words_per_row * header.rows].reshape(words_per_row, header.rows),
            words[len(words) - extra:], body[len(body) - tail:])


def seal_client(client: str, job: JobId, keys: np.ndarray, radix_keys: np.ndarray, labels: np.ndarray, party_keys,
                reply_to: bytes, weights: np.ndarray = None) -> list:
    """Share one client's keys (additively), radix keys (XOR), labels and weight units, if any; seal share p for
    party p.  keys and radix_keys: (rows,), or (columns, rows) for several score columns of the same rows."""
    keys, radix_keys = np.atleast_2d(keys), np.atleast_2d(radix_keys)
    shares = [sharing.split(keys), sharing.split_xor(radix_keys), sharing.split(labels)]
    if weights is not None:
        shares.append(sharing.split(np.asarray(weights, dtype=np.int64)))
    return [_seal(INPUT_TAG, p, keys.shape[1], reply_to, job, client, b"".join(s[p].tobytes() for s in shares),
                  recipient) for p, recipient in enumerate(party_keys)]


def client_mac_keys(reply: sealing.KeyPair) -> np.ndarray:
    """The client's CLIENT_MAC_KEYS 64-bit MAC keys of one submission (int64), derived from the private half of its
    reply key (fresh per submission, from the OS CSPRNG): the client re-derives beta_0 to check its ranks
    (:func:`open_ranks`) without storing it."""
    return np.frombuffer(reply.derived(b"mpc-auc client MAC keys", 8 * CLIENT_MAC_KEYS), dtype=np.int64).copy()


def seal_authenticated(client: str, job: JobId, digits: np.ndarray, labels: np.ndarray, party_keys,
                       reply: sealing.KeyPair, dealer_key: bytes) -> list:
    """Share one client's key digits (D, rows) and labels (rows,) with its MAC words under its keys beta
    (:func:`client_mac_keys`): x, beta_0 x and beta_i y for the labels y (mod 2^64), additively; seal share p for
    party p, each with the betas sealed to the dealer (``dealer_key``, from the pinned deployment) after them
    (circuits.auth_inputs).  Returns ([P0's bundle, P1's], the sealed betas: the client's signed statement names
    their digest, so that a client cannot hand the two parties different keys)."""
    labels = np.asarray(labels, dtype=np.int64)
    values = np.concatenate([np.asarray(digits, dtype=np.int64), labels[None]])
    beta = client_mac_keys(reply)
    reply_to = reply.public
    macs = np.concatenate([values * beta[0], labels[None] * beta[1:, None]])  # wraps mod 2^64
    seed = secrets.token_bytes(KEY_BYTES)
    p1 = _seeded_shares(seed, len(digits), values.shape[1])
    p0 = [whole - share for whole, share in zip((values, macs), p1)]  # mod 2^64
    keys = sealing.seal(dealer_key, beta.tobytes(), client_keys_aad(job, client))
    bodies = [b"".join(share.tobytes() for share in p0) + keys, seed + keys]
    return [_seal(INPUT_TAG, p, values.shape[1], reply_to, job, client, body, recipient)
            for p, (body, recipient) in enumerate(zip(bodies, party_keys))], keys


def _seeded_shares(seed: bytes, digits: int, rows: int) -> tuple:
    """P1's shares of a client's values (digits + 1, rows) and MAC words (digits + CLIENT_MAC_KEYS, rows) under
    security with abort, expanded from the client's seed."""
    stream = KeyStream(seed)
    return (stream.words(CLIENT_SHARES, 0, (digits + 1, rows)),
            stream.words(CLIENT_SHARES, 1, (digits + CLIENT_MAC_KEYS, rows)))


def client_keys_aad(job: JobId, client: str) -> bytes:
    """The associated data of a client's MAC keys sealed to the dealer: a bundle header of tag KEYS_TAG for the
    dealer (party DEALER_INDEX), of the job and client, so the keys open for no other job or client."""
    evaluation, name = job.evaluation.encode("utf-8"), client.encode("utf-8")
    return _FIXED.pack(KEYS_TAG, DEALER_INDEX, CLIENT_MAC_KEYS, bytes(32), job.nonce, len(evaluation),
                       len(name)) + evaluation + name


def open_bundle(key: sealing.KeyPair, party: int, bundle: SealedBundle, columns: int = 1,
                weighted: bool = False, digits: int = None) -> "OpenedBundle | AuthenticatedBundle":
    """The content of an input bundle sealed for this party (its header checked by the caller), with
    ``columns`` score columns and, if ``weighted``, the weights (as the evaluation says); under security with
    abort (``digits``: the key's 2-bit digits) the authenticated layout."""
    header = bundle.fields(INPUT_TAG)
    if header.party != party:
        raise BundleIntegrityError(f"bundle of client {header.client!r} is addressed to P{header.party}, "
                                   f"not P{party}")
    if digits is not None:
        aad = client_keys_aad(JobId(header.evaluation, header.nonce), header.client)
        if party == 1:
            _, _, _, tail = _open(key, INPUT_TAG, bundle, 0, tail=KEY_BYTES + SEALED_KEYS)
            return AuthenticatedBundle(header.client, header.rows, digits, tail[:KEY_BYTES], (aad, tail[KEY_BYTES:]),
                                       header.reply_to)
        _, body, _, keys = _open(key, INPUT_TAG, bundle, 2 * digits + 1 + CLIENT_MAC_KEYS, tail=SEALED_KEYS)
        return AuthenticatedBundle(header.client, header.rows, digits, (body[:digits + 1], body[digits + 1:]),
                                   (aad, keys), header.reply_to)
    _, body, _, _ = _open(key, INPUT_TAG, bundle, 2 * columns + 1 + weighted)
    return OpenedBundle(header.client, body[:columns], body[columns:2 * columns], body[2 * columns], header.reply_to,
                        body[2 * columns + 1] if weighted else None)


def seal_ranks(party: int, job: JobId, client: str, reply_to: bytes, twice_rank_shares: np.ndarray,
               sign, m: int = None) -> SealedBundle:
    """Party ``party``'s shares of a client's doubled mid-ranks in ``job`` ((rows,), or under security with abort
    (2, rows): with the shares of beta_0 times each, and the job's row count ``m`` after them), sealed for that
    client and signed by ``sign`` (the party's Ed25519 identity key: bytes -> signature)."""
    shares = np.ascontiguousarray(twice_rank_shares, dtype=np.int64)
    body = shares.tobytes() + (b"" if m is None else np.int64(m).tobytes())
    bundle = _seal(RANK_TAG, party, shares.shape[-1], reply_to, job, client, body, reply_to)
    return SealedBundle(bundle.header, bundle.sealed, sign(bundle.signed_part))


def open_ranks(key: sealing.KeyPair, client: str, job: JobId, bundles, party_keys,
               authenticated: bool = False) -> np.ndarray:
    """The client's global 1-based mid-ranks (as scipy.stats.rankdata: x.5 for ties) from the two parties' rank
    bundles of ``job``, which hold shares of twice the 0-based mid-rank the circuit computes.

    party_keys: [P0's, P1's] Ed25519 public keys, pinned in the deployment; a bundle without its
    party's valid signature is refused, so a relay cannot forge ranks, nor replay those of another job.
    authenticated: a job under security with abort, whose bundles hold shares of beta_0 times each doubled rank
    too, and the job's row count M; each must equal beta_0 (this client's key, re-derived from ``key``) times the
    rank, mod 2^64, and each doubled rank lie in [0, 2 (M - 1)], both parties stating the same M, or the ranks are
    refused: a compute party that changed its share by e would have had to add beta_0 e to the other (a guess of
    64 - v(e) bits), and a change of 2^k or more (k the bits of 2M - 1, which the MAC checks do not see) leaves
    the range.
    """
    parts = {}
    for bundle in bundles:
        claimed = bundle.fields(RANK_TAG).party
        if claimed not in (0, 1):
            raise BundleIntegrityError("rank bundle names no compute party")
        try:
            party_keys[claimed].verify(bundle.signature, bundle.signed_part)
        except InvalidSignature:
            raise BundleIntegrityError(f"rank bundle for {client!r} is not signed by P{claimed}") from None
        header, body, m, _ = _open(key, RANK_TAG, bundle, 1 + authenticated, int(authenticated))
        if header.client != client:
            raise BundleIntegrityError(f"rank bundle is addressed to client {header.client!r}, not {client!r}")
        if (header.evaluation, header.nonce) != (job.evaluation, job.nonce):
            raise BundleIntegrityError(f"rank bundle for {client!r} belongs to another job")
        parts[header.party] = body, tuple(m)
    if sorted(parts) != [0, 1] or parts[0][0].shape != parts[1][0].shape or parts[0][1] != parts[1][1]:
        raise BundleIntegrityError(f"client {client!r} needs one rank bundle from each of P0 and P1, of one job")
    twice = sharing.combine(parts[0][0], parts[1][0])
    if authenticated:
        m = parts[0][1][0]
        if not np.array_equal(twice[1], twice[0] * client_mac_keys(key)[0]) or (twice[0] < 0).any() \
                or (twice[0] > 2 * (m - 1)).any():  # the MAC words wrap mod 2^64, as the shares
            raise BundleIntegrityError(f"the ranks of client {client!r} fail their MAC or range check: a compute "
                                       "party changed them; refused")
    return twice[0] / 2 + 1
