"""Client input: score encoding, secret sharing, bundles, rosters and signed submissions, the parties'
intake of a job, and the submitting client."""
