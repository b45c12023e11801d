"""Clients' shares entering authenticated (circuits.auth_inputs): a party that enters another share is caught by
the client's MACs, a client whose MAC words do not match is named, one whose sealed keys do not open is flagged,
a label that is not a bit mod the rank sums' width is flagged; the weakened variants (a party's share entered
without the client's MACs, a label check mod 2^k, the clients' keys entered from the parties' shares) let a wrong
value through or open a client's values.  P0, P1 and the dealer over TCP; the clients' sharing is
protocols.inputs.bundles.seal_authenticated's layout, made here from a fixed generator so that both party
processes rebuild it (the keys sealed to the dealer by P0, which hands P1 the same bytes, as a client's two
bundles carry them)."""
import numpy as np

from mpc_auc.protocols.inputs.bundles import CLIENT_MAC_KEYS, JobId, client_keys_aad
from mpc_auc.protocols.runtime.session import run_parties

N, K, WIDE = 50, 16, 20  # rows per client, the values' bits, the labels' width
NAMES = ("north", "south")
JOB = JobId("auth-inputs", bytes(32))


def _client(seed: int, digits, labels, broken_mac: bool = False):
    """A client's sharing of its digit row and labels with its MAC words: per party (x_p (2, N), y_p (1 + K, N),
    beta_p (K,)), additive mod 2^64, and its keys beta."""
    rng = np.random.default_rng(seed)
    x = np.stack([np.asarray(digits, dtype=np.int64), np.asarray(labels, dtype=np.int64)])
    beta = rng.integers(-2 ** 63, 2 ** 63, CLIENT_MAC_KEYS, dtype=np.int64)
    y = np.concatenate([x * beta[0], x[1:] * beta[1:, None]])
    if broken_mac:
        y[1, 3] += 1
    parts = []
    for whole in (x, y, beta):
        share = rng.integers(-2 ** 63, 2 ** 63, whole.shape, dtype=np.int64)
        parts.append((share, whole - share))
    return [tuple(part[p] for part in parts) for p in (0, 1)], beta


def _sealed_keys(ctx, betas: list, wrong_job: bool = False) -> list:
    """Each client's keys sealed to the dealer (south's for another job if ``wrong_job``: they do not open), the
    same bytes at both parties (P0 seals them and sends them to P1)."""
    from mpc_auc.circuits.crypten_compat import crypten
    from mpc_auc.protocols.runtime.sealing import seal

    comm = crypten.communicator.get()
    aads = [client_keys_aad(JOB, name) for name in NAMES]
    if ctx.rank == 1:
        return comm.recv_obj(0)
    dealer = ctx.deployment.dealer_seal_key()
    sealed = [(aad, seal(dealer, beta.tobytes(), client_keys_aad(JobId("another", bytes(32)), name)
                         if wrong_job and name == "south" else aad)) for aad, beta, name in zip(aads, betas, NAMES)]
    comm.send_obj(sealed, 1)
    return sealed


def _entered(ctx, auth, run, seed):
    """Both clients' rows entered (south's changed as ``run`` says), as the job enters them or, weakened, each
    party's share as its own input with no client MAC: ([digits], [labels], flagged clients)."""
    from mpc_auc.circuits.auth_inputs import client_values

    labels, substitute, broken_mac, macs, wrong_keys = run
    honest = np.arange(N) % 2
    clients, betas = [], []
    for c, name in enumerate(NAMES):
        shares, beta = _client(seed + c, np.arange(N) % 4, labels if c else honest, broken_mac and c)
        x_p, y_p, _ = shares[ctx.rank]
        if substitute == ctx.rank and c:  # this party enters another share of south's label 7
            x_p = x_p.copy()
            x_p[1, 7] += 5
        clients.append((name, x_p, y_p))
        betas.append(beta)
    if macs:
        sealed = _sealed_keys(ctx, betas, wrong_keys)
        digits, wide, _, flagged = client_values(auth, [c + (k,) for c, k in zip(clients, sealed)], 1)
        return digits, wide, [name for name, bad in zip(NAMES, flagged) if bad]
    x = np.concatenate([x_p for _, x_p, _ in clients], axis=1)
    digits = sum(auth.input(x[:1] if ctx.rank == owner else None, owner, (1, 2 * N)) for owner in (0, 1))
    wide = sum(auth.input(x[1] if ctx.rank == owner else None, owner, (2 * N,), True) for owner in (0, 1))
    return np.moveaxis(digits, 1, 0), wide, []


