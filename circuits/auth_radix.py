"""The radix sort of circuits.radix on authenticated shares (circuits.macs): security with abort.

The same composition (Chida et al. 2019: stable partition by each 2-bit
digit, least significant first, through shuffle-and-open), with every
shared word carried with its MAC over Z_2^64 and every opened word checked:

* Digits are authenticated additive shares of d in {0, 1, 2, 3} (one per
  key digit and element), not XOR shares, so a party cannot flip a bit of
  its share unseen.
* Shuffles are the dealer's (circuits.shuffle, protocols.runtime.dealer) on
  64-bit words, the MAC rows shuffled with the values under independent
  masks, and each permutation derived by the dealer from the stream key it
  drew at start-up (never announced by a party: the permutations exist
  before any data does).  A permuting party that adds an offset, or
  permutes by another permutation, leaves errors a[p] - a[p'] on the values
  and independent ones on the MACs: the check finds them, whatever the data
  (no selective failure: Song et al., NDSS 2024, attack shuffles whose
  correlations a party helps make; here the dealer makes them all, serves
  each shuffle's masks once, since two corrections over one mask would show
  P0 the difference of P1's masks, and answers no request outside its list).
* The partition by a digit (as circuits.select, over Z_2^64): with the
  dealer's authenticated R, e = onehot(R mod 4), Beaver masks b and
  q = sum_u e_u b_u, the parties open v = d + R (uniform), c = v mod 4, so
  that f_v = e_{(c - v) mod 4} is the one-hot vector of d (a public
  rearrangement), and rho = sum_u e_u a_u for a_u = S_{(c - u) mod 4}
  is a_0 + sum_{u>=1} e_u delta_u + q with delta_u = a_u - a_0 - b_u opened.
* Destinations s = sigma[pi] are revealed after a check (:meth:`AuthRadixRanking._destinations`)
  and must form a permutation (else the next check fails: Authenticator.defer).

Checks: one per shuffle, before its destinations are revealed (they depend
on the data through sigma: an error on a product or a shuffled word, unchecked,
would let the cheater see whether a digit took a value, or which destination
an element has), covering everything opened since the last (the digit, the
products, the masked destinations).  Everything opened before a check is masked by fresh uniform
dealer words, so what a cheat changes there shows nothing until the check.
The ranks and whatever is computed from the moved columns leave the parties
only through circuits.macs.Authenticator.release, which checks first: the
last move's revealed destinations (and a permutation a cheater chose for the
honest party there) are covered before any output is opened.
"""
import numpy as np

from .shuffle import is_permutation
from .macs import ONEHOT_ROWS, Deviation

DIGIT_BITS = 2


