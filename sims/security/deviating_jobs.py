"""A compute party that deviates inside whole jobs, for the tests and ``mpc-auc security``: the real job loop under
``--security malicious`` with one party's cheat on its link (sims.security.deviating_party.Cheat: an offset on one
word, a stale frame replayed, or random words in place of its share), and the controls: the same cheat with the
MAC checks skipped (the weakened variant) and on the semi-honest job; the same for mpc-central's noise draw, whose
bent release is told by a noise outside its support (:func:`impossible`); the same for the releases made by
authenticated comparisons (circuits.auth_compare: the KS statistic, the AUC rounded to decimals).
:func:`job_deviation_checks` is the security suite's step.
"""
from types import SimpleNamespace

import numpy as np

from .deviating_party import Cheat, crypten_link, skip_checks
from .report import check

SEMI_HONEST = "the semi-honest job"  # the phase name of a cheat on the semi-honest job (it has no phases to name)
SEMI_HONEST_NOISE = "the semi-honest noise draw"  # ... on the semi-honest job's noise draw (circuits.noise)
SEMI_HONEST_KS = "the semi-honest KS statistic"  # ... on its KS statistic (circuits.rank_metrics)
SEMI_HONEST_ROUNDING = "the semi-honest rounding"  # ... on its AUC's rounding to decimals (circuits.division)
SEMI_HONEST_CURVES = "the semi-honest curves"  # ... on its curve points (circuits.rank_metrics)
SEMI_HONEST_AP = "the semi-honest average precision"  # ... on its average precision (circuits.rank_metrics)
SEMI_HONEST_PAUC = "the semi-honest partial AUC"  # ... on its partial AUC (circuits.rank_metrics)
SEMI_HONEST_STEPS = {SEMI_HONEST_NOISE: "discrete_laplace", SEMI_HONEST_KS: "secret_ks_statistic",
                     SEMI_HONEST_ROUNDING: "decimal_round", SEMI_HONEST_CURVES: "curve_points",
                     SEMI_HONEST_AP: "secret_average_precision",
                     SEMI_HONEST_PAUC: "secret_partial_area"}  # circuits of protocols.mpc.ranking_party


def cheating_jobs(ctx, fraction_bits: int, cheater: int, phase: str, check: bool = True, frame: int = 0,
                  mode: str = "offset"):
    """The parties' real job loop (protocols.mpc.ranking_party.serve_jobs) in which party ``cheater`` changes the
    ``frame``-th frame it sends in ``phase`` of each job under security with abort
    (sims.security.deviating_party.Cheat, on its link after the protocol made the frame; ``mode``: an offset on one
    word, the last frame of its length replayed, or random words); with ``check`` False both parties' MAC checks
    are skipped (the weakened variant).  ``phase`` :data:`SEMI_HONEST`: an offset on the ``frame``-th frame it sends
    in the session, whatever the job (the semi-honest default has no checks to skip); a phase of
    :data:`SEMI_HONEST_STEPS`: on the ``frame``-th frame it sends while that circuit runs (circuits.noise's discrete
    Laplace, circuits.rank_metrics' KS statistic)."""
    from ...protocols.mpc import malicious, ranking_party  # lazily: CrypTen only in the role processes

    link = crypten_link(ctx)
    if phase in (SEMI_HONEST, *SEMI_HONEST_STEPS):
        now = SimpleNamespace(phase=SEMI_HONEST)
        if ctx.rank == cheater:
            Cheat(now, link).arm(phase, frame, 3, 5)
        for step, name in SEMI_HONEST_STEPS.items():
            setattr(ranking_party, name, _named(now, step, getattr(ranking_party, name)))
        return ranking_party.serve_jobs(ctx, fraction_bits)
    honest = malicious.authenticator

    def cheating(ctx, m, *args):
        auth = honest(ctx, m, *args)
        if ctx.rank == cheater:
            Cheat(auth, link).arm(phase, frame, 3, 5, mode)
        if not check:
            skip_checks(auth)
        return auth

    malicious.authenticator = cheating
    return ranking_party.serve_jobs(ctx, fraction_bits)


