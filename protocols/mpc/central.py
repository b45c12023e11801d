"""mpc-central: the AUC of all clients' data with one discrete-Laplace draw added inside the MPC.

Scores and labels are secret-shared exactly as in mpc-exact; the oblivious
ranking (circuits.radix) and circuits.rank_auc give shares of 2U (twice the
Mann-Whitney count) and of P.  Instead of opening the AUC, the parties add
discrete Laplace noise drawn in the circuit (circuits.noise) and open only

    label DP (default):  2T + Z_T,  T = sum_i (r_i - (M-1)/2) y_i = U - P N / 2,
                         Delta(2T) = M - 1  (a label flip moves 2T by |2 r_k - (M-1)| <= M - 1);
    record DP:           2U + Z_U,  Delta(2U) = 2 (M - 1)  (replacing one record, score and label,
                         changes its own pair count by at most max(P, N) <= M - 1 and no other);
    both:                P + Z_P,   Delta(P) = 1,

Z_T (or Z_U) at alpha eps and Z_P at (1 - alpha) eps, so the release is
(eps, delta_T + delta_P)-DP by basic composition (delta from the circuit's
truncation and rounding, circuits.noise).  M is public.  The aggregator
then computes AUC = 1/2 + T~ / (P~ N~) (label) or U~ / (P~ N~) (record),
N~ = M - P~, with P~ clamped to [1, M - 1] (post-processing).  Label DP with
the centred statistic is the central form of fedauc's adaptive split with a
single client (u' = (M-1)/2 * 1, v' = r - u'): half the sensitivity of 2U.

Its std depends on M, P, N, eps (and the AUC itself), never on how the
rows are spread over clients (docs/protocols/mpc-central.md derives it).

The DP curve (noise protocols.dp.curve_law.CurveNoise) runs the same job and
opens, instead, the noisy nodes of the binary tree over the positives counted
between public cuts of the ranking: label DP at epsilon, the ROC and PR curves
post-processed from them (docs/protocols/mpc-central.md, "The DP curve").
"""
from dataclasses import dataclass

from ..dp.central_law import CentralNoise, auc_from_release
from ..dp.curve_law import CurveNoise, curve_from_nodes
from ..metric_catalogue import cut_positions
from ..errors import EITHER, PartyFailure
from ..release_spec import ReleaseSpec
from ..inputs.encoding import ScoreEncoder
from ..runtime.session import LOCAL
from .ranking_job import dataset_id, run_ranking_jobs, simulated


@dataclass
class CentralRelease:
    aucs: list  # one AUC per repetition
    opened: list  # (2T~ or 2U~, P~) per repetition: all the aggregator and the parties see
    m: int
    clients: int
    epsilon: float
    delta: float
    neighbours: str
    wall_s: float
    traffic: dict
    ledger: dict = None  # what the parties' ledgers charged, spent and have left
    missing: list = None  # rostered clients left out (an evaluation allowing it)
    excluded: list = None  # clients left out for rows outside the domain (exclude_invalid)
    security: dict = None  # under security with abort: {"mode", "statistical_bits", "checks"} (protocols.mpc.malicious)


@dataclass
class CurveRelease:
    curves: list  # one curve per repetition (protocols.dp.curve_law.curve_from_nodes)
    opened: list  # the noisy tree nodes per repetition: all the aggregator and the parties see
    m: int
    clients: int
    epsilon: float
    delta: float
    points: int
    wall_s: float
    traffic: dict
    ledger: dict = None
    missing: list = None
    excluded: list = None
    security: dict = None  # under security with abort: {"mode", "statistical_bits", "checks"} (protocols.mpc.malicious)

    @property
    def aucs(self) -> list:
        """The area under each noisy ROC curve (post-processing)."""
        return [c["auc"] for c in self.curves]

    @property
    def revealed(self) -> tuple:
        return (f"{len(self.opened[0])} noisy node sums of the binary tree over the positives between "
                f"{self.points} public cuts of the ranking (label DP at epsilon {self.epsilon:g}, delta "
                f"{self.delta:.2g})",)


