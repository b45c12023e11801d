"""Client submissions: the roster of an evaluation, the signed statement that binds a client's two
bundles to one job, and the checks a compute party makes before it accepts them.

Declaration (public; declared on both parties by whoever opens it): an id, a
roster of clients (name and certificate, whose Ed25519 key signs the
client's submissions; ``mpc-auc client keygen`` makes both), the score
encoding, whether the parties deliver ranks, and how submissions arrive:
relayed by the coordinator (the local one-command run simulates every
client in its process) or *direct*, each client over its own TLS link to
each party, with a deadline and a policy for missing clients.

Job nonce: for every job both parties draw 32 bytes with ``secrets`` and
exchange them over their secure channel; the nonce is SHA-256(evaluation
id, r_0, r_1).  Neither a relay nor a single party can make a job reuse the
nonce of an earlier one, so a bundle recorded in one job never opens in
another.  A client takes the nonce from both parties (its *ticket*) and
refuses to submit unless they agree.

Submission to party p: the sealed bundle (protocols.inputs.bundles: the AEAD's
associated data binds the evaluation id, the nonce, the client name, the
party, the row count and the client's reply key) and the client's
*statement*, signed with its Ed25519 key, which names the evaluation, the
nonce, the client, the row count, the reply key and, for each party, the
sealing key the bundle was sealed to and the SHA-256 of that bundle.  Party p
admits it only when (each failure refused with its own message):

1. the client is on the roster and the signature verifies under its key;
2. the statement names this evaluation and this job's nonce (else: another
   evaluation, or a replay of an earlier job);
3. the bundle was sealed to p's own key (else: a substituted party key) and
   is the one the statement signs (digest, header fields);
4. the client has not submitted to this job already;
5. the bundle opens (AEAD) and holds the stated rows.

Before computing, P0 and P1 compare the list of statement digests in roster
order (protocols.mpc.exact): they compute only on the same submissions.
"""
import dataclasses
import functools
import hashlib
import json
import threading
from dataclasses import dataclass

import numpy as np
import yaml
from cryptography.exceptions import InvalidSignature

from .bundles import CLIENT_MAC_KEYS, INPUT_TAG, JobId, SealedBundle, open_bundle, seal_authenticated, seal_client
from .clients import check_client
from ..runtime.deployment import read_document
from .encoding import KEY_OFFSET, ScoreEncoder
from .weights import check_weight_bits, weight_units
from ..errors import BundleIntegrityError, DeploymentError, InputError
from ..runtime.identity import CLIENT_PREFIX, PublicIdentity, check_client_id, client_role
from ..runtime.ledger import Standing
from ..refused import Refused
from ..release_spec import MALICIOUS_REFUSAL, ReleaseSpec
from ..validation import checked
from ..runtime import wire

ROSTER_FORMAT = "mpc-auc-roster/1"
STATEMENT_FORMAT = "mpc-auc-submission/2"
NONCE_BYTES = 32
wire.register(ReleaseSpec, Refused)  # the spec an evaluation holds; a refused job or value


class SubmissionRefused(InputError):
    """A party refuses one submission; the message names the client and the cause."""


# ------------------------------------------------------------------ roster

