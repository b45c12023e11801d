"""Attacks on the checks themselves (circuits.macs), each against the real code and a weakened variant of it:
a party that echoes the other's coin, one that bends the last move before the outputs are opened, one that
reuses an authenticator after a caught cheat. P0, P1 and the dealer over TCP."""
import numpy as np
import pytest

from mpc_auc.protocols.errors import PeerLost
from mpc_auc.protocols.runtime.session import run_parties
from mpc_auc.sims.security.deviating_party import expected_ranks

M, BITS = 16, 4


def _rushing(auth, change):
    """P1's link discipline: receive P0's message first, then send ``change(kind, own, theirs)`` (None: its own)
    and return what P1 makes of the exchange (its own view)."""
    def exchange(own, kind="check seed commitment"):
        own = np.ascontiguousarray(own)
        theirs = auth.comm.recv_array(own.shape, own.dtype, 0, operation=kind)
        sent, kept = change(kind, own, theirs) or (own, theirs)
        auth.comm.send_array(np.ascontiguousarray(sent), 0)
        return kept
    auth._exchange = exchange


def _echo_party(ctx, weakened: bool):
    """P1 echoes P0's coin commitments and seeds (so the old XOR coin is 0^32 and its coefficients known ahead)
    and shifts two opened digits by chi_2 and -chi_1, which cancel in the first check if the coin is known."""
    from mpc_auc.circuits.auth_radix import AuthRadixRanking
    from mpc_auc.circuits.macs import Authenticator, Deviation, _digest, value_bits
    from mpc_auc.circuits.streams import CHECK_COEFFICIENTS, KeyStream

    class XorCoin(Authenticator):  # the coin as it was: the seeds' XOR, commitments not naming the party
        @staticmethod
        def _committed(seed, rank):
            return _digest(seed)

        def _toss(self, phase):
            following = secrets_bytes()
            theirs = self._exchange(np.frombuffer(self._seed + _digest(following), np.uint8), "coin seed").tobytes()
            if _digest(theirs[:32]) != self._their_commitment.tobytes():
                raise self.fail(Deviation(f"{phase} found a coin seed that does not match its commitment", phase))
            joint = bytes(a ^ b for a, b in zip(self._seed, theirs[:32]))
            self._seed, self._their_commitment = following, np.frombuffer(theirs[32:], np.uint8)
            return KeyStream(joint)

    AuthRadixRanking.PREFETCH = False
    auth = (XorCoin if weakened else Authenticator).__new__(XorCoin if weakened else Authenticator)
    if ctx.rank == 1:
        chi = KeyStream(bytes(32)).words(CHECK_COEFFICIENTS, 1, (5 * M,), np.uint64)  # the first check: 5M words
        first, second = [j for j in range(M) if chi[j] & 1][:2]
        shift = np.zeros(M, np.uint64)
        shift[first], shift[second] = chi[second], np.uint64(0) - chi[first]
        shift = shift.view(np.int64)
        state = {"shifted": False}

        def change(kind, own, theirs):
            if kind == "coin seed":  # P0's seed (and next commitment) as its own
                auth._seed = theirs[:32].tobytes()
                return theirs, theirs
            if kind == "check seed commitment":
                return theirs, theirs
            if kind == "digit" and not state["shifted"]:
                state["shifted"] = True
                return own + shift, theirs + shift  # and it takes the same wrong digits itself
            return None
        _rushing(auth, change)
    auth.__init__(ctx.stream_key, value_bits(M))
    keys = np.random.default_rng(3).integers(0, 2 ** BITS, M)
    try:
        digits = np.stack([auth.input((keys >> t) & 3 if ctx.rank == 0 else None, 0, (M,)) for t in range(0, BITS, 2)])
        sigma = AuthRadixRanking(_shuffler(ctx), auth).permutation(digits)
        return auth.release(sigma, "ranks"), keys
    except Deviation as failure:
        return str(failure), keys
    except PeerLost:  # the cheater, left waiting when P0 stops
        return "P0 stopped", keys


def secrets_bytes():
    import secrets

    return secrets.token_bytes(32)


def _shuffler(ctx):
    from mpc_auc.circuits.shuffle import Shuffler

    return Shuffler(ctx.stream_key)


