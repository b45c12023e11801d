"""Authenticated shares for security with abort: SPDZ2k MACs over Z_2^64, the MAC key held by the dealer.

SPDZ2k (Cramer, Damgard, Escudero, Scholl, Xing, CRYPTO 2018): a value x of
Z_2^k is carried in Z_2^(k+s) = Z_2^64 as additive shares of x and of its
MAC alpha*x, alpha = alpha_0 + alpha_1 a uniform 64-bit key the dealer
draws with ``secrets`` and shares (neither party knows it).  Here k is the
bits of the values the circuit computes on (positions below M: k = bits of
M - 1, at least 2; the AUC's sort of both orders has 2M elements), s = 64 - k
(44 at 458,407 rows, at least 40 up to 2^23 rows).  A share array has a leading axis of two: [0] this party's share of
x, [1] its share of alpha*x; linear steps (sums, public factors, public
rearrangements, the dealer's shuffles run on both rows) carry the MAC
along.

* **Opening** sends the 64-bit share of x only, and records the opened word
  and this party's MAC share.  A value that is not masked by fresh uniform
  words is opened as x + 2^k t, t a fresh authenticated dealer word
  (:meth:`Authenticator.open_small`), so its upper s bits say nothing.
* **Batched check** (SPDZ2k's MACCheck) of everything opened since the last
  one: uniform 64-bit coefficients chi_j from a coin the two parties toss
  (each commits to a 32-byte seed from ``secrets`` a toss ahead, naming its
  rank in the commitment, then reveals it; the coin is keyed by the hash of
  both seeds), y = sum_j chi_j x_j, z_p = sum_j chi_j m_{j,p} - alpha_p y;
  each party commits to z_p (SHA-256 with a fresh 16-byte nonce), then
  opens it; the check passes iff z_0 + z_1 = 0 mod 2^64.  An error on an
  opened value that is nonzero mod 2^k passes with probability at most
  2^(-s + log2(s + 1)) (their Theorem 1; 2^-38.5 at s = 44); an error
  that vanishes mod 2^k changes nothing the circuit uses.  Three rounds.
* **Dealer correlations** arrive authenticated (P1's value and MAC shares
  expanded from its dealer stream, P0's sent): :meth:`Authenticator.
  correlation` by law (``uniform`` words, one-hot ``onehot`` tuples, Beaver
  triples ``triple``, ``input`` masks whose clear words the owner alone
  receives, uniform ``bits`` for the noise draw, circuits.auth_noise,
  comparison masks ``digits``, circuits.auth_compare); the dealer serves
  each index once.
* **Inputs**: the owner of x holds the clear mask r of an authenticated
  [r] and sends x - r; both add it publicly (SPDZ's input).  Clients'
  MAC keys (circuits.auth_inputs) enter from the dealer, which opens them
  from what the clients sealed to it (:meth:`Authenticator.client_keys`).

A failed check, or an opened vector of destinations that is not a
permutation (raised at the next check: :meth:`Authenticator.defer`),
raises :class:`Deviation`, naming the phase: a compute party deviated.
The authenticator then serves nothing more (the cheater may have learnt
part of its MAC key from the failed check); outputs leave only through
:meth:`Authenticator.release`, between two checks.
"""
import hashlib
import math
import secrets
from collections import deque

import numpy as np

from .crypten_compat import crypten
from .dealer_line import dealer_line
from .shares import exchange
from .streams import AUTH_MAC, AUTH_VALUE, CHECK_COEFFICIENTS, KeyStream

RING_BITS = 64
MIN_STATISTICAL = 40  # s at least this: k <= 24 in Z_2^64
LAWS = ("uniform", "onehot", "triple", "input", "client_keys", "bits", "digits")
ONEHOT_ROWS = 8  # R, e_1..e_3 of the one-hot vector of R mod 4, Beaver masks b_1..b_3, q = sum_u e_u b_u
_MASK = (1 << RING_BITS) - 1


class Deviation(RuntimeError):
    """A compute party deviated from the protocol: a MAC check failed or an opened value is impossible."""

    def __init__(self, what: str, phase: str, who: str = "a compute party deviated"):
        self.phase = phase
        super().__init__(f"{what}: {who}; nothing is released")


def value_bits(m: int) -> int:
    """k for positions 0..m-1 (and 2-bit digits): the bits of m - 1, at least 2."""
    return max(2, (int(m) - 1).bit_length())


