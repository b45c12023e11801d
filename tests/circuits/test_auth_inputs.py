"""Clients' shares entering authenticated (circuits.auth_inputs): a party that enters another share is caught by
the client's MAC, a client whose MAC words do not match is named, a label that is not a bit is refused; the
weakened variants (a party's share entered without the client's MAC, no label check) let a wrong value through.
P0, P1 and the dealer over TCP."""
import numpy as np

from mpc_auc.protocols.runtime.session import run_parties

N = 50
RING = 1 << 64


def _client(seed: int, values, broken_mac: bool = False):
    """A client's sharing of ``values`` with its MAC words: per party (x_p, y_p, beta_p), additive mod 2^64
    (test data from a fixed generator, so that both party processes rebuild the same sharing)."""
    rng = np.random.default_rng(seed)
    x = np.asarray(values, dtype=np.int64)
    beta = rng.integers(-2 ** 63, 2 ** 63, 1, dtype=np.int64)
    y = x * beta[0]
    if broken_mac:
        y[3] += 1
    parts = []
    for whole in (x, y, beta):
        share = rng.integers(-2 ** 63, 2 ** 63, whole.shape, dtype=np.int64)
        parts.append((share, whole - share))
    return [tuple(part[p] for part in parts) for p in (0, 1)]


def _party(ctx, runs):
    from mpc_auc.circuits.auth_inputs import InvalidClient, client_values, labels_are_bits
    from mpc_auc.circuits.macs import Authenticator, Deviation

    auth = Authenticator(ctx.stream_key, 16, 20)
    out = []
    for values, substitute, broken_mac, wide, check_labels, macs in runs:
        if auth.failed:  # caught: new MAC keys for the next run
            auth = Authenticator(ctx.stream_key, 16, 20)
        x_p, y_p, beta_p = _client(len(out), values, broken_mac)[ctx.rank]
        if substitute == ctx.rank:  # this party enters another share of element 7
            x_p = x_p.copy()
            x_p[7] += 5
        try:
            if macs:
                entered = client_values(auth, (x_p, y_p, beta_p), N, "north", wide)
            else:  # the weakened variant: each party's share entered as its owner's input, no client MAC
                entered = sum(auth.input(x_p if ctx.rank == owner else None, owner, (N,), wide) for owner in (0, 1))
            if check_labels:
                labels_are_bits(auth, entered, "north")
            out.append(auth.release(entered, "values"))
        except (Deviation, InvalidClient) as failure:
            out.append(str(failure))
    return out


def test_client_inputs_enter_authenticated_and_a_substituted_share_is_caught():
    values = np.arange(N) % 2
    big = np.arange(N) * 1000
    runs = [(values, None, False, True, True, True),  # honest, wide (labels)
            (big, None, False, False, False, True),  # honest, narrow values below 2^16 = 2^k
            (values, 0, False, True, True, True), (values, 1, False, False, False, True),  # a party substitutes
            (values, 1, False, False, False, False),  # ... without the client's MAC: gets through
            (values, None, True, True, False, True),  # the client's MAC words do not match
            (np.where(np.arange(N) == 9, 2, values), None, False, True, True, True),  # a label of 2
            (np.where(np.arange(N) == 9, 2, values), None, False, True, False, True)]  # ... unchecked
    p0, p1 = run_parties(_party, (runs,))
    for seen in (p0, p1):
        np.testing.assert_array_equal(seen[0], values)
        np.testing.assert_array_equal(seen[1], big)
        for n in (2, 3):
            assert "the shares of client north fail their MAC check: the client or a compute party deviated" \
                   in seen[n]
        wrong = values.copy()
        wrong[7] += 5
        np.testing.assert_array_equal(seen[4], wrong)  # the weakened variant: the substituted value is entered
        assert "fail their MAC check" in seen[5]
        assert seen[6] == "client north has a label that is neither 0 nor 1"
        assert seen[7][9] == 2  # unchecked, the label of 2 is entered


def test_an_unchecked_label_outside_0_1_bends_the_rank_sums():
    """Why the label check is there: one label of 1000 entered unchecked counts 1,010 positives among 20 rows
    (and the sums wrap at their width)."""
    (w, n1), _ = run_parties(_bent_sums, (1000,))
    assert n1 == 1010


def _bent_sums(ctx, label):
    from mpc_auc.circuits.auth_auc import rank_sums, wide_bits
    from mpc_auc.circuits.auth_radix import AuthRadixRanking
    from mpc_auc.circuits.macs import Authenticator, value_bits

    m = 20
    labels = np.arange(m) % 2
    labels[0] = label
    keys = np.arange(m)
    auth = Authenticator(ctx.stream_key, value_bits(m), wide_bits(m))
    digits = np.stack([auth.input((keys >> t) & 3 if ctx.rank == 0 else None, 0, (m,)) for t in range(0, 6, 2)])
    wide = auth.input(labels if ctx.rank == 0 else None, 0, (m,), wide=True)
    w, n1 = rank_sums(AuthRadixRanking(auth=auth, shuffler=_shuffler(ctx)), digits, wide)
    return tuple(int(v) for v in auth.release(np.stack([w, n1], axis=1), "rank sums"))


def _shuffler(ctx):
    from mpc_auc.circuits.shuffle import Shuffler

    return Shuffler(ctx.stream_key)
