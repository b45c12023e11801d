"""The deployment file: where each role listens and the certificate pinned for it.

``deployment.yaml`` (public; copy it to every host and every client):

    format: mpc-auc-deployment/1
    roles:
      P0:     {address: HOST:PORT, certificate: PEM, fingerprint: SHA-256 hex, seal_public: hex}
      P1:     {address: HOST:PORT, certificate: PEM, fingerprint: ..., seal_public: hex}
      dealer: {address: HOST:PORT, certificate: PEM, fingerprint: ..., seal_public: hex}
      coordinator: {certificate: PEM, fingerprint: ...}     # submits jobs; listens nowhere

Each role's private keys live in its own key file (mode 0600, protocols.runtime.identity),
on its own host.  Clients take the parties' and the dealer's sealing keys from
this file (pinned), never from the network: under security with abort a client
seals its MAC keys to the dealer (protocols.inputs.bundles).
"""
import os
from dataclasses import dataclass

import yaml

from ..errors import DeploymentError
from .identity import DEALER, ROLES, SERVING, Identity, PublicIdentity

FORMAT = "mpc-auc-deployment/1"


@dataclass(frozen=True)
class Deployment:
    publics: dict  # role -> PublicIdentity
    addresses: dict  # serving role -> "host:port"

    def public(self, role: str) -> PublicIdentity:
        try:
            return self.publics[role]
        except KeyError:
            raise DeploymentError(f"the deployment has no role {role!r}") from None

    def address(self, role: str) -> str:
        try:
            return self.addresses[role]
        except KeyError:
            raise DeploymentError(f"the deployment gives no address for {role!r}") from None

    def peers_of(self, role: str) -> list:
        """The roles that may open a link to ``role`` (or that ``role`` may dial)."""
        return [p for r, p in self.publics.items() if r != role]

    def seal_keys(self) -> list:
        """[P0's, P1's] X25519 public keys, under which clients seal their shares."""
        return [self.public(r).seal_public for r in ("P0", "P1")]

    def dealer_seal_key(self) -> bytes:
        """The dealer's X25519 public key, under which clients seal their MAC keys (security with abort); empty
        in a deployment made before the dealer had one (protocols.inputs.submission.make_submission refuses)."""
        return self.public(DEALER).seal_public

    # file ---------------------------------------------------------------------
    def save(self, path: str) -> None:
        roles = {}
        for role, pub in self.publics.items():
            entry = {"certificate": pub.certificate, "fingerprint": pub.fingerprint}
            if role in self.addresses:
                entry = {"address": self.addresses[role], **entry}
            if pub.seal_public:
                entry["seal_public"] = pub.seal_public.hex()
            roles[role] = entry
        with open(path, "w") as f:
            yaml.safe_dump({"format": FORMAT, "roles": roles}, f, sort_keys=False, width=120)

    @classmethod
    def load(cls, path: str) -> "Deployment":
        publics, addresses = {}, {}
        for role, entry in read_document(path, "deployment", FORMAT, "roles").items():
            if role not in ROLES or not isinstance(entry, dict) or "certificate" not in entry:
                raise DeploymentError(f"{path}: bad entry for role {role!r}")
            pub = PublicIdentity(role, entry["certificate"], bytes.fromhex(entry.get("seal_public", "")))
            if pub.fingerprint != entry.get("fingerprint"):
                raise DeploymentError(f"{path}: the certificate of {role} does not match its fingerprint")
            publics[role] = pub
            if role in SERVING:
                addresses[role] = check_address(entry.get("address"), f"{path}: address of {role}")
        missing = [r for r in ROLES if r not in publics]
        if missing:
            raise DeploymentError(f"{path} lacks the role(s) {', '.join(missing)}")
        return cls(publics, addresses)


def read_document(path: str, kind: str, fmt: str, section: str) -> dict:
    """The mapping ``section`` of the YAML file ``path`` tagged ``format: fmt``; DeploymentError naming the problem."""
    try:
        with open(path) as f:
            doc = yaml.safe_load(f)
    except OSError as err:
        raise DeploymentError(f"cannot read {kind} file {path}: {err.strerror}") from None
    except yaml.YAMLError as err:
        raise DeploymentError(f"{kind} file {path} is not valid YAML: {err}") from None
    if not isinstance(doc, dict) or doc.get("format") != fmt or not isinstance(doc.get(section), dict):
        raise DeploymentError(f"{path} is not an mpc-auc {kind} file ({fmt})")
    return doc[section]


def check_address(address, what: str) -> str:
    """'host:port' with a numeric port in 1..65535."""
    host, _, port = str(address).rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise DeploymentError(f"{what} must be HOST:PORT, not {address!r}")
    return str(address)


def init(directory: str, addresses: dict) -> Deployment:
    """Make every role's keys, write ``directory/deployment.yaml`` and one ``<role>.key`` per role (0600)."""
    for role in SERVING:
        check_address(addresses.get(role), f"the address of {role}")
    os.makedirs(directory, exist_ok=True)
    targets = [os.path.join(directory, f"{r}.key") for r in ROLES] + [os.path.join(directory, "deployment.yaml")]
    existing = [t for t in targets if os.path.exists(t)]
    if existing:
        raise DeploymentError(f"{existing[0]} exists already; choose an empty directory")
    identities = {role: Identity(role) for role in ROLES}
    deployment = Deployment({r: i.public for r, i in identities.items()}, {r: addresses[r] for r in SERVING})
    for role, identity in identities.items():
        identity.save(os.path.join(directory, f"{role}.key"))
    deployment.save(os.path.join(directory, "deployment.yaml"))
    return deployment

