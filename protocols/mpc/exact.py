"""mpc-exact: the exact AUC of all clients' data, of which only the AUC is revealed.

Flow (docs/protocols/mpc-exact.md states every role's view):
1. P0 and P1 each hold an X25519 sealing key pinned in the deployment
   (protocols.runtime.deployment); each client makes a key pair for its replies.
2. The parties open the job: they draw its nonce together and issue each
   client its ticket (protocols.inputs.intake).  Each client encodes its scores as
   order-preserving integer keys, splits keys and labels into additive shares
   mod 2^64 (and the keys, offset to be non-negative, also into XOR shares
   for the radix sort) with the OS CSPRNG, seals share p for party p and signs
   a statement binding both bundles to the job (protocols.inputs.submission).  It
   sends them over its own TLS links to the parties (``mpc-auc client
   submit``), or the coordinator relays them (the local run, which simulates
   every client).  The parties admit only rostered, signed, fresh, bound
   submissions and check they hold the same ones.
3. Each party opens its bundles and enters CrypTen (precision 0, exact ring
   arithmetic) with its shares; the dealer serves Beaver triples and the
   shuffle correlations.
4. Oblivious ranking of the shared keys carrying the shared labels: the
   radix sort (circuits.radix, default) or the bitonic reference
   (circuits.bitonic); then the tie-aware Mann-Whitney fraction 2U / 2PN
   and mid-ranks (circuits.rank_auc, fedauc eq. 1 with mid-ranks).
5. Reveal [2PN > 0] (is the AUC defined?), then floor(AUC * 2^52) by exact
   long division (circuits.division).  Nothing else is opened.
6. Optionally (``ranks=True``) each sample's global mid-rank goes to the
   client that owns it: each party seals its share of twice the rank, in the
   client's row order, for that client alone (protocols.inputs.bundles).

The parties' side is protocols.mpc.ranking_party; the job's set-up, shared with mpc-central,
protocols.mpc.ranking_job.
"""
import math
from dataclasses import dataclass, field

from ..errors import EITHER, InputError, PartyFailure
from ..inputs.bundles import open_ranks
from ...circuits.scales import OPEN_BITS, VARIANCE_BITS
from ..clear_metrics import delong_interval, mcclish
from ..inputs.encoding import ScoreEncoder
from ..inputs.weights import TOTAL_BITS
from ..metric_catalogue import FPR_BITS, METRICS, revealed
from ..refused import Refused
from ..release_spec import ReleaseSpec
from ..runtime.session import LOCAL, Placement
from .ranking_job import FRACTION_BITS, JobRun, run_ranking_jobs, simulated


@dataclass
class MpcAucResult:
    auc: float
    m: int
    clients: int
    method: str
    wall_s: float
    sharing_s: float
    traffic: dict = field(default_factory=dict)  # role -> {"bytes", "rounds", "sent_bytes", "peak_rss"}
    upload_bytes: int = 0  # sealed bundles sent by all clients to both parties
    exact_encoding: bool = True
    ranks: dict = None  # client -> its rows' global 1-based mid-ranks (only with ranks=True)
    missing: list = field(default_factory=list)  # rostered clients left out (an evaluation allowing it)
    excluded: list = field(default_factory=list)  # clients left out for rows outside the domain (exclude_invalid)
    check_s: float = 0.0  # P0's time in the in-MPC check of the clients' rows (part of wall_s)
    revealed: tuple = ("AUC as floor(AUC * 2^52) / 2^52", "whether both classes occur",
                       "one validity bit per client (its rows are in the protocol's domain)")
    metrics: dict = field(default_factory=dict)  # the metrics beyond the AUC (:func:`opened_metrics`)
    others: list = field(default_factory=list)  # score columns after the first: {"auc", "metrics"} each
    covariance: dict = field(default_factory=dict)  # (i, j) -> DeLong's Cov(AUC_i, AUC_j) of score columns i < j
    positives: int = None  # under security with abort: the count of positives, opened with the rank sums
    security: dict = None  # under security with abort: {"mode", "statistical_bits" (s), "checks"} (None: semi-honest)


