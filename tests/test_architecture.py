"""The architecture, enforced: the import-linter contracts of pyproject.toml, the lazy imports and their reasons,
the registry of what a role serves, and every module importable.

lint-imports reads the package as installed (mpc_auc with circuits, protocols and sims inside it), so the
tests stage that layout from the repository's folders (pyproject's package-dir) into a temporary directory.
"""
import ast
import importlib
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import tomllib

import pytest

from mpc_auc.protocols.runtime import control
from mpc_auc.protocols.services import SERVED

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYPROJECT = os.path.join(ROOT, "pyproject.toml")
LINT = os.path.join(os.path.dirname(sys.executable), "lint-imports")


def _package_dir() -> dict:
    """pyproject's package-dir: import path -> the repository folder installed there."""
    with open(PYPROJECT, "rb") as f:
        return tomllib.load(f)["tool"]["setuptools"]["package-dir"]


def _stage(target) -> str:
    """The installed layout of the package under ``target``: each package-dir folder copied to its import path."""
    for package, folder in sorted(_package_dir().items()):
        shutil.copytree(os.path.join(ROOT, folder), os.path.join(target, *package.split(".")),
                        ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
    shutil.copy(PYPROJECT, target)
    return str(target)


def _lint(stage: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=stage)
    return subprocess.run([LINT, "--no-cache", "pyproject.toml"], cwd=stage, env=env, capture_output=True,
                          text=True, timeout=600)


def test_the_layer_contracts_hold(tmp_path):
    done = _lint(_stage(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 kept, 0 broken" in done.stdout


@pytest.mark.parametrize("module, upward", [
    ("circuits/bits.py", "from ..protocols import errors"),  # a circuit importing a protocol
    ("protocols/runtime/link.py", "from ..mpc import exact"),  # the runtime importing a protocol above it
    ("mpc_auc/api.py", "from .sims import security"),  # the API importing an experiment
    ("sims/papers/dp_comparison.py", "from ..security import suite"),  # one room of sims importing another
    ("sims/plots.py", "from .bench import e2e"),  # a shared helper of sims importing a room
])
def test_an_upward_import_breaks_the_contract(tmp_path, module, upward):
    stage = _stage(tmp_path)
    folder, name = module.split("/", 1)
    package = next(p for p, d in _package_dir().items() if d == folder)
    path = os.path.join(stage, *package.split("."), name)
    with open(path, "a") as f:
        f.write(f"\n{upward}  # deliberately upward\n")
    done = _lint(stage)
    assert done.returncode != 0
    assert "BROKEN" in done.stdout and "is not allowed to import" in done.stdout


def _sources():
    for folder in ("circuits", "protocols", "mpc_auc", "sims"):
        for directory, _, files in os.walk(os.path.join(ROOT, folder)):
            yield from (os.path.join(directory, f) for f in files if f.endswith(".py"))


def test_every_import_inside_a_function_says_why_it_is_lazy():
    """The deliberate lazy imports (CrypTen only in role processes, dp-accounting's 0.9 s, an optional extra):
    each carries a ``lazily`` comment with its reason; any other import sits at the top of its module."""
    unexplained = []
    for path in _sources():
        text = open(path).read()
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    if isinstance(inner, (ast.Import, ast.ImportFrom)) and "lazily" not in lines[inner.lineno - 1]:
                        unexplained.append(f"{os.path.relpath(path, ROOT)}:{inner.lineno}")
    assert not unexplained, unexplained


def _modules():
    """Every module of the installed package (the layers are subpackages whose folders the installer maps)."""
    names = set()
    for package in ("mpc_auc", "mpc_auc.circuits", "mpc_auc.protocols", "mpc_auc.sims"):
        names.add(package)
        names.update(info.name for info in pkgutil.walk_packages(importlib.import_module(package).__path__,
                                                                 package + "."))
    return sorted(n for n in names if not n.endswith("__main__"))


@pytest.mark.parametrize("name", _modules())
def test_every_module_imports(name):
    assert importlib.import_module(name).__doc__, f"{name} has no docstring"


def _packages():
    """Every package of the product, found by walking its folders: each folder of a package-dir holding an
    ``__init__.py``, by its import name."""
    for package, folder in sorted(_package_dir().items()):
        top = os.path.join(ROOT, folder)
        for directory, _, files in os.walk(top):
            if "__init__.py" in files:
                inner = os.path.relpath(directory, top)
                yield package if inner == "." else ".".join([package, *inner.split(os.sep)])


def _resolves(package, name: str) -> bool:
    """``name`` of ``package.__all__`` is an attribute of it or a module under it."""
    if hasattr(package, name):
        return True
    try:
        importlib.import_module(f"{package.__name__}.{name}")
    except ModuleNotFoundError as err:
        if err.name != f"{package.__name__}.{name}":
            raise  # the module exists and fails to import: the error says why
        return False
    return True


@pytest.mark.parametrize("name", sorted(_packages()))
def test_every_package_declares_what_it_exports(name):
    """Each package's ``__init__`` lists its public names in ``__all__`` (the modules other layers import;
    mpc_auc its API), and every name there resolves."""
    package = importlib.import_module(name)
    assert getattr(package, "__all__", None), f"{name} declares no __all__ in its __init__.py"
    unresolved = [n for n in package.__all__ if not _resolves(package, n)]
    assert not unresolved, f"{name}.__all__ names what the package lacks: {unresolved}"


def test_a_role_serves_exactly_the_registered_services():
    control.load_services(SERVED)
    assert set(control.served()) >= {s.name for s in SERVED}
    for service in SERVED:
        assert control.resolve_target(service.name, {}).__module__ == service.module
    with pytest.raises(PermissionError, match="does not serve"):
        control.resolve_target("mpc_auc.protocols.mpc.ranking_party:_compute", {})
    with pytest.raises(RuntimeError, match="does not register"):
        control.load_services([control.Service("no-such-service", "mpc_auc.protocols.validation")])


def test_the_module_map_of_the_docs_matches_the_tree():
    """docs/architecture.md's map names every module of the tree, and every module it names exists.  A name
    matches the modules whose path ends with it: ``bench/link`` is sims/bench/link.py, not protocols/runtime/link.py."""
    text = open(os.path.join(ROOT, "docs", "architecture.md")).read()
    section = text[text.index("## Module map"):text.index("## Roles")]
    first_cells = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]
    named = {name for cell in first_cells for name in re.findall(r"`([a-z0-9_/]+)`", cell)}
    modules = {"/" + os.path.splitext(os.path.relpath(p, ROOT))[0] for p in _sources()
               if os.path.basename(p) not in ("__init__.py", "__main__.py")}
    missing = sorted(m for m in modules if not any(m.endswith("/" + name) for name in named))
    unknown = sorted(name for name in named if not any(m.endswith("/" + name) for m in modules))
    assert not missing, f"modules missing from the map: {missing}"
    assert not unknown, f"the map names modules the tree lacks: {unknown}"


def test_the_private_keys_the_readme_writes_are_ignored_by_git():
    """The README's walk-throughs write private keys into the checkout (D/<role>.key, <client>.key): git ignores
    them, so none is committed by accident."""
    if not os.path.isdir(os.path.join(ROOT, ".git")) and not os.path.isfile(os.path.join(ROOT, ".git")):
        pytest.skip("not a git checkout (an installed copy has no .gitignore to check)")
    names = ["D/P0.key", "D/coordinator.key", "hospital-a.key", "keys/client-3.key", "keys/client-3.ledger.json"]
    done = subprocess.run(["git", "check-ignore", *names], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == names
