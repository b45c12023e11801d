"""The security evaluation: the suite of ``mpc-auc security`` (``suite``, its ``report``, its steps
``view_checks``, ``collusion_checks`` and ``release_checks`` over the measurements of ``checks``, the transcript
tests' recording ``view_parties`` and their tests ``view_distributions`` and ``view_leaks``, ``collusion``, the
``network`` observer and its ``capture``, the ``dp_audit`` statistics and the ``false_alarms`` budget) and the
security experiments beside it, each run against the project's own code and against deliberately weakened
variants of it (``weakened_shuffles``, the weakened dealers, links and parties): what an opened AUC reveals
(``auc_leakage``), an organiser's evaluations on the same people (``person_ledger``), the crafted-model attack on
Flower rounds (``flower_oracle``), connection floods (``admission_flood``), hostile input files
(``hostile_inputs``), P0's memory over a roster (``roster_memory``) and the bitonic view's false alarms
(``view_false_alarms``)."""
__all__ = ["admission_flood", "auc_leakage", "capture", "checks", "collusion", "collusion_checks", "dp_audit",
           "false_alarms", "flower_oracle", "hostile_inputs", "network", "person_ledger", "release_checks", "report",
           "roster_memory", "suite", "view_checks", "view_distributions", "view_false_alarms", "view_leaks",
           "view_parties", "weakened_shuffles"]
