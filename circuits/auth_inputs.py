"""Clients' shares entering authenticated (circuits.macs), and the checks of what they hold.

A compute party holds only its additive share of a client's values; authenticating that share itself (SPDZ's
input by its owner) would let a deviating party enter another share unseen.  So each client binds its values
with MACs of its own: it draws keys beta_0..beta_3 (protocols.inputs.bundles.CLIENT_MAC_KEYS, 64 bits each,
``secrets``) and shares, besides its values x (the key's 2-bit digits and the label), the words y = beta_0 x of
every value and beta_i x of the label for i = 1..3; the betas it seals to the dealer, the same sealed bytes in
both parties' bundles.  Each party enters its shares of x and y as their owner (Authenticator.input: the digits
narrow, the label wide); the betas enter from the dealer (Authenticator.client_keys), which opens them only if
both parties forwarded the same sealed bytes, and authenticates them under the job's MAC key.  The parties
check, with coefficients chi from a coin tossed after every share is in, per client c and key i

    Z_ci = sum_j chi_j y_ij - beta_i sum_j chi_j x_j = 0     (one Beaver product each, Z opened),

the sums over the client's rows and the values key i covers (the products' Beaver openings checked before Z
is opened).  A party that enters x_p + e in place of x_p (or changes y_p by d along) makes Z_ci = sum_j chi_j
d_j - beta_i (sum_j chi_j e_j): it chose e and d, so an opened Z says nothing of the client's values, only of
beta_i, a key of this submission alone that the aborted job never uses again.  To pass, it would have to guess
beta_i (sum chi_j e_j) mod 2^64, a word with 64 - v unknown bits (v the 2-adic valuation of sum chi_j e_j;
the MAC check of the opening holds Z to its value mod 2^k only, but the honest party asks every opened word to
be 0).  An error that changes a digit has v < k: at most 2^-(64 - k) = 2^-s.  An error that changes the label
has v < w, w the wide values' width (circuits.auth_auc.wide_bits; mpc-central's release can make it wider,
protocols.mpc.malicious.release_bits): each of the four keys leaves 2^-(64 - w), together at most 2^-4(64 - w)
(2^-100 at 458,407 rows, 2^-64 at 2^23).  Where w is wider still, the label check below narrows what is left: a
label that passes it is 0 or 1 mod 2^w, so its error is 0 mod 2^w (harmless: every use reads it mod 2^w) or odd
(v = 0, a guess of 64 bits per key).  Z = 0 opens nothing.  Had the betas
entered from the parties' shares (as until this version), a party entering beta_p + b would have made Z_ci =
-b sum_j chi_j x_j, a combination of the client's values it reads when the job aborts (the weakened variant in
tests/circuits/test_auth_inputs.py).  The parties cannot tell a client that shared y != beta x from a party
that changed its share: a failed check names the client and stops the job (as security with abort allows).  A
client whose sealed keys do not open at the dealer (not sealed to it, or for another job or name) is flagged:
it is invalid, and nothing of its MACs is opened (its keys are then 0, and its Z would be its MAC words), nor of
its rows (protocols.mpc.malicious checks only the other clients' labels: a party may bend a flagged client's
shares unseen, which an opened label product would then show).

Validity (circuits.validity's rules on authenticated shares): each label is a bit, y (1 - y) = 0 mod 2^w
(the width W is opened at: a label 1 + 2^k would pass a check mod 2^k and bend W), checked per row by opening
the product mod 2^w (Authenticator.open_small: a valid row opens 0 and its upper bits are masked), so that the
check is exact, not a random combination a deviating party could cancel mod 2^w; the same for the key's top
digit when the key has an odd number of bits (it must be 0 or 1).  The other digits need no check: the sort
reads each modulo 4 through its one-hot rotation (circuits.auth_radix), and any value is a key then.
"""
import numpy as np

from .macs import Deviation