def mpc_exact_auc(datasets, encoder: ScoreEncoder = ScoreEncoder(), spec: ReleaseSpec = ReleaseSpec(),
                  method: str = "radix", ranks: bool = False, placement: Placement = LOCAL, timeout_s: float = 20.0,
                  on_progress=None, weights: list = None) -> list:
    """Run mpc-exact on each dataset in one session of the parties (with the separate dealer: the shuffles need
    it); the options are the planner's, checked there (mpc_auc.planner).

    datasets: list of datasets, each a list of (client_id, scores, labels); every client is simulated
      here (:func:`simulated`) and its signed submissions relayed to the parties.
    spec: what is opened (protocols.release_spec): the metrics from the same sort, the curves' cuts, the partial
      AUC's max FPR, the AUC's decimals (docs/protocols/mpc-exact.md: what each opens); result.metrics holds
      them (:func:`opened_metrics`).
    method: "radix" (the fast oblivious sort) or "bitonic" (the reference network).  ranks: also deliver each
      client its rows' global mid-ranks (result.ranks), sealed so only that client can read them (the coordinator
      simulates every client and holds its rows: the parties' ledgers charge nothing for it, protocols.mpc.accounting).
    placement: the roles spawned here over loopback TLS (default), or a deployment's serving roles.
    weights: per dataset, each client's sample weights (a list in client order), for the weighted AUC
      (docs/protocols/mpc-exact.md, "Weighted AUC"; the AUC only, no ranks); None: unweighted.
    Returns one MpcAucResult per dataset.  Raises InputError for bad rows (before any party learns anything)
    and PartyFailure if a role fails.
    """
    requests = [simulated(clients, encoder, (), spec, None if weights is None else weights[d])
                for d, clients in enumerate(datasets)]
    return [exact_result(run, method)
            for run in run_ranking_jobs(requests, method, ranks, None, placement, timeout_s, on_progress)]


def exact_result(run: JobRun, method: str) -> MpcAucResult:
    """The AUC both parties opened (and, for simulated clients, their ranks), checked to agree."""
    run.refused()
    run.agreed()
    outs = run.outs
    if any(outs[0].get(k) != outs[1].get(k) for k in ("defined", "scaled", "metrics", "others", "covariance",
                                                       "positives")):
        raise PartyFailure(EITHER, "the parties opened different outputs: "
                                 f"{outs[0]['scaled']} vs {outs[1]['scaled']}")
    if not outs[0]["defined"]:
        raise InputError("the joint data has no positives or no negatives (of positive weight, when weighted): the "
                         "AUC is undefined")
    encoder, decimals = run.ticket.encoder, run.ticket.terms.decimals
    ranks = None
    if outs[0].get("rank_bundles"):
        ranks = {c: open_ranks(key, c, run.ticket.job, [out["rank_bundles"][c] for out in outs], run.party_keys,
                               run.ticket.terms.security == "malicious")
                 for c, key in run.reply_keys.items()}
    def auc_of(scaled):
        return round(scaled / 10 ** decimals, decimals) if decimals else scaled / 2 ** FRACTION_BITS

    auc = auc_of(outs[0]["scaled"])
    terms = run.ticket.terms
    weighted = terms.weight_bits is not None
    return MpcAucResult(
        auc=auc,
        m=run.m,
        clients=len(outs[0]["clients"]),
        method=method,
        wall_s=run.wall_s,
        sharing_s=run.sharing_s,
        traffic=run.traffic(),
        upload_bytes=run.upload_bytes,
        exact_encoding=encoder.exact,
        ranks=ranks,
        missing=outs[0]["missing"],
        excluded=outs[0].get("excluded", []),
        check_s=float(outs[0]["check_s"]),
        revealed=malicious_revealed(terms.metrics, decimals, terms.points) if terms.security == "malicious" else (
                  ("weighted " if weighted else "")
                  + (f"AUC rounded to {decimals} decimals" if decimals else MpcAucResult.revealed[0]),
                  *([f"whether the weights' units add up to at most 2^{TOTAL_BITS}"] if weighted else []),
                  *MpcAucResult.revealed[1:], *revealed(terms.metrics[1:], terms.points),
                  *([f"the same for each of the other {len(outs[0]['others'])} score column(s)"]
                    if outs[0].get("others") else []),
                  *(["DeLong's covariance of each pair of score columns' AUCs to 2^-54"] if outs[0].get("covariance")
                    else [])),
        metrics=opened_metrics(outs[0]["metrics"], auc, run.m, terms.max_fpr),
        others=[{"auc": auc_of(o["scaled"]),
                 "metrics": opened_metrics(o["metrics"], auc_of(o["scaled"]), run.m, terms.max_fpr)}
                for o in outs[0].get("others", [])],
        covariance={tuple(map(int, pair.split(","))): v / 2 ** VARIANCE_BITS
                    for pair, v in outs[0].get("covariance", {}).items()},
        positives=outs[0].get("positives"),
        security=outs[0].get("security"),
    )