@pytest.mark.parametrize("weakened", [True, False], ids=["xor-coin", "hashed-coin-with-ranks"])
def test_an_echoed_coin_cannot_cancel_two_errors(weakened):
    (seen, keys), _ = run_parties(_echo_party, (weakened,))
    if weakened:  # the coefficients known ahead: two opened digits changed, the check passes, wrong ranks out
        assert not isinstance(seen, str) and not np.array_equal(seen, expected_ranks(keys)[0])
    else:  # P1 cannot open a commitment that names P0
        assert "found a coin seed that does not match its commitment" in seen


def _bent_move_party(ctx, weakened: bool):
    """P1, rushing, makes P0 place the second order's moved labels by the reversed ranks (the last M destinations
    of the one sort of both orders reflected; its share of the destination masks chosen after seeing P0's); then
    the rank sums are released (weakened: opened before the check that covers that move, as they were)."""
    from mpc_auc.circuits.auth_auc import rank_sums, wide_bits
    from mpc_auc.circuits.auth_radix import AuthRadixRanking
    from mpc_auc.circuits.macs import Authenticator, Deviation, value_bits

    AuthRadixRanking.PREFETCH = False
    auth = Authenticator.__new__(Authenticator)
    state = {}
    if ctx.rank == 1:
        def change(kind, own, theirs):
            if not auth.phase.startswith("opening the destinations of the move"):
                return None
            if kind == "masked destinations":
                state["masked"] = own + theirs
            elif kind == "destination masks":
                s = (state["masked"] - (own + theirs)) & ((1 << auth.k) - 1)
                m = len(s) // 2  # the mask that makes P0 read 3M - 1 - s for the second order's s >= M
                target = state["masked"] - np.where(s < m, s, 3 * m - 1 - s)
                return target - theirs, target - own
            return None
        _rushing(auth, change)
    auth.__init__(ctx.stream_key, value_bits(64), wide_bits(32))
    rng = np.random.default_rng(5)
    keys, labels = rng.integers(0, 2 ** BITS, 32), rng.integers(0, 2, 32)
    digits = np.stack([auth.input((keys >> t) & 3 if ctx.rank == 0 else None, 0, (32,)) for t in range(0, BITS, 2)])
    wide = auth.input(labels if ctx.rank == 0 else None, 0, (32,), wide=True)
    sums = np.stack(rank_sums(AuthRadixRanking(_shuffler(ctx), auth), digits, wide)[:2], axis=1)
    try:
        if weakened:
            seen = auth.open_small(sums, "rank sums")
            auth.check("the rank sums")
            return tuple(int(v) for v in seen), None
        return tuple(int(v) for v in auth.release(sums, "rank sums")), None
    except Deviation as failure:
        return (tuple(int(v) for v in seen) if weakened else None), str(failure)


@pytest.mark.parametrize("weakened", [True, False], ids=["opened-then-checked", "released"])
def test_outputs_are_opened_only_after_the_check_that_covers_the_last_move(weakened):
    _, (seen, failure) = run_parties(_bent_move_party, (weakened,))
    assert failure is not None  # caught either way
    if weakened:  # but P1 saw sums over a permutation it chose: W' - (M - 1) n1 = U_le - U_lt, the tied pairs
        rng = np.random.default_rng(5)
        keys, labels = rng.integers(0, 2 ** BITS, 32), rng.integers(0, 2, 32)
        positives, negatives = keys[labels == 1], keys[labels == 0]
        tied = sum(int((negatives == k).sum()) for k in positives)
        assert seen[0] - 31 * seen[1] == tied
    else:
        assert seen is None and "the MAC check after everything before the rank sums failed" in failure


def _reuse_after_abort_party(ctx):
    from mpc_auc.circuits.macs import Authenticator, Deviation

    auth = Authenticator(ctx.stream_key, 16)
    x, _ = auth.correlation("uniform", (1,))
    if ctx.rank == 1:
        x = x.copy()
        x[0] += 1  # its value share only
    auth.open(x, "word")
    try:
        auth.check("the word")
    except Deviation:
        pass
    with pytest.raises(RuntimeError, match="serves nothing more"):
        auth.open(x, "word")
    fresh = Authenticator(ctx.stream_key, 16)  # new MAC keys, new correlations
    return auth.keyset != fresh.keyset and auth.failed and not fresh.failed