@wire.message
@dataclass(frozen=True)
class Roster:
    """The clients of an evaluation, in the order their rows enter the computation."""
    members: tuple  # PublicIdentity of role client:NAME

    def __post_init__(self):
        if not self.members:
            raise InputError("the roster names no client")
        names, prints = set(), set()
        for member in self.members:
            if not member.role.startswith(CLIENT_PREFIX):
                raise InputError(f"the roster entry {member.role!r} is not a client")
            name = member.role[len(CLIENT_PREFIX):]
            check_client_id(name, "roster")
            if name in names:
                raise InputError(f"client {name!r} appears twice on the roster")
            if member.fingerprint in prints:
                raise InputError(f"client {name!r} shares its key with another roster entry")
            names.add(name)
            prints.add(member.fingerprint)

    @property
    def names(self) -> list:
        return [m.role[len(CLIENT_PREFIX):] for m in self.members]

    @functools.cached_property
    def _by_name(self) -> dict:
        return dict(zip(self.names, self.members))

    def member(self, name: str) -> PublicIdentity:
        """The rostered client ``name``; KeyError if it is not on the roster."""
        return self._by_name[name]

    @property
    def digest(self) -> str:
        """SHA-256 over the ordered (name, certificate fingerprint) pairs."""
        pairs = [[name, m.fingerprint] for name, m in zip(self.names, self.members)]
        return hashlib.sha256(json.dumps(pairs).encode()).hexdigest()

    @property
    def key_set_digest(self) -> str:
        """SHA-256 over the sorted SHA-256s of the members' public keys: the same for any order, naming or
        certificate of the same keys (the evaluation set's account in the parties' privacy ledgers)."""
        return hashlib.sha256("\n".join(sorted(m.key_sha256 for m in self.members)).encode()).hexdigest()

    def save(self, path: str) -> None:
        doc = {"format": ROSTER_FORMAT, "clients": {
            name: {"certificate": m.certificate, "fingerprint": m.fingerprint}
            for name, m in zip(self.names, self.members)}}
        with open(path, "x") as f:
            yaml.safe_dump(doc, f, sort_keys=False, width=120)

    @classmethod
    def load(cls, paths) -> "Roster":
        """The clients of one or more roster files, in file order (``mpc-auc client keygen`` writes one per client)."""
        members = []
        for path in paths:
            for name, entry in read_document(path, "roster", ROSTER_FORMAT, "clients").items():
                if not isinstance(entry, dict) or not isinstance(entry.get("certificate"), str):
                    raise DeploymentError(f"{path}: bad entry for client {name!r}")
                try:
                    member = PublicIdentity(client_role(str(name)), entry["certificate"])
                    fingerprint = member.fingerprint
                except ValueError as err:
                    raise DeploymentError(f"{path}: client {name!r}: {err}") from None
                if fingerprint != entry.get("fingerprint"):
                    raise DeploymentError(f"{path}: the certificate of client {name!r} does not match its fingerprint")
                members.append(member)
        try:
            return cls(tuple(members))
        except InputError as err:
            raise DeploymentError(f"roster {', '.join(map(str, paths))}: {err}") from None


# -------------------------------------------------------------- evaluation

DEFAULT_MAX_ROWS = 50_000_000  # per client and evaluation, unless the evaluation says otherwise
DEFAULT_MAX_TOTAL_ROWS = 50_000_000  # over all of an evaluation's clients, unless it says otherwise
MAX_ROWS_LIMIT = 1 << 36
SUBMISSION_OVERHEAD = 64 << 10  # a submission's bytes besides its rows: headers, ids, statement, signature

