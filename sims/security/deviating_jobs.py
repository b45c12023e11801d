"""A compute party that deviates inside whole jobs, for the tests and ``mpc-auc security``: the real job loop under
``--security malicious`` with one party's cheat on its link (sims.security.deviating_party.Cheat: an offset on one
word, a stale frame replayed, or random words in place of its share), and the controls: the same cheat with the
MAC checks skipped (the weakened variant) and on the semi-honest job.  :func:`job_deviation_checks` is the
security suite's step.
"""
from types import SimpleNamespace

import numpy as np

from .deviating_party import Cheat, crypten_link, skip_checks
from .report import check

SEMI_HONEST = "the semi-honest job"  # the phase name of a cheat on the semi-honest job (it has no phases to name)
SEMI_HONEST_NOISE = "the semi-honest noise draw"  # ... on the semi-honest job's noise draw (circuits.noise)


def cheating_jobs(ctx, fraction_bits: int, cheater: int, phase: str, check: bool = True, frame: int = 0,
                  mode: str = "offset"):
    """The parties' real job loop (protocols.mpc.ranking_party.serve_jobs) in which party ``cheater`` changes the
    ``frame``-th frame it sends in ``phase`` of each job under security with abort
    (sims.security.deviating_party.Cheat, on its link after the protocol made the frame; ``mode``: an offset on one
    word, the last frame of its length replayed, or random words); with ``check`` False both parties' MAC checks
    are skipped (the weakened variant).  ``phase`` :data:`SEMI_HONEST`: an offset on the ``frame``-th frame it sends
    in the session, whatever the job (the semi-honest default has no checks to skip); :data:`SEMI_HONEST_NOISE`: on
    the ``frame``-th frame it sends while circuits.noise draws the discrete Laplace."""
    from ...protocols.mpc import malicious, ranking_party  # lazily: CrypTen only in the role processes

    link = crypten_link(ctx)
    if phase in (SEMI_HONEST, SEMI_HONEST_NOISE):
        now = SimpleNamespace(phase=SEMI_HONEST)
        if ctx.rank == cheater:
            Cheat(now, link).arm(phase, frame, 3, 5)
        honest_draw = ranking_party.discrete_laplace

        def drawing(*args):
            now.phase = SEMI_HONEST_NOISE
            try:
                return honest_draw(*args)
            finally:
                now.phase = SEMI_HONEST

        ranking_party.discrete_laplace = drawing
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


JOB_PHASES = ("the input of client", "the shuffle of digit", "the one-hot products of digit")
JOB_WEAKENED = 2  # weakened jobs per cheating party
OTHER_DEVIATIONS = {"replay": "replays a stale frame", "substitute": "sends random words for its share"}
OTHER_FRAME = 2  # in the shuffle of digit 1: a frame of the length of one sent in the shuffle of digit 0
SEMI_HONEST_FRAMES = {0: (190, 195, 200), 1: (200, 210, 230)}  # per party, frames of the 60-row job's long division
#                                                                  (most offsets there bend the AUC unseen)


def cheating_job(cheater: int, phase: str, check: bool = True, seed: int = 7, frame: int = 0, mode: str = "offset",
                 noise=None):
    """One mpc-exact job (mpc-central's with ``noise``, a CentralNoise) on 60 rows of two clients (ties), under
    security with abort or (``phase`` :data:`SEMI_HONEST` or :data:`SEMI_HONEST_NOISE`) semi-honest, party
    ``cheater`` cheating in ``phase`` as ``mode`` says (:func:`cheating_jobs`): (the clients, the released AUC (the
    opened (2T + Z_T, P + Z_P) with ``noise``), or the error that stopped it: DeviationDetected when a check found
    the cheat)."""
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
    security = "semi-honest" if phase in (SEMI_HONEST, SEMI_HONEST_NOISE) else "malicious"
    request = simulated(clients, ScoreEncoder(), spec=ReleaseSpec(security=security))
    try:
        run, = run_ranking_jobs([request], "radix", False, noise, LOCAL, 60.0, None, party=cheating_jobs,
                                party_args=(cheater, phase, check, frame, mode))
        return clients, exact_result(run, "radix").auc if noise is None else central_release(run, noise).opened[0]
    except (PartyFailure, InputError) as stopped:  # a check's stop, or a semi-honest job's error or refusal
        return clients, stopped


def job_deviation_checks(cfg: dict, rng) -> list:
    """The suite's step on whole jobs under ``--security malicious``, per cheating party: the share of its jobs
    (``deviation_jobs`` per phase of JOB_PHASES, an offset on one word it sends) that stopped with
    DeviationDetected and released nothing, which must be all; and two controls, JOB_WEAKENED jobs with both
    parties' checks skipped and the semi-honest job with the offset on one of the party's SEMI_HONEST_FRAMES, each
    of which must release a wrong AUC."""
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
                                        "measured": "share of the jobs stopped by DeviationDetected"}, pass_if="=="))
        for mode, what in OTHER_DEVIATIONS.items():
            stopped = [isinstance(cheating_job(party, "the shuffle of digit", seed=n, frame=OTHER_FRAME, mode=mode)[1],
                                  DeviationDetected) for n in range(cfg["deviation_jobs"])]
            out.append(check(f"P{party} {what} in a shuffle of a job under --security malicious: the job stops",
                             "attack", label, None, None, sum(stopped) / len(stopped), 1.0, all(stopped),
                             {"jobs": cfg["deviation_jobs"], "measured": "share of the jobs stopped by "
                                                                         "DeviationDetected"}, pass_if="=="))
        out.append(check(f"P{party}'s same cheat with the MAC checks skipped: jobs releasing a wrong AUC", "control",
                         label, None, None, wrong, 0, wrong <= 0, {"jobs": JOB_WEAKENED}))
        bent = semi_honest_bent(party)
        out.append(check(f"P{party} adds the same offset to one frame of the semi-honest job: jobs releasing a wrong "
                         "AUC without an error", "control", "mpc-exact (semi-honest default)", None, None, bent, 0,
                         bent <= 0, {"frames": list(SEMI_HONEST_FRAMES[party])}))
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
