"""Who a job's release is charged to, and what: the compute parties' side of privacy that follows the person.

A release is charged (protocols.runtime.ledger.Charge), before any MPC work opens it, to

* its **owners**: in a direct evaluation each participating client by its key (``client-key-sha256:`` and the
  SHA-256 of its Ed25519 public key), computed by the parties themselves from the roster entries of the
  submissions they admitted, so that no ghost roster entry, dropped client, name or id string changes what
  the others have spent; in a relayed job (``mpc-auc run``) the owners its coordinator declares
  (``owner:NAME``, the clients of the input file), since that coordinator holds every row itself;
* its **sets**: a direct evaluation's roster as a key set, a relayed job's rows as a multiset, and any declared
  ``--dataset-id``: each can only narrow what the job may spend.

DP releases (mpc-central) charge their discrete Laplace terms.  Exact releases of a direct evaluation (the
rows are not the organiser's) charge no epsilon but are counted and pinned per owner (protocols.runtime.ledger),
each owner within the terms its signed statement accepts (protocols.inputs.submission.Accepts); a relayed
job's exact releases go to the coordinator that holds the rows, and are not charged.
"""
from ..inputs.submission import ReleaseTerms
from ..runtime.identity import PublicIdentity
from ..runtime.ledger import Charge, Exact, Release
from ..metric_catalogue import thin_slices

KEY_ACCOUNT = "client-key-sha256:"
OWNER_ACCOUNT = "owner:"
SET_ACCOUNTS = ("declared:", "rows-sha256:")  # the set accounts a coordinator may name (never an owner's)


def key_account(member: PublicIdentity) -> str:
    """The account of a client that submits directly: its key, whatever its name or roster."""
    return KEY_ACCOUNT + member.key_sha256


def owners(job, admitted=None) -> tuple:
    """(account, name) of each owner whose rows the job uses: the admitted clients of a direct evaluation, the
    declared owners of a relayed job."""
    if job.evaluation.direct:
        return tuple((key_account(a.member), a.client) for a in admitted)
    return tuple((OWNER_ACCOUNT + name, name) for name in job.owners)


def sets(job) -> tuple:
    """The evaluation set's accounts: the roster as a set of keys (computed by the parties), then any the
    coordinator names (a relayed job's rows, a declared id: :func:`job_refusal` admits no other)."""
    return (f"roster-keys-sha256:{job.evaluation.roster.key_set_digest}",) + tuple(dict.fromkeys(job.datasets))


def job_refusal(job) -> str:
    """Why the parties refuse to account a job as its coordinator sent it, or "": a direct evaluation's row
    counts and owners are the parties' to find; a relayed DP job announces its row counts, so that it is
    charged before any input moves; a coordinator names evaluation sets, never another account."""
    if job.evaluation.direct and (job.rows is not None or job.owners):
        return "a direct evaluation's row counts and owners are the parties' to find, not the coordinator's to name"
    if not job.evaluation.direct and job.central is not None and job.rows is None:
        return "a relayed DP job must announce its row counts, so that it is charged before any input moves"
    named = [d for d in job.datasets if not (isinstance(d, str) and d.startswith(SET_ACCOUNTS))]
    if named:
        return (f"a coordinator names evaluation sets ({', '.join(SET_ACCOUNTS)}...), not the ledger account "
                f"{str(named[0])[:80]!r}")
    return ""


def charge(job, m: int, admitted=None):
    """What the job's release charges (None: nothing, a relayed exact job); ``admitted``: a direct evaluation's
    agreed submissions (None for a relayed job, charged before any submission)."""
    who = owners(job, admitted)
    if job.central is not None:
        return Charge(job.central.release(m), who, sets(job), job.budget)
    if not job.evaluation.direct:
        return None
    spec = job.evaluation.spec
    exact = Exact(tuple(sorted(account for account, _ in who)), spec.points if spec.curves else None,
                  spec.max_fpr, spec.decimals, job.evaluation.weight_bits)
    return Charge(Release("mpc-exact", (), 0.0, exact=exact), who, (), None,
                  tuple(a.accepts.max_exact for a in admitted))


def direct_refusal(job, terms: ReleaseTerms, admitted) -> str:
    """Why a direct exact job may not run on ``admitted`` whatever the ledgers hold, or "": curves whose cuts
    leave slices thinner than the minimum (metric_catalogue.thin_slices), or a client whose signed terms
    refuse the release's precision."""
    if not terms.exact:
        return ""
    m = sum(a.rows for a in admitted)
    if job.evaluation.spec.curves and (thin := thin_slices(m, job.evaluation.spec.points)):
        return thin
    for a in admitted:
        if why := a.accepts.refusal(terms):
            return f"client {a.client!r} does not accept this release: {why}"
    return ""
