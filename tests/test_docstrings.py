"""The public API's docstrings: numpydoc sections on every public function, and their Examples run as doctests.

A public function is one of ``mpc_auc.__all__``, or a method users call on a class there; each must state its
Parameters, Returns, See Also and Examples, with at least one example line, and every example in the API's modules
must give what it shows (doctest, in-process with ``protocol="clear"`` where the function takes a protocol; the
ones that need a deployment are marked to skip and point to the test that runs them).
"""
import doctest
import importlib
import inspect

import pytest

import mpc_auc

MODULES = ["mpc_auc.api", "mpc_auc.metric_api", "mpc_auc.context", "mpc_auc.evaluations", "mpc_auc.report",
           "mpc_auc.protocols.release_spec", "mpc_auc.protocols.refused"]
METHODS = [("Evaluation", "open"), ("Evaluation", "result"), ("Evaluation", "done"), ("Report", "to_dict")]
SECTIONS = ("Parameters", "Returns", "See Also", "Examples")


def _public_functions():
    found = [(name, getattr(mpc_auc, name)) for name in mpc_auc.__all__]
    found = [(name, f) for name, f in found if inspect.isfunction(f)]
    return found + [(f"{cls}.{method}", getattr(getattr(mpc_auc, cls), method)) for cls, method in METHODS]


@pytest.mark.parametrize("name, function", _public_functions(), ids=[n for n, _ in _public_functions()])
def test_every_public_function_has_the_numpydoc_sections_and_an_example(name, function):
    doc = inspect.getdoc(function) or ""
    missing = [s for s in SECTIONS if f"\n{s}\n{'-' * len(s)}" not in doc and not (s == "Parameters" and
                                                                                    _takes_nothing(function))]
    assert not missing, f"{name} lacks {missing}"
    assert ">>> " in doc.split("Examples\n--------", 1)[1], f"{name}: its Examples section shows no example"


def _takes_nothing(function) -> bool:
    """A method whose only parameter is self (Evaluation.done, Report.to_dict)."""
    return list(inspect.signature(function).parameters) == ["self"]


@pytest.mark.parametrize("module", MODULES)
def test_the_examples_give_what_they_show(module):
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    found = doctest.testmod(importlib.import_module(module), optionflags=flags, verbose=False, report=True)
    assert found.failed == 0, f"{found.failed} of {found.attempted} examples of {module} failed (printed above)"