def _party(ctx, runs):
    from mpc_auc.circuits.auth_inputs import invalid_rows
    from mpc_auc.circuits.macs import Authenticator, Deviation

    auth = Authenticator(ctx.stream_key, K, WIDE)
    out = []
    for n, (run, narrow_check) in enumerate(runs):
        if auth.failed:  # caught: new MAC keys for the next run
            auth = Authenticator(ctx.stream_key, K, WIDE)
        try:
            digits, labels, flagged = _entered(ctx, auth, run, 10 * n)
            if narrow_check:  # the weakened variant: labels checked mod 2^k only (their first MAC)
                bad = invalid_rows(auth, labels[:2])
            else:
                bad = invalid_rows(auth, labels)
            out.append((np.flatnonzero(bad).tolist(), auth.release(digits[0], "digits").tolist(),
                        auth.release(labels, "labels").tolist(), flagged))
        except Deviation as failure:
            out.append(str(failure))
    return out


def test_client_inputs_enter_authenticated_and_a_substituted_share_is_caught():
    labels = np.arange(N) % 2
    two = np.where(np.arange(N) == 9, 2, labels)
    lifted = np.where(np.arange(N) == 9, 1 + 2 ** K, labels)  # a bit mod 2^k, not mod 2^w: it would bend W
    runs = [((labels, None, False, True, False), False),  # honest
            ((labels, 0, False, True, False), False), ((labels, 1, False, True, False), False),  # a party substitutes
            ((labels, 1, False, False, False), False),  # ... without the clients' MACs: gets through
            ((labels, None, True, True, False), False),  # south's MAC words do not match
            ((two, None, False, True, False), False),  # a label of 2: flagged
            ((lifted, None, False, True, False), False),  # a label of 1 + 2^k: flagged mod 2^w
            ((lifted, None, False, True, False), True),  # ... and missed by a check mod 2^k
            ((labels, None, True, True, True), False)]  # keys sealed for another job: flagged, MACs not checked
    p0, p1 = run_parties(_party, (runs,))
    both = np.concatenate([labels, labels])
    for seen in (p0, p1):
        assert seen[0] == ([], (np.concatenate([np.arange(N), np.arange(N)]) % 4).tolist(), both.tolist(), [])
        for n in (1, 2, 4):
            assert seen[n] == ("the shares of client(s) south fail their MAC check: the client or a compute party "
                               "deviated; nothing is released")
        wrong = both.copy()
        wrong[N + 7] += 5
        assert seen[3][2] == wrong.tolist()  # the weakened variant: the substituted value is entered
        assert seen[5][0] == [N + 9] and seen[6][0] == [N + 9]  # south's row 9, named by its rows
        assert seen[7][0] == [] and seen[7][2][N + 9] == 1 + 2 ** K
        assert seen[8][3] == ["south"]  # its broken MAC word is not opened: the client is flagged instead


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
    auth = Authenticator(ctx.stream_key, value_bits(2 * m), wide_bits(m))
    digits = np.stack([auth.input((keys >> t) & 3 if ctx.rank == 0 else None, 0, (m,)) for t in range(0, 6, 2)])
    wide = auth.input(labels if ctx.rank == 0 else None, 0, (m,), wide=True)
    w, n1, _ = rank_sums(AuthRadixRanking(auth=auth, shuffler=_shuffler(ctx)), digits, wide)
    return tuple(int(v) for v in auth.release(np.stack([w, n1], axis=1), "rank sums"))


def _shuffler(ctx):
    from mpc_auc.circuits.shuffle import Shuffler

    return Shuffler(ctx.stream_key)


def _bent(ctx, auth, products: str, opened_kind: str, weakened: bool) -> list:
    """P1 adds 1 to its share of epsilon in the Beaver openings of ``products`` (so that what is then opened depends
    on the data); ``weakened``: the MAC checks skipped until something of ``opened_kind`` is opened (the order of
    checks before the review).  Returns the list the words opened as ``opened_kind`` are appended to."""
    opened, honest_open, honest_check = [], auth.open, auth.check

    def bent_open(x, kind):
        if ctx.rank == 1 and kind == products:
            x = x.copy()
            x[0, 0] += 1
        out = honest_open(x, kind)
        if kind == opened_kind:
            opened.append(out.tolist())
        return out

    auth.open = bent_open
    if weakened:
        auth.check = lambda phase: honest_check(phase) if opened else None
    return opened


