"""Long-term identities of the roles, pinned certificates, and mutual TLS 1.3 contexts.

Every role (P0, P1, the dealer, and the coordinator that submits jobs) has
an Ed25519 key pair drawn from the OS CSPRNG (``cryptography`` uses
OpenSSL's RAND_bytes) and a self-signed X.509 certificate for it.  The
compute parties also hold an X25519 key under which clients seal their
shares (protocols.runtime.sealing).  The deployment file lists every role's
certificate; a role trusts exactly those certificates (no CA, nothing
learned from the wire), and after each handshake the peer's certificate
digest must equal the one pinned for the role it claims to be.

TLS: version 1.3 only, both sides present certificates (CERT_REQUIRED on
both ends), no session tickets.  The AEAD suites of TLS 1.3 (AES-GCM,
ChaCha20-Poly1305) authenticate every record, so a modified byte makes
the receiver's TLS layer fail with a MAC error.
"""
import datetime
import hashlib
import os
import ssl
import tempfile
import unicodedata
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.x509.oid import NameOID

from ..errors import DeploymentError, InputError
from .sealing import KeyPair
from . import wire

COMPUTE = ("P0", "P1")
DEALER = "dealer"
COORDINATOR = "coordinator"
SERVING = COMPUTE + (DEALER,)  # the roles that listen
SEALING = SERVING  # the roles clients seal to: the parties their shares, the dealer their MAC keys (security with abort)
ROLES = SERVING + (COORDINATOR,)
MAX_CLIENT_ID = 256
CLIENT_PREFIX = "client:"  # a data owner's role: "client:<its name on the roster>"
_PEM = serialization.Encoding.PEM
_VALIDITY = datetime.timedelta(days=3650)
_KEY_FILE_TITLE = "# mpc-auc private key file of role "


def fingerprint(cert_der: bytes) -> str:
    """SHA-256 of a certificate's DER encoding, hex: what the deployment pins."""
    return hashlib.sha256(cert_der).hexdigest()


def check_client_id(client: str, where: str = "") -> None:
    """Raise InputError unless ``client`` is 1..256 characters without control characters."""
    where = f"{where}: " if where else ""
    if not client:
        raise InputError(f"{where}empty client id")
    if len(client) > MAX_CLIENT_ID:
        raise InputError(f"{where}client id of {len(client)} characters (at most {MAX_CLIENT_ID}): {client[:40]!r}...")
    bad = [c for c in client if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]
    if bad:
        raise InputError(f"{where}client id {client!r} contains the control character {bad[0]!r}")


def client_role(name: str) -> str:
    """The role of the client called ``name`` (a roster name, :func:`check_client_id`)."""
    check_client_id(name)
    return CLIENT_PREFIX + name


def _check_role(role: str) -> None:
    if role.startswith(CLIENT_PREFIX):
        client_role(role[len(CLIENT_PREFIX):])
    elif role not in ROLES:
        raise DeploymentError(f"unknown role {role!r}; roles are {', '.join(ROLES)} and client:NAME")


def _self_signed(role: str, key: Ed25519PrivateKey) -> x509.Certificate:
    common = f"mpc-auc {role}"
    if role.startswith(CLIENT_PREFIX):  # names may exceed X.509's 64 characters; subjects must differ (issuer lookup)
        raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        common = f"mpc-auc client {hashlib.sha256(raw).hexdigest()[:32]}"
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])
    now = datetime.datetime.now(datetime.timezone.utc)
    return (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .sign(key, None))


@wire.message
@dataclass(frozen=True)
class PublicIdentity:
    """What everyone may know of a role: its certificate (PEM) and, for P0, P1 and the dealer, its sealing key."""
    role: str
    certificate: str
    seal_public: bytes = b""

    @property
    def fingerprint(self) -> str:
        return fingerprint(x509.load_pem_x509_certificate(self.certificate.encode()).public_bytes(
            serialization.Encoding.DER))

    @property
    def verify_key(self):
        """The role's Ed25519 public key (from its certificate): checks what the role signs."""
        return x509.load_pem_x509_certificate(self.certificate.encode()).public_key()

    @property
    def key_sha256(self) -> str:
        """SHA-256 of the raw Ed25519 public key, hex: the same for every certificate and name of one key (a
        client's account in the parties' ledgers)."""
        return hashlib.sha256(self.verify_key.public_bytes(serialization.Encoding.Raw,
                                                           serialization.PublicFormat.Raw)).hexdigest()