class AuthRadixRanking:
    """Sort by authenticated 2-bit digits and move authenticated columns to sorted order."""
    PREFETCH = True  # False where a session goes on after an abort (the tests' cheats): posts would be left over

    def __init__(self, shuffler, auth, progress=None, label: str = ""):
        """``label``: what this sort is for, before each of its phases' names (a second sort in a job: its phases and
        failed checks are told apart from the first's)."""
        self.shuffler, self.auth, self.progress, self.label = shuffler, auth, progress, label

    def permutation(self, digits: np.ndarray) -> np.ndarray:
        """[sigma] (2, M): sigma[i] is the position of element i after a stable sort by the keys whose
        authenticated 2-bit digits ``digits`` (D, 2, M) are given least significant first."""
        sigma, m = None, digits.shape[-1]
        perm, masks, _ = self.shuffler.schedule()
        if self.PREFETCH:
            self._post(0, m, perm, masks)
        for t, digit in enumerate(digits):
            if self.PREFETCH and t + 1 < len(digits):  # the dealer prepares the next digit's correlations meanwhile
                self._post(t + 1, m, perm + t, masks + 2 * t)
            if sigma is None:
                sigma = self._partition(digit, t)
            else:
                self._phase(f"the shuffle of digit {t}")
                pi = self.shuffler.fresh(digit.shape[-1])
                moved = self.shuffler.shuffle(np.concatenate([sigma, digit]), pi)
                s = self._destinations(moved[:2], t)
                current = np.empty_like(digit)
                current[:, s] = moved[2:]
                rho = self._partition(current, t)
                self._phase(f"the unshuffle of digit {t}")
                sigma = self.shuffler.unshuffle(rho[:, s], pi)
            if self.progress is not None:
                self.progress(t + 1, len(digits))
        return sigma

    def _post(self, t: int, m: int, perm: int, masks: int) -> None:
        """Post the dealer requests of digit t in the order the digit takes them: its shuffle's correlation
        (permutation ``perm``, masks ``masks``), the mask of its destinations, its one-hot tuple, its unshuffle's
        correlation (digit 0: the one-hot tuple only)."""
        if t and self.shuffler.rank == 0:  # P0 asks for the shuffles' correlations (P1's corrections come to it)
            self.shuffler.post([self.shuffler.shuffle_request((m, 4), perm, masks, False, 4, np.int64, False, (64,) * 4),
                                self.shuffler.shuffle_request((m, 2), perm, masks + 1, True, 2, np.int64, False,
                                                              (64,) * 2)])
        if t:
            self.auth.post("uniform", (m,))
        self.auth.post("onehot", (ONEHOT_ROWS, m))

    def apply(self, sigma: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """Authenticated columns (c, 2, M) moved to sorted order, out[:, :, sigma[i]] = columns[:, :, i]."""
        self._phase("moving the columns to sorted order")
        m = sigma.shape[-1]
        moved = self.shuffler.shuffle(np.concatenate([sigma, columns.reshape(-1, m)]), self.shuffler.fresh(m))
        s = self._destinations(moved[:2], "the move")
        out = np.empty_like(moved[2:])
        out[:, s] = moved[2:]
        return out.reshape(columns.shape)

    def gather(self, sigma: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """Authenticated columns (..., M) in sorted order brought back to the elements, out[..., i] =
        columns[..., sigma[i]] (the inverse of :meth:`apply`, Chida et al. 2019's unapply): sigma shuffled by a
        fresh pi, s = sigma[pi] opened after a check (:meth:`_destinations`), the columns gathered at s (= out[pi])
        and unshuffled by pi."""
        self._phase("moving the columns back to the elements")
        m = sigma.shape[-1]
        pi = self.shuffler.fresh(m)
        s = self._destinations(self.shuffler.shuffle(sigma, pi), "the move back")
        self._phase("moving the columns back to the elements")
        return self.shuffler.unshuffle(columns.reshape(-1, m)[:, s], pi).reshape(columns.shape)

    def _destinations(self, shuffled_sigma: np.ndarray, t) -> np.ndarray:
        """s = sigma[pi], opened only once everything before it is checked: the parties open u = s + rho (rho a
        fresh uniform dealer word: u says nothing), check (u included), then open rho.  An error that reached
        sigma, opened at once, would show which element's destination it moved (and so that destination)."""
        auth = self.auth
        step = f"digit {t}" if isinstance(t, int) else t
        self._phase(f"opening the destinations of {step}")
        mask, _ = auth.correlation("uniform", shuffled_sigma.shape[1:])
        masked = auth.open(shuffled_sigma + mask, "masked destinations")
        auth.check(self._named(f"the shuffle of {step}"))
        self._phase(f"opening the destinations of {step}")
        s = (masked - auth.open(mask, "destination masks")) & ((1 << auth.k) - 1)
        if not is_permutation(s):  # raised at the next check; meanwhile any permutation keeps both in step
            auth.defer(Deviation(f"the destinations opened after {self._named(f'the shuffle of {step}')} are not a "
                                 "permutation", auth.phase))
            s = np.arange(len(s))
        return s

    def _partition(self, digit: np.ndarray, t: int) -> np.ndarray:
        """[rho] (2, M): the stable partition of the elements by the authenticated digit (2, M)."""
        auth, m = self.auth, digit.shape[-1]
        corr, _ = auth.correlation("onehot", (ONEHOT_ROWS, m))
        r, e, b, q = corr[:, 0], corr[:, 1:4], corr[:, 4:7], corr[:, 7]
        self._phase(f"opening digit {t}")
        c = auth.open(digit + r, "digit") & 3
        onehot = np.concatenate([auth.public(1, (1, m)) - e.sum(axis=1, keepdims=True), e], axis=1)  # e_0..e_3
        order = (c[None, :] - np.arange(4)[:, None]) & 3  # order[u] = (c - u) mod 4
        f = np.take_along_axis(onehot, np.broadcast_to(order, onehot.shape), axis=1)  # f_v = e_{(c - v) mod 4}
        running = np.cumsum(f, axis=2)
        below = np.concatenate([np.zeros_like(running[:, :1, -1]), np.cumsum(running[:, :-1, -1], axis=1)], axis=1)
        slots = auth.add_public(running + below[:, :, None], -1)  # S_v: 0-based positions if d = v
        a = np.take_along_axis(slots, np.broadcast_to(order, slots.shape), axis=1)  # a_u = S_{(c - u) mod 4}
        self._phase(f"the one-hot products of digit {t}")
        delta = auth.open(a[:, 1:] - a[:, :1] - b, "masked product")
        return a[:, 0] + (e * delta[None]).sum(axis=1) + q

    def _phase(self, name: str) -> None:
        self.auth.phase = self._named(name)

    def _named(self, name: str) -> str:
        return f"{self.label}: {name}" if self.label else name