def recording_jobs(ctx, fraction_bits: int):
    """The parties' real job loop under security with abort, each job's result carrying "releases": the kind of
    every Authenticator.release the job made, in order (what the parties opened)."""
    from ...protocols.mpc import malicious, ranking_party  # lazily: CrypTen only in the role processes

    honest, compute, kinds = malicious.authenticator, malicious.compute, []

    def recording(ctx, m, *args):
        auth = honest(ctx, m, *args)
        release = auth.release
        auth.release = lambda x, kind: kinds.append(kind) or release(x, kind)
        return auth

    def computing(*args):
        kinds.clear()
        return {**compute(*args), "releases": list(kinds)}

    malicious.authenticator, malicious.compute = recording, computing
    return ranking_party.serve_jobs(ctx, fraction_bits)


def released_kinds(clients, spec) -> list:
    """What the parties opened (:func:`recording_jobs`) in one mpc-exact job of ``spec`` on ``clients``."""
    from ...protocols.inputs.encoding import ScoreEncoder  # lazily, as the job's modules
    from ...protocols.mpc.ranking_job import run_ranking_jobs, simulated  # lazily, as above
    from ...protocols.runtime.session import LOCAL  # lazily, as above

    run, = run_ranking_jobs([simulated(clients, ScoreEncoder(), spec=spec)], "radix", False, None, LOCAL, 60.0, None,
                            party=recording_jobs)
    return run.outs[0]["releases"]


def _named(now, phase: str, step):
    """``step`` (a circuit of the semi-honest job) run with ``now.phase`` set to ``phase``."""
    def named(*args):
        now.phase = phase
        try:
            return step(*args)
        finally:
            now.phase = SEMI_HONEST

    return named


JOB_PHASES = ("the input of client", "the shuffle of digit", "the one-hot products of digit")
JOB_WEAKENED = 2  # weakened jobs per cheating party
OTHER_DEVIATIONS = {"replay": "replays a stale frame", "substitute": "sends random words for its share"}
OTHER_FRAME = 2  # in the shuffle of digit 1: a frame of the length of one sent in the shuffle of digit 0
SEMI_HONEST_FRAMES = {0: (190, 195, 200), 1: (200, 210, 230)}  # per party, frames of the 60-row job's long division
#                                                                  (most offsets there bend the AUC unseen)
NOISE_PHASE = "the noise draw"  # circuits.auth_noise.PHASE: mpc-central's draw on authenticated shares
NOISE_FRAMES = 20  # the frames each party sends in it for the label release's two draws (10 rounds each)
SEMI_HONEST_NOISE_FRAME = 12  # a frame of the semi-honest draw (circuits.noise) whose offset bends the statistic's noise
NOISE_ATTEMPTS = 4  # jobs run until one bends the release (under the weakened variant ~1% land inside the support)
KS_PHASE = "the KS statistic's comparisons"  # circuits.auth_auc.ks_gap: the KS statistic's tournament
ROUNDING_PHASE = "the rounding of the AUC"  # protocols.mpc.malicious._rounded: the AUC to decimals
CURVE_PHASE = "the curve points"  # circuits.auth_curves.PHASE: the runs, their partition, the long divisions
AP_PHASE = "the average precision"  # circuits.auth_ap.PHASE: the zero tests, the partition, the bits, the divisions
PAUC_PHASE = "the partial AUC"  # circuits.auth_pauc.PHASE: the groups (alone), the line, the fed divisions, the product
PAUC_FPR = 0.3  # the deviation rows' max_fpr: the line crosses a tie group of the 60-row job
COMPARED_ATTEMPTS = 4  # jobs run until one bends the release (an offset on a semi-honest frame does in most)
# The released steps on authenticated comparisons (circuits.auth_compare), each with: the job that opens it (metrics,
# decimals) and what it returns; the frames each party sends in its phase in the 60-row job; a frame whose offset
# bends the release when unchecked (the last product; the curves': one of the long divisions, as the last round's
# product only updates a remainder no one reads; AP's: the products p_j precision_j, as an offset on a comparison's
# masked opening flips it only near 0; the partial AUC's: a frame of y's division); the semi-honest circuit's phase
# and a frame whose offset bends it there.  max_fpr: the partial AUC's (the other steps' jobs have none).
COMPARED = {
    "ks": dict(phase=KS_PHASE, metrics="auc,ks", decimals=None, opened="ks", frames=42, bent=41,  # 7 levels of 6
               semi_honest=SEMI_HONEST_KS, semi_honest_frame=0, what="the KS statistic"),
    "decimals": dict(phase=ROUNDING_PHASE, metrics="auc", decimals=3, opened="auc", frames=20, bent=19,  # 4 x 5
                     semi_honest=SEMI_HONEST_ROUNDING, semi_honest_frame=10, what="the AUC rounded to 3 decimals"),
    "curves": dict(phase=CURVE_PHASE, metrics="auc,roc", decimals=None, opened="roc", frames=100, bent=50,
                   semi_honest=SEMI_HONEST_CURVES, semi_honest_frame=10, what="the ROC curve"),
    "ap": dict(phase=AP_PHASE, metrics="auc,ap", decimals=None, opened="ap", frames=103, bent=16,  # 16: p_j prec_j
               semi_honest=SEMI_HONEST_AP, semi_honest_frame=20, what="the average precision"),
    "pauc": dict(phase=PAUC_PHASE, metrics="auc", decimals=None, max_fpr=PAUC_FPR, opened="pauc", frames=159,
                 bent=120, semi_honest=SEMI_HONEST_PAUC, semi_honest_frame=20, what="the partial AUC"),  # 120: y's
}  # division


