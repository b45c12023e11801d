"""Client input: score encoding, secret sharing, bundles, rosters and signed submissions, the parties'
intake of a job, and the submitting client."""

# the modules other layers import; the package's own: own_ledger (the submitter's)
__all__ = ["bundles", "clients", "encoding", "intake", "sharing", "submission", "submitter", "weights"]