def test_an_authenticator_that_saw_a_deviation_serves_nothing_more():
    assert run_parties(_reuse_after_abort_party, ()) == [True, True]


def _mask_reuse_party(ctx):
    """P1 enters its keys; P0 follows the protocol on every link, then asks the dealer again for the correlation of
    the shuffle of digit 1 (same masks) for other permutations of its own, and solves for P1's masks: P1's
    masked shares then give sigma after digit 0 (up to a constant, fixed since sigma is a permutation)."""
    from mpc_auc.circuits.auth_radix import AuthRadixRanking
    from mpc_auc.circuits.correlations import widen
    from mpc_auc.circuits.dealer_line import dealer_line
    from mpc_auc.circuits.macs import Authenticator, value_bits
    from mpc_auc.circuits.shuffle import Shuffler

    AuthRadixRanking.PREFETCH = False
    m, view = 40, []
    shuffler = Shuffler(ctx.stream_key, view=view if ctx.rank == 0 else None)
    auth = Authenticator(ctx.stream_key, value_bits(m))
    keys = np.random.default_rng(7).integers(0, 2 ** 6, m)  # P1's
    shuffled = []
    honest = shuffler.shuffle
    shuffler.shuffle = lambda shares, pi, *a, **k: shuffled.append((shares.copy(), pi, shuffler._mask_count)) or \
        honest(shares, pi, *a, **k)
    digits = np.stack([auth.input((keys >> t) & 3 if ctx.rank == 1 else None, 1, (m,)) for t in range(0, 6, 2)])
    AuthRadixRanking(shuffler, auth).permutation(digits)
    if ctx.rank == 1:
        shuffler.exchange(np.zeros(1), "the end")  # P1 waits for P0 to finish (its dealer link stays up)
        return keys
    own, pi, masks = shuffled[0]  # digit 1's shuffle: P0 held step 0, P1 sent x_1 - a
    masked = [v for kind, v in view if kind == "masked shares"][0][:, 0]

    def correction(perm: int) -> np.ndarray:
        args = ((m, 4), perm, masks, False, 4, "int64", False, (64,) * 4, None, False)
        return widen(dealer_line().request("permutation_correlation", *args).view(np.uint8), (64,) * 4, np.int64,
                     m)[:, 0]

    first, relative, known, other = correction(pi.index), np.zeros(m, np.int64), np.zeros(m, bool), 1000
    known[0] = True
    while not known.all():  # a[p0[i]] - a[pX[i]] per extra permutation X links the elements' masks
        difference, px = first - correction(other), shuffler.stream.permutation(other, m)
        for _ in range(m):
            for i in range(m):
                u, v = pi.own[i], px[i]
                if known[u] != known[v]:
                    relative[v if known[u] else u] = relative[u] - difference[i] if known[u] else \
                        relative[v] + difference[i]
                    known[u] = known[v] = True
        other += 1
    sigma = own[0] + masked + relative  # sigma after digit 0, plus one unknown constant
    shuffler.exchange(np.zeros(1), "the end")
    return sigma - sigma.min()


class MaskReusingDealer:
    """The dealer without its refusal of a second correlation over one shuffle's masks (made in the role)."""

    def __new__(cls, seal_key=None):
        from mpc_auc.protocols.runtime.dealer import Dealer

        class Reusing(Dealer):
            def permutation_correlation(self, *args, **kwargs):
                self._served_masks.clear()
                return super().permutation_correlation(*args, **kwargs)
        return Reusing(seal_key)


def test_a_second_correlation_over_one_shuffles_masks_would_show_p0_a_destination_vector():
    from mpc_auc.protocols.errors import PartyFailure
    from mpc_auc.protocols.runtime.session import Placement

    seen, keys = run_parties(_mask_reuse_party, (), placement=Placement(dealer=MaskReusingDealer), timeout_s=120)
    np.testing.assert_array_equal(seen, expected_ranks(keys & 3)[0])  # the weakened dealer: P0 reads sigma
    with pytest.raises(PartyFailure, match="were asked for twice"):
        run_parties(_mask_reuse_party, (), timeout_s=120)