def statistical_bits(k: int) -> int:
    """s = 64 - k; refused below :data:`MIN_STATISTICAL` (over 2^24 positions in Z_2^64: 2^23 rows for the AUC)."""
    s = RING_BITS - k
    if s < MIN_STATISTICAL:
        raise ValueError(f"values of {k} bits leave s = {s} < {MIN_STATISTICAL} statistical bits in Z_2^64: "
                         f"at most 2^{RING_BITS - MIN_STATISTICAL} positions (2^{RING_BITS - MIN_STATISTICAL - 1} rows for the "
                         "AUC, whose sort has 2M elements) under malicious security")
    return s


def wide_keys(bits: int) -> int:
    """MAC keys for values of ``bits`` bits (sums such as the rank sums, up to 2 log2 M bits): t independent
    SPDZ2k checks, each of s = 64 - bits, pass a wrong value together with probability at most
    2^(-t (s - log2(s + 1))); the fewest t that make that at most 2^-MIN_STATISTICAL."""
    s = RING_BITS - bits
    per_key = s - math.log2(s + 1)
    if per_key < 4:
        raise ValueError(f"values of {bits} bits leave too few bits in Z_2^64 for MAC keys")
    return math.ceil(MIN_STATISTICAL / per_key)


def onehot_law(words: np.ndarray, rows: int = ONEHOT_ROWS) -> np.ndarray:
    """The dealer's one-hot tuple (ONEHOT_ROWS, m) from uniform words (4, m): R, the one-hot e_1..e_3 of
    R mod 4, Beaver masks b_1..b_3, q = sum_u e_u b_u (circuits.auth_radix selects with it)."""
    r, masks = words[0], words[1:4]
    onehot = ((r & 3)[None, :] == np.arange(1, 4)[:, None]).astype(np.int64)
    return np.concatenate([r[None], onehot, masks, (onehot * masks).sum(axis=0)[None]])


def triple_law(words: np.ndarray, rows: int = 3) -> np.ndarray:
    """A Beaver triple (3, m) from uniform words (2, m): a, b, c = a b (mod 2^64)."""
    return np.concatenate([words, (words[0] * words[1])[None]])


def digits_law(words: np.ndarray, rows: int) -> np.ndarray:
    """The dealer's comparison mask (rows = 2 + 3 D, m) from uniform words (1, m): R, bit 2D of R, and for each
    2-bit digit j < D of R (least significant first) the one-hot e_{j,1..3} of its value (circuits.auth_compare
    compares with it: a trusted dealer's edaBit, no cut-and-choose)."""
    r, count = words[0], (rows - 2) // 3
    digits = (r[None, :] >> (2 * np.arange(count, dtype=np.int64))[:, None]) & 3  # (D, m)
    onehot = (digits[:, None, :] == np.arange(1, 4)[None, :, None]).astype(np.int64).reshape(3 * count, -1)
    return np.concatenate([r[None], ((r >> np.int64(2 * count)) & 1)[None], onehot])


# law -> (uniform rows it takes, the law of those words and the rows asked for)
DERIVED = {"onehot": (4, onehot_law), "triple": (2, triple_law), "digits": (1, digits_law)}


