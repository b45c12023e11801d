"""The secure runtime: identities and pinned TLS, links, CrypTen's communicator over them, the wire
format, serving roles and the coordinator's session."""
