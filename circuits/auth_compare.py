"""Comparisons on wide authenticated shares (circuits.macs) for security with abort: [x >= 0] and the maximum.

The semi-honest circuits compare by converting additive shares to XOR-shared bits (circuits.comparators); a
deviating party could flip such a bit unseen.  Here every word stays under its MACs and the comparison reads the
secret through one masked opening, as SPDZ2k's comparisons with edaBits do (Escudero, Ghosh, Keller, Rachuri,
Scholl, CRYPTO 2020), the mask and its digits made by the trusted dealer (so no cut-and-choose is needed to make
them consistent):

* **The mask** (law ``digits``, circuits.macs.digits_law): a uniform 64-bit R, its bit L (L = 2D), and for each of
  its D low 2-bit digits R_j the one-hot vector e_j of R_j's value, all under every MAC key.
* **The sign** of x, |x| < 2^L: x' = x + 2^L lies in [0, 2^(L+1)), the parties open c = x' + R (uniform mod 2^64:
  it says nothing of x) and x' = (c - R) mod 2^(L+1), whose top bit is [x >= 0]:

      [x >= 0] = c_L XOR R_L XOR [c mod 2^L < R mod 2^L],

  the last term the borrow of the subtraction into bit L.  It compares the public c with the secret R digit by
  digit: [R_j > c_j] = sum_{u > c_j} e_{j,u} and [R_j = c_j] = e_{j,c_j} are linear in e_j (public choices), and a
  tree joins the digits from the top, (gt, eq)_hi o (gt, eq)_lo = (gt_hi + eq_hi gt_lo, eq_hi eq_lo): two Beaver
  products a join, ceil(log2 D) rounds; one more product makes the XOR (a XOR b = a + b - 2ab).
* **The maximum** (a tournament): each level one comparison and one product per pair, max(a, b) = b + [a - b >= 0]
  (a - b).
* **Rounding by a public divisor** (the AUC to K decimals under the mode, whose P N is public): circuits.division's
  decimal long division, each digit nine comparisons at once and the remainder's update linear.
* **Division by a secret divisor** (the curves' points, circuits.auth_curves): the same restoring long division in
  radix 2^D, each digit 2^D - 1 comparisons at once against the multiples of [b] and one product for d b; with its
  numerator's lower digits fed in round by round (the partial AUC, circuits.auth_pauc: a numerator too wide for MACs
  in Z_2^64 enters digit by digit, so no value wider than 2^D times the divisor exists).

Everything opened is masked by fresh uniform dealer words (c by R, the products by their triples) and joins the
next MAC check: an error a deviating party puts on x, on c or on a product is caught there, before anything the
comparison steers is opened (circuits.macs.Authenticator.release).  The opened c is checked modulo 2^w, w the
wide values' bits (:attr:`Authenticator.wide_bits`), which must exceed L; a word that differs above bit L
changes nothing here.  Cost per comparison: 2 + 3D dealer words and about 2D products, each under 1 + keys MACs.
"""
import numpy as np

DIGIT_BITS = 2
BATCH = 1 << 15  # comparisons at once in :func:`maximum` (about 0.1 GB of a party's memory at 40-bit values)


