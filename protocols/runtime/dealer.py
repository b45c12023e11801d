"""The dealer: CrypTen's trusted-third-party server plus permutation and one-hot correlations.

The dealer serves CrypTen's Beaver triples and conversion randomness as
before (it sees no input), and additionally the correlations of the
oblivious shuffle (Chida2019, "permutation pairs"; docs/references.md).
At start-up it draws a 256-bit key per compute party with ``secrets`` and
sends it to that party only; CrypTen's triples (protocols.runtime.csprng) and these
correlations (circuits.streams) are expanded from it.

A shuffle by pi = pi0 then pi1 is two re-sharing steps.  In the step where
party h permutes with its own permutation p and the other party o supplies
masks, the dealer expands o's stream into masks a, b and h's stream into p,
and sends h alone the correction

    delta = a[p] - b            (mod 2^64; rows are elements).

o sends x_o - a to h; h's new share is (x_h + x_o - a)[p] + delta = x[p] - b
and o's new share is b.  h sees x_o - a (uniform, a is unknown to h) and
delta (uniform, b is unknown to h); o sees nothing new.  The dealer sees
only its own randomness (the radix sort's parties send it their
permutations, which it would otherwise derive: circuits.shuffle.Shuffler.announce).
Undoing the shuffle runs the inverse
permutations in the reverse order with fresh masks.  A column opened right
after the shuffle (the destinations sigma[pi]) travels unmasked in the
second step and takes no correction: P1 ends holding it
(circuits.shuffle.Shuffler.shuffle, ``reveal``).  Columns may be
XOR-shared instead of additively shared: the same step with XOR in place
of + and -.

One-hot correlation (for selecting by a secret 2-bit digit, circuits.select),
over the ring Z_2^32 of destination vectors: a random digit r = r0 XOR r1
(r_p from party p's stream), additive shares of e_1..e_3 of the one-hot
vector e of r (one party's from its stream, the other's sent), Beaver masks
b_1..b_3 (b_u = b0_u + b1_u, from the streams) and shares of sum_u e_u b_u
(likewise).  The receiving party (P0 three times in
eight, P1 five: circuits.select.onehot_receiver) gets four words per element, the other
nothing.

The shuffle runs on 64-bit words (CrypTen's ring) or, for the radix sort's
destination vectors, on 32-bit words; of a column needed only modulo
2^(8 w) (positions, digits) only the w low bytes of each correction travel
(circuits.correlations.narrow), and likewise of the one-hot correlation and
of the permutations the parties announce; a dealer answer to P0 travels as
int64 words (:func:`as_words`).

Under security with abort (circuits.macs) the dealer also draws the MAC
keys and deals authenticated correlations, and opens each client's MAC keys
from what the client sealed to the dealer's own X25519 key (pinned in the
deployment) and both parties forwarded alike: it sees those random keys,
never a share of a client's values.
"""
import secrets

import numpy as np
import torch

from ...circuits.bits import unpack_bits
from ...circuits.correlations import (RING, as_words, correction, narrow_rows_into, packed_size, position_bits,
                                     row_blocks, step_plan, widen)
from ...circuits.crypten_compat import crypten
from ...circuits.macs import DERIVED, LAWS, stream_index
from ...circuits.select import onehot_receiver
from ...circuits.streams import (AND_A, AND_B, AND_C, AUTH_MAC, AUTH_VALUE, BIT_MASK, BIT_SHARE, DEALER_WORDS,
                                 DIGIT_MASK, KEY_BYTES, MUL_A, MUL_B, MUL_C,
                                 ONEHOT_SHARE, PRODUCT_MASK, PRODUCT_SHARE, KeyStream)
from ..errors import BundleIntegrityError
from .csprng import TUPLES, KeyedGenerator
from .memory import map_large_arrays, release_free_memory

TTPServer = crypten.mpc.provider.TTPServer
COMPUTE_PARTIES = (0, 1)


class RequestRefused(Exception):
    """A request the dealer will not serve (not a RuntimeError, which CrypTen's server loop takes for a quiet
    shutdown): the dealer stops, naming it, and the parties stop on the closed link."""


SERVED = frozenset(crypten.mpc.provider.ttp_provider.TTP_FUNCTIONS) | {
    "permutation_correlation", "onehot_correlation", "and_triples", "mul_triples", "bit_correlation", "mac_key",
    "authenticated"}  # the requests P0 may make: no other method of the dealer is reachable by name