def cheating_job(cheater: int, phase: str, check: bool = True, seed: int = 7, frame: int = 0, mode: str = "offset",
                 noise=None, metrics: str = "auc", opened: str = "auc", decimals: int = None, max_fpr: float = None):
    """One mpc-exact job (mpc-central's with ``noise``, a CentralNoise) on 60 rows of two clients (ties), under
    security with abort or (``phase`` :data:`SEMI_HONEST` or one of :data:`SEMI_HONEST_STEPS`) semi-honest, party
    ``cheater`` cheating in ``phase`` as ``mode`` says (:func:`cheating_jobs`): (the clients, the released AUC (the
    opened (2T + Z_T, P + Z_P) with ``noise``), or the error that stopped it: DeviationDetected when a check found
    the cheat); ``metrics``, ``decimals`` and ``max_fpr``: what the exact job opens
    (protocols.release_spec.ReleaseSpec), ``opened``: which of them is returned."""
    from ...protocols.errors import InputError, PartyFailure  # lazily: the job's modules load CrypTen's shim
    from ...protocols.inputs.encoding import ScoreEncoder  # lazily, as above
    from ...protocols.mpc.central import central_release  # lazily, as above
    from ...protocols.mpc.exact import exact_result  # lazily, as above
    from ...protocols.mpc.ranking_job import run_ranking_jobs, simulated  # lazily, as above
    from ...protocols.release_spec import ReleaseSpec  # lazily, as above
    from ...protocols.runtime.session import LOCAL  # lazily, as above

    rng = np.random.default_rng(seed)
    scores, labels = np.round(rng.random(60), 1), rng.integers(0, 2, 60)
    labels[:2] = (0, 1)
    clients = [("c0", scores[:30], labels[:30]), ("c1", scores[30:], labels[30:])]
    security = "semi-honest" if phase in (SEMI_HONEST, *SEMI_HONEST_STEPS) else "malicious"
    request = simulated(clients, ScoreEncoder(), spec=ReleaseSpec(metrics, decimals=decimals, max_fpr=max_fpr,
                                                                  security=security))
    try:
        run, = run_ranking_jobs([request], "radix", False, noise, LOCAL, 60.0, None, party=cheating_jobs,
                                party_args=(cheater, phase, check, frame, mode))
        if noise is not None:
            return clients, central_release(run, noise).opened[0]
        result = exact_result(run, "radix")
        return clients, result.auc if opened == "auc" else result.metrics[opened]
    except (PartyFailure, InputError) as stopped:  # a check's stop, or a semi-honest job's error or refusal
        return clients, stopped


def central_noise():
    """The release of the central jobs' cheats: mpc-central's label DP at epsilon 1."""
    from ...protocols.dp.central_law import CentralNoise  # lazily, as the job's modules

    return CentralNoise(1.0)


