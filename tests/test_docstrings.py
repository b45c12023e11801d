"""The public API's docstrings (docs/api.md): every example runs as a doctest, and every public function and method
has numpydoc's Parameters (when it takes any), Returns, See Also and Examples sections, with an example.

The examples run in this process: with ``protocol="clear"`` where a function takes a protocol, ``global_ranks``
and ``u_statistic`` on three or four rows with real role processes (a few seconds), the deployed evaluation's
under ``+SKIP`` (tests/mpc_auc/test_deployed_api.py runs them on a deployment).
"""
import doctest
import importlib
import inspect
import os
import pkgutil
import re

import pytest

import mpc_auc

PACKAGES = ("mpc_auc", "mpc_auc.circuits", "mpc_auc.protocols", "mpc_auc.sims")
API_MODULES = ("mpc_auc.api", "mpc_auc.metric_api", "mpc_auc.context", "mpc_auc.evaluations", "mpc_auc.report",
               "mpc_auc.protocols.release_spec", "mpc_auc.protocols.refused")
USER_METHODS = ("Evaluation.open", "Evaluation.result", "Evaluation.done", "Report.to_dict")
SECTIONS = ("Returns", "See Also", "Examples")  # and Parameters, for a callable that takes any
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _source(info: pkgutil.ModuleInfo) -> str:
    """The file of a module found by pkgutil, without importing it."""
    leaf = info.name.rpartition(".")[2]
    parts = (leaf, "__init__.py") if info.ispkg else (leaf + ".py",)
    return os.path.join(info.module_finder.path, *parts)


def _holds_examples(path: str) -> bool:
    with open(path) as f:
        return ">>>" in f.read()


def _modules_with_examples() -> list:
    """Every module of the package whose source holds a docstring example (``>>>``), found in the text."""
    found = set()
    for package in PACKAGES:
        top = importlib.import_module(package)
        found.update([package] if _holds_examples(top.__file__) else [])
        found.update(info.name for info in pkgutil.walk_packages(top.__path__, package + ".")
                     if _holds_examples(_source(info)))
    return sorted(found)


def _public_callables() -> dict:
    """name -> every function of ``mpc_auc.__all__`` and every public method of its classes."""
    found = {}
    for name in mpc_auc.__all__:
        value = getattr(mpc_auc, name)
        if inspect.isfunction(value):
            found[name] = value
        elif inspect.isclass(value):
            found.update({f"{name}.{attr}": getattr(value, attr) for attr, member in vars(value).items()
                          if not attr.startswith("_")
                          and (inspect.isfunction(member) or isinstance(member, (classmethod, staticmethod)))})
    return found


def _sections(doc: str) -> dict:
    """A numpydoc docstring's sections: title -> body."""
    parts = re.split(r"^(\w[\w ]*)\n-{3,}$", doc, flags=re.M)
    return {title: body for title, body in zip(parts[1::2], parts[2::2])}


def test_the_listed_modules_and_methods_are_found():
    assert set(API_MODULES) <= set(_modules_with_examples())
    assert set(USER_METHODS) <= set(_public_callables())


@pytest.mark.parametrize("name", _modules_with_examples())
def test_the_examples_of_a_module_run(name):
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report = []
    failed = sum(runner.run(test, out=report.append).failed for test in doctest.DocTestFinder().find(module))
    assert failed == 0, "".join(report)


@pytest.mark.parametrize("name, function", sorted(_public_callables().items()))
def test_a_public_callable_has_the_numpydoc_sections_and_an_example(name, function):
    sections = _sections(inspect.getdoc(function) or "")
    takes = [p for p in inspect.signature(function).parameters if p not in ("self", "cls")]
    wanted = ("Parameters",) * bool(takes) + SECTIONS
    missing = [title for title in wanted if title not in sections]
    assert not missing, f"{name}'s docstring lacks the section(s) {', '.join(missing)}"
    assert re.search(r"^>>> ", sections["Examples"], re.M), f"{name}'s Examples section has no example (>>>)"
