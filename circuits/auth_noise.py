"""mpc-central's noise draw on authenticated shares (circuits.macs): the discrete Laplace of circuits.noise under
security with abort.

The same law (circuits.noise_laws.DiscreteLaplace: B + 2 coins [u_r < T_r] of uniform L-bit values u_r, mapped to
a draw by :meth:`DiscreteLaplace.from_uniform`, which the tests apply in the clear to the same u), built so that no
single role knows u and a deviating party can neither bias u nor bend the draw unseen:

* **Joint random bits.** The dealer deals uniform authenticated bits r (law ``bits``, wide: under every MAC key, as
  the statistic they are added to); only then the parties toss a coin c (circuits.macs.Authenticator.coin: each
  committed to its seed before either reveals) and take u = r XOR c = c + (1 - 2c) r, linear in [r] since c is
  public.  A party cannot know or choose r (the dealer draws it with its own key) nor bias c (commit, then
  reveal); the dealer never sees c (tossed between P0 and P1).  So u is uniform and unknown to each role alone
  (the dealer and a party together know it, as together they know every share in either mode).  In the
  semi-honest circuit u is the XOR of each party's own CSPRNG words, which a deviating party could choose.
* **Biased coin** [u < T] for a public L-bit T, exactly Bernoulli(T / 2^L): with e_j = [u_j = T_j] (u_j or
  1 - u_j: linear for the public T) and E_i = prod_{j > i} e_j,

      [u < T] = sum_{i: T_i = 1} (1 - u_i) E_i,

  the first index from the top where u and T differ being one where T has 1 and u has 0.  The E_i come from a
  log-depth scan of Beaver products (ceil(log2 (L - 1)) rounds, 6 for L = 48), one more round for the terms.
  T = 2^L (a bias rounded to 1) is the public coin 1.
* **Discrete Laplace** (ustats App. C.2, as circuits.noise): coins for "non-zero", the sign and the B bits of G;
  minus = nonzero * sign (one product), Z = (nonzero - 2 minus)(1 + sum_i 2^i g_i) (one more).

Rounds: the coin, 7 of comparisons and 2 of assembly, for any number of draws.  Every Beaver opening is masked by
fresh triple words and is MAC-checked with everything else before the noisy value is opened
(circuits.macs.Authenticator.release): a party that bends a word of the draw is caught as one that bends the
statistic is.
"""
import numpy as np

PHASE = "the noise draw"  # the phase the authenticator names while the noise is drawn (a failed check names it)


def discrete_laplace(auth, noise, count: int) -> np.ndarray:
    """[Z] (1 + keys, count): ``count`` independent draws of ``noise`` (circuits.noise_laws.DiscreteLaplace), wide
    authenticated shares (module docstring)."""
    auth.phase = PHASE
    return laplace_of(auth, noise, joint_bits(auth, (noise.bits, len(noise.thresholds), count)))


def joint_bits(auth, shape) -> np.ndarray:
    """[u] (1 + keys, *shape): uniform bits that no single role knows, r XOR c for the dealer's bits r and the
    parties' coin c (module docstring)."""
    r, _ = auth.correlation("bits", shape, wide=True)
    c = auth.coin(shape, f"the coin of {PHASE}").view(np.int64) & 1
    return auth.add_public(r * (1 - 2 * c), c)


def laplace_of(auth, noise, u: np.ndarray) -> np.ndarray:
    """[Z] (1 + keys, n) for the bits [u] (1 + keys, L, B + 2, n) of the coins' uniform values, least significant
    bit first: the draw :meth:`DiscreteLaplace.from_uniform` makes of the same values."""
    drawn = coins(auth, u, noise.thresholds)
    nonzero, sign, magnitude_bits = drawn[:, 0], drawn[:, 1], drawn[:, 2:]
    minus = auth.multiply(nonzero, sign, "the noise's sign")
    weights = (np.int64(1) << np.arange(noise.width, dtype=np.int64))[:, None]
    magnitude = auth.add_public((magnitude_bits * weights).sum(axis=1), 1)
    return auth.multiply(nonzero - 2 * minus, magnitude, "the noise's magnitude")


def coins(auth, u: np.ndarray, thresholds) -> np.ndarray:
    """[u_r < T_r] (1 + keys, R, n) for the bits [u] (1 + keys, L, R, n), least significant first, and public
    thresholds T_r in [0, 2^L] (module docstring)."""
    bits = u.shape[1]
    t = np.asarray(thresholds, dtype=np.int64)
    full = t == 1 << bits  # [u < 2^L] is 1
    t_bits = ((np.where(full, 0, t)[None, :] >> np.arange(bits)[:, None]) & 1)[::-1, :, None]  # (L, R, 1), top first
    below = auth.add_public(-u, 1)[:, ::-1]  # 1 - u_i, from the top
    equal = np.where(t_bits == 1, u[:, ::-1], below)  # e_i = [u_i = T_i]
    scan = equal[:, :-1].copy()  # inclusive prefix products of e from the top: E for the next lower bit
    step = 1
    while step < bits - 1:
        scan[:, step:] = auth.multiply(scan[:, step:], scan[:, :-step], "the noise's comparisons")
        step *= 2
    terms = auth.multiply(below[:, 1:], scan, "the noise's comparisons")
    chosen = t_bits == 1
    coin = np.where(chosen[0], below[:, 0], 0) + np.where(chosen[1:], terms, 0).sum(axis=1)
    return np.where(full[:, None], auth.add_public(np.zeros_like(coin), 1), coin)
