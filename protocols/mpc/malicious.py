"""mpc-exact and mpc-central under security with abort (an evaluation whose spec says ``security="malicious"``): the
parties' side.

Runs in P0 and P1 inside protocols.mpc.ranking_party's job loop, after the intake (tickets, submissions, agreement)
and before the job's result goes out; docs/protocols/malicious-security.md states the model and each role's view.

1. **Enter** (:meth:`AuthenticatedRows.enter`): every client's shares of its key's 2-bit digits and label enter
   under a fresh MAC key set of this job (circuits.macs.Authenticator, keys from the dealer), bound to the client's
   own MACs, whose keys the dealer opens from what the client sealed to it (circuits.auth_inputs: a party that
   enters another share is caught, the client is named); each label is checked to be a bit, and the key's top
   digit when the key has an odd number of bits (a client that fails, or whose sealed keys do not open, is
   invalid, as circuits.validity's check names it in the semi-honest mode).
2. **Compute** (:func:`compute`): the tie-aware rank sums from one authenticated radix sort of both orders
   (circuits.auth_auc), W and n1 released through Authenticator.release (a MAC check of everything before, the opening, a check of the
   opening); the AUC's floor(AUC 2^52) computed from them in the clear: the same integer the semi-honest long
   division opens (protocols.mpc.ranking_party), the count of positives opened besides.  With decimals only n1 is
   opened, and round(AUC 10^K) is computed inside by a long division by the public 2PN (circuits.auth_compare), W
   never opened.  Then the metrics asked for (:func:`_metrics`): DeLong's sums, AP (circuits.auth_ap), the curves'
   points (circuits.auth_curves), the KS statistic's KS P N (circuits.auth_auc.ks_gap, divided in the clear).  With
   ranks, each row's doubled mid-rank (the sum of its two destinations) and beta_0 times it (a Beaver product,
   checked with the release) go to its client in its rank bundle: the client checks the second against its own
   beta_0 (protocols.inputs.bundles.open_ranks), which a party that changed its share would have had to guess.

3. **mpc-central** (:func:`central_release`, :func:`curve_release`): instead of W and n1, the DP release of
   protocols.mpc.central from them (2T = W - n1 (M - 1), linear; 2U = W - n1 (n1 - 1)), or the DP curve's tree
   nodes from one authenticated sort of the keys, each with the discrete Laplace drawn on authenticated shares
   (circuits.auth_noise), opened through Authenticator.release after a check of the sort and one of the draw;
   n1 is not opened.

A failed check raises circuits.macs.Deviation out of the job: the session ends with it (the coordinator raises
protocols.errors.DeviationDetected), nothing is released, a charge made for the job is kept, and a deployed role
goes back to serving.
"""
import numpy as np

from ...circuits.auth_auc import auc_from_sums, both_orders, ks_gap, placement_squares, sums_of, wide_bits
from ...circuits.auth_compare import decimal_round, rounding_bits
from ...circuits import auth_ap, auth_curves, auth_pauc
from ...circuits.auth_inputs import client_values, invalid_rows
from ...circuits.auth_noise import PHASE as NOISE_PHASE, discrete_laplace
from ...circuits.auth_radix import AuthRadixRanking
from ...circuits.auth_tie_groups import TieGroups, tie_groups
from ...circuits.macs import MIN_STATISTICAL, RING_BITS, Authenticator, value_bits, wide_keys
from ...circuits.scales import MEAN_BITS, OPEN_BITS, VARIANCE_BITS
from ..clear_auc import floor_scaled
from ..dp.curve_law import CurveNoise
from ..metric_catalogue import CI_MAX_ROWS, FPR_BITS, TWO_ROWS, curve_values, cut_positions
from ..release_spec import CURVES
from ..refused import Refused


MAX_ROWS = 1 << (RING_BITS - MIN_STATISTICAL - 1)  # the sort's 2M positions in k <= 24 bits: s >= 40
CI_ROWS = 1 << 19  # DeLong's sums of squares, up to 16 M^3 / 27, in at most 57 bits: MACs under 10 keys