class Authenticator:
    """One compute party's MAC key share, its authenticated dealer correlations, openings and checks.

    k: the bits of the values (:func:`value_bits`).  ``phase`` names the step under way (set by the
    circuit; the failure messages and the cheating tests read it).
    """

    def __init__(self, stream_key: bytes, k: int, wide_bits: int = None):
        comm = crypten.communicator.get()
        if stream_key is None or not getattr(comm, "ttp_initialized", False):
            raise RuntimeError("authenticated shares need the separate dealer (provider TTP) and its stream key")
        self.k, self.s = k, statistical_bits(k)
        self.wide_bits = wide_bits
        self.keys = 1 + (wide_keys(wide_bits) if wide_bits else 0)
        self.comm, self.rank = comm, comm.get_rank()
        self.stream = KeyStream(stream_key)
        self.phase = "the start"
        self.checks = 0
        self._index = 0
        self._posted = deque()  # (law, shape, owner, wide, index, ticket) asked for ahead of use (:meth:`post`)
        self._opened = []  # (opened words, this party's MAC shares), flat int64, since the last check
        self._deferred = None  # an impossible opened value seen since the last check (:meth:`defer`)
        self._failed = None  # the deviation this authenticator saw: it serves nothing after one
        keyset, *alphas = self._from_dealer("mac_key", (1 + self.keys,), self.keys)
        self.keyset, self.alphas = int(keyset), [int(a) & _MASK for a in alphas]
        self._seed = secrets.token_bytes(32)
        self._their_commitment = self._exchange(np.frombuffer(self._committed(self._seed, self.rank), np.uint8))

    # correlations -------------------------------------------------------------------
    def post(self, law: str, shape, owner: int = None, wide: bool = False) -> None:
        """Ask the dealer now for the next correlation not yet asked for (P1: tell it what to expect), so that it
        is ready when :meth:`correlation` takes it; correlations are taken in the order they were posted."""
        if law not in LAWS:
            raise ValueError(f"no correlation law {law!r}")
        self._usable()
        shape, macs = tuple(int(n) for n in shape), self.keys if wide else 1
        index = self._index + len(self._posted)
        if self.rank == 0:
            ticket = dealer_line().post("authenticated", law, index, shape, owner, macs, self.keyset)
        else:
            ticket = self.comm.send_obj((law, index, shape, owner, macs, self.keyset, None),
                                        self.comm.get_ttp_rank(), self.comm.ttp_group)
        self._posted.append((law, shape, owner, wide, index, ticket))

    def correlation(self, law: str, shape, owner: int = None, wide: bool = False):
        """(this party's (1 + MACs, *shape) authenticated shares of dealer words of ``law``, MACs under the first
        key, or under every key if ``wide``; their clear words if this party owns them (law "input", owner = its
        rank) else None): the next posted, or asked for now."""
        requested = (law, tuple(int(n) for n in shape), owner, wide)
        if not self._posted:
            self.post(*requested)
        *posted, index, ticket = self._posted.popleft()
        if tuple(posted) != requested:
            raise RuntimeError(f"correlation {requested} taken out of the posted order (next: {tuple(posted)})")
        shape, macs = requested[1], self.keys if wide else 1
        self._index += 1
        clear = None
        if self.rank == 0:
            words = dealer_line().collect(ticket).reshape((1 + macs + (owner == 0),) + shape)
            shares, clear = words[:1 + macs], (words[1 + macs] if owner == 0 else None)
        else:
            shares = self._stream_shares(index, shape, macs)
            if owner == 1:
                clear = self.comm.recv_array(shape, np.int64, self.comm.get_ttp_rank(), self.comm.ttp_group,
                                             "input mask")
        return shares, clear

    def client_keys(self, sealed: list, count: int):
        """([beta] (2, count, C): the clients' MAC keys, authenticated under the first key; flags (C,) bool, set for
        each client whose keys the dealer could not open, their [beta] then 0): C clients, ``sealed`` their
        [(associated data, keys sealed to the dealer)] as this party received them.  The dealer serves them only
        if the other party forwarded the same (protocols.runtime.dealer.Dealer.authenticated): a deviating party
        cannot choose the keys the clients' MACs are checked under.  Taken before any posted correlation."""
        self._usable()
        if self._posted:
            raise RuntimeError("the clients' MAC keys are taken before any posted correlation")
        shape, index = (int(count), len(sealed)), self._index
        request = ("client_keys", index, shape, None, 1, self.keyset)
        self._index += 1
        if self.rank == 0:
            words = dealer_line().request("authenticated", *request, sealed=sealed)
            return words[:-len(sealed)].reshape((2,) + shape), words[-len(sealed):] != 0
        self.comm.send_obj(request + (sealed,), self.comm.get_ttp_rank(), self.comm.ttp_group)
        flags = self.comm.recv_array((len(sealed),), np.int64, self.comm.get_ttp_rank(), self.comm.ttp_group,
                                     "client key flags")
        return self._stream_shares(index, shape, 1), flags != 0

    def input(self, values, owner: int, shape, wide: bool = False):
        """Authenticated shares of the owner's int64 ``values`` (None at the other party) of ``shape`` (MACs under
        every key if ``wide``)."""
        mask, clear = self.correlation("input", shape, owner, wide)
        if self.rank == owner:
            masked = np.asarray(values, dtype=np.int64) - clear
            self.comm.send_array(masked, 1 - owner)
        else:
            masked = self.comm.recv_array(shape, np.int64, owner, operation="masked input")
        return self.add_public(mask, masked)

    # linear steps -----------------------------------------------------------------------
    def add_public(self, x: np.ndarray, c) -> np.ndarray:
        """[x + c] for a public c (broadcast over x's value axes): P0's share takes c, each MAC share alpha_p c."""
        out = x.copy()
        c = np.broadcast_to(np.asarray(c, dtype=np.int64), out.shape[1:])
        if self.rank == 0:
            out[0] += c
        for row, alpha in enumerate(self.alphas[:len(out) - 1], start=1):
            out[row] += c * np.int64(_signed(alpha))  # an array product: wraps mod 2^64
        return out

    def multiply(self, x: np.ndarray, y: np.ndarray, kind: str = "product") -> np.ndarray:
        """[x y] by a Beaver triple of the dealer (as wide as x): epsilon = x - a and delta = y - b opened (uniform),
        x y = c + epsilon b + delta a + epsilon delta."""
        triple, _ = self.correlation("triple", (3,) + x.shape[1:], wide=len(x) > 2)
        a, b, c = triple[:, 0], triple[:, 1], triple[:, 2]
        epsilon, delta = self.open(np.stack([x - a, y - b], axis=1), kind)
        return self.add_public(c + epsilon * b + delta * a, epsilon * delta)

    def public(self, c, shape, wide: bool = False) -> np.ndarray:
        """[c] for a public c, broadcast to ``shape``."""
        return self.add_public(np.zeros((1 + (self.keys if wide else 1),) + tuple(shape), dtype=np.int64), c)

    # openings and checks ------------------------------------------------------------------
    def open(self, x: np.ndarray, kind: str) -> np.ndarray:
        """The opened 64-bit words of [x] (masked by fresh uniform words: they say nothing), recorded for the
        next check; one exchange."""
        self._usable()
        own = np.ascontiguousarray(x[0])
        opened = own + self._exchange(own, kind)
        self._opened.append((opened.reshape(-1), x[1:].reshape(len(x) - 1, -1)))
        return opened

    def open_small(self, x: np.ndarray, kind: str) -> np.ndarray:
        """x mod 2^k for an [x] whose words are below 2^k (positions; a wide [x]: 2^wide_bits): opened as
        x + 2^k t."""
        wide = len(x) > 2
        bits = self.wide_bits if wide else self.k
        t, _ = self.correlation("uniform", x.shape[1:], wide=wide)
        return self.open(x + (t << bits), kind) & ((1 << bits) - 1)

    def defer(self, deviation: "Deviation") -> None:
        """Raise ``deviation`` at the end of the next check, not now: an opened value this party found impossible
        is known to it alone (the other party may hold the true one), and both must stay in step until the
        check, which fails for both (the value was opened with an error).  Until then only words masked by
        fresh randomness are opened.  The first deviation is kept."""
        self._deferred = self._deferred or deviation

    def release(self, x: np.ndarray, kind: str) -> np.ndarray:
        """An output x mod 2^k (:meth:`open_small`) between a check of everything before it (so that no bent
        step shapes what is opened) and a check of its own opening (before it leaves the parties)."""
        self.check(f"everything before the {kind}")
        opened = self.open_small(x, kind)
        self.check(f"the opening of the {kind}")
        return opened

    def fail(self, deviation: "Deviation") -> "Deviation":
        """Keep ``deviation`` (this authenticator serves nothing after it: a failed check may have shown the
        cheater part of the MAC key) and return it, to be raised."""
        self._failed = self._failed or deviation
        return deviation

    @property
    def failed(self) -> bool:
        """Whether this authenticator saw a deviation (and so serves nothing more)."""
        return self._failed is not None

    def _usable(self) -> None:
        if self._failed is not None:
            raise RuntimeError(f"this authenticator saw a deviation ({self._failed}) and serves nothing more; "
                               "a new one draws new MAC keys")

    def check(self, phase: str) -> None:
        """The batched MAC check of everything opened since the last one (raises :class:`Deviation`)."""
        self._usable()
        self.phase = f"the MAC check after {phase}"
        if not self._opened and self._deferred is None:
            return
        coins = self._toss(f"the MAC check after {phase}")
        z = [self._combined(coins, key) for key in range(self.keys)]
        self._opened = []
        self.checks += 1
        nonce = secrets.token_bytes(16)
        own = b"".join(v.to_bytes(8, "little") for v in z) + nonce
        commitment = self._exchange(np.frombuffer(_digest(own), np.uint8), "check commitment").tobytes()
        opening = self._exchange(np.frombuffer(own, np.uint8), "check opening").tobytes()
        if _digest(opening) != commitment:
            raise self.fail(Deviation(f"the MAC check after {phase} found an opening that does not match its "
                                      "commitment", phase))
        deferred, self._deferred = self._deferred, None
        if deferred is not None:
            raise self.fail(deferred)
        if any((v + int.from_bytes(opening[8 * i:8 * i + 8], "little")) & _MASK for i, v in enumerate(z)):
            raise self.fail(Deviation(f"the MAC check after {phase} failed", phase))

    def coin(self, shape, phase: str) -> np.ndarray:
        """Uniform 64-bit words (uint64) of ``shape`` that neither party could choose or foresee before this
        call: the coin of the checks (one round)."""
        return self._toss(phase).words(CHECK_COEFFICIENTS, 0, shape, np.uint64)

    def _toss(self, phase: str) -> "KeyStream":
        """Reveal this party's committed seed with the commitment to its next one, check the other's, and return
        the stream keyed by SHA-256(P0's seed, P1's seed) (one round).  Each commitment names its party's rank,
        so a party that echoes the other's commitment cannot open it; a hash, not the XOR, of the seeds, so an
        echoed seed cannot cancel the other's."""
        self._usable()
        other = 1 - self.rank
        following = secrets.token_bytes(32)
        theirs = self._exchange(np.frombuffer(self._seed + self._committed(following, self.rank), np.uint8),
                                "coin seed").tobytes()
        if self._committed(theirs[:32], other) != self._their_commitment.tobytes():
            raise self.fail(Deviation(f"{phase} found a coin seed that does not match its commitment", phase))
        seeds = (self._seed, theirs[:32]) if self.rank == 0 else (theirs[:32], self._seed)
        self._seed, self._their_commitment = following, np.frombuffer(theirs[32:], np.uint8)
        return KeyStream(_digest(b"".join(seeds)))

    @staticmethod
    def _committed(seed: bytes, rank: int) -> bytes:
        """A party's commitment to a coin seed: SHA-256 of its rank and the seed."""
        return _digest(bytes([rank]) + seed)

    def _combined(self, coins: "KeyStream", key: int) -> int:
        """z_p for MAC key ``key`` over the openings that carry it: sum_j chi_j m_j - alpha_p sum_j chi_j x_j (mod
        2^64; fresh coefficients per check and key)."""
        carried = [(o, m[key]) for o, m in self._opened if len(m) > key]
        if not carried:
            return 0
        opened = np.concatenate([o for o, _ in carried]).view(np.uint64)
        macs = np.concatenate([m for _, m in carried]).view(np.uint64)
        chi = coins.words(CHECK_COEFFICIENTS, 1 + key, opened.shape, np.uint64)
        y = int(np.dot(chi, opened)) & _MASK  # numpy's uint64 dot wraps mod 2^64
        return (int(np.dot(chi, macs)) - self.alphas[key] * y) & _MASK

    def _stream_shares(self, index: int, shape: tuple, macs: int) -> np.ndarray:
        """P1's (1 + macs, *shape) shares of correlation ``index``: expanded from its dealer stream."""
        at = stream_index(self.keyset, index)
        return np.concatenate([self.stream.words(AUTH_VALUE, at, (1,) + shape),
                               self.stream.words(AUTH_MAC, at, (macs,) + shape)])

    # the links ---------------------------------------------------------------------------------
    def _exchange(self, own: np.ndarray, kind: str = "check seed commitment") -> np.ndarray:
        return exchange(self.comm, own, kind)

    def _from_dealer(self, function: str, shape, *args) -> np.ndarray:
        """P0: the dealer's int64 answer of ``shape``; P1: what the dealer sends it of that shape."""
        if self.rank == 0:
            return dealer_line().request(function, *args).reshape(shape)
        return self.comm.recv_array(shape, np.int64, self.comm.get_ttp_rank(), self.comm.ttp_group, function)


def stream_index(keyset: int, index: int) -> int:
    """The (purpose, index) stream index of correlation ``index`` of MAC key set ``keyset``: each key set its
    own 2^32 indexes, so no two authenticators ever share a correlation's words."""
    return (int(keyset) << 32) | int(index)


def _digest(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _signed(word: int) -> int:
    """A 64-bit word as the int64 of the same bits."""
    return word - (1 << RING_BITS) if word >> (RING_BITS - 1) else word
