"""Who holds what and who sends what, grouped by concern (docs/architecture.md has the map):

* ``runtime``: identities, pinned TLS links, CrypTen's communicator, the wire format, serving roles
  and the coordinator's session (local spawn or a deployment);
* ``inputs``: score encoding, secret sharing, sealing, rosters, signed submissions and the intake;
* ``mpc``: the MPC AUC protocols (mpc-exact, mpc-central) and the parties' privacy ledger;
* ``dp``: the plain-DP AUC mechanisms of the papers behind one interface, noise calibration;
* ``ustat``: U-statistics by per-pair 2PC, their theory and baselines.

``errors`` and ``clear_auc`` (the reference AUC) serve every group.
"""