def exact_release(clients, neighbours: str = "label") -> tuple:
    """(2T, P) (label neighbours) or (2U, P) (record) of ``clients`` ((name, scores, labels)): what mpc-central adds
    its noise to, in the clear."""
    from ...protocols.clear_auc import twice_mid_ranks  # lazily, as the job's modules
    from ...protocols.dp.central_law import exact_statistic  # lazily, as above

    scores, labels = (np.concatenate([c[i] for c in clients]) for i in (1, 2))
    return exact_statistic(twice_mid_ranks(scores), labels, neighbours)


def impossible(clients, release) -> bool:
    """Whether ``release`` (the opened (2T + Z_T, P + Z_P) of :func:`central_noise` over ``clients``) is a value no
    draw of the noise could have made from the exact statistic: a noise outside its support (|Z| <= 2^B)."""
    noise, m = central_noise(), sum(len(y) for _, _, y in clients)
    (stat, count), exact = release, exact_release(clients, noise.neighbours)
    return abs(stat - exact[0]) > 2 ** noise.statistic_noise(m).width or \
        abs(count - exact[1]) > 2 ** noise.count_noise().width


def noise_bent(party: int, phase: str, check: bool, frame: int) -> bool:
    """Whether ``party``'s offset on ``frame`` of the draw in ``phase`` (:data:`NOISE_PHASE` with ``check`` False:
    the weakened variant; :data:`SEMI_HONEST_NOISE`) made one of up to NOISE_ATTEMPTS central jobs release an
    :func:`impossible` value without an error."""
    for seed in range(NOISE_ATTEMPTS):
        clients, release = cheating_job(party, phase, check=check, frame=frame, seed=seed, noise=central_noise())
        if not isinstance(release, Exception) and impossible(clients, release):
            return True
    return False


