"""ROC and PR curve points at public cuts on authenticated shares (security with abort), from the sort of both orders.

circuits.rank_metrics.curve_points counts the tie group a cut falls in in proportion (scikit-learn's curve is linear
inside a tie group): with c rows flagged (the top c) the cut falls at sorted position j = M - c, in the group g that
holds j, and s TP = s (P - Pex_g) - p_g (j - a_g), s the group's size, a_g its start, Pex_g the positives below it,
p_g its positives; TPR = s TP / (s P), FPR = (c s - s TP) / (s N), precision = s TP / (c s).  The semi-honest job
finds the groups by comparing neighbouring keys; here they come from the sort of both orders
(circuits.auth_auc.both_orders) without the keys:

* **Runs instead of tie groups.** With Pex1_j and Pex2_j the positives before sorted position j in the first order
  (negatives first within a tie group) and the second (positives first), both equal P_lt at a group's start, and
  inside a group with both classes Pex2_j - Pex1_j = min(j - a, p) - max(0, j - a - n) > 0.  So e_j = [Pex1_j - Pex2_j
  >= 0] (one authenticated comparison a position, circuits.auth_compare) starts a run: a group with both classes is
  one run, a group of one class is a run per row.  Inside a group of one class TP (or FP) is constant and the other
  grows by one a row, so the proportional count is the same whether the group is one run or many: every point equals
  the tie groups' (as a fraction; its floor to 2^-52 is the same integer).
* **Compaction** (as circuits.rank_auc.tie_groups): the run starts first, by the stable partition of the one digit
  1 - e (circuits.auth_radix: a dealer shuffle, its destinations opened after a check), slot t < G holding run t's
  start a_t = e_j j + (1 - e_j) M (linear: j is public) and Pex_t = e_j (Pex1_j - P) + P (one product; P is opened
  before any curve is computed), every later slot (M, P).
* **Back to the positions** (as circuits.rank_auc.to_members): the differences of each slot's (a, Pex, size,
  positives) from the previous slot's, times [t < G], moved back to the runs' starts by the partition's inverse
  (AuthRadixRanking.gather) and summed up to each position; the cuts' positions are public.
* Two products make s (P - Pex_g) and p_g (j - a_g), and circuits.auth_compare.divide the exact floor(value 2^52) by
  the secret divisors s P, s N, c s (P, N and c public): the integers the semi-honest long division opens, in two
  halves (floor(value 2^26), then the division of its remainder on by 2^26), so that no released word needs 53 bits.

Everything opened is masked by fresh dealer words (the comparisons', the products', the shuffle's), except the
partition's destinations, opened after a MAC check and uniform whatever the data; the points leave only through
circuits.macs.Authenticator.release.  Cost: M comparisons of log2 M bits, a one-digit sort and two moves of M
elements, 6 M products, and per curve value a long division of 14 rounds of 15 comparisons.
"""
import numpy as np

from .auth_auc import positives_before
from .auth_compare import comparison_bits, divide, division_bits, signs
from .auth_radix import AuthRadixRanking
from .scales import CURVE_DIGIT_BITS, OPEN_BITS

PHASE = "the curve points"
LOW_BITS = OPEN_BITS // 2  # each point leaves as floor(value 2^26) and the next 26 bits: 27-bit values, not 53


def joined(halves: np.ndarray) -> np.ndarray:
    """floor(value 2^52) from the opened halves (2, K) of :func:`curve_points` (Python ints or int64)."""
    return (halves[0] << LOW_BITS) + halves[1]


def release_width(m: int) -> int:
    """The wide values' bits the curves of ``m`` rows need: their divisions' comparisons (values below 16 M^2,
    circuits.auth_compare.division_bits), the halves (up to 2^26) and the run starts' comparisons (below M)."""
    return max(division_bits(m * m, CURVE_DIGIT_BITS), OPEN_BITS - LOW_BITS + 1, comparison_bits(m.bit_length()))


