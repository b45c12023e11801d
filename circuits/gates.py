"""Gates between the two compute parties: XOR-shared ANDs, additive products and bit conversions, one round
each, on correlations the dealer prepares ahead of use.

Values are int64 numpy arrays of this party's shares: XOR shares of packed
bits (64 lanes per word) for :meth:`Gates.and_`, additive shares mod 2^64
for :meth:`Gates.multiply`.  Every gate opens only values masked by
correlated randomness the opener does not know, so each opened word is
uniform:

* **AND** (Beaver over GF(2), bitwise on words): a triple a, b, c = a AND b.
  a_p and b_p come from party p's dealer stream, c_1 from P1's and
  c_0 = c XOR c_1 from the dealer, to P0 alone.  The parties open
  d = x XOR a and e = y XOR b, and z_p = c_p ^ (d & b_p) ^ (e & a_p), with
  d & e added by P0: z = x AND y.
* **Product** (Beaver mod 2^64): the same with + and *, c = a b.
* **Bit conversion**: for packed XOR-shared bits x the dealer's bit
  correlation gives random packed bits r = rho0 XOR rho1 (from the
  parties' streams) and additive shares of each bit of r (P1's from its
  stream, P0's sent).  The parties open c = x XOR r, one word per 64 bits,
  and x = c + (1 - 2c) r per bit is local.  Cost per bit: 1/8 byte sent by
  each party, 8 bytes from the dealer to P0 (CrypTen's conversion opens a
  64-bit word per bit).

The dealer's part of a correlation travels to P0 only, as soon as P0
asks: :meth:`Gates.reserve` posts the request for a whole circuit's
triples before its first layer, so a layer waits for the other party's
openings and nothing else.  The dealer sees no share and no opening; P1
receives nothing from it.  Any number of gates in one call share a round.

Correlations are addressed by (purpose, index) in the dealer streams
(circuits.streams) and each index is used once: one :class:`Gates` per
dealer key, so a second engine on the same key is refused.
"""
from collections import deque

import numpy as np

from .crypten_compat import crypten
from .bits import unpack_bits
from . import correlations
from .dealer_line import dealer_line
from .streams import AND_A, AND_B, AND_C, BIT_MASK, BIT_SHARE, MUL_A, MUL_B, MUL_C, KeyStream

BATCH = 1 << 22  # triple words per dealer answer at most (32 MB)
_KINDS = {"and": (AND_A, AND_B, AND_C), "mul": (MUL_A, MUL_B, MUL_C)}
_ENGINES = set()  # the dealer keys that already have an engine in this process


