"""Who holds what and who sends what, grouped by concern (docs/architecture.md has the map), in layers that
pyproject.toml's import-linter contract enforces (each imports only those below it):

* ``services``: what a deployed role serves (the public registry);
* ``mpc`` (mpc-exact, mpc-central: one ranking job, the parties' loop) | ``ustat`` (per-pair 2PC,
  its theory and baselines);
* ``inputs`` (score encoding, secret sharing, bundles, rosters, signed submissions, the intake) |
  ``dp`` (the plain-DP mechanisms behind one interface, mpc-central's law, the epsilon grid);
* ``runtime``: identities, pinned TLS links, sealing, the wire format, the control channel, serving roles,
  the coordinator's session, and what a role process runs (CrypTen's communicator, CSPRNG, dealer,
  ledger, meters);
* ``errors``, ``validation`` (every numeric parameter's constraint), ``scalar`` (results that are numbers),
  ``clear_auc`` (the reference AUC) and ``clear_metrics`` (the clear references of DeLong's variance and test
  and of average precision).
"""

# the modules other layers import
__all__ = ["clear_auc", "clear_metrics", "dp", "errors", "inputs", "metric_catalogue", "mpc", "runtime", "scalar",
           "services", "ustat", "validation"]
