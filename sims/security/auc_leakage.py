"""What an opened exact AUC reveals beyond itself: the class counts {P, N}.

mpc-exact opens floor(AUC * 2^52) with AUC = 2U / 2PN, a fraction whose
denominator is at most M^2/2 < 2^26 for M below 2^13.5 and well under 2^52
for any M this project runs.  Anyone who knows M (public) can test every
split P + N = M: a split is consistent when some integer 2U in [0, 2PN]
gives the same 52-bit floor.  For random data one split is left in most
sets (the red team's attack); opened rounded to k decimals instead
(``--auc-decimals``), the AUC is consistent with most splits whenever
10^-k is far wider than 1/(PN).

:func:`consistent_splits` is the attack; docs/protocols/mpc-exact.md states
the result and tests/protocols/mpc/test_auc_leakage.py measures it.
"""


def opened_exact(twice_u: int, twice_pn: int, fraction_bits: int = 52) -> int:
    """What mpc-exact opens by default: floor(2U / 2PN * 2^bits) (circuits.division.fraction_bits)."""
    return (twice_u << fraction_bits) // twice_pn


def opened_rounded(twice_u: int, twice_pn: int, decimals: int) -> int:
    """What mpc-exact opens with --auc-decimals k: round(2U / 2PN * 10^k), halves up (decimal_round)."""
    return (2 * twice_u * 10 ** decimals + twice_pn) // (2 * twice_pn)


def consistent_splits(opened: int, m: int, fraction_bits: int = 52, decimals: int = None) -> list:
    """Every P <= M/2 such that some 2U in [0, 2P(M-P)] opens to ``opened`` (P and M - P give the same AUC)."""
    found = []
    for p in range(1, m // 2 + 1):
        twice_pn = 2 * p * (m - p)
        if decimals is None:  # the smallest 2U with floor(2U 2^bits / 2PN) >= opened, then is it equal?
            twice_u = -((-opened * twice_pn) >> fraction_bits)
            hit = opened_exact(twice_u, twice_pn, fraction_bits) == opened
        else:  # the smallest 2U whose rounding reaches the opened value
            twice_u = max(0, -(-((2 * opened - 1) * twice_pn) // (2 * 10 ** decimals)))
            hit = opened_rounded(twice_u, twice_pn, decimals) == opened
        if hit and twice_u <= twice_pn:
            found.append(p)
    return found