def _bent_label_products(ctx, weakened: bool):
    """The label check with P1's bent label products (:func:`_bent`): each product opens as 1 - y."""
    from mpc_auc.circuits.auth_inputs import invalid_rows
    from mpc_auc.circuits.macs import Authenticator, Deviation

    auth = Authenticator(ctx.stream_key, K, WIDE)
    labels = auth.input((np.arange(N) % 3 == 0).astype(np.int64) if ctx.rank == 0 else None, 0, (N,), True)
    opened = _bent(ctx, auth, "label products", "label and top digit check", weakened)
    try:
        invalid_rows(auth, labels)
        return "not caught", opened
    except Deviation as failure:
        return str(failure), opened


def test_a_bent_label_product_is_caught_before_any_product_is_opened():
    """The review's attack: without the check before the opening, P1 reads 1 - y for every label before the job
    stops; with it, nothing is opened."""
    labels = (np.arange(N) % 3 == 0).astype(np.int64)
    for weakened in (False, True):
        (_, seen0), (stopped, seen1) = run_parties(_bent_label_products, (weakened,))
        assert "the MAC check after the check that labels are bits failed" in stopped
        if weakened:  # every label, read by the cheater (open_small keeps the low w bits)
            assert np.array_equal(1 - (np.asarray(seen1[0]) & ((1 << WIDE) - 1)), labels)
        else:
            assert seen0 == seen1 == []


def _bent_input_products(ctx, weakened: bool):
    """The input check with P1's bent products (:func:`_bent`): each Z opens as minus a sum of a client's values."""
    from mpc_auc.circuits.macs import Authenticator

    auth = Authenticator(ctx.stream_key, K, WIDE)
    return _honest_entry(ctx, auth, _bent(ctx, auth, "input MAC products", "input MACs", weakened))


def _honest_entry(ctx, auth, seen):
    """Both clients' honest rows entered (a cheat, if any, is the caller's): (how it ended, ``seen``)."""
    from mpc_auc.circuits.macs import Deviation

    try:
        _entered(ctx, auth, ((np.arange(N) % 2), None, False, True, False), 0)
        return "not caught", seen
    except Deviation as failure:
        return str(failure), seen


def test_a_bent_input_product_is_caught_before_z_is_opened():
    """The review's second attack: without the check before Z is opened, P1 reads Z = -(a sum of each client's
    values with coefficients it knows) before the job stops; with it, no Z is opened."""
    for weakened in (False, True):
        (_, seen0), (stopped, seen1) = run_parties(_bent_input_products, (weakened,))
        assert "a compute party deviated" in stopped
        assert (seen1 != [] and any(any(row) for row in seen1[0])) if weakened else seen0 == seen1 == []


def _bent_client_keys(ctx, weakened: bool):
    """The review's third attack: P1 adds 1 to its share of client north's key beta_0.  The real code: its share of
    the dealer's authenticated [beta] (it cannot change the dealer's MAC along); ``weakened``: the keys entered from
    the parties' own shares of them, as until this version (P1 enters beta_1 + 1).  Returns (how it ended, the Z
    words opened, the coin's coefficients)."""
    from mpc_auc.circuits.macs import Authenticator

    auth = Authenticator(ctx.stream_key, K, WIDE)
    honest_keys, honest_coin, honest_open = auth.client_keys, auth.coin, auth.open
    seen = {"z": [], "chi": []}

    def coin(shape, phase):
        words = honest_coin(shape, phase)
        seen["chi"].append(words.view(np.int64).tolist())
        return words

    def opened(x, kind):
        words = honest_open(x, kind)
        if kind == "input MACs":
            seen["z"].append(words.tolist())
        return words

    def keys(sealed, count):
        if weakened:
            own = np.stack([_client(c, np.arange(N) % 4, np.arange(N) % 2)[0][ctx.rank][2] for c in range(2)], axis=1)
            own[0, 0] += ctx.rank
            return sum(auth.input(own if ctx.rank == owner else None, owner, own.shape) for owner in (0, 1)), \
                np.zeros(2, dtype=bool)
        betas, flagged = honest_keys(sealed, count)
        betas[0, 0, 0] += ctx.rank
        return betas, flagged

    auth.client_keys, auth.coin, auth.open = keys, coin, opened
    return _honest_entry(ctx, auth, seen)


