"""mpc-auc: the AUC of a classifier whose scores and labels are spread over many parties.

Layers (installed as subpackages so no import name clashes on PyPI):
``mpc_auc.circuits`` (MPC gadgets on CrypTen shares), ``mpc_auc.protocols``
(roles, processes, protocols), ``mpc_auc`` itself (data, CLI) and
``mpc_auc.sims`` (experiments and benchmarks).
"""
__version__ = "0.1.0"