class Identity:
    """A role's private keys: the TLS key (Ed25519) and, for the compute parties and the dealer, the sealing key
    (X25519).

    A client's identity (role ``client:NAME``) signs its submissions with the same Ed25519 key
    that its certificate carries (protocols.inputs.submission).
    """

    def __init__(self, role: str, tls_key: Ed25519PrivateKey = None, certificate: x509.Certificate = None,
                 seal_key: KeyPair = None):
        _check_role(role)
        self.role = role
        self.tls_key = tls_key or Ed25519PrivateKey.generate()
        self.certificate = certificate or _self_signed(role, self.tls_key)
        self.seal_key = seal_key or (KeyPair() if role in SEALING else None)

    @property
    def public(self) -> PublicIdentity:
        return PublicIdentity(self.role, self.certificate.public_bytes(_PEM).decode(),
                              self.seal_key.public if self.seal_key else b"")

    # key file: PEM blocks, written with mode 0600 ---------------------------
    def save(self, path: str) -> None:
        """Write the private keys and certificate to ``path`` (created with mode 0600, never overwritten)."""
        blocks = [self.tls_key.private_bytes(_PEM, serialization.PrivateFormat.PKCS8,
                                             serialization.NoEncryption()),
                  self.certificate.public_bytes(_PEM)]
        if self.seal_key is not None:
            blocks.append(self.seal_key.private_pem())
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(f"{_KEY_FILE_TITLE}{self.role}: keep it secret\n".encode())
            f.write(b"".join(blocks))

    @classmethod
    def load(cls, path: str) -> "Identity":
        """Read a key file written by :meth:`save`; refuses files others can read."""
        try:
            mode = os.stat(path).st_mode
            data = open(path, "rb").read()
        except OSError as err:
            raise DeploymentError(f"cannot read key file {path}: {err.strerror}") from None
        if mode & 0o077:
            raise DeploymentError(f"key file {path} is readable by others (mode {mode & 0o777:o}); chmod 600 it")
        try:
            first = data.splitlines()[0].decode()
            role = first[len(_KEY_FILE_TITLE):].rpartition(": keep it secret")[0] if first.startswith(
                _KEY_FILE_TITLE) else None
            keys = [serialization.load_pem_private_key(block, None) for block in _pem_blocks(data, b"PRIVATE KEY")]
            certificate = x509.load_pem_x509_certificate(_pem_blocks(data, b"CERTIFICATE")[0])
        except (ValueError, IndexError, UnicodeDecodeError) as err:
            raise DeploymentError(f"key file {path} is not an mpc-auc key file: {err}") from None
        tls = [k for k in keys if isinstance(k, Ed25519PrivateKey)]
        seal = [k for k in keys if isinstance(k, X25519PrivateKey)]
        if not role or len(tls) != 1:
            raise DeploymentError(f"key file {path} is not an mpc-auc key file")
        try:
            _check_role(role)
        except ValueError as err:
            raise DeploymentError(f"key file {path}: {err}") from None
        if certificate.public_key() != tls[0].public_key():
            raise DeploymentError(f"key file {path}: the certificate is not that of the private key")
        return cls(role, tls[0], certificate, KeyPair(seal[0]) if seal else None)

    # TLS ---------------------------------------------------------------------
    def tls_context(self, server: bool, trusted) -> ssl.SSLContext:
        """A TLS 1.3 context presenting this identity and trusting exactly ``trusted`` (PublicIdentity list)."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER if server else ssl.PROTOCOL_TLS_CLIENT)
        context.minimum_version = ssl.TLSVersion.TLSv1_3
        context.check_hostname = False  # peers are identified by their pinned certificate digest instead
        context.verify_mode = ssl.CERT_REQUIRED
        if server:
            context.num_tickets = 0
        context.load_verify_locations(cadata="".join(p.certificate for p in trusted))
        with tempfile.TemporaryDirectory(prefix="mpc-auc-tls-") as private:  # load_cert_chain reads files only
            path = os.path.join(private, "identity.pem")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(self.tls_key.private_bytes(_PEM, serialization.PrivateFormat.PKCS8,
                                                   serialization.NoEncryption()))
                f.write(self.certificate.public_bytes(_PEM))
            context.load_cert_chain(path)
        return context


def _pem_blocks(data: bytes, label: bytes) -> list:
    begin, end = b"-----BEGIN " + label + b"-----", b"-----END " + label + b"-----"
    blocks, start = [], data.find(begin)
    while start >= 0:
        stop = data.index(end, start) + len(end)
        blocks.append(data[start:stop] + b"\n")
        start = data.find(begin, stop)
    return blocks