def client_values(auth, clients, digits: int):
    """([digits] (D, 2, N) narrow, [labels] (1 + keys, N) wide, [beta] (2, K, C) narrow, flagged (C,) bool): the
    clients' rows side by side, their MAC keys from the dealer and the clients whose keys the dealer could not
    open, from this party's shares: per client (name, x_p (D + 1, n), y_p (D + K, n), its sealed keys
    (associated data, bytes)), K its MAC keys (key 0 over every value, keys 1..K-1 over the label).  The MACs of
    every client not flagged are checked (raises :class:`Deviation` naming the clients)."""
    names, sizes, keys = [c[0] for c in clients], [c[1].shape[1] for c in clients], clients[0][2].shape[0] - digits
    n = sum(sizes)

    def entered(values, shape, wide=False):
        return sum(auth.input(values if auth.rank == owner else None, owner, shape, wide) for owner in (0, 1))

    auth.phase = f"the input of client(s) {', '.join(names)}"
    betas, flagged = auth.client_keys([c[3] for c in clients], keys)
    x = np.concatenate([c[1] for c in clients], axis=1)
    y = np.concatenate([c[2] for c in clients], axis=1)
    key_digits = entered(x[:digits], (digits, n))
    labels = entered(x[digits], (n,), wide=True)
    macs = entered(y, (digits + keys, n))
    auth.phase = f"the input check of client(s) {', '.join(names)}"
    chi = auth.coin((digits + keys, n), auth.phase).view(np.int64)
    covered = np.concatenate([key_digits, np.repeat(labels[:2, None], keys, axis=1)], axis=1)
    starts = np.cumsum([0] + sizes[:-1])
    combined = [_per_key(np.add.reduceat(v * chi, starts, axis=-1), digits) for v in (macs, covered)]
    z = combined[0] - auth.multiply(betas, combined[1], "input MAC products")
    auth.check(auth.phase)  # before Z is opened: a bent Beaver opening would make Z a sum of the client's values
    checked = [name for name, bad in zip(names, flagged) if not bad]
    opened = auth.open(z[..., ~flagged], "input MACs").any(axis=0) if checked else []
    failed = [name for name, bad in zip(checked, opened) if bad]
    if failed:
        auth.check(auth.phase)  # a wrong opening of Z is a deviation the MAC check names
        raise auth.fail(Deviation(f"the shares of client(s) {', '.join(failed)} fail their MAC check", auth.phase,
                                  "the client or a compute party deviated"))
    return np.moveaxis(key_digits, 1, 0), labels, betas, flagged


def _per_key(sums: np.ndarray, digits: int) -> np.ndarray:
    """(2, K, C) per-client sums per client key: key 0 over every value row (the digits and the label),
    key i >= 1 over its own row of the label."""
    return np.concatenate([sums[:, :digits + 1].sum(axis=1, keepdims=True), sums[:, digits + 1:]], axis=1)


def invalid_rows(auth, labels: np.ndarray, top_digit: np.ndarray = None) -> np.ndarray:
    """The rows whose label (wide) is not 0 or 1 mod 2^w, or whose ``top_digit`` (narrow, when given) is not 0 or
    1, as a boolean (N,): each product y (1 - y) opened mod its width after a MAC check of the products' Beaver
    openings (a bent one would open 1 - y: every label), and checked again when a row is bad, so that a party that
    bent the opening is named (:class:`Deviation`)."""
    auth.phase = "the check that labels are bits"
    products = [auth.multiply(labels, auth.add_public(-labels, 1), "label products")]
    if top_digit is not None:
        products.append(auth.multiply(top_digit, auth.add_public(-top_digit, 1), "top digit products"))
    auth.check(auth.phase)  # before any product is opened: they are not masked by fresh randomness
    bad = np.zeros(labels.shape[-1], dtype=bool)
    for product in products:
        bad |= auth.open_small(product, "label and top digit check") != 0
    if bad.any():
        auth.check(auth.phase)  # a party that bent an opening is caught as such
    return bad