def mpc_central_auc(datasets, noise, encoder=None, method: str = "radix", placement=None,
                    timeout_s: float = 20.0, on_progress=None, budget=None, dataset_ids=None,
                    owners: bool = True, security: str = "semi-honest") -> list:
    """Run mpc-central on each dataset (a list of (client_id, scores, labels)); one CentralRelease each, or one
    CurveRelease each when ``noise`` is a CurveNoise (the DP curve).

    Each release is first charged to both parties' privacy ledgers (protocols.mpc.accounting) under each client
    id of the dataset as a declared owner of its rows (``owners``; False: the ids are placeholders, no owner
    is declared), under the dataset's rows (:func:`dataset_id`) and, if ``dataset_ids`` gives one per
    dataset, under that id too (each account narrows the budget, none resets it), against ``budget``
    (ledger.Budget or None: record only); a release the ledgers refuse raises InputError and nothing is
    computed.  ``security`` "malicious": security with abort against a deviating compute party
    (protocols.mpc.malicious: the noise drawn on authenticated shares, the release between MAC checks).
    """

    encoder = encoder or ScoreEncoder()
    for clients in datasets:  # before any process starts
        noise.check(sum(len(scores) for _, scores, _ in clients))
    declared = dataset_ids or [None] * len(datasets)
    requests = [simulated(clients, encoder, (dataset_id(clients),) + ((f"declared:{i}",) if i else ()),
                          ReleaseSpec(security=security), owners=tuple(name for name, _, _ in clients) if owners else ())
                for clients, i in zip(datasets, declared)]
    return [released(run, noise) for run in run_ranking_jobs(
        requests, method, False, noise, placement or LOCAL, timeout_s, on_progress, budget)]


def released(run, noise):
    """What one job released: a CurveRelease for the DP curve's noise, else a CentralRelease."""
    return curve_release(run, noise) if isinstance(noise, CurveNoise) else central_release(run, noise)


def curve_release(run, noise: CurveNoise) -> CurveRelease:
    """The noisy tree nodes both parties opened in one job, checked to agree, and the curves they give."""
    run.refused()
    run.agreed()
    nodes = run.outs[0]["central"]
    if not (nodes == run.outs[1]["central"]).all():
        raise PartyFailure(EITHER, "the parties opened different releases")
    m = run.m
    flagged = cut_positions(m, noise.points)
    return CurveRelease([curve_from_nodes(n, flagged, m) for n in nodes], nodes.tolist(), m,
                        len(run.outs[0]["clients"]), noise.epsilon, noise.delta(m), noise.points, run.wall_s,
                        run.traffic(), run.outs[0]["ledger"], run.outs[0]["missing"], run.outs[0].get("excluded", []),
                        run.outs[0].get("security"))


def central_release(run, noise: CentralNoise) -> CentralRelease:
    """The release both parties opened in one job (protocols.mpc.ranking_job.JobRun), checked to agree."""
    run.refused()
    run.agreed()
    (stat0, p0), (stat1, p1) = run.outs[0]["central"], run.outs[1]["central"]
    if not ((stat0 == stat1).all() and (p0 == p1).all()):
        raise PartyFailure(EITHER, "the parties opened different releases")
    m = run.m
    return CentralRelease(
        aucs=[auc_from_release(int(s), int(p), m, noise.neighbours) for s, p in zip(stat0, p0)],
        opened=list(zip(stat0.tolist(), p0.tolist())), m=m, clients=len(run.outs[0]["clients"]),
        epsilon=noise.epsilon, delta=noise.delta(m), neighbours=noise.neighbours, wall_s=run.wall_s,
        traffic=run.traffic(), ledger=run.outs[0]["ledger"], missing=run.outs[0]["missing"],
        excluded=run.outs[0].get("excluded", []), security=run.outs[0].get("security"))
