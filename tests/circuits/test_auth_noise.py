"""mpc-central's noise draw on authenticated shares (circuits.auth_noise): each draw is exactly the clear map of its
uniform values (circuits.noise_laws.DiscreteLaplace.from_uniform, the semi-honest circuit's law), those values are
uniform bits, and the draws follow the law's pmf; a public threshold of 2^L and of 0 give the constant coins; the
dealer's bits alone do not give u (the parties' coin flips about half of them), where a weakened variant without
the coin hands the dealer every bit of the noise.  P0, P1 and the dealer as processes over TCP; only the test opens
u, Z and the dealer's bits."""
import numpy as np
from scipy import stats

from mpc_auc.circuits.noise_laws import DiscreteLaplace
from mpc_auc.protocols.runtime.session import run_parties

SMALL = DiscreteLaplace(1.0, 1)  # width 6: support +-64
WIDE = DiscreteLaplace(0.5, 1024)  # width 17
DRAWS = 1500
WIDTH = 40  # the authenticator's wide values


def _signed(values: np.ndarray) -> np.ndarray:
    return np.where(values >= 1 << (WIDTH - 1), values - (1 << WIDTH), values)


def _draw_party(ctx, draws: int):
    from mpc_auc.circuits.auth_noise import coins, joint_bits, laplace_of
    from mpc_auc.circuits.macs import Authenticator

    auth = Authenticator(ctx.stream_key, 16, WIDTH)
    out = {}
    for name, noise in (("small", SMALL), ("wide", WIDE)):
        u = joint_bits(auth, (noise.bits, len(noise.thresholds), draws))
        z = laplace_of(auth, noise, u)
        out[name] = (auth.release(u, "the uniform bits"), _signed(auth.release(z, "the draws")))
    u = joint_bits(auth, (8, 4, draws))
    edge = coins(auth, u, [0, 1 << 8, 200, 1])
    out["edge"] = (auth.release(u, "the edge bits"), auth.release(edge, "the edge coins"))
    return out


def test_each_draw_is_the_clear_law_of_its_uniform_values_and_the_values_are_uniform():
    both = run_parties(_draw_party, (DRAWS,), timeout_s=300)
    for name in ("small", "wide", "edge"):
        assert all(np.array_equal(a, b) for a, b in zip(both[0][name], both[1][name])), name
    for name, noise in (("small", SMALL), ("wide", WIDE)):
        u_bits, z = both[0][name]
        assert set(np.unique(u_bits)) <= {0, 1}
        weights = (np.int64(1) << np.arange(noise.bits, dtype=np.int64))[:, None, None]
        u = (u_bits * weights).sum(axis=0)  # (B + 2, draws)
        assert np.array_equal(z, noise.from_uniform(u)), name  # the same map as the semi-honest circuit's law
        ones = int(u_bits.sum())
        assert stats.binomtest(ones, u_bits.size, 0.5).pvalue > 1e-4, (name, ones / u_bits.size)
    support, pmf = SMALL.pmf()
    z = both[0]["small"][1]
    counts = np.array([(z == v).sum() for v in support])
    keep = pmf * DRAWS >= 5
    observed = np.append(counts[keep], counts[~keep].sum())
    expected = np.append(pmf[keep], pmf[~keep].sum()) * DRAWS
    assert stats.chisquare(observed, expected).pvalue > 1e-4
    u_bits, edge = both[0]["edge"]
    u = (u_bits * (np.int64(1) << np.arange(8, dtype=np.int64))[:, None, None]).sum(axis=0)
    assert np.array_equal(edge, (u < np.array([0, 256, 200, 1])[:, None]).astype(np.int64))


def _coin_party(ctx, weakened: bool):
    """(the dealer's bits r, u) of 4,096 joint bits, both opened: r recorded as the dealer deals it; ``weakened``:
    the parties' coin made 0 (the variant without it)."""
    from mpc_auc.circuits.auth_noise import joint_bits
    from mpc_auc.circuits.macs import Authenticator

    auth = Authenticator(ctx.stream_key, 16, WIDTH)
    dealt, correlation = [], auth.correlation

    def recorded(law, shape, *args, **kwargs):
        out = correlation(law, shape, *args, **kwargs)
        if law == "bits":
            dealt.append(out[0])
        return out

    auth.correlation = recorded
    if weakened:
        auth.coin = lambda shape, phase: np.zeros(shape, dtype=np.uint64)
    u = joint_bits(auth, (4096,))
    return auth.release(np.stack([dealt[0], u], axis=1), "the dealer's bits and u")


def test_the_dealers_bits_alone_do_not_give_the_noise_without_the_coin_they_do():
    real = run_parties(_coin_party, (False,), timeout_s=120)[0]
    differ = int((real[0] != real[1]).sum())
    assert stats.binomtest(differ, 4096, 0.5).pvalue > 1e-4  # u = r XOR c: the dealer misses about half the bits
    weakened = run_parties(_coin_party, (True,), timeout_s=120)[0]
    assert np.array_equal(weakened[0], weakened[1])  # without the coin the dealer knows u, so every draw