def test_a_party_cannot_choose_the_key_a_clients_macs_are_checked_under():
    """The review's third finding: with the clients' keys entered from the parties' shares, P1's beta_1 + 1 makes
    Z = -(a combination of north's digits and labels with coefficients both parties know), opened when the job
    aborts blaming the client; with the keys from the dealer, P1's changed share fails the MAC check before any Z
    is opened."""
    values = np.stack([np.arange(N) % 4, np.arange(N) % 2])  # north's digit row and labels
    for weakened in (False, True):
        (_, seen0), (stopped, seen1) = run_parties(_bent_client_keys, (weakened,))
        if weakened:
            chi = np.asarray(seen1["chi"][0], dtype=np.int64)
            read = -(chi[:2, :N] * values).sum()  # key 0 covers the digit row and the label
            assert stopped.startswith("the shares of client(s) north fail their MAC check")
            assert seen1["z"][0][0][0] == read  # what P1 learnt of north's values
        else:
            assert stopped.startswith("the MAC check after the input check of client(s) north, south failed")
            assert seen0["z"] == seen1["z"] == []


def _flagged_labels_read(ctx, weakened: bool):
    """The job's entry (protocols.mpc.malicious.AuthenticatedRows.enter) of north and south, whose keys do not open
    at the dealer (flagged), with P1 adding 1 to its share of every south label; ``weakened``: the label check run
    over every row, the flagged client's too (as before the review).  Returns (the clients named invalid, the
    words the label check opened)."""
    from types import SimpleNamespace

    from mpc_auc.circuits.macs import Authenticator
    from mpc_auc.protocols.inputs.bundles import AuthenticatedBundle
    from mpc_auc.protocols.mpc import malicious

    seen, real_open, real_values, real_invalid, entered = [], Authenticator.open_small, malicious.client_values, \
        malicious.invalid_rows, {}

    def spying(self, x, kind):
        words = real_open(self, x, kind)
        if kind == "label and top digit check":
            seen.append(words.tolist())
        return words

    def capturing(auth, clients, digits):
        out = real_values(auth, clients, digits)
        entered["labels"] = out[1]
        return out

    Authenticator.open_small = spying
    if weakened:
        malicious.client_values = capturing
        malicious.invalid_rows = lambda auth, labels, top=None: real_invalid(auth, entered["labels"])[:labels.shape[-1]]
    bundles, betas = [], []
    for c, labels in enumerate((np.arange(N) % 2, (np.arange(N) % 3 == 0).astype(np.int64))):
        shares, beta = _client(c, np.arange(N) % 4, labels)
        x_p, y_p, _ = shares[ctx.rank]
        if c and ctx.rank == 1:
            x_p = x_p.copy()
            x_p[1] += 1
        bundles.append((x_p, y_p))
        betas.append(beta)
    sealed = _sealed_keys(ctx, betas, wrong_job=True)
    opened = [AuthenticatedBundle(name, N, 1, body, keys, b"") for name, body, keys in zip(NAMES, bundles, sealed)]
    job = SimpleNamespace(evaluation=SimpleNamespace(encoder=SimpleNamespace(digits=1, key_bits=2)), central=None)
    return malicious.AuthenticatedRows.enter(ctx, job, opened).invalid, seen


def test_nothing_of_a_flagged_clients_rows_is_opened():
    """The review's finding on flagged clients (keys that do not open, e.g. sealed to a stale dealer key): their
    rows are entered but not bound to their MACs, so a party could bend them freely; had the label check run over
    them, P1's +1 on each south label would open y (1 - y) != 0 exactly where south's label is 1.  The real entry
    checks only the other clients' rows."""
    south = np.arange(N) % 3 == 0
    for weakened in (False, True):
        (invalid, seen0), (_, seen1) = run_parties(_flagged_labels_read, (weakened,))
        assert invalid == ["south"] and seen0 == seen1
        if weakened:
            assert np.array_equal(np.asarray(seen1[0][N:]) != 0, south)  # every south label, read
        else:
            assert seen1 == [[0] * N]  # north's rows only
