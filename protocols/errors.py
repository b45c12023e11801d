"""Errors that cross layers: bad input, broken bundles, failed parties."""


class InputError(ValueError):
    """Input data that no protocol may run on; the message names the problem."""


class BundleIntegrityError(InputError):
    """A sealed bundle failed authentication (modified, sealed for another party, or not signed by the party
    it names): refused like bad input."""


EITHER = "P0 or P1"  # the role a failure is attributed to when the coordinator cannot tell which compute party it was


class PartyFailure(Exception):
    """A role of the MPC run died, stalled or reported an error.

    ``role`` names the role the failure is attributed to; ``reports`` maps every
    role to how it ended (its own error message, exit status or signal).
    """

    def __init__(self, role: str, message: str, reports=None):
        self.role = role
        self.reports = dict(reports or {})
        lines = [f"{role} failed: {message}"]
        lines += [f"  {r}: {text}" for r, text in sorted(self.reports.items())]
        super().__init__("\n".join(lines))


class DeviationDetected(PartyFailure):
    """Under security with abort: a compute party's check found that the other deviated from the protocol (a MAC
    check failed, or an opened value was impossible); the job stopped and released nothing.  ``role`` is the
    party that reported it first (the honest one, or both)."""

    def __init__(self, role: str, message: str, reports=None):
        super().__init__(role, message, reports)
        self.args = (self.args[0].replace(f"{role} failed: ", f"{role} stopped the job: ", 1),)


class PeerLost(Exception):
    """Raised inside a party when communication with a peer fails or times out.

    Deliberately not a RuntimeError: CrypTen's dealer loop swallows
    RuntimeError and would otherwise exit with status 0.
    """

    def __init__(self, peers, operation: str, cause: BaseException):
        self.peers = tuple(peers)
        self.cause = cause
        super().__init__(f"lost contact with {'/'.join(self.peers)} during {operation}: {cause}")


class DeploymentError(ValueError):
    """A deployment file, key file or role address that cannot be used; the message names it."""


class ChannelIntegrityError(Exception):
    """A secure channel between two roles failed authentication or its handshake: tampered, or a wrong key."""

    def __init__(self, channel: str, detail: str, peer: str = None):
        self.channel, self.peer = channel, peer
        super().__init__(f"integrity failure on channel {channel}: {detail}")