@wire.message
@dataclass(frozen=True)
class Declaration:
    """What both parties hold of an evaluation before any client submits (all public)."""
    id: str
    roster: Roster
    encoder: ScoreEncoder = ScoreEncoder()
    direct: bool = False  # clients submit over their own links (else the coordinator relays them)
    deadline_s: float = None  # direct: how long the parties wait for the whole roster
    allow_missing: bool = False  # direct: at the deadline, compute on the clients present at both parties
    max_rows: int = DEFAULT_MAX_ROWS  # direct: the most rows one client may submit (caps its message's size)
    max_total_rows: int = DEFAULT_MAX_TOTAL_ROWS  # direct: the most rows all clients together may submit (caps what
    #                                               a party holds for the evaluation: max_total_bytes)
    exclude_invalid: bool = False  # direct: a client whose rows fail the in-MPC domain check is named and left
    #                                out, and the release is over the others (else the job is refused)
    spec: ReleaseSpec = ReleaseSpec()  # mpc-exact: what it opens (checked when made: protocols.release_spec)
    columns: int = 1  # mpc-exact: score columns per row (several models on the same rows: DeLong's test)
    weight_bits: int = None  # mpc-exact, AUC only: rows carry weights in units of 2^-weight_bits (None: unweighted)
    share_result: bool = False  # direct: the parties send the released result to every client that took part

    def __post_init__(self):
        check_client_id(self.id, "evaluation id")
        checked("columns", self.columns)
        if self.weight_bits is not None:
            check_weight_bits(self.weight_bits)
            if not self.spec.auc_only:
                raise InputError("a weighted evaluation opens the weighted AUC only, not "
                                 f"{', '.join(self.spec.metrics)}")
        for what, value in (("the most rows per client", self.max_rows),
                            ("the most rows of all clients", self.max_total_rows)):
            if not (isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_ROWS_LIMIT):
                raise InputError(f"{what} must be an integer in [1, {MAX_ROWS_LIMIT}], not {value!r}")
        if self.deadline_s is not None:
            checked("deadline", self.deadline_s)
        if self.direct and self.deadline_s is None:
            raise InputError("an evaluation with direct submissions needs a deadline")
        if self.spec.malicious and (self.columns != 1 or self.weight_bits is not None):
            raise InputError(MALICIOUS_REFUSAL.format(what="several score columns" if self.columns != 1
                                                      else "a weighted AUC"))
        for option in ("share_result", "exclude_invalid"):
            if getattr(self, option) and not self.direct:
                raise InputError(f"{option} is for evaluations whose clients submit directly (relayed clients are "
                                 "the coordinator's own)")

    @property
    def digest(self) -> str:
        """What P0 and P1 compare: both must have been given the same evaluation."""
        fields = [self.id, self.roster.digest, self.encoder.lo, self.encoder.hi, self.encoder.dtype, self.direct,
                  self.deadline_s, self.allow_missing, self.max_rows, *self.spec.fields(),
                  self.columns, self.weight_bits, self.share_result, self.max_total_rows,
                  self.exclude_invalid]
        return hashlib.sha256(json.dumps(fields).encode()).hexdigest()

    def submission_bytes(self, rows: int) -> int:
        """The largest message a client's submission of ``rows`` rows to one party may take: its rows' words and
        the sealing's and statement's overhead."""
        return self._row_bytes * rows + SUBMISSION_OVERHEAD

    @property
    def max_total_bytes(self) -> int:
        """The most a party holds of the evaluation's submissions at once: their messages' bytes, for at most
        ``max_total_rows`` rows over all clients and each rostered client's overhead (protocols.inputs.intake
        gives a client room for its rows only while they fit)."""
        return self._row_bytes * self.max_total_rows + SUBMISSION_OVERHEAD * len(self.roster.members)

    @property
    def _row_bytes(self) -> int:
        """2 c + 1 words per row (each of the c score columns' additive and XOR key shares, the label's share),
        one more for a weight; under security with abort 2 D + 1 + K (the key's D digits and the label, and their K
        MAC words: protocols.inputs.bundles)."""
        if self.spec.malicious:
            return 8 * (2 * self.encoder.digits + 1 + CLIENT_MAC_KEYS)
        return 8 * (2 * self.columns + 1 + (self.weight_bits is not None))


