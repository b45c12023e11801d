"""Comparisons on bit-sliced XOR sharings in about log2 L rounds (a prefix tree of ANDs, circuits.gates).

Bit-sliced layout: an L-bit value per lane; lane l of word w is element
64 w + l, and plane j (an array of words) holds bit j of every element, so
one AND of two planes compares 64 elements' bits at once.

[x > y] for L-bit x and y starts from two leaves per bit,

    g_j = x_j AND NOT y_j   (x beats y at bit j),    e_j = NOT (x_j XOR y_j)   (they agree at bit j),

and combines adjacent runs of bits, a higher run H above a lower run L, by

    g = g_H XOR (e_H AND g_L),    e = e_H AND e_L

(g_H and e_H exclude each other, so the OR is a XOR).  The root's g is
[x > y].  Every level of the tree is one round: its ANDs share it, 2 per
node, 1 at the root; about 2 L word-ANDs per 64 comparisons in all.  e_j is
local (a XOR), and so is g_j when y is public; when x and y are held by
different parties g_j is one more round of ANDs.  Against a public
threshold a scan from the top bit costs one AND per bit (L - 1 rounds), so
:func:`less_than_public` scans 8-bit blocks side by side and joins the
blocks by the tree: 10 rounds and 51 word-ANDs per 64 coins at L = 48.

Two more gadgets on the same gates, for the exact ranking's outputs:

* :func:`all_set` -- [every bit of x is 1] per XOR-shared element -- ANDs
  an element's two halves together, round after round (ceil(log2 L)
  rounds).  While a half is a byte or wider the halves of all elements are
  packed densely into words, so no lane is wasted and nothing is
  transposed; the last byte is bit-sliced and its planes ANDed.  About one
  word-AND per 64 bits of input in all.
* :func:`nonnegative` -- [x >= 0] for an additively shared x, |x| < 2^63 --
  is the sign bit of s0 + s1: s0's top bit XOR s1's top bit XOR the carry
  into bit 63, and that carry is [low(s0) > 2^63 - 1 - low(s1)], a
  comparison of two privately held 63-bit values (:func:`greater_private`).
  The bit then becomes additive (circuits.gates' bit conversion): 8 rounds.
  With |x| < 2^b for a public b the same works on the shares' low b + 1 bits,
  a comparison of b-bit values (narrower, cheaper).
* :func:`bit_decompose` -- every bit of a small additively shared x -- adds
  the two parties' low bits with a bit-sliced Kogge-Stone adder (the prefix
  of (generate, propagate) pairs), then converts the sum's bits to additive.
"""
import numpy as np

from .bits import LANES, pack_bits, planes, words_of

BLOCK = 8  # bits of a public-threshold comparison scanned one at a time before the tree joins them


def flip(share: np.ndarray, rank: int) -> np.ndarray:
    """This party's share of NOT x (bitwise) from its share of x: party 0 flips."""
    return ~share if rank == 0 else share


def tree_ands(levels: int, size: int) -> int:
    """The word-ANDs :func:`greater` makes on ``levels`` leaves of ``size`` words each."""
    total = 0
    while levels > 1:
        pairs = levels // 2
        total += pairs * size * (1 if levels == 2 else 2)
        levels = pairs + levels % 2
    return total


def greater(gates, g: np.ndarray, e: np.ndarray) -> np.ndarray:
    """XOR shares of [x > y] from the leaves g, e (L, ...), the highest bit first; ceil(log2 L) rounds."""
    while len(g) > 1:
        pairs = len(g) // 2
        high_g, low_g = g[0:2 * pairs:2], g[1:2 * pairs:2]
        high_e, low_e = e[0:2 * pairs:2], e[1:2 * pairs:2]
        if len(g) == 2:  # the root needs no e
            (carried,) = gates.and_((high_e, low_g))
            return (high_g ^ carried)[0]
        carried, agree = gates.and_((high_e, low_g), (high_e, low_e))
        if len(g) % 2:  # the lowest run passes up unpaired
            g, e = np.concatenate([high_g ^ carried, g[-1:]]), np.concatenate([agree, e[-1:]])
        else:
            g, e = high_g ^ carried, agree
    return g[0]