class Gates:
    """One compute party's end of the gates (needs the separate dealer, provider TTP, and its stream key)."""

    def __init__(self, stream_key: bytes):
        if stream_key is None:
            raise RuntimeError("the gates need the separate dealer (provider TTP) and its stream key")
        if bytes(stream_key) in _ENGINES:
            raise RuntimeError("this dealer key already has a Gates engine: a second would reuse its correlations")
        _ENGINES.add(bytes(stream_key))
        self.comm = crypten.communicator.get()
        self.rank = self.comm.get_rank()
        self.stream = KeyStream(stream_key)
        self.batches = 0  # triple batches reserved so far (both parties in step)
        self.conversions = 0  # bit correlations used so far
        self._pending = {kind: deque() for kind in _KINDS}  # (index, count, ticket) reserved, not yet loaded
        self._loaded = {kind: deque() for kind in _KINDS}  # (a, b, c) shares loaded, the first partly used
        self._used = {kind: 0 for kind in _KINDS}  # words of the first loaded batch used so far

    # ------------------------------------------------------------- correlations
    def reserve(self, kind: str, count: int) -> None:
        """Ask the dealer now for ``count`` more words of ``kind`` ("and" or "mul") triples.

        Both parties call it at the same points.  The reserved batches form one stream that the gates
        consume in order, whatever the batch sizes; a gate that finds too few reserves the rest on the
        spot (one round trip to the dealer for P0).  A gadget reserves what it consumes itself when it
        starts, so the dealer works while the parties prepare.
        """
        for start in range(0, count, BATCH):  # the dealer answers in pieces, each while P0 works on the last
            size = min(BATCH, count - start)
            index, self.batches = self.batches, self.batches + 1
            self._pending[kind].append((index, size, self._post(f"{kind}_triples", size, index)))

    def _post(self, function: str, *args):
        """P0: send the dealer a request now and return its ticket (circuits.dealer_line); P1: None."""
        return dealer_line().post(function, *args) if self.rank == 0 else None

    def _load(self, kind: str) -> None:
        """The next reserved batch: P0 keeps the dealer's c (a and b, and P1's c, are its streams' words, expanded
        block by block where a gate uses them: :meth:`_words`)."""
        index, size, ticket = self._pending[kind].popleft()
        self._loaded[kind].append((index, size, dealer_line().collect(ticket) if self.rank == 0 else None))

    def _triples(self, kind: str, count: int) -> list:
        """The next ``count`` words of this party's triples as pieces (batch index, first word, words, P0's c of
        them or None), in order, each at most BLOCK_ROWS words (circuits.correlations.row_blocks' size)."""
        if count == 0:
            return []
        loaded = self._loaded[kind]
        available = sum(size for _, size, _ in loaded) - self._used[kind]
        for _, size, _ in list(self._pending[kind]):
            if available >= count:
                break
            self._load(kind)
            available += size
        if available < count:  # all reserved batches are loaded by now: reserve the rest and load it
            self.reserve(kind, count - available)
            while self._pending[kind]:
                self._load(kind)
        start, pieces = self._used[kind], []
        while count:
            index, size, c = loaded[0]
            take = min(count, size - start, correlations.BLOCK_ROWS)
            pieces.append((index, start, take, None if c is None else c[start:start + take]))
            count -= take
            start += take
            if start == size:
                loaded.popleft()
                start = 0
        self._used[kind] = start
        return pieces

    def _words(self, kind: str, piece) -> tuple:
        """This party's (a, b, c) shares of one piece of :meth:`_triples`."""
        index, first, take, c = piece
        purposes = _KINDS[kind]
        a, b = (self.stream.words(purpose, index, (take,), first=first) for purpose in purposes[:2])
        return a, b, (c if c is not None else self.stream.words(purposes[2], index, (take,), first=first))

    def left(self, kind: str) -> int:
        """Reserved words of ``kind`` triples not used yet (0 after a gadget that reserved exactly its own)."""
        loaded = sum(size for _, size, _ in self._loaded[kind]) - self._used[kind]
        return loaded + sum(size for _, size, _ in self._pending[kind])

    def _exchange(self, own: np.ndarray) -> np.ndarray:
        """Send this party's array to the other compute party and return the other's (one round)."""
        other = 1 - self.rank
        self.comm.send_array(own, other)
        return self.comm.recv_array(own.shape, own.dtype, other, operation="gate openings")

    # -------------------------------------------------------------------- gates
    def and_(self, *pairs) -> list:
        """x AND y for every (x, y) pair of XOR-shared word arrays (each pair's two of one shape), one round."""
        return self.batch([("and", pairs)])[0]

    def multiply(self, *pairs) -> list:
        """x * y mod 2^64 for every (x, y) pair of additively shared int64 arrays, one round."""
        return self.batch([("mul", pairs)])[0]

    def to_additive(self, packed: np.ndarray, count: int) -> np.ndarray:
        """This party's additive shares (R, count) of the bits whose XOR shares are packed in ``packed`` (R, W).

        P0 posts the dealer's request before the openings, so the two round trips overlap.
        """
        return self.batch([("bits", (packed, count))])[0]

    def batch(self, calls) -> list:
        """The outputs of several gate calls made in one round: calls ("and", pairs), ("mul", pairs) or ("bits",
        (packed, count)) as :meth:`and_`, :meth:`multiply` and :meth:`to_additive` take them.  Each call's
        opening is made as it alone would make it, in order (the same triples and bit correlations as the calls
        one by one), and all of them travel in one message each way."""
        opened = [self._conversion(*args) if kind == "bits" else self._gate(kind, args) for kind, args in calls]
        sizes = [o.own.size for o in opened]
        own = opened[0].own if len(opened) == 1 else np.concatenate([o.own.reshape(-1) for o in opened])
        other = self._exchange(own)
        del own  # (it may still be on its way: never changed in place)
        out, at = [], 0
        for o, size in zip(opened, sizes):
            out.append(o.close(self, other[at:at + size]))
            at += size
        return out

    def _gate(self, kind: str, pairs) -> "_GateOpening":
        """This party's half of Beaver's opening over every pair, (d, e) = (x - a, y - b) over GF(2) or mod 2^64;
        the triples are expanded block by block, twice (for the opening, then for z: :meth:`_GateOpening.close`),
        so a gate over n words holds its opening (2n words), z and P0 the dealer's c, not the whole a, b and c."""
        shapes = _shapes(pairs)
        n = sum(int(np.prod(shape, dtype=np.int64)) for shape in shapes)
        pieces = self._triples(kind, n)
        flat = [(np.ravel(x), np.ravel(y)) for x, y in pairs]  # views of contiguous inputs; others copied once
        own, at = np.empty(2 * n, dtype=np.int64), 0
        for piece in pieces:  # (x - a, y - b), the pairs read in place
            a, b, _ = self._words(kind, piece)
            _opening(flat, at, a, b, np.bitwise_xor if kind == "and" else np.subtract, own, n)
            at += len(a)
        return _GateOpening(kind, shapes, n, pieces, own)

    def _conversion(self, packed: np.ndarray, count: int) -> "_BitOpening":
        """This party's half of a bit conversion's opening, c = x XOR r (:meth:`to_additive`); P0 posts the
        dealer's request first."""
        packed = np.ascontiguousarray(packed, dtype=np.int64)
        index, self.conversions = self.conversions, self.conversions + 1
        ticket = self._post("bit_correlation", packed.shape, count, index)
        return _BitOpening(index, count, ticket, packed ^ self.stream.words(BIT_MASK, index, packed.shape))

    def open(self, share: np.ndarray, xor: bool = False) -> np.ndarray:
        """Open a sharing to both parties (tests and audits only; the protocols open nothing this way)."""
        share = np.ascontiguousarray(share, dtype=np.int64)
        other = self._exchange(share)
        return share ^ other if xor else share + other