def curve_points(ranking, moved: np.ndarray, n1: int, flagged: np.ndarray, wanted) -> dict:
    """{name: [(h, l)] (1 + keys, 2, K)} for each name of ``wanted`` ("tpr", "fpr", "precision") at each public cut
    (``flagged``: c_k rows flagged, 1 <= c_k <= M), floor(value 2^52) = h 2^LOW_BITS + l (:func:`joined`: the two
    halves keep the wide values narrow), the run a cut falls in counted in proportion (module docstring), from
    :func:`circuits.auth_auc.both_orders`' moved labels (1 + keys, 2M) and the opened count of positives ``n1``
    (1 <= n1 < M)."""
    auth, m, flagged = ranking.auth, moved.shape[-1] // 2, np.asarray(flagged, dtype=np.int64)
    before = positives_before(moved)
    auth.phase = PHASE
    starts = _run_starts(auth, before[:, :m], before[:, m:])
    start, below, size, positives = _at_cuts(ranking, starts, before[:, :m], n1, m - flagged)
    auth.phase = PHASE
    scaled_above, inside = auth.multiply(np.stack([size, positives], axis=1), np.stack(
        [auth.add_public(-below, n1), auth.add_public(-start, m - flagged)], axis=1), PHASE).transpose(1, 0, 2)
    scaled_tp = scaled_above - inside  # s TP
    fractions = {"tpr": (scaled_tp, size * np.int64(n1)), "fpr": (size * flagged - scaled_tp, size * np.int64(m - n1)),
                 "precision": (scaled_tp, size * flagged)}
    numerators, denominators = (np.concatenate([fractions[name][i] for name in wanted], axis=-1) for i in (0, 1))
    high, remainder = divide(auth, numerators, denominators, OPEN_BITS - LOW_BITS, CURVE_DIGIT_BITS, m * m, PHASE)
    low, _ = divide(auth, remainder, denominators, LOW_BITS, CURVE_DIGIT_BITS, m * m, PHASE, whole=False)
    return {name: np.stack(halves, axis=1) for name, *halves in zip(wanted, *(np.split(v, len(wanted), axis=-1)
                                                                              for v in (high, low)))}


def _run_starts(auth, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """[e_j] (1 + keys, M): 1 where a run starts, [Pex1_j - Pex2_j >= 0] (module docstring); |Pex1 - Pex2| < M."""
    return signs(auth, first - second, first.shape[-1].bit_length(), PHASE)


def _at_cuts(ranking, starts: np.ndarray, below: np.ndarray, n1: int, positions: np.ndarray) -> np.ndarray:
    """[(a, Pex, s, p)] (4, 1 + keys, K) of the run holding each public sorted position of ``positions``: the
    compaction of the runs and their values brought back to the positions (module docstring)."""
    auth, m = ranking.auth, starts.shape[-1]
    compaction, sigma, later, start, pex = compacted(ranking, starts, below, n1, f"{PHASE}' partition")
    columns = np.stack([start, pex, next_slot(auth, start, m) - start, next_slot(auth, pex, n1) - pex], axis=1)
    steps = np.diff(columns, axis=-1, prepend=0)  # each slot's values less the previous slot's
    auth.phase = PHASE
    inside = np.repeat(auth.add_public(-later, 1)[:, None], 4, axis=1)  # [t < G]
    moved = compaction.gather(sigma, auth.multiply(inside, steps, PHASE))
    return np.cumsum(moved, axis=-1)[..., positions].transpose(1, 0, 2)


def next_slot(auth, values: np.ndarray, last: int) -> np.ndarray:
    """[v_(t+1)] (1 + keys, M) of compacted slot values, the public ``last`` after the last slot (the next group of
    the last one: M or P), as circuits.rank_auc.next_slot on authenticated shares."""
    return np.concatenate([values[:, 1:], auth.public(last, (1,), wide=True)], axis=-1)


def compacted(ranking, starts: np.ndarray, below: np.ndarray, n1: int, label: str) -> tuple:
    """(the compaction's sort, its [sigma], and per compacted slot t [t >= G], the start a_t and the positives below
    it Pex_t (1 + keys, M) each; every slot from G on holds (M, P)) of the groups (or runs) whose starts are the wide
    bits ``starts`` (1 + keys, M) in sorted order, ``below`` each position's positives before it: a stable partition
    by the one digit 1 - e (module docstring, "Compaction"), the slots' values moved by it; ``label`` names the
    partition's phases, after the caller's phase (under which the one product runs)."""
    auth, m = ranking.auth, starts.shape[-1]
    later = auth.add_public(-starts, 1)
    start = auth.add_public(starts * (np.arange(m, dtype=np.int64) - m), m)  # e_j j + (1 - e_j) M
    pex = auth.add_public(auth.multiply(starts, auth.add_public(below, -n1), auth.phase), n1)  # e_j Pex_j + (1 - e_j) P
    compaction = AuthRadixRanking(ranking.shuffler, auth, label=label)
    sigma = compaction.permutation(later[None, :2])  # the starts first, in order: a partition by the digit 1 - e
    later, start, pex = compaction.apply(sigma, np.stack([later, start, pex]))
    return compaction, sigma, later, start, pex