@wire.message
@dataclass(frozen=True)
class ReleaseTerms:
    """What a job will release, as the parties tell every client before it submits (both must agree)."""
    protocol: str  # "mpc-exact" (the exact AUC: no DP) or "mpc-central"
    epsilon: float = None  # mpc-central: this release's epsilon
    delta: float = None  # mpc-central: the noise circuit's delta bound
    neighbours: str = None  # mpc-central: "label" or "record"
    budget: tuple = None  # (epsilon, delta): the tightest budget this release must fit at either party, if any
    #                       (each participating client's key, and the set's, may have spent part of it already)
    allow_missing: bool = False  # the job may run without some rostered clients
    decimals: int = None  # mpc-exact: the AUC is opened rounded to this many decimals (None: 52 bits)
    ranks: bool = False  # each client gets its rows' global mid-ranks
    metrics: tuple = ("auc",)  # mpc-exact: the metrics opened (protocols.metric_catalogue)
    points: int = None  # mpc-exact with curves: the number of cuts they are opened at
    max_fpr: float = None  # mpc-exact with pauc: where the partial AUC stops
    weight_bits: int = None  # mpc-exact: the AUC is weighted by the rows' weights, sent in units of 2^-weight_bits
    share_result: bool = False  # every client that took part receives the released result from both parties
    noise: object = None  # mpc-central: its CentralNoise or CurveNoise (protocols.dp), all its parameters
    exclude_invalid: bool = False  # a client whose rows fail the in-MPC domain check is left out, not the job
    security: str = "semi-honest"  # or "malicious": security with abort against a deviating compute party

    @property
    def exact(self) -> bool:
        return self.protocol == "mpc-exact"

    @property
    def finest_decimals(self):
        """The most decimals any exact value this job opens has: the AUC's ``decimals``, or None (52 bits) when
        it opens the AUC unrounded or any other exact metric (those open to 52 bits or 2^-40)."""
        return self.decimals if self.exact and self.metrics == ("auc",) and self.decimals else None

    def describe(self) -> str:
        if self.protocol == "mpc-exact":
            auc = "AUC" if self.weight_bits is None else f"weighted AUC (weights in units of 2^{-self.weight_bits})"
            what = (f"the exact {auc} rounded to {self.decimals} decimals" if self.decimals else
                    f"the exact {auc} to 52 bits") + " (no differential privacy)"
            more = [m for m in self.metrics if m != "auc"]
            what += f"; also {', '.join(more)} ({self.points} cuts for curves)" if more else ""
            what += f"; the partial AUC to FPR {self.max_fpr:g}" if self.max_fpr is not None else ""
        else:
            delta = f"delta at most {self.delta:.2g}" if self.delta is not None else "the circuit's delta, about 1e-13"
            what = (f"one DP release at epsilon {self.epsilon:g} ({self.neighbours} neighbours, {delta})"
                    + (f": the ROC curve's counts at {self.points} cuts" if "roc" in self.metrics else ""))
        budget = "" if self.exact else f"; it must fit a budget of {self.budget[0]:g} (delta {self.budget[1]:g})" \
            if self.budget else "; no budget set"
        if self.security == "malicious":
            what += ("; under security with abort against a deviating compute party" +
                     (" (the count of positives is opened too" + (", and with ci each class's sum of squared "
                      "placement values, DeLong's S10 and S01 apart" if "ci" in self.metrics else "") + ")" if self.exact else ""))
        return (f"{what}{budget}{'; ranks to each client' if self.ranks else ''}"
                f"{'; the result shared with every client' if self.share_result else ''}"
                f"{'; may run without some clients' if self.allow_missing else ''}"
                f"{'; a client whose rows fail the domain check is left out' if self.exclude_invalid else ''}")


@wire.message
@dataclass(frozen=True)
class Ticket:
    """What a client needs to submit to one job; each party sends its own, and they must agree."""
    evaluation: str
    nonce: bytes
    encoder: ScoreEncoder
    ranks: bool  # the parties send each client its rows' mid-ranks
    terms: ReleaseTerms = None  # what the job releases (shown to the client, checked by --max-epsilon)
    columns: int = 1  # score columns per row the client submits
    roster_size: int = None  # the clients on the evaluation's roster
    max_rows: int = None  # the most rows this client may submit
    max_total_rows: int = None  # the most rows all the evaluation's clients may submit together (first come)
    standing: Standing = None  # what the issuing party's ledger holds for this client's key (differs per party)

    def common(self) -> "Ticket":
        """The ticket without its party's standing: what P0 and P1 must agree on."""
        return dataclasses.replace(self, standing=None)

    @property
    def weight_bits(self):
        """The weights' precision when the job is weighted (the client sends units of 2^-weight_bits), else None."""
        return self.terms.weight_bits if self.terms is not None else None

    @property
    def job(self) -> JobId:
        return JobId(self.evaluation, self.nonce)


@wire.message
@dataclass(frozen=True)
class SharedResult:
    """Every released field of a job, as each party sends it to each client that took part in an evaluation
    that shares its result (the client compares the two copies field by field, and the noise with its own
    ticket's: protocols.inputs.submitter)."""
    nonce: bytes  # the job's
    clients: tuple  # the clients computed on, in roster order
    rows: tuple  # their row counts, in that order
    missing: tuple  # the rostered clients that did not submit to both parties
    method: str
    opened: dict  # what was opened: mpc-exact {"defined", "scaled", "metrics", "others", "covariance"}, mpc-central
    #               {"central"}, as the coordinator's result holds it
    noise: object = None  # mpc-central: its CentralNoise or CurveNoise
    excluded: tuple = ()  # the clients left out because their rows failed the domain check (exclude_invalid)