class _GateOpening:
    """A gate call between its opening and the other party's (:meth:`Gates._gate`)."""

    def __init__(self, kind: str, shapes, n: int, pieces, own: np.ndarray):
        self.kind, self.shapes, self.n, self.pieces, self.own = kind, shapes, n, pieces, own

    def close(self, gates: Gates, other: np.ndarray) -> list:
        """z = c + d b + e a, and d e at P0 (mod 2^64, or with XOR and AND), from the opened (d, e)."""
        xor = self.kind == "and"
        add, times = (np.bitwise_xor, np.bitwise_and) if xor else (np.add, np.multiply)
        opened = add(other, self.own, out=other)
        self.own = None  # (the opening's own half is freed before z is made)
        n = self.n
        d, e, z, at = opened[:n], opened[n:], np.empty(n, dtype=np.int64), 0
        for piece in self.pieces:
            a, b, c = gates._words(self.kind, piece)
            part = slice(at, at + len(a))
            times(d[part], b, out=z[part])
            add(z[part], c, out=z[part])
            term = times(e[part], a)
            add(z[part], term, out=z[part])
            if gates.rank == 0:
                add(z[part], times(d[part], e[part], out=term), out=z[part])
            at += len(a)
        return _split(z, self.shapes)


class _BitOpening:
    """A bit conversion between its opening and the other party's (:meth:`Gates._conversion`)."""

    def __init__(self, index: int, count: int, ticket, own: np.ndarray):
        self.index, self.count, self.ticket, self.own = index, count, ticket, own

    def close(self, gates: Gates, other: np.ndarray) -> np.ndarray:
        """x = c + (1 - 2c) r per bit, from the opened c and this party's additive shares of r."""
        c = unpack_bits(self.own ^ other.reshape(self.own.shape), self.count, np.uint8)
        self.own = None
        if gates.rank == 0:
            r_share = dealer_line().collect(self.ticket)[:c.size].reshape(c.shape)
        else:
            r_share = gates.stream.words(BIT_SHARE, self.index, c.shape)
        out = np.negative(c, dtype=np.int64)  # (1 - 2c) r = (r XOR -c) + c: -c is all ones where c = 1
        out ^= r_share
        for _ in range(2 if gates.rank == 0 else 1):  # P0 adds c once more: x = c + (1 - 2c)(r0 + r1)
            out += c
        return out


def _shapes(pairs) -> list:
    shapes = [np.shape(x) for x, _ in pairs]
    for (x, y), shape in zip(pairs, shapes):
        if np.shape(y) != shape:
            raise ValueError(f"a gate's two inputs differ in shape: {shape} and {np.shape(y)}")
    return shapes


def _opening(flat, at: int, a: np.ndarray, b: np.ndarray, combine, out: np.ndarray, n: int) -> None:
    """Words [at, at + len(a)) of this party's half of a gate's opening, (x - a, y - b) or (x XOR a, y XOR b) over
    every pair's flattened x and y (``flat``) side by side, written into ``out`` (x's at [0, n), y's at [n, 2n))
    straight from the pairs (no concatenated copy of the inputs)."""
    stop, offset = at + len(a), 0
    for x, y in flat:
        lo, hi = max(at, offset), min(stop, offset + len(x))
        if lo < hi:
            for value, mask, base in ((x, a, 0), (y, b, n)):
                combine(value[lo - offset:hi - offset].astype(np.int64, copy=False), mask[lo - at:hi - at],
                        out=out[base + lo:base + hi])
        offset += len(x)


def _split(z: np.ndarray, shapes) -> list:
    out, start = [], 0
    for shape in shapes:
        size = int(np.prod(shape, dtype=np.int64))
        out.append(z[start:start + size].reshape(shape))
        start += size
    return out

