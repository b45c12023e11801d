"""mpc-auc: the AUC of a classifier whose scores and labels are spread over many parties.

Layers (installed as subpackages so no import name clashes on PyPI):
``mpc_auc.circuits`` (MPC gadgets on CrypTen shares), ``mpc_auc.protocols``
(roles, processes, protocols), ``mpc_auc`` itself (data, CLI) and
``mpc_auc.sims`` (experiments and benchmarks).

The Python API (docs/api.md): :func:`roc_auc_score` returns an :class:`AucResult`; bad input raises
:class:`InputError`, a ``ValueError``.
"""
__version__ = "0.1.0"

from .api import AucResult, roc_auc_score  # noqa: E402  (after __version__, which the modules read)
from .protocols.errors import InputError  # noqa: E402

__all__ = ["AucResult", "InputError", "roc_auc_score", "__version__"]