def job_nonce(evaluation: str, draws) -> bytes:
    """SHA-256(evaluation id, r_0, r_1): fresh whenever either party's draw is."""
    digest = hashlib.sha256(evaluation.encode() + b"\0")
    for draw in draws:
        digest.update(draw)
    return digest.digest()


# ------------------------------------------------------------ client side

@wire.message
@dataclass(frozen=True)
class Submission:
    """A client's submission to one party: its sealed bundle and the signed statement covering both."""
    statement: bytes
    signature: bytes
    bundle: SealedBundle


def _digest(bundle: SealedBundle) -> str:
    return hashlib.sha256(bundle.signed_part).hexdigest()


@dataclass(frozen=True)
class Accepts:
    """What a client accepts of exact releases of its rows, stated in its signed statement so that both parties
    enforce it: at most ``max_exact`` of them in all (the parties count per client key), and no exact value
    opened to more than ``max_decimals`` decimals; None: no limit (relayed clients, whose rows the
    coordinator holds)."""
    max_exact: int = None
    max_decimals: int = None

    def __post_init__(self):
        if self.max_exact is not None:
            checked("max_exact", self.max_exact)
        if self.max_decimals is not None:
            checked("max_decimals", self.max_decimals)

    def refusal(self, terms: ReleaseTerms) -> str:
        """Why this client does not take part in a job releasing ``terms``, as far as its terms alone tell
        (the count of its earlier exact releases is the ledgers'), or ""."""
        if not terms.exact or self.max_decimals is None:
            return ""
        if terms.ranks:
            return (f"the job delivers exact global ranks; this client accepts at most {self.max_decimals} decimals "
                    "of any exact value")
        finest = terms.finest_decimals
        if finest is not None and finest <= self.max_decimals:
            return ""
        opened = f"{finest} decimals" if finest is not None else "52 bits" + (
            f" ({', '.join(m for m in terms.metrics if m != 'auc')} cannot be rounded)" if terms.metrics != ("auc",)
            else "")
        return f"the job opens exact values to {opened}; this client accepts at most {self.max_decimals} decimals"


def make_submission(identity, ticket: Ticket, scores, labels, seal_keys, reply, weights=None,
                    accepts: Accepts = Accepts(max_exact=1), dealer_key: bytes = b"") -> list:
    """[submission for P0, for P1] of one client's rows, signed with its identity key.

    seal_keys: P0's and P1's X25519 keys from the pinned deployment; reply: the client's key pair for its ranks
    (fresh per submission; under security with abort its MAC keys derive from it: bundles.client_mac_keys);
    weights: the rows' sample weights, exactly when the job is weighted; accepts: the client's terms for exact
    releases of its rows (stated in the signed statement); dealer_key: the dealer's X25519 key from the pinned
    deployment, to which a job under security with abort has the client seal its MAC keys.
    """
    if not identity.role.startswith(CLIENT_PREFIX):
        raise InputError(f"the key of {identity.role} is not a client's key")
    name = identity.role[len(CLIENT_PREFIX):]
    check_client(name, scores, labels, ticket.encoder, columns=ticket.columns)
    if (weights is None) != (ticket.weight_bits is None):
        raise InputError(f"client {name!r}: " + ("the job is weighted: submit a weight per row" if weights is None
                                                 else "the job is not weighted: it takes no weights"))
    units = None if weights is None else weight_units(weights, ticket.weight_bits, len(labels),
                                                      lambda i: f"client {name!r} row {i}")
    keys = ticket.encoder.encode(np.asarray(scores, dtype=np.float64).reshape(len(labels), -1).T)
    reply_to = reply.public
    if ticket.terms is not None and ticket.terms.security == "malicious":
        if not dealer_key:
            raise DeploymentError("the deployment gives the dealer no sealing key (seal_public), to which a job "
                                  "under security with abort has clients seal their MAC keys: make the dealer's key "
                                  "file and the deployment again with this version")
        bundles, sealed_keys = seal_authenticated(name, ticket.job, ticket.encoder.key_digits(keys[0] + KEY_OFFSET),
                                                  np.asarray(labels, dtype=np.int64), seal_keys, reply, dealer_key)
        dealer_keys = {"dealer_keys": hashlib.sha256(sealed_keys).hexdigest()}  # both parties check their copy
    else:
        bundles = seal_client(name, ticket.job, keys, keys + KEY_OFFSET, np.asarray(labels, dtype=np.int64),
                              seal_keys, reply_to, units)
        dealer_keys = {}
    statement = json.dumps({
        "format": STATEMENT_FORMAT, "evaluation": ticket.evaluation, "nonce": ticket.nonce.hex(), "client": name,
        "rows": len(labels), "reply_to": reply_to.hex(),
        "accepts": {"max_exact": accepts.max_exact, "max_decimals": accepts.max_decimals},
        "bundles": [{"recipient": key.hex(), "sha256": _digest(b)} for key, b in zip(seal_keys, bundles)],
        **dealer_keys}, sort_keys=True, separators=(",", ":")).encode()
    signature = identity.tls_key.sign(statement)
    return [Submission(statement, signature, b) for b in bundles]


