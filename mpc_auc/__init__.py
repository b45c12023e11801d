"""mpc-auc: the AUC of a classifier whose scores and labels are spread over many parties.

Layers (installed as subpackages so no import name clashes on PyPI):
``mpc_auc.circuits`` (MPC gadgets on CrypTen shares), ``mpc_auc.protocols``
(roles, processes, protocols), ``mpc_auc`` itself (the API, the planner, the CLI, data) and
``mpc_auc.sims`` (experiments and benchmarks); docs/architecture.md has the map.

The Python API (docs/api.md), in scikit-learn's conventions: :func:`roc_auc_score` returns an
:class:`AucResult` (with DeLong's interval), :func:`average_precision_score` a :class:`MetricResult` (each a
float with attributes), :func:`roc_curve` and :func:`precision_recall_curve` a :class:`CurveResult` (which unpacks as
scikit-learn's curves), :class:`Evaluation` and :func:`submit` both sides of an
evaluation on a deployment's running roles, :func:`evaluate` a :class:`Report` of every metric
from one sort, :func:`global_ranks` each row's global rank; :class:`Context` bundles where the roles run and what
the scores are, :class:`Session` keeps the local roles alive between calls, :class:`Intake` and
:class:`ClientTerms` the two sides' terms of a deployed evaluation;
:func:`read_predictions` a prediction file as a DataFrame, :func:`compare` a DataFrame of the plain-DP
mechanisms, :func:`u_statistic` a ustat-2pc release; bad input raises :class:`InputError`, a ``ValueError``, and a party that fails :class:`PartyFailure`.
Every public function's docstring has an example that runs (tests/test_docstrings.py).
"""
import importlib

from .version import __version__

API = ("AucResult", "compare", "global_ranks", "read_predictions", "roc_auc_score", "u_statistic")
METRICS = ("average_precision_score", "delong_test", "evaluate", "precision_recall_curve", "roc_curve")
RESULTS = ("CurveResult", "DelongTestResult", "MetricResult", "Report")
DEPLOYED = ("Evaluation", "EvaluationResult", "Receipt", "submit")  # both sides of a deployed evaluation
SETTINGS = ("ClientTerms", "Context", "Intake")  # the values a caller sets once (mpc_auc.context)
WARM = ("Session",)  # the local roles kept alive between calls (mpc_auc.warm)
MODULES = {**dict.fromkeys(API, "api"), **dict.fromkeys(METRICS, "metric_api"), **dict.fromkeys(RESULTS, "report"),
           **dict.fromkeys(DEPLOYED, "evaluations"), **dict.fromkeys(SETTINGS, "context"),
           **dict.fromkeys(WARM, "warm")}
ERRORS = ("InputError", "PartyFailure")  # bad input (a ValueError); a role that died, stalled or failed
__all__ = [*API, *METRICS, *RESULTS, *DEPLOYED, *SETTINGS, *WARM, *ERRORS, "__version__"]


def __dir__():
    """``dir(mpc_auc)``: the public API (loaded lazily, so not yet among the module's globals)."""
    return sorted(__all__)


def __getattr__(name):
    """The API, imported on first use: ``import mpc_auc`` (and the command's start) stays light."""
    if name in MODULES:
        return getattr(importlib.import_module(f".{MODULES[name]}", __name__), name)
    if name in ERRORS:
        from .protocols import errors  # lazily, as the API

        return getattr(errors, name)
    raise AttributeError(f"module 'mpc_auc' has no attribute {name!r}")