def comparison_ands(shape, bits: int) -> int:
    """The word-ANDs :func:`greater_private` (and so :func:`nonnegative`) makes on inputs of ``shape``."""
    size = int(np.prod(shape[:-1], dtype=np.int64)) * -(-shape[-1] // LANES)
    return bits * size + tree_ands(bits, size)


def greater_private(gates, own: np.ndarray, bits: int, reserved: bool = False) -> np.ndarray:
    """XOR shares (..., W) of [x > y] where P0 holds x and P1 holds y (each passes its own (..., n) integers
    in [0, 2^bits)); 1 + ceil(log2 bits) rounds.  ``reserved``: the caller reserved its triples ahead
    (:func:`comparison_ands`)."""
    own = np.asarray(own, dtype=np.int64)
    if own.size and (own.min() < 0 or own.max() >= 2**bits):
        raise ValueError(f"a private comparison's inputs must lie in [0, 2^{bits})")
    if not reserved:
        gates.reserve("and", comparison_ands(own.shape, bits))
    mine = planes(own, bits)
    zero = np.zeros_like(mine)
    x, y = (mine, zero) if gates.rank == 0 else (zero, mine)  # XOR shares of x's and y's planes
    (g,) = gates.and_((x, flip(y, gates.rank)))
    return greater(gates, g, flip(x ^ y, gates.rank))


def less_than_public(gates, u: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """XOR shares (R, W) of [u < T_r] for XOR-shared planes u (L, R, W), the highest bit first, and public
    L-bit thresholds T (R,).

    With T public a bit costs one AND when scanned from the top (eq = [u and T agree so far]):
    t = eq AND NOT u_j; lt ^= t if T_j = 1; eq = eq ^ t if T_j = 1, else t.  So blocks of BLOCK bits are
    scanned side by side (BLOCK - 1 rounds) and the tree joins the blocks: 10 rounds and about 1.06 L
    word-ANDs per 64 coins at L = 48, where the tree alone takes 6 rounds and 2 L, the scan alone 47 and L.
    """
    bits, rank = len(u), gates.rank
    blocks = -(-bits // BLOCK)
    gates.reserve("and", blocks * (BLOCK - 1) * u[0].size + tree_ands(blocks, u[0].size))
    t = np.asarray(thresholds, dtype=np.int64)
    shifts = np.arange(bits - 1, -1, -1, dtype=np.int64)[:, None]
    mask = np.where((t[None, :] >> shifts) & 1 == 1, -1, 0).astype(np.int64)[:, :, None]  # (L, R, 1) T_j words
    pad = blocks * BLOCK - bits  # planes on top where u = T = 0: equal bits change nothing

    def by_level(planes_):  # (L, ...) -> (BLOCK, blocks, ...): level j of every block (a view when L fits)
        if pad:
            planes_ = np.concatenate([np.zeros((pad,) + planes_.shape[1:], dtype=np.int64), planes_])
        return planes_.reshape((blocks, BLOCK) + planes_.shape[1:]).swapaxes(0, 1)

    u, mask = by_level(u), by_level(mask)
    not_top = flip(u[0], rank)
    lt = not_top & mask[0]  # a public AND is local; a public XOR is party 0's
    eq = not_top ^ mask[0] if rank == 0 else not_top
    for j in range(1, BLOCK):
        (below,) = gates.and_((eq, flip(u[j], rank)))
        lt = lt ^ (below & mask[j])
        eq = below ^ (eq & mask[j])
    return greater(gates, lt, eq)


def all_set(gates, shares: np.ndarray, bits: int) -> np.ndarray:
    """XOR shares (W,) of [the low ``bits`` bits of x are all 1], packed 64 lanes per word, from this party's
    XOR shares (n,) of x; ceil(log2 bits) rounds (at least 3), about n bits / 64 word-ANDs."""
    return all_set_groups(gates, [(shares, bits)])[0]


def all_set_groups(gates, groups) -> list:
    """:func:`all_set` of several (shares, bits) groups at once: their ANDs share rounds, so the whole takes the
    rounds of the widest group, and each group costs only its own bits."""
    states = [_AllSet(gates.rank, np.asarray(shares, dtype=np.int64), bits) for shares, bits in groups]
    gates.reserve("and", sum(state.ands for state in states))
    while not all(state.done for state in states):
        pairs = [state.pairs() for state in states]
        results = iter(gates.and_(*[pair for pair in pairs if pair is not None]))
        for state, pair in zip(states, pairs):
            if pair is not None:
                state.take(next(results))
    return [state.planes[0] for state in states]


class _AllSet:
    """One group of :func:`all_set_groups`: an element's two halves ANDed, round after round.  While a half is a
    byte or wider the halves of all elements are packed densely into words, so no lane is wasted and nothing is
    transposed; the last byte is bit-sliced and its planes ANDed."""

    def __init__(self, rank: int, own: np.ndarray, bits: int):
        self.n, self.width = len(own), 8
        while self.width < bits:
            self.width *= 2
        if bits < 64:  # the bits above ``bits`` count as set: P0's shares hold 1s there, P1's 0s
            above = np.int64(-1 << bits)
            own = own | above if rank == 0 else own & ~above
        self.lanes = own.view(np.uint64).astype(f"uint{self.width}")
        halves = [-(-self.n * w // 128) for w in (64, 32, 16) if w <= self.width]  # words of a half per width
        self.ands = sum(halves) + 7 * -(-self.n // LANES)
        self.planes = planes(self.lanes, 8) if self.width == 8 else None

    @property
    def done(self) -> bool:
        return self.planes is not None and len(self.planes) == 1

    def pairs(self):
        """The (x, y) this group ANDs in the next round, or None when it is done."""
        if self.done:
            return None
        if self.planes is None:  # dense: an element's low half, then its high half (little-endian)
            pairs = self.lanes.view(f"uint{self.width // 2}").reshape(self.n, 2)
            return words_of(pairs[:, 0]), words_of(pairs[:, 1])
        half = len(self.planes) // 2
        return self.planes[:half], self.planes[half:]

    def take(self, anded: np.ndarray) -> None:
        if self.planes is None:
            self.width //= 2
            self.lanes = anded.view(f"uint{self.width}")[:self.n]
            if self.width == 8:
                self.planes = planes(self.lanes, 8)
        else:
            self.planes = anded


def bit_decompose(gates, shares: np.ndarray, bits: int) -> np.ndarray:
    """Additive shares (bits, n), the lowest bit first, of every bit of x for additive shares (n,) of
    0 <= x < 2^bits: the low ``bits`` bits of the two shares (one held by each party) added by a bit-sliced
    Kogge-Stone adder, x's bits being s_i = p_i XOR c_i with p_i = a_i XOR b_i and the carries c_i the prefix
    generates of (g_i = a_i AND b_i, p_i); 1 + ceil(log2 bits) rounds of ANDs, then one bit conversion."""
    shares = np.asarray(shares, dtype=np.int64)
    mine = planes(shares & np.int64((1 << bits) - 1), bits)[::-1]  # (bits, W), the lowest bit first
    zero = np.zeros_like(mine)
    x, y = (mine, zero) if gates.rank == 0 else (zero, mine)  # XOR shares of P0's low bits and of P1's
    size, levels = mine.shape[1], []
    while (d := 1 << len(levels)) < bits:
        levels.append(d)
    gates.reserve("and", size * (bits + sum((bits - d) * (1 if 2 * d >= bits else 2) for d in levels)))
    (generate,) = gates.and_((x, y))
    propagate = x ^ y
    carry_generate, carry_propagate = generate, propagate
    for d in levels:
        high, low = slice(d, bits), slice(0, bits - d)
        if 2 * d < bits:
            carried, joined = gates.and_((carry_propagate[high], carry_generate[low]),
                                         (carry_propagate[high], carry_propagate[low]))
            carry_propagate = np.concatenate([carry_propagate[:d], joined])
        else:
            (carried,) = gates.and_((carry_propagate[high], carry_generate[low]))
        carry_generate = np.concatenate([carry_generate[:d], carry_generate[high] ^ carried])
    carries = np.concatenate([np.zeros_like(mine[:1]), carry_generate[:-1]])  # into bit i: generate of 0..i-1
    return gates.to_additive(propagate ^ carries, len(shares))


def sign_bits(gates, shares: np.ndarray, bits: int = 63, reserved: bool = False) -> np.ndarray:
    """XOR shares (..., W), packed, of [x >= 0] for additive shares (..., n) of x with |x| < 2^bits: bit ``bits``
    of x mod 2^(bits + 1), whose shares are the shares' low bits + 1 bits (the top bit of the word when bits is
    63), is 0; a private comparison of ``bits``-bit values, 7 rounds at 63 bits."""
    shares = np.asarray(shares, dtype=np.int64)
    mask = np.int64((1 << bits) - 1)
    low = shares & mask
    own = low if gates.rank == 0 else mask - low
    carry = greater_private(gates, own, bits, reserved)  # [low0 + low1 >= 2^bits]: the carry into the sign bit
    return flip(carry ^ pack_bits((shares >> bits) & 1), gates.rank)


def nonnegative(gates, shares: np.ndarray, bits: int = 63, reserved: bool = False) -> np.ndarray:
    """Additive shares (n,) of [x >= 0] (1 or 0) from additive shares (n,) of x, |x| < 2^bits (bits <= 63: a
    smaller bound makes the comparison narrower and cheaper); 8 rounds at 63 bits.  ``reserved``: the caller
    reserved the comparison's triples ahead (:func:`comparison_ands` of (n,))."""
    return gates.to_additive(sign_bits(gates, shares, bits, reserved)[None], len(shares))[0]