def noise_deviation_checks(cfg: dict, party: int) -> list:
    """The step's rows on mpc-central's noise draw for ``party``: 4 ``deviation_jobs`` jobs (20 in the full suite)
    whose cheat is an offset on one word of a frame of the draw (the frames spread over its NOISE_FRAMES), which must
    all stop; the weakened variant and the semi-honest draw with an offset on one frame of their last products, each
    of which must release a value outside the noise's support."""
    from ...protocols.errors import DeviationDetected  # lazily, as the job's modules

    label, runs = "mpc-central --security malicious (a whole job)", 4 * cfg["deviation_jobs"]
    frames = [n * NOISE_FRAMES // runs for n in range(runs)]
    stopped = [isinstance(cheating_job(party, NOISE_PHASE, seed=n, frame=f, noise=central_noise())[1], DeviationDetected)
               for n, f in enumerate(frames)]
    weakened = noise_bent(party, NOISE_PHASE, False, NOISE_FRAMES - 1)
    semi_honest = noise_bent(party, SEMI_HONEST_NOISE, True, SEMI_HONEST_NOISE_FRAME)
    return [check(f"P{party} adds an offset to one word it sends while mpc-central's noise is drawn under --security "
                  "malicious: the job stops, nothing released", "attack", label, None, None,
                  sum(stopped) / len(stopped), 1.0, all(stopped),
                  {"jobs": runs, "frames": frames, "measured": "share of the jobs stopped by DeviationDetected"},
                  pass_if="==", chance=False),
            check(f"P{party}'s same cheat on the draw's last product with the MAC checks skipped: a release outside the "
                  "noise's support", "control", label, None, None, int(weakened), 0, not weakened,
                  {"attempts": NOISE_ATTEMPTS}),
            check(f"P{party}'s offset on one frame of the semi-honest noise draw: a release outside the noise's "
                  "support without an error", "control", "mpc-central (semi-honest default)", None, None,
                  int(semi_honest), 0, not semi_honest, {"frame": SEMI_HONEST_NOISE_FRAME,
                                                         "attempts": NOISE_ATTEMPTS})]


def compared_bent(party: int, step: str, semi_honest: bool) -> bool:
    """Whether ``party``'s offset on the bending frame of COMPARED ``step`` (under the mode with the MAC checks skipped:
    the weakened variant; or on the semi-honest circuit) made one of up to COMPARED_ATTEMPTS jobs (their data and
    shares differ) release a value other than scikit-learn's (the curves: the clear reference's) without an error."""
    c = COMPARED[step]
    phase, frame = (c["semi_honest"], c["semi_honest_frame"]) if semi_honest else (c["phase"], c["bent"])
    for seed in range(COMPARED_ATTEMPTS):
        clients, value = cheating_job(party, phase, check=semi_honest, frame=frame, seed=seed, metrics=c["metrics"],
                                      decimals=c["decimals"], opened=c["opened"], max_fpr=c.get("max_fpr"))
        if not isinstance(value, Exception) and _wrong(step, clients, value):
            return True
    return False


def _wrong(step: str, clients, value) -> bool:
    """Whether the released ``value`` of COMPARED ``step`` on ``clients`` is not the true one: scikit-learn's KS or
    AUC (to the decimals asked), the clear curve points (protocols.clear_metrics.curve_at_cuts) to 1e-12, the clear
    partial area (protocols.clear_metrics.partial_area) to 1e-10 (the semi-honest circuit's own error is below
    2^-38)."""
    from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve  # lazily: only this step compares

    from ...protocols.clear_metrics import curve_at_cuts, partial_area  # lazily, as the job's modules

    labels, scores = (np.concatenate([client[i] for client in clients]) for i in (2, 1))
    if step == "curves":
        truth = curve_at_cuts(scores, labels, value["flagged"])
        return any(np.max(np.abs(np.asarray(value[name]) - truth[name])) > 1e-12 for name in ("tpr", "fpr"))
    if step == "ks":
        fpr, tpr, _ = roc_curve(labels, scores)
        return abs(value - np.max(np.abs(tpr - fpr))) > 1e-12
    if step == "pauc":
        return abs(value["area"] - partial_area(scores, labels, value["max_fpr"])) > 1e-10
    if step == "ap":  # the semi-honest AP's own error is below 3.1e-10 (circuits.rank_metrics)
        return abs(value - average_precision_score(labels, scores)) > 1e-9
    return abs(value - roc_auc_score(labels, scores)) > 0.5 * 10 ** -COMPARED[step]["decimals"]


def compared_deviation_checks(cfg: dict, party: int, step: str) -> list:
    """The step's rows on a release by authenticated comparisons (COMPARED ``step``: the KS statistic, the AUC's
    rounding, the ROC curve's points, AP, the partial AUC) for ``party``: 4 ``deviation_jobs`` jobs (20 in the full
    suite) whose cheat is an offset on one word of a frame of its phase (the frames spread over all it sends there),
    which must all stop; the weakened variant and the semi-honest circuit with an offset on one frame, each of which
    must release a wrong value."""
    from ...protocols.errors import DeviationDetected  # lazily, as the job's modules

    c, runs = COMPARED[step], 4 * cfg["deviation_jobs"]
    label = f"mpc-exact opening {c['what']} --security malicious (a whole job)"
    frames = [n * c["frames"] // runs for n in range(runs)]
    stopped = [isinstance(cheating_job(party, c["phase"], seed=n, frame=f, metrics=c["metrics"], decimals=c["decimals"],
                                       max_fpr=c.get("max_fpr"))[1], DeviationDetected)
               for n, f in enumerate(frames)]
    weakened, semi_honest = (compared_bent(party, step, mode) for mode in (False, True))
    return [check(f"P{party} adds an offset to one word it sends while {c['what']} is computed under --security "
                  "malicious: the job stops, nothing released", "attack", label, None, None,
                  sum(stopped) / len(stopped), 1.0, all(stopped),
                  {"jobs": runs, "frames": frames, "measured": "share of the jobs stopped by DeviationDetected"},
                  pass_if="==", chance=False),
            check(f"P{party}'s same cheat on frame {c['bent']} with the MAC checks skipped: a wrong value released",
                  "control", label, None, None, int(weakened), 0, not weakened, {"frame": c["bent"]}),
            check(f"P{party}'s offset on one frame of the semi-honest circuit for {c['what']}: a wrong value released "
                  "without an error", "control", f"mpc-exact opening {c['what']} (semi-honest default)", None, None,
                  int(semi_honest), 0, not semi_honest, {"frame": c["semi_honest_frame"]})]


def job_deviation_checks(cfg: dict, rng) -> list:
    """The suite's step on whole jobs under ``--security malicious``, per cheating party: the share of its jobs
    (``deviation_jobs`` per phase of JOB_PHASES, an offset on one word it sends) that stopped with
    DeviationDetected and released nothing, which must be all; and two controls, JOB_WEAKENED jobs with both
    parties' checks skipped and the semi-honest job with the offset on one of the party's SEMI_HONEST_FRAMES, each
    of which must release a wrong AUC; then the rows of :func:`noise_deviation_checks` (mpc-central's draw) and of
    :func:`compared_deviation_checks` (the KS statistic, the AUC's rounding to decimals, the ROC curve's points, AP,
    the partial AUC)."""
    from sklearn.metrics import roc_auc_score  # lazily: only this step compares with scikit-learn

    from ...protocols.errors import DeviationDetected  # lazily, as the job's modules

    out, label = [], "mpc-exact --security malicious (a whole job)"
    for party in (0, 1):
        stopped = [isinstance(cheating_job(party, phase, seed=n)[1], DeviationDetected) for phase in JOB_PHASES
                   for n in range(cfg["deviation_jobs"])]
        wrong = 0
        for n in range(JOB_WEAKENED):
            clients, auc = cheating_job(party, JOB_PHASES[-1], check=False, seed=n)
            truth = roc_auc_score(np.concatenate([y for _, _, y in clients]), np.concatenate([s for _, s, _ in clients]))
            wrong += not isinstance(auc, Exception) and abs(auc - truth) > 1e-12
        out.append(check(f"P{party} adds an offset to one word it sends in a job under --security malicious: the job "
                         "stops, nothing released", "attack", label, None, None, sum(stopped) / len(stopped), 1.0,
                         all(stopped), {"jobs per phase": cfg["deviation_jobs"], "phases": list(JOB_PHASES),
                                        "measured": "share of the jobs stopped by DeviationDetected"}, pass_if="==", chance=False))
        for mode, what in OTHER_DEVIATIONS.items():
            stopped = [isinstance(cheating_job(party, "the shuffle of digit", seed=n, frame=OTHER_FRAME, mode=mode)[1],
                                  DeviationDetected) for n in range(cfg["deviation_jobs"])]
            out.append(check(f"P{party} {what} in a shuffle of a job under --security malicious: the job stops",
                             "attack", label, None, None, sum(stopped) / len(stopped), 1.0, all(stopped),
                             {"jobs": cfg["deviation_jobs"], "measured": "share of the jobs stopped by "
                                                                         "DeviationDetected"}, pass_if="==", chance=False))
        out.append(check(f"P{party}'s same cheat with the MAC checks skipped: jobs releasing a wrong AUC", "control",
                         label, None, None, wrong, 0, wrong <= 0, {"jobs": JOB_WEAKENED}))
        bent = semi_honest_bent(party)
        out.append(check(f"P{party} adds the same offset to one frame of the semi-honest job: jobs releasing a wrong "
                         "AUC without an error", "control", "mpc-exact (semi-honest default)", None, None, bent, 0,
                         bent <= 0, {"frames": list(SEMI_HONEST_FRAMES[party])}))
        out.extend(noise_deviation_checks(cfg, party))
        for step in COMPARED:
            out.extend(compared_deviation_checks(cfg, party, step))
    return out


def semi_honest_bent(party: int, enough: int = None) -> int:
    """Of the semi-honest jobs in which ``party`` adds an offset to one word of frame f (each f of its
    SEMI_HONEST_FRAMES), those that released an AUC other than the honest job's, without an error (the jobs stop
    being run once ``enough`` did, if given)."""
    from ...protocols.clear_auc import opened_auc  # lazily, as the job's modules
    from ...protocols.mpc.ranking_job import FRACTION_BITS  # lazily, as above

    bent = 0
    for f in SEMI_HONEST_FRAMES[party]:
        clients, auc = cheating_job(party, SEMI_HONEST, frame=f)
        honest = opened_auc(np.concatenate([s for _, s, _ in clients]), np.concatenate([y for _, _, y in clients]),
                            FRACTION_BITS)
        bent += not isinstance(auc, Exception) and auc != honest
        if bent == enough:
            break
    return bent