# ------------------------------------------------------------- party side

@dataclass(frozen=True)
class Admitted:
    client: str
    rows: int
    statement_digest: str  # covers both parties' bundles: P0 and P1 compare these
    opened: object  # bundles.OpenedBundle (bundles.AuthenticatedBundle under security with abort)
    member: PublicIdentity = None  # its roster entry (its key is its account in the ledgers)
    accepts: Accepts = Accepts()  # its signed terms for exact releases


def admit(submission: Submission, party: int, seal_key, evaluation: Declaration, nonce: bytes,
          sender: str = None) -> Admitted:
    """Check one submission (module docstring, steps 1-3 and 5); raises SubmissionRefused naming the cause.

    sender: the client whose own link delivered it (direct submissions): it may submit only under its name.
    """
    try:
        statement = json.loads(submission.statement)
        name, stated = str(statement["client"]), statement["bundles"][party]
        fields = (statement["evaluation"], statement["nonce"], statement["rows"], statement["reply_to"],
                  stated["recipient"], stated["sha256"])
        if statement.get("format") != STATEMENT_FORMAT:
            raise ValueError("unknown format")
        accepts = Accepts(**statement["accepts"])
    except (ValueError, KeyError, TypeError, IndexError):
        raise SubmissionRefused("a submission's statement is unreadable") from None
    if sender is not None and name != sender:
        raise SubmissionRefused(f"client {sender!r} sent a submission under another name ({name[:80]!r})")
    try:
        member = evaluation.roster.member(name)
    except KeyError:
        raise SubmissionRefused(f"client {name[:80]!r} is not on the roster of evaluation "
                                f"{evaluation.id!r}") from None
    try:
        member.verify_key.verify(submission.signature, submission.statement)
    except InvalidSignature:
        raise SubmissionRefused(f"the submission under the name {name!r} is not signed by that client's key "
                                "(forged or unsigned)") from None
    evaluation_id, nonce_hex, rows, reply_to, recipient, digest = fields
    if evaluation_id != evaluation.id:
        raise SubmissionRefused(f"client {name!r} submitted for evaluation {evaluation_id!r}, "
                                f"not {evaluation.id!r}")
    if nonce_hex != nonce.hex():
        raise SubmissionRefused(f"client {name!r}'s submission was made for another job (a replay of an "
                                "earlier one?): its nonce is not this job's")
    if recipient != seal_key.public.hex():
        raise SubmissionRefused(f"client {name!r} sealed its bundle for P{party} to a key that is not "
                                f"P{party}'s pinned key (a substituted party key)")
    try:
        header = submission.bundle.fields(INPUT_TAG)
    except BundleIntegrityError as err:
        raise SubmissionRefused(f"client {name!r}: {err}") from None
    if _digest(submission.bundle) != digest or (
            header.client, header.rows, header.reply_to.hex(), header.party, header.evaluation, header.nonce) != (
            name, rows, reply_to, party, evaluation.id, nonce):
        raise SubmissionRefused(f"client {name!r}'s bundle is not the one its signed statement names")
    if not 0 < rows <= evaluation.max_rows:  # before opening: P1's bundle under security with abort is a seed
        raise SubmissionRefused(f"client {name!r} states {rows} rows, outside 1..{evaluation.max_rows} (the "
                                "evaluation's most rows per client)")
    try:
        opened = open_bundle(seal_key, party, submission.bundle, evaluation.columns, evaluation.weight_bits is not None,
                             evaluation.encoder.digits if evaluation.spec.malicious else None)
    except BundleIntegrityError as err:
        raise SubmissionRefused(f"client {name!r}: {err}") from None
    if evaluation.spec.malicious and hashlib.sha256(opened.sealed_keys[1]).hexdigest() != statement.get("dealer_keys"):
        raise SubmissionRefused(f"client {name!r}'s MAC keys sealed to the dealer are not the ones its signed "
                                "statement names (each party's copy must be the same)")
    return Admitted(name, header.rows, hashlib.sha256(submission.statement).hexdigest(), opened, member, accepts)