class Dealer(TTPServer):
    """TTPServer with CSPRNG keys (protocols.runtime.csprng) and more request types: permutation, one-hot
    digit and bit correlations, AND and product triples in batches (circuits.gates), MAC keys and
    authenticated correlations (circuits.macs)."""

    def __init__(self, seal_key=None):
        """Serve P0's requests until it says "terminate": each a name of :data:`SERVED` (anything else, such as
        the server's own helpers, is refused: P0 may deviate), answered to P0 alone.  seal_key: the dealer's
        X25519 key pair (protocols.runtime.sealing), under which clients seal their MAC keys."""
        self._seal_key = seal_key
        crypten.init()
        comm = crypten.communicator.get()
        self.ttp_group, self.comm_group, self.device = comm.ttp_group, comm.ttp_comm_group, "cpu"
        self._setup_generators()
        try:
            while (message := comm.recv_obj(0, self.ttp_group)) != "terminate":
                function = message["function"]
                if function not in SERVED:
                    raise RequestRefused(f"the dealer serves no request {function!r}: refused")
                self.device = message["device"]
                result = getattr(self, function)(*message["args"], **message["kwargs"])
                comm.send_obj(result.size(), 0, self.ttp_group)
                comm.broadcast(result, comm.get_ttp_rank(), self.comm_group)
        except RuntimeError:  # a link closed under the loop: the session is over (CrypTen's loop does the same)
            return

    @staticmethod
    def draw_keys() -> list:
        """k_0, k_1: independent 256-bit draws from ``secrets`` (nothing P0 receives is derived from k_1)."""
        return [secrets.token_bytes(KEY_BYTES) for _ in COMPUTE_PARTIES]

    def _setup_generators(self):
        """Draw the keys (:meth:`draw_keys`); send k_p to party p alone (over their secure link)."""
        comm = crypten.communicator.get()
        keys = self.draw_keys()
        for party, key in zip(COMPUTE_PARTIES, keys):
            comm.send_obj(key, party, comm.ttp_group)
        self.generators = [KeyedGenerator(k, TUPLES) for k in keys]
        self.generators_cuda = [None for _ in keys]
        self._streams = [KeyStream(k) for k in keys]
        self._perms = {}
        self._own = None  # the key of the authenticated correlations' words, drawn at the first (circuits.macs)
        self._keysets = []  # the MAC key sets drawn (circuits.macs.Authenticator: one each)
        self._served = set()  # authenticated correlation indexes served: each once
        self._served_masks = set()  # shuffle mask indexes served: each once (two corrections over one mask, for
        # two permutations, would give P0 the difference of P1's masks, and so P1's masked share)

    def _permutations(self, perm_index: int, n: int, announced: bool):
        """Both parties' permutations for ``perm_index`` (kept for the matching inverse): received from the
        parties if they announced them (circuits.shuffle.Shuffler.announce), else derived from their keys."""
        if perm_index not in self._perms:
            self._perms = {}  # the last ones go first: two pairs of M positions are never held at once
            if announced:
                comm = crypten.communicator.get()
                width = (position_bits(n),)
                perms = [widen(comm.recv_array((packed_size(n, width),), np.uint8, party, comm.permutation_group,
                                               "permutation"), width, np.int32, n)[:, 0] for party in COMPUTE_PARTIES]
            else:
                perms = [s.permutation(perm_index, n) for s in self._streams]
            self._perms = {perm_index: perms}
        return self._perms[perm_index]

    def permutation_correlation(self, shape, perm_index, mask_index, inverse_order, xor_from, dtype="int64",
                                announced=False, widths=None, fold=None, reveal=False):
        """Send P1 its correction and return P0's (CrypTen forwards it to P0); words of ``dtype``, of which
        only the low ``widths[j]`` bits in column j travel (the parties need those columns only modulo that).
        fold: the unshuffle whose output is column 0, folded into the first step; reveal: column 0 is revealed
        to P1 in the second, which takes no correction for it (circuits.shuffle.Shuffler.shuffle)."""
        if mask_index in self._served_masks:  # a second correction over the same masks would unmask them
            raise RequestRefused(f"shuffle masks {mask_index} were asked for twice: refused")
        self._served_masks.add(mask_index)
        shape, dtype = tuple(shape), np.dtype(dtype)  # (M, columns): one row per element
        if dtype == np.int64:  # a 64-bit move after the sort's 32-bit steps: other sizes from here on
            release_free_memory()
            map_large_arrays(shape[0])
        else:  # the sort's 32-bit steps, of the same sizes digit after digit: from the heap (memory.repeated_steps)
            map_large_arrays(0)
        perms = self._permutations(perm_index, shape[0], announced)
        widths = tuple(widths) if widths is not None else (8 * dtype.itemsize,) * shape[1]
        comm, answer = crypten.communicator.get(), None
        for step, (holder, other) in enumerate(step_plan(inverse_order)):
            folded = 2 * fold + 1 if fold is not None and step == 0 else None  # the unshuffle's second step
            revealed = 1 if reveal and holder == 1 else 0  # P1's revealed column 0 takes no correction
            delta = correction(self._streams[other], perms[holder], inverse_order, 2 * mask_index + step, shape,
                               xor_from, widths, dtype, folded, revealed)
            if holder == 1:  # sent at once: one party's correction in memory at a time
                comm.send_array(delta[:packed_size(shape[0], widths[revealed:])], 1, comm.ttp_group)
            else:
                answer = delta.view(np.int64)
        return torch.from_numpy(answer)

    def onehot_correlation(self, m, index):
        """The receiving party's part of the one-hot correlation of ``index`` (circuits.select.onehot_receiver;
        mod 2^32, one row per slot): its shares of e_1..e_3 and of sum_u e_u b_u = [r != 0] b[r], the other's
        being words of its stream; of each word the low bits of m's positions travel (the selections are
        positions, needed modulo 2^position_bits(m)).  Sent to P1, or returned for P0 (then P1's
        answer is empty)."""
        receiver = onehot_receiver(index)
        other = self._streams[1 - receiver]
        p0, p1 = self._streams
        width = (position_bits(m),)
        packed = np.zeros(-(-packed_size(m, width * 4) // 8) * 8, dtype=np.uint8)  # whole words, for P0
        for start, stop in row_blocks(m):  # one block of elements at a time (circuits.correlations.row_blocks)
            n = stop - start
            r = (p0.words(DIGIT_MASK, index, (n,), RING, first=start) ^ p1.words(DIGIT_MASK, index, (n,), RING,
                                                                                 first=start)) & 3
            onehot = (r[None, :] == np.arange(1, 4, dtype=RING)[:, None]).astype(RING)
            masks = p0.slots(PRODUCT_MASK, index, (3, m), start, stop, RING) + p1.slots(PRODUCT_MASK, index, (3, m),
                                                                                        start, stop, RING)
            out = np.empty((4, n), dtype=RING)
            out[:3] = onehot - other.slots(ONEHOT_SHARE, index, (3, m), start, stop, RING)
            out[3] = (onehot * masks).sum(axis=0, dtype=RING) - other.words(PRODUCT_SHARE, index, (n,), RING,
                                                                             first=start)
            narrow_rows_into(packed, out.T, width * 4, m, start)
        if receiver == 0:
            return torch.from_numpy(packed.view(np.int64))
        comm = crypten.communicator.get()
        comm.send_array(packed[:packed_size(m, width * 4)], 1, comm.ttp_group)
        return as_words(np.zeros(0, dtype=np.uint8))

    def mac_key(self, count=1):
        """A fresh set of ``count`` MAC keys (circuits.macs) alpha = alpha_0 + alpha_1 (mod 2^64), each share drawn
        with ``secrets``: [its number, the alpha_1] sent to P1, [its number, the alpha_0] returned for P0.  Each
        circuits.macs.Authenticator has its own set (one that saw a deviation is never used again)."""
        shares = np.array([[secrets.randbits(64) - (1 << 63) for _ in range(int(count))] for _ in COMPUTE_PARTIES],
                          dtype=np.int64)
        self._keysets.append(shares.sum(axis=0))  # int64: wraps mod 2^64
        number = np.array([len(self._keysets) - 1], dtype=np.int64)
        comm = crypten.communicator.get()
        comm.send_array(np.concatenate([number, shares[1]]), 1, comm.ttp_group)
        return torch.from_numpy(np.concatenate([number, shares[0]]))

    def authenticated(self, law, index, shape, owner=None, macs=1, keyset=0, sealed=None):
        """P0's value shares and MAC shares (under the first ``macs`` keys of set ``keyset``) of correlation
        ``index`` of ``law`` (circuits.macs.LAWS; its words from the dealer's own key, P1's shares from P1's
        stream at index circuits.macs.stream_index(keyset, index)), then, for an ``input`` mask owned by P0, its
        clear words (P1's sent to P1).  Served only if P1 sent the dealer the same request (law, index, shape,
        owner, macs, keyset, sealed), and each (keyset, index) once: P0 alone cannot turn a mask P1 counts on into
        one whose clear words it receives, nor have one served twice.

        Law ``client_keys``: the words are the clients' MAC keys, (K, C), opened from ``sealed`` (per client the
        associated data and the sealed keys its bundles carry: :meth:`_client_keys`), followed by a flag per
        client whose keys do not open (also sent to P1).  Both parties forward their own copies, so a party that
        forwards other keys is refused; none learns the keys."""
        comm = crypten.communicator.get()
        shape = tuple(int(n) for n in shape)
        expected = comm.recv_obj(1, comm.ttp_group)  # P1's own account of the request: both must agree
        if (law not in LAWS or not 0 <= keyset < len(self._keysets) or (keyset, index) in self._served
                or not 1 <= macs <= len(self._keysets[keyset]) or (law == "client_keys") != (sealed is not None)
                or expected != (law, index, shape, owner, macs, keyset, sealed)):
            raise RequestRefused(f"authenticated correlation {law!r} {index} refused (no such MAC keys, unknown, "
                                 f"reused or not the one P1 expects)")
        self._served.add((keyset, index))
        if self._own is None:  # a key only the dealer holds, drawn with secrets when first needed
            self._own = KeyStream(secrets.token_bytes(KEY_BYTES))
        index = stream_index(keyset, index)
        alphas = self._keysets[keyset]
        flags = None
        if law in DERIVED:  # a tuple the law makes of uniform words
            rows, made_of = DERIVED[law]
            clear = made_of(self._own.words(DEALER_WORDS, index, (rows, int(np.prod(shape[1:])))),
                            shape[0]).reshape(shape)
        elif law == "client_keys":
            clear, flags = self._client_keys(sealed, shape)
        else:
            clear = self._own.words(DEALER_WORDS, index, shape) & (1 if law == "bits" else -1)
        p1 = self._streams[1]
        tagged = clear[None] * alphas[:macs].reshape((macs,) + (1,) * len(shape))
        out = [(clear - p1.words(AUTH_VALUE, index, (1,) + shape)[0])[None],
               tagged - p1.words(AUTH_MAC, index, (macs,) + shape)]
        if law == "input" and owner == 1:
            comm.send_array(clear, 1, comm.ttp_group)
        elif law == "input":
            out.append(clear[None])
        if flags is not None:
            comm.send_array(flags, 1, comm.ttp_group)
            out.append(flags)
        return torch.from_numpy(np.concatenate([o.reshape(-1) for o in out]))

    def _client_keys(self, sealed, shape):
        """The clients' MAC keys (K, C) opened from ``sealed`` [(associated data, sealed keys)], and a flag (C,)
        for each client whose sealed keys do not open under the dealer's key or are not K words (its keys are
        then 0: the parties leave that client out and open nothing of its MACs)."""
        if self._seal_key is None:
            raise RequestRefused("the dealer has no sealing key: it cannot open the clients' MAC keys")
        count, clients = shape
        if len(sealed) != clients:
            raise RequestRefused(f"{len(sealed)} clients' sealed MAC keys for {clients} clients: refused")
        keys, flags = np.zeros(shape, dtype=np.int64), np.zeros(clients, dtype=np.int64)
        for c, (aad, blob) in enumerate(sealed):
            try:
                plain = self._seal_key.open(blob, aad)
            except BundleIntegrityError:
                plain = b""
            if len(plain) == 8 * count:
                keys[:, c] = np.frombuffer(plain, dtype=np.int64)
            else:
                flags[c] = 1
        return keys, flags

    def and_triples(self, count, index):
        """P0's share c_0 = (a AND b) XOR c_1 of ``count`` AND triples (circuits.gates); a, b, c_1 from the streams."""
        p0, p1 = self._streams
        c = p0.words(AND_A, index, (count,))
        c ^= p1.words(AND_A, index, (count,))
        b = p0.words(AND_B, index, (count,))
        b ^= p1.words(AND_B, index, (count,))
        c &= b
        c ^= p1.words(AND_C, index, (count,))
        return torch.from_numpy(c)

    def mul_triples(self, count, index):
        """P0's share c_0 = a b - c_1 (mod 2^64) of ``count`` product triples (circuits.gates)."""
        p0, p1 = self._streams
        a = p0.words(MUL_A, index, (count,)) + p1.words(MUL_A, index, (count,))
        b = p0.words(MUL_B, index, (count,)) + p1.words(MUL_B, index, (count,))
        return torch.from_numpy(a * b - p1.words(MUL_C, index, (count,)))

    def bit_correlation(self, words_shape, count, index):
        """P0's additive shares of the bits of r = rho0 XOR rho1 ((R, count), lanes beyond count dropped)."""
        p0, p1 = self._streams
        r = p0.words(BIT_MASK, index, tuple(words_shape)) ^ p1.words(BIT_MASK, index, tuple(words_shape))
        bits = unpack_bits(r, count, np.uint8)
        share = p1.words(BIT_SHARE, index, bits.shape)
        return torch.from_numpy(np.subtract(bits, share, out=share))
