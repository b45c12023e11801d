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
    """The evaluation set's accounts: a direct evaluation's roster as a set of keys, then any the coordinator
    names (a relayed job's rows, a declared id)."""
    own = (f"roster-keys-sha256:{job.evaluation.roster.key_set_digest}",) if job.evaluation.direct else ()
    return own + tuple(job.datasets)


def charge(job, m: int, admitted=None):
    """What the job's release charges (None: nothing, a relayed exact job); ``admitted``: a direct evaluation's
    agreed submissions (None for a relayed job, charged before any submission)."""
    who = owners(job, admitted)
    if job.central is not None:
        return Charge(job.central.release(m), who, sets(job), job.budget)
    if not job.evaluation.direct:
        return None
    evaluation = job.evaluation
    curves = bool({"roc", "pr"} & set(evaluation.metrics))
    exact = Exact(tuple(sorted(account for account, _ in who)), evaluation.points if curves else None,
                  evaluation.max_fpr)
    return Charge(Release("mpc-exact", (), 0.0, exact=exact), who, (), None,
                  tuple(a.accepts.max_exact for a in admitted))


def direct_refusal(job, terms: ReleaseTerms, admitted) -> str:
    """Why a direct exact job may not run on ``admitted`` whatever the ledgers hold, or "": curves whose cuts
    leave slices thinner than the minimum (metric_catalogue.thin_slices), or a client whose signed terms
    refuse the release's precision."""
    if not terms.exact:
        return ""
    m = sum(a.rows for a in admitted)
    if {"roc", "pr"} & set(job.evaluation.metrics) and (thin := thin_slices(m, job.evaluation.points)):
        return thin
    for a in admitted:
        if why := a.accepts.refusal(terms):
            return f"client {a.client!r} does not accept this release: {why}"
    return ""