def nonnegative(auth, x: np.ndarray, bits: int, kind: str = "comparison") -> np.ndarray:
    """[x >= 0] (1 + keys, n), 0 or 1, for wide authenticated x (1 + keys, n) with |x| < 2^bits (module docstring);
    (bits rounded up to even) + 1 at most the authenticator's wide bits (:func:`comparison_bits`)."""
    top = comparison_bits(bits) - 1  # L
    if top + 1 > auth.wide_bits:
        raise ValueError(f"a comparison of {bits}-bit values needs {top + 1}-bit wide values; these have "
                         f"{auth.wide_bits}")
    mask, c, onehot = _masked(auth, auth.add_public(x, np.int64(1) << np.int64(top)), top // DIGIT_BITS, kind)
    greater, equal = _digit_tests(auth, onehot, c)
    borrow = _joined(auth, greater, equal, kind)
    c_top = (c >> np.int64(top)) & 1
    xor_top = auth.add_public(mask[:, 1] * (1 - 2 * c_top), c_top)  # c_L XOR R_L, linear: c_L public
    return xor_top + borrow - 2 * auth.multiply(xor_top, borrow, kind)


def is_zero(auth, x: np.ndarray, kind: str = "comparison") -> np.ndarray:
    """[x = 0] (1 + keys, n), wide, for a narrow authenticated x (2, n) with |x| < 2^k, k (even) the authenticator's
    values' bits: c = x + R opened (uniform) and checked modulo 2^k with x's MACs, and [x = 0 mod 2^k] = [c = R mod
    2^k] = prod_j [R_j = c_j] over R's k/2 low digits, each linear in the dealer's one-hot vectors, which carry every
    MAC key (so the bit comes out wide); a tree of products (ceil(log2 k/2) rounds)."""
    if auth.k % DIGIT_BITS:
        raise ValueError(f"a zero test reads k/2 digits: the authenticator's k = {auth.k} must be even")
    _, c, onehot = _masked(auth, x, auth.k // DIGIT_BITS, kind)
    equal = _digit_tests(auth, onehot, c)[1]
    while equal.shape[1] > 1:
        if equal.shape[1] % 2:
            equal = np.concatenate([equal, auth.public(1, (1,) + equal.shape[2:], wide=True)], axis=1)
        equal = auth.multiply(equal[:, 0::2], equal[:, 1::2], kind)
    return equal[:, 0]


def bits_of(auth, x: np.ndarray, bits: int, kind: str = "comparison") -> np.ndarray:
    """[x_b] (1 + keys, bits, n), the bits of a wide authenticated 0 <= x < 2^bits (1 + keys, n), least significant
    first: c = x + R opened (uniform), x = (c - R) mod 4^D for D = ceil(bits / 2) digits, each digit of x
    (c_j - R_j - b_j) mod 4 with the borrow b_j = [c mod 4^j < R mod 4^j] into it: b_0 = 0, b_(j+1) = [R_j > c_j] +
    [R_j = c_j] b_j (a ripple of D - 1 products, D - 1 rounds: fewer products than a parallel prefix, which the
    many lanes make the cost); a digit's one-hot vector without the borrow is the dealer's rotated by c_j (linear),
    and each of its two bits is that without the borrow or that of the digit less one, chosen by one product."""
    digits = -(-bits // DIGIT_BITS)
    if DIGIT_BITS * digits > auth.wide_bits:
        raise ValueError(f"the bits of {bits}-bit values need {DIGIT_BITS * digits}-bit wide values; these have "
                         f"{auth.wide_bits}")
    _, c, onehot = _masked(auth, x, digits, kind)
    greater, equal = _digit_tests(auth, onehot, c)
    borrows = [np.zeros_like(greater[:, 0])]
    for j in range(digits - 1):
        borrows.append(greater[:, j] + (auth.multiply(equal[:, j], borrows[-1], kind) if j else 0))
    borrow = np.stack(borrows, axis=1)  # (1 + keys, D, n)
    full = np.concatenate([auth.add_public(-onehot.sum(axis=2, keepdims=True), 1), onehot], axis=2)  # e_{j,0..3}
    digit = _digits(c, digits)
    rotated = np.take_along_axis(full, np.broadcast_to(((digit[:, None] - np.arange(4)[:, None]) & 3)[None],
                                                       full.shape), axis=2)  # o_v = e_{j,(c_j - v) mod 4}: d = c - R
    plain = np.stack([rotated[:, :, 1] + rotated[:, :, 3], rotated[:, :, 2] + rotated[:, :, 3]], axis=1)
    less = np.stack([rotated[:, :, 0] + rotated[:, :, 2], rotated[:, :, 0] + rotated[:, :, 3]], axis=1)  # of d - 1
    chosen = plain + auth.multiply(np.stack([borrow] * 2, axis=1), less - plain, kind)  # (1 + keys, 2, D, n)
    return chosen.transpose(0, 2, 1, 3).reshape(len(x), DIGIT_BITS * digits, -1)[:, :bits]


def _masked(auth, x: np.ndarray, digits: int, kind: str) -> tuple:
    """(the dealer's comparison mask (1 + keys, 2 + 3D, n), c = x + R opened, e_{j,1..3} (1 + keys, D, 3, n)) for
    an authenticated x (narrow or wide: c is recorded with x's MACs)."""
    n = x.shape[-1]
    mask, _ = auth.correlation("digits", (2 + 3 * digits, n), wide=True)
    c = auth.open(x + mask[:len(x), 0], f"masked {kind}")
    return mask, c, mask[:, 2:].reshape(len(mask), digits, 3, n)


def _digits(c: np.ndarray, digits: int) -> np.ndarray:
    """The low ``digits`` 2-bit digits (D, n) of the opened words c, least significant first."""
    return (c[None, :] >> (DIGIT_BITS * np.arange(digits, dtype=np.int64))[:, None]) & 3


def _digit_tests(auth, onehot: np.ndarray, c: np.ndarray) -> tuple:
    """([R_j > c_j], [R_j = c_j]) (1 + keys, D, n) for the dealer's e_{j,1..3} and the opened c: linear in e_j (c is
    public), e_{j,0} = 1 - sum_u e_{j,u}."""
    c_digits = _digits(c, onehot.shape[1])
    zero = c_digits == 0
    greater, equal = np.zeros_like(onehot[:, :, 0]), np.zeros_like(onehot[:, :, 0])
    for u in range(1, 4):  # [R_j > c_j] = sum_{u > c_j} e_{j,u}; [R_j = c_j] = e_{j,c_j}
        greater += onehot[:, :, u - 1] * (u > c_digits)
        equal += onehot[:, :, u - 1] * ((c_digits == u).astype(np.int64) - zero)
    return greater, auth.add_public(equal, zero.astype(np.int64))


def comparison_bits(bits: int) -> int:
    """The wide values' bits a comparison of ``bits``-bit values needs: L + 1, L = ``bits`` rounded up to even."""
    return DIGIT_BITS * -(-bits // DIGIT_BITS) + 1


def _joined(auth, greater: np.ndarray, equal: np.ndarray, kind: str) -> np.ndarray:
    """[R > c] (1 + keys, n) from the digits' (1 + keys, D, n) [R_j > c_j] and [R_j = c_j], least significant
    first: the tree of joins (module docstring)."""
    while greater.shape[1] > 1:
        if greater.shape[1] % 2:  # a lowest digit that never decides: gt 0, eq 1
            greater = np.concatenate([np.zeros_like(greater[:, :1]), greater], axis=1)
            equal = np.concatenate([auth.public(1, (1,) + equal.shape[2:], wide=True), equal], axis=1)
        joined = auth.multiply(np.stack([equal[:, 1::2], equal[:, 1::2]], axis=1),
                               np.stack([greater[:, 0::2], equal[:, 0::2]], axis=1), kind)
        greater, equal = greater[:, 1::2] + joined[:, 0], joined[:, 1]
    return greater[:, 0]


def decimal_round(auth, a: np.ndarray, b: int, decimals: int, kind: str = "comparison") -> np.ndarray:
    """[round(a / b 10^K)] (1 + keys, 1), halves rounded up, for a wide [a] (1 + keys, 1) with 0 <= a <= b and a
    public b >= 1: circuits.division.decimal_round's long division with the divisor public, each decimal digit
    d = #{v in 1..9: 10 r >= v b} (nine comparisons at once) and r <- 10 r - d b linear, then + [2 r >= b]: K + 1
    comparison rounds.  The values compared stay below 10 b in magnitude (:func:`rounding_bits`)."""
    bits = (10 * int(b)).bit_length()
    remainder, quotient = a, np.zeros_like(a)
    for _ in range(decimals):
        remainder, digit = _quotient_digit(auth, 10 * remainder, b, 10, bits, kind)
        quotient = 10 * quotient + digit
    return quotient + nonnegative(auth, auth.add_public(2 * remainder, -int(b)), bits, kind)


def divide(auth, a: np.ndarray, b, bits: int, digit_bits: int, bound: int, kind: str = "comparison",
           whole: bool = True) -> tuple:
    """([floor(a 2^bits / b)], [the remainder a 2^bits - q b]) (1 + keys, n) each, for a wide [a] (1 + keys, n) and
    a divisor b, a wide [b] (1 + keys, n) or a public int, with 0 <= a <= b and 1 <= b <= ``bound`` (public):
    circuits.division's restoring long division, the whole part [a >= b] first (``whole`` False: a < b is known,
    none), then a quotient digit of ``digit_bits`` bits a round, d = #{v in 1..2^D - 1: 2^D r >= v b} (2^D - 1
    comparisons at once, the multiples v b linear) and r <- 2^D r - d b (one product, none for a public b).  Every
    value compared stays below 2^D ``bound`` in magnitude (:func:`division_bits`); the quotient is exact, the integer
    circuits.division opens, and dividing the remainder on continues it: floor(a 2^(h + l) / b) = q_h 2^l +
    floor(r_h 2^l / b).  floor(a / b) for a <= b 2^h is the quotient by the public b 2^h to h bits."""
    radices = [1 << min(digit_bits, bits - done) for done in range(0, bits, digit_bits)]
    width = _compared_bits(bound, digit_bits)
    remainder, quotient = a, np.zeros_like(a)
    if whole:
        quotient = nonnegative(auth, a - b if isinstance(b, np.ndarray) else auth.add_public(a, -int(b)), width, kind)
        remainder = a - _times(auth, quotient, b, kind)
    for radix in radices:
        remainder, digit = _quotient_digit(auth, radix * remainder, b, radix, width, kind)
        quotient = radix * quotient + digit
    return quotient, remainder


def fed_division(auth, remainder: np.ndarray, b, feeds: list, most: int, bound: int, kind: str = "comparison",
                 digit_bits: int = 4) -> tuple:
    """([d_1, ..., d_R] (R, 1 + keys, n), the remainder) of R rounds of a restoring long division in radix 2^D whose
    numerator's next digits are fed in: r <- 2^D r + f_i, d_i = #{v in 1..``most``: r >= v b}, r <- r - d_i b, from a
    wide remainder 0 <= r < b, for wide feeds f_i (``feeds``: R arrays (1 + keys, n)) and a divisor b, a wide [b] or
    a public int, 1 <= b <= ``bound``.  With N the numerator whose digits are the remainder and then the feeds,
    sum_i d_i 2^(D (R - i)) = floor(N / b) exactly (r < b after every round), also when a feed is not below 2^D: then a
    digit may exceed 2^D - 1, and ``most`` must bound floor((2^D (b - 1) + f_i) / b).  Every value compared stays
    below (most + 1) ``bound`` in magnitude (:func:`fed_division_bits`)."""
    width = ((most + 1) * int(bound)).bit_length()
    digits = []
    for feed in feeds:
        remainder, digit = _quotient_digit(auth, (1 << digit_bits) * remainder + feed, b, most + 1, width, kind)
        digits.append(digit)
    return np.stack(digits), remainder


def fed_division_bits(bound: int, most: int) -> int:
    """The wide values' bits :func:`fed_division` needs for divisors up to ``bound`` and digits up to ``most``."""
    return comparison_bits(((most + 1) * int(bound)).bit_length())


def _times(auth, x: np.ndarray, b, kind: str) -> np.ndarray:
    """[x b] for a wide [b] (a product) or a public int b (linear)."""
    return auth.multiply(x, b, kind) if isinstance(b, np.ndarray) else x * np.int64(b)


def division_bits(bound: int, digit_bits: int) -> int:
    """The wide values' bits :func:`divide` needs for divisors up to ``bound``: its comparisons', of values below
    2^D ``bound`` in magnitude (the quotient's own bits are the caller's)."""
    return comparison_bits(_compared_bits(bound, digit_bits))


def _compared_bits(bound: int, digit_bits: int) -> int:
    """The magnitude bits of the values :func:`divide` compares: below 2^D ``bound``."""
    return ((1 << digit_bits) * int(bound)).bit_length()


def _quotient_digit(auth, remainder: np.ndarray, b, radix: int, bits: int, kind: str) -> tuple:
    """(r - d b, d) for the digit d = #{v in 1..radix - 1: r >= v b} of a long division step, r (1 + keys, n) the
    remainder already scaled by the radix; b a public int or a wide [b] (1 + keys, n) (then d b is a product)."""
    rows, n = remainder.shape
    multiples = np.arange(1, radix, dtype=np.int64)
    if isinstance(b, np.ndarray):
        gaps = (remainder[:, :, None] - b[:, :, None] * multiples).reshape(rows, -1)
    else:
        gaps = auth.add_public(np.repeat(remainder, radix - 1, axis=-1), -np.tile(multiples * np.int64(b), n))
    digit = nonnegative(auth, gaps, bits, kind).reshape(rows, n, radix - 1).sum(axis=-1)
    return remainder - _times(auth, digit, b, kind), digit


def rounding_bits(b: int, decimals: int) -> int:
    """The wide values' bits :func:`decimal_round` needs for divisors up to ``b``: its comparisons' and the
    quotient's, up to 10^K."""
    return max(comparison_bits((10 * int(b)).bit_length()), (10 ** decimals).bit_length())


def maximum(auth, values: np.ndarray, bits: int, kind: str = "comparison") -> np.ndarray:
    """[max_i v_i] (1 + keys, 1) of wide authenticated values (1 + keys, n) whose pairwise differences are below
    2^bits in magnitude: a tournament of ceil(log2 n) levels (module docstring), each level's comparisons in batches
    (:func:`signs`)."""
    while values.shape[-1] > 1:
        if values.shape[-1] % 2:
            values = np.concatenate([values, values[:, -1:]], axis=-1)
        gaps = values[:, 0::2] - values[:, 1::2]
        values = values[:, 1::2] + auth.multiply(signs(auth, gaps, bits, kind), gaps, kind)
    return values


def signs(auth, x: np.ndarray, bits: int, kind: str = "comparison") -> np.ndarray:
    """[x >= 0] (1 + keys, n) as :func:`nonnegative`, :func:`in_batches`."""
    return in_batches(auth, lambda part, _: nonnegative(auth, part, bits, kind), x, kind)


def in_batches(auth, step, x: np.ndarray, kind: str) -> np.ndarray:
    """step(part, columns) over the columns of x (..., n) in batches of :data:`BATCH` (memory, not rounds, bounds a
    batch; ``columns`` the batch's slice of 0..n-1), its outputs joined along the last axis, a batch of BATCH / 4 or
    more ending with a MAC check (the openings a check keeps, about 3 kB a comparison, would otherwise wait for the
    release's); the openings go on under the caller's phase."""
    out, n = [], x.shape[-1]
    for start in range(0, n, BATCH):
        columns = slice(start, min(n, start + BATCH))
        out.append(step(x[..., columns], columns))
        if columns.stop - start >= BATCH // 4:
            phase = auth.phase
            auth.check(kind)
            auth.phase = phase
    return np.concatenate(out, axis=-1)