def secured(result) -> "dict | None":
    """What a result states of its security: {"mode", "statistical_bits", "checks"} under security with abort, and
    "positives" for an MpcAucResult (mpc-central opens no count); else None (semi-honest)."""
    security = getattr(result, "security", None)
    positives = getattr(result, "positives", None)  # mpc-central opens no count
    return None if security is None else {**security, **({} if positives is None else {"positives": positives})}


MALICIOUS_CI = ("DeLong's variance to 2^-54 when each class has two rows, and beyond the semi-honest job each class's "
                "sum of squared placement values it comes from (Q10 = 4N^2 sum V10^2, Q01 = 4P^2 sum V01^2: S10 and "
                "S01 apart)")
MALICIOUS_REVEALED = (MpcAucResult.revealed[0], "the count of positives (and so of negatives)",
                      "per row, whether its label is a bit (and its key's top digit, for keys of an odd bit count): "
                      "all are, or the client is named")


def malicious_revealed(metrics, decimals: int = None, points: int = 0) -> tuple:
    """What an exact release under security with abort opens: :data:`MALICIOUS_REVEALED` (the AUC rounded to
    ``decimals`` if given), with ``ci`` :data:`MALICIOUS_CI`, with the other metrics (the curves at ``points`` cuts)
    what the semi-honest job opens of them."""
    auc = (f"AUC rounded to {decimals} decimals",) if decimals else MALICIOUS_REVEALED[:1]
    return auc + MALICIOUS_REVEALED[1:] + ((MALICIOUS_CI,) if "ci" in metrics else ()) + tuple(revealed(
        [name for name in metrics if name not in ("auc", "ci")], points))


def opened_metrics(opened: dict, auc: float, m: int, max_fpr: float = None) -> dict:
    """The parties' opened integers (protocols.mpc.ranking_party) as the metrics' values: "ci" {"variance",
    "std", "ci"} (or a Refused), "ap", "ks" (floats), "roc" {"flagged", "fpr", "tpr"} and "pr"
    {"flagged", "recall", "precision"} (lists; ``flagged``: rows in the top of the ranking at each cut), "pauc"
    {"max_fpr", "area", "mcclish"} (the partial area and McClish's standardisation, as scikit-learn's)."""
    out = {}
    if "ci" in opened:
        ci = opened["ci"]
        if isinstance(ci, Refused):
            out["ci"] = ci
        else:
            variance = max(0.0, ci["scaled"] / 2 ** VARIANCE_BITS)  # a unit or two below 0 only when it is 0
            std = math.sqrt(variance)
            out["ci"] = {"variance": variance, "std": std, "ci": delong_interval(auc, std)}
    for name in ("ap", "ks"):
        if name in opened:
            out[name] = opened[name] / 2 ** OPEN_BITS
    if "pauc" in opened:
        if isinstance(opened["pauc"], Refused):
            out["pauc"] = opened["pauc"]
        else:
            area = opened["pauc"]["scaled"] / 2 ** FPR_BITS
            out["pauc"] = {"max_fpr": max_fpr, "area": area, "mcclish": mcclish(area, max_fpr)}
    curve = opened.get("curve")
    if curve:
        scaled = {k: [v / 2 ** OPEN_BITS for v in values] for k, values in curve.items() if k != "flagged"}
        if "fpr" in scaled:
            out["roc"] = {"flagged": list(curve["flagged"]), "fpr": scaled["fpr"], "tpr": scaled["tpr"]}
        if "precision" in scaled:
            out["pr"] = {"flagged": list(curve["flagged"]), "recall": scaled["tpr"], "precision": scaled["precision"]}
    return {name: out[name] for name in METRICS if name in out}  # the catalogue's order