class Inbox:
    """The submissions a party has admitted to one job (thread-safe: direct clients arrive concurrently)."""

    def __init__(self, evaluation: Declaration, nonce: bytes, party: int, seal_key):
        self.evaluation, self.nonce, self.party, self.seal_key = evaluation, nonce, party, seal_key
        self._admitted = {}
        self._declined = set()  # clients that declined the job's terms or were turned away before submitting
        self.refusals = []  # why submissions were refused, or declined, in order
        self._lock = threading.Lock()
        self._closed = False

    def offer(self, submission: Submission, sender: str = None, rows: int = None) -> Admitted:
        """Admit ``submission`` or raise SubmissionRefused (also recorded in :attr:`refusals`); ``rows``: the
        most it may hold (what its client was given room for)."""
        try:
            if not isinstance(submission, Submission):
                raise SubmissionRefused("a message that is not a submission was offered as one")
            admitted = admit(submission, self.party, self.seal_key, self.evaluation, self.nonce, sender)
            if rows is not None and admitted.rows > rows:
                raise SubmissionRefused(f"client {admitted.client!r} submitted {admitted.rows:,} rows after "
                                        f"stating {rows:,}")
            with self._lock:
                if self._closed:
                    raise SubmissionRefused(f"client {admitted.client!r} submitted after the job closed its intake")
                if admitted.client in self._admitted:
                    raise SubmissionRefused(f"client {admitted.client!r} has already submitted to this job; "
                                            "a second submission is refused")
                self._admitted[admitted.client] = admitted
            return admitted
        except SubmissionRefused as err:
            with self._lock:
                self.refusals.append(str(err))
            raise

    def turn_away(self, name: str, why: str) -> None:
        """Record that client ``name`` was refused before it sent its submission (``why`` names it and the cause):
        like a client that declined, it will not submit to this job."""
        with self._lock:
            if name not in self._admitted:  # a second link of a client that submitted withdraws nothing
                self._declined.add(name)
            self.refusals.append(why)

    def decline(self, name: str, why: str) -> None:
        """Record that client ``name`` declined the job (its terms refuse the release) and why."""
        self.turn_away(name, f"client {name!r} declined the job: {why}")

    @property
    def declined(self) -> set:
        """The clients that declined the job or were turned away: none of them will submit to it."""
        with self._lock:
            return set(self._declined)

    @property
    def present(self) -> list:
        """For each roster name in order: has it been admitted?"""
        with self._lock:
            return [name in self._admitted for name in self.evaluation.roster.names]

    def close(self) -> bytes:
        """Admit nothing more; the statement digest of each roster name in order (32 zero bytes if absent)."""
        with self._lock:
            self._closed = True
            return b"".join(bytes.fromhex(self._admitted[n].statement_digest) if n in self._admitted else bytes(32)
                            for n in self.evaluation.roster.names)

    def hand_over(self, names) -> list:
        """The admitted submissions of ``names``, in roster order, handed over: the (closed) inbox keeps
        none of them, so their rows are freed with the caller's last reference."""
        with self._lock:
            out = [self._admitted[n] for n in self.evaluation.roster.names if n in names]
            self._admitted.clear()
            return out
