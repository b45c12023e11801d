"""The secure runtime: identities and pinned TLS, links, sealing, the wire format and the control channel;
serving roles and the coordinator's session; what a role process runs (CrypTen's communicator, the CSPRNG,
the dealer, the heap, meters, the party's privacy ledger)."""

# the modules other layers import; the package's own: communicator (CrypTen's, installed by roles)
__all__ = ["control", "csprng", "dealer", "deployment", "durable", "identity", "ledger", "link", "listener",
           "memory", "metrics", "records", "roles", "sealing", "session", "wire"]