def rows_refusal(m: int, central=None) -> str:
    """Why a job of ``m`` rows (with mpc-central's noise ``central``) cannot run under security with abort: more
    than :data:`MAX_ROWS`, or a noisy release too wide for MACs in Z_2^64 (:func:`release_bits`); or ""."""
    if m > MAX_ROWS:
        return (f"under security malicious a job takes at most {MAX_ROWS:,} rows (2^23: the sort's positions leave "
                f"s >= {MIN_STATISTICAL} statistical bits in Z_2^{RING_BITS}); this one has {m:,}")
    try:
        wide_keys(release_bits(m, central))
    except ValueError:
        return (f"under security malicious mpc-central's release of {m:,} rows at epsilon {central.epsilon:g} would "
                f"need {release_bits(m, central)}-bit values (the noise's magnitude bits), too wide for MACs in "
                f"Z_2^{RING_BITS}: raise epsilon")
    return ""


def release_bits(m: int, central=None, ci: bool = False, decimals: int = None, metrics=()) -> int:
    """The wide values' bits: W's (circuits.auth_auc.wide_bits), with ``ci`` DeLong's sums of squares too (Q10 <=
    4 N^2 P <= 16 M^3 / 27), with ``decimals`` the rounding's (circuits.auth_compare.rounding_bits, 2PN <= M^2 / 2),
    with the curves among ``metrics`` theirs (circuits.auth_curves.release_width: long divisions by divisors up to
    M^2), with "ap" AP's (circuits.auth_ap.release_width), with "pauc" the partial AUC's (circuits.auth_pauc.
    release_width) for min(M, CI_MAX_ROWS) rows: it is computed for at most protocols.metric_catalogue.CI_MAX_ROWS
    rows, as in the semi-honest job, and the rows admitted may be within that bound where the M entered are not (a
    client left out); beyond the bound its 45 bits take no MAC key more than W's 42 to 46;
    or, for mpc-central, the signed noisy release: |2T + Z_T| < M^2 / 2 + 2^B and |P + Z_P| < M + 2^B', or the DP
    curve's nodes, |count + Z| < M + 2^B (B, B' the noises' magnitude bits)."""
    if central is None:
        return max(wide_bits(m), (16 * m ** 3 // 27 + 1).bit_length() if ci else 0,
                   rounding_bits(m * m // 2, decimals) if decimals else 0,
                   auth_curves.release_width(m) if set(CURVES) & set(metrics) else 0,
                   auth_ap.release_width(m) if "ap" in metrics else 0,
                   auth_pauc.release_width(min(m, CI_MAX_ROWS)) if "pauc" in metrics else 0)
    if isinstance(central, CurveNoise):  # the curve's job computes no W: its nodes alone are wide
        return (m + (2 << central.node_noise(m).width)).bit_length() + 1
    width = max(central.statistic_noise(m).width, central.count_noise().width)
    return max(wide_bits(m), (m * m + (2 << width)).bit_length() + 1)


class AuthenticatedRows:
    """One job's admitted rows under security with abort: after :meth:`enter`, the authenticated digits (D, 2, M)
    and wide labels (1 + keys, M) of the clients' rows side by side in roster order, each client's MAC key beta_0
    (2, C), and the invalid clients."""
    weights = None  # the mode computes the unweighted AUC only

    def __init__(self, auth, digits: np.ndarray, labels: np.ndarray, betas: np.ndarray, owners: tuple, invalid: list):
        self.auth, self.digits, self.labels, self.betas = auth, digits, labels, betas
        self.owners, self.invalid = owners, invalid

    @classmethod
    def enter(cls, ctx, job, opened: list) -> "AuthenticatedRows":
        """Enter the rows of ``opened`` (protocols.inputs.bundles.AuthenticatedBundle, roster order; the list is
        emptied) under this job's MAC keys and check them (module docstring, step 1)."""
        bundles = list(opened)
        opened.clear()
        m, digits = sum(b.rows for b in bundles), job.evaluation.encoder.digits
        if ctx.rank == 0:
            ctx.progress(f"entering {m} rows under MACs and checking every client's MACs inside the MPC")
        spec = job.evaluation.spec
        auth = authenticator(ctx, m, job.central, with_ci(job, m), spec.decimals,
                             spec.metrics if job.central is None else ())
        key_digits, labels, betas, flagged = client_values(
            auth, [(b.client, *b.shares(), b.sealed_keys) for b in bundles], digits)
        owners = tuple((b.client, b.reply_to, b.rows) for b in bundles)
        checked = np.repeat(~flagged, [rows for _, _, rows in owners])  # a flagged client's rows: no opening at all
        bad = np.zeros(m, dtype=bool)
        if checked.any():
            odd = job.evaluation.encoder.key_bits % 2
            bad[checked] = invalid_rows(auth, labels[..., checked], key_digits[-1][..., checked] if odd else None)
        ends = np.cumsum([rows for _, _, rows in owners])
        invalid = [client for (client, _, rows), end, keys_bad in zip(owners, ends, flagged)
                   if keys_bad or bad[end - rows:end].any()]
        return cls(auth, key_digits, labels, betas[:, 0], owners, invalid)

    @property
    def rows(self) -> list:
        """Each client's row count, in row order."""
        return [rows for _, _, rows in self.owners]

    def without(self, clients) -> "AuthenticatedRows":
        """The same rows less every row of ``clients`` (public row ranges: a selection keeps the MACs)."""
        keep = np.concatenate([np.full(rows, client not in clients) for client, _, rows in self.owners])
        kept = np.array([client not in clients for client, _, _ in self.owners])
        return AuthenticatedRows(self.auth, self.digits[..., keep], self.labels[..., keep], self.betas[..., kept],
                                 tuple(o for o in self.owners if o[0] not in clients), [])


def authenticator(ctx, m: int, central=None, ci: bool = False, decimals: int = None,
                  metrics=()) -> Authenticator:
    """This job's MAC keys for ``m`` rows: positions of the 2M elements of the rank sums' sort (circuits.auth_auc;
    twice the mid-ranks fit too; rounded up to even when ``metrics`` may need the true tie groups, AP and the partial
    AUC (whatever ``m``: the rows admitted may be fewer), as their zero tests read k/2 digits,
    circuits.auth_compare.is_zero), the rank sums (DeLong's sums, the rounding to ``decimals``, the other ``metrics``,
    mpc-central's noisy release) wide (circuits.macs)."""
    k = value_bits(2 * m)
    return Authenticator(ctx.stream_key, k + (k % 2 if {"ap", "pauc"} & set(metrics) else 0),
                         release_bits(m, central, ci, decimals, metrics))


def with_ci(job, m: int) -> bool:
    """Whether the job opens DeLong's variance of ``m`` rows: asked, and at most :data:`CI_ROWS`."""
    return job.central is None and "ci" in job.evaluation.spec.metrics and m <= CI_ROWS


def compute(ctx, job, held: AuthenticatedRows, fraction_bits: int, shuffler) -> dict:
    """Release W and n1 (then the metrics asked for: :func:`_metrics`; with decimals n1 and the AUC rounded inside,
    W not opened), or mpc-central's release (module docstring, steps 2 and 3): {"defined", "scaled",
    "positives", "metrics", "security", ...} or {"central", "security"}, as protocols.mpc.ranking_party's results
    hold them."""
    auth, m = held.auth, sum(held.rows)

    def progress(done, total):
        if ctx.rank == 0:
            ctx.progress(f"the authenticated radix sort of {m} scores: digit {done}/{total}")

    ranking = AuthRadixRanking(shuffler, auth, progress)
    if isinstance(job.central, CurveNoise):  # the labels in ascending order of the keys, ties in row order
        sorted_labels = ranking.apply(ranking.permutation(held.digits), held.labels[None])[0]
        release = curve_release(ctx, auth, job.central, sorted_labels)
        return {"central": release, "security": _security(auth)}
    sigma, moved, partners = both_orders(ranking, held.digits, held.labels,
                                         _tie_groups_wanted(job.evaluation.spec.metrics, m))
    w, n1, twice_ranks = sums_of(auth, sigma, moved, held.labels)
    ci = with_ci(job, m) and auth.wide_bits >= release_bits(m, ci=True)  # not when admitted rows were past the bound
    sums = [w, n1] + (list(placement_squares(ranking, sigma, moved, held.labels, n1)) if ci else [])
    del sigma
    if not {"ap", "ks", "pauc"} & set(job.evaluation.spec.metrics) and not job.evaluation.spec.curves:
        moved = None  # AP, the partial AUC, the curves and the KS statistic alone read the moved labels after the sums
    if job.central is not None:
        release = central_release(ctx, auth, job.central, w, n1, m)
        return {"central": release, "security": _security(auth)}
    ranks = {}
    if job.ranks:  # each row's doubled mid-rank with beta_0 times it, for its client to check (bundles.open_ranks)
        betas = np.repeat(held.betas, held.rows, axis=-1)
        ranks["rank_shares"] = np.stack([twice_ranks[0], auth.multiply(betas, twice_ranks, "the ranks' MACs")[0]])
    decimals = job.evaluation.spec.decimals
    if ctx.rank == 0:
        ctx.progress("MAC checks and the release of the " + ("rank sums" if decimals is None else "count of positives"))
    if decimals is None:  # the releases check the ranks' products too
        w, n1 = (int(v) for v in auth.release(np.stack(sums[:2], axis=1), "rank sums"))
        scaled = floor_scaled(*auc_from_sums(w, n1, m), fraction_bits) if 0 < n1 < m else None
    else:  # W stays inside: the AUC rounded there, from the opened n1 (2PN public)
        n1 = int(auth.release(sums[1][:, None], "count of positives")[0])
        scaled = _rounded(ctx, auth, sums[0], n1, m, decimals) if 0 < n1 < m else None
    defined = 0 < n1 < m
    metrics = _metrics(ctx, job, ranking, (moved, partners), sums, n1, w, m, ci) if defined else {}
    return {"defined": defined, "scaled": scaled,
            "positives": n1, "metrics": metrics, "others": [],
            "security": _security(auth), **ranks}


def _metrics(ctx, job, ranking, orders: tuple, sums: list, n1: int, w, m: int, ci: bool) -> dict:
    """The job's metrics beyond the AUC, each opened through Authenticator.release after W and n1 (or n1 alone), as
    the semi-honest job's integers: DeLong's variance from the opened W and the sums of squared placement values
    (``ci``: computed), AP and the partial AUC from the true tie groups (made once for both), the curves' points and
    the KS statistic from the moved labels and partners of the sort of both orders (``orders``); both classes
    present (n1 opened)."""
    auth, spec, (moved, partners) = ranking.auth, job.evaluation.spec, orders
    metrics = {}
    if "ci" in spec.metrics:  # the sums only where the semi-honest job opens a variance
        metrics["ci"] = (Refused(f"under security malicious DeLong's variance is computed for at most {CI_ROWS:,} "
                                 "rows admitted to the job") if not ci else Refused(TWO_ROWS) if min(n1, m - n1) < 2
                         else _variance(auc_from_sums(w, n1, m)[0], n1, m - n1, *(int(v) for v in auth.release(
                             np.stack(sums[2:], axis=1), "sums of squared placement values"))))
    groups = _tie_groups(ctx, ranking, orders, n1, spec.metrics) if _tie_groups_wanted(spec.metrics, m) else None
    if "ap" in spec.metrics:
        metrics["ap"] = _average_precision(ctx, ranking, groups, n1)
    if "pauc" in spec.metrics:
        metrics["pauc"] = (Refused(f"the partial AUC is computed for at most {CI_MAX_ROWS} rows") if m > CI_MAX_ROWS
                           else _partial_area(ctx, ranking.auth, groups, n1, spec.max_fpr))
    if spec.curves:  # the points at the public cuts
        metrics["curve"] = _curves(ctx, ranking, moved, n1, spec)
    if "ks" in spec.metrics:  # KS P N, divided in the clear
        if ctx.rank == 0:
            ctx.progress(f"the KS statistic: a tournament of {2 * m - 1} authenticated comparisons")
        gap = int(auth.release(ks_gap(auth, moved, sums[1])[:, None], "KS statistic")[0])
        metrics["ks"] = floor_scaled(gap, n1 * (m - n1), OPEN_BITS)
    return metrics


def _rounded(ctx, auth, w: np.ndarray, n1: int, m: int, decimals: int) -> int:
    """round(AUC 10^K), halves up, from the wide [W] and the opened n1: 2U = W - n1 (n1 - 1) (public n1: linear)
    divided by the public 2PN inside (circuits.auth_compare.decimal_round), opened through Authenticator.release:
    the integer circuits.division.decimal_round opens in the semi-honest job."""
    if ctx.rank == 0:
        ctx.progress(f"the AUC rounded to {decimals} decimals inside the MPC")
    auth.phase = "the rounding of the AUC"
    twice_u = auth.add_public(w[:, None], -n1 * (n1 - 1))
    rounded = decimal_round(auth, twice_u, 2 * n1 * (m - n1), decimals, "the rounding of the AUC")
    return int(auth.release(rounded, "rounded AUC")[0])


def _tie_groups_wanted(metrics, m: int) -> bool:
    """Whether the job computes the true tie groups (circuits.auth_tie_groups): for AP, or for the partial AUC of at
    most CI_MAX_ROWS rows."""
    return "ap" in metrics or ("pauc" in metrics and m <= CI_MAX_ROWS)


def _tie_groups(ctx, ranking, orders: tuple, n1: int, metrics) -> TieGroups:
    """The true tie groups from the sort of both orders (circuits.auth_tie_groups), made once for AP and the partial
    AUC (under AP's phase when it is asked, else the partial AUC's: a failed check names the metric), from the moved
    labels and partners of the sort of both orders (``orders``)."""
    moved, partners = orders
    m = moved.shape[-1] // 2
    if ctx.rank == 0:
        ctx.progress(f"the tie groups: {m - 1} zero tests, a one-digit sort")
    return tie_groups(ranking, moved, partners, n1, auth_ap.PHASE if "ap" in metrics else auth_pauc.PHASE)


def _average_precision(ctx, ranking, groups: TieGroups, n1: int) -> int:
    """floor(AP 2^52) from the true tie groups (circuits.auth_ap), its base-2^16 digits opened through
    Authenticator.release and joined in the clear: the integer the semi-honest job opens
    (circuits.rank_metrics.secret_average_precision), and nothing more."""
    if ctx.rank == 0:
        ctx.progress(f"average precision: the bits of {groups.below.shape[-1]} counts, divisions by P")
    digits = auth_ap.average_precision(ranking, groups, n1)
    return auth_ap.joined(ranking.auth.release(digits, "average precision"))


def _partial_area(ctx, auth, groups: TieGroups, n1: int, max_fpr: float) -> dict:
    """{"scaled": about floor(A 2^40)} of the partial AUC up to ``max_fpr`` from the true tie groups
    (circuits.auth_pauc), opened through Authenticator.release: the integer the semi-honest job opens
    (circuits.rank_metrics.secret_partial_area), and nothing more."""
    if ctx.rank == 0:
        ctx.progress(f"partial AUC to FPR {max_fpr:g}: {groups.below.shape[-1]} comparisons, divisions fed digit by "
                     "digit")
    area = auth_pauc.partial_area(auth, groups, n1, round(max_fpr * 2 ** FPR_BITS))
    return {"scaled": int(auth.release(area, "partial AUC")[0])}


def _curves(ctx, ranking, moved: np.ndarray, n1: int, spec) -> dict:
    """{"flagged": the cuts, and per curve value (protocols.metric_catalogue.curve_values) its floor(value 2^52) at
    each cut}, from the runs of the sort of both orders (circuits.auth_curves), opened through
    Authenticator.release: the integers the semi-honest job opens (circuits.rank_metrics.curve_points)."""
    m, wanted = moved.shape[-1] // 2, curve_values(spec.metrics)
    flagged = cut_positions(m, spec.points)
    if ctx.rank == 0:
        ctx.progress(f"curves at {len(flagged)} cuts: {m} authenticated comparisons, a one-digit sort, "
                     f"{len(wanted) * len(flagged)} long divisions")
    points = auth_curves.curve_points(ranking, moved, n1, flagged, wanted)
    opened = ranking.auth.release(np.concatenate([points[name] for name in wanted], axis=-1), "curve points")
    return {"flagged": flagged.tolist(), **{name: [int(v) for v in auth_curves.joined(values.astype(object))]
                                            for name, values in zip(wanted, np.split(opened, len(wanted), axis=-1))}}


def central_release(ctx, auth, central, w: np.ndarray, n1: np.ndarray, m: int) -> tuple:
    """mpc-central's release (protocols.mpc.central) from the wide [W] and [n1]: (2T + Z_T or 2U + Z_U, P + Z_P)
    per repetition, 2T = W - n1 (M - 1) (label) or 2U = W - n1 (n1 - 1) (record, one product), the noise drawn on
    authenticated shares (circuits.auth_noise) and the sums opened only through Authenticator.release, after a check
    of the sort's openings and one of the draw's (each naming its phase), with a check of the opening after; n1
    itself is not opened."""
    if ctx.rank == 0:
        ctx.progress(f"discrete Laplace on authenticated shares ({central.repetitions} release(s)), MAC checks")
    n1 = n1[:, None]
    if central.neighbours == "label":
        stat = w[:, None] - n1 * np.int64(m - 1)
    else:
        stat = w[:, None] - auth.multiply(n1, auth.add_public(n1, -1), "n1 (n1 - 1)")
    auth.check("the authenticated sort")  # each failed check names its phase: the sort's, then the draw's
    noisy = np.stack([stat + discrete_laplace(auth, central.statistic_noise(m), central.repetitions),
                      n1 + discrete_laplace(auth, central.count_noise(), central.repetitions)], axis=1)
    auth.check(NOISE_PHASE)
    return tuple(_signed(auth, auth.release(noisy, "DP release")))


def curve_release(ctx, auth, noise: CurveNoise, sorted_labels: np.ndarray) -> np.ndarray:
    """The DP curve (protocols.dp.curve_law) from the wide [labels] (1 + keys, M) in ascending order of the keys:
    the tree's nodes over the positives between the public cuts (linear in the labels), each with its discrete
    Laplace drawn on authenticated shares, opened per repetition (R, nodes) only through Authenticator.release,
    after a check of the sort's openings and one of the draw's."""
    m = sorted_labels.shape[-1]
    if ctx.rank == 0:
        ctx.progress(f"DP curve at {noise.points} cuts, discrete Laplace on authenticated shares, MAC checks")
    nodes = noise.nodes(sorted_labels)
    auth.check("the authenticated sort")
    drawn = discrete_laplace(auth, noise.node_noise(m), nodes.shape[-1] * noise.repetitions)
    auth.check(NOISE_PHASE)
    noisy = nodes[:, None, :] + drawn.reshape(len(drawn), noise.repetitions, nodes.shape[-1])
    return _signed(auth, auth.release(noisy, "DP release"))


def _security(auth) -> dict:
    """What a result states of its security: the mode, s and the MAC checks run."""
    return {"mode": "malicious", "statistical_bits": auth.s, "checks": auth.checks}


def _signed(auth, opened: np.ndarray) -> np.ndarray:
    """Released words mod 2^w (w the wide values' bits) as the signed values they hold."""
    return np.where(opened >= 1 << (auth.wide_bits - 1), opened - (1 << auth.wide_bits), opened)


def _variance(twice_u: int, p: int, n: int, q10: int, q01: int) -> dict:
    """{"scaled": floor(Var 2^54)} of DeLong's variance from the opened 2U, P, N >= 2 and sums of squared placement
    values Q10, Q01 (circuits.auth_auc.placement_squares): the integer circuits.rank_metrics.delong_variance opens in the semi-honest job, by the same integer steps in the
    clear (each of its long divisions is an exact floor): AUC = h 2^-20 + l 2^-40, AUC^2 2^40 about h^2 +
    floor(2 h l / 2^20), c10 = floor(Q10 2^40 / (4 N^2 P)) - that (DeLong1988's S10 with ties as halves, in units
    of 2^-40), then sign(c) floor(|c| 2^52 / ((P - 1) 2^38)) for each class, summed."""
    pn2, half = 2 * p * n, MEAN_BITS // 2
    h, fine = (twice_u << half) // pn2, (twice_u << MEAN_BITS) // pn2
    low = fine - (h << half)
    square = h * h + ((2 * h * low) << (half + 2)) // (1 << (MEAN_BITS + 2))
    total = 0
    for q, scale, count in ((q10, 4 * n * n * p, p), (q01, 4 * p * p * n, n)):
        spread = (q << MEAN_BITS) // scale - square
        term = (abs(spread) << (VARIANCE_BITS - 2)) // ((count - 1) << (MEAN_BITS - 2))
        total += term if spread >= 0 else -term
    return {"scaled": total}
