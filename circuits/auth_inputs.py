"""A client's shares entering authenticated (circuits.macs), and the checks of what they hold.

A compute party holds only its additive share of a client's values; authenticating that share itself (SPDZ's
input by its owner) would let a deviating party enter another share unseen.  So the client binds its values
with a MAC of its own: it draws a key beta (64 bits, ``secrets``) and shares, besides x, the words
y_j = beta x_j (mod 2^64) and beta itself.  Each party enters its shares of x, y and beta as their owner
(Authenticator.input), and the parties check, with coefficients chi_j from a coin tossed after every share
is in,

    Z = sum_j chi_j y_j - beta sum_j chi_j x_j = 0     (one Beaver product, Z opened).

A party that enters x_p + e in place of x_p (or changes y_p or beta_p along) makes Z = beta (sum_j chi_j e_j)
plus terms it cannot compute without beta and the other party's shares, so it would have to guess a value
with 64 - v unknown bits (v the 2-adic valuation of sum_j chi_j e_j, below k for an error that changes a
k-bit value): probability at most 2^-(64 - k) = 2^-s.  Z = 0 opens nothing.  The parties cannot tell a client
that shared y != beta x from a party that changed its share: a failed check names the client and stops the
job (as security with abort allows).

Validity (circuits.validity's rules on authenticated shares): labels are bits, y (1 - y) = 0, checked as one
random combination sum_j chi_j y_j (1 - y_j) = 0 of the products, opened; the key's 2-bit digits need no
check (the sort reads each digit modulo 4 through its one-hot rotation, circuits.auth_radix).
"""
import numpy as np

from .macs import Deviation


def client_values(auth, shares, n: int, client: str, wide: bool = False) -> np.ndarray:
    """The authenticated (1 + MACs, n) values of one client, from this party's shares (x_p (n,), y_p (n,),
    beta_p): each party enters its own, then the MAC of the client is checked (raises :class:`Deviation`)."""
    x_p, y_p, beta_p = shares
    entered = [[auth.input(v if auth.rank == owner else None, owner, shape, wide)
                for owner in (0, 1)] for v, shape in ((x_p, (n,)), (y_p, (n,)), (beta_p, (1,)))]
    x, y, beta = (own + other for own, other in entered)
    auth.phase = f"the input check of client {client}"
    chi = auth.coin((n,), auth.phase).view(np.int64)
    combined = np.stack([(y * chi).sum(axis=-1), (x * chi).sum(axis=-1)], axis=-1)[..., None]  # (rows, 2, 1)
    z = combined[:, 0] - auth.multiply(beta, combined[:, 1], "input MAC product")
    if auth.open(z, "input MAC")[0]:
        auth.check(auth.phase)  # a wrong opening of Z is a deviation the MAC check names
        raise auth.fail(Deviation(f"the shares of client {client} fail their MAC check", auth.phase,
                                  "the client or a compute party deviated"))
    return x


def labels_are_bits(auth, labels: np.ndarray, client: str) -> None:
    """Check that every authenticated label is 0 or 1: sum_j chi_j y_j (1 - y_j) = 0; if not, a MAC check
    first (a deviating party is named as such), then :class:`InvalidClient` naming the client."""
    auth.phase = f"the label check of client {client}"
    chi = auth.coin(labels.shape[1:], auth.phase).view(np.int64)
    products = auth.multiply(labels, auth.add_public(-labels, 1), "label products")
    if auth.open((products * chi).sum(axis=-1)[:, None], "label check")[0]:
        auth.check(auth.phase)  # first: a party that bent the product or the opening is caught as such
        raise InvalidClient(f"client {client} has a label that is neither 0 nor 1")


class InvalidClient(ValueError):
    """A client's authenticated values break the input's rules (its own doing: the MACs held)."""
