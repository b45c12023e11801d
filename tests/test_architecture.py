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


def _stage(target) -> str:
    """The installed layout of the package under ``target``: each package-dir folder copied to its import path."""
    with open(PYPROJECT, "rb") as f:
        package_dir = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
    for package, folder in sorted(package_dir.items()):
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
    assert "2 kept, 0 broken" in done.stdout


@pytest.mark.parametrize("module, upward", [
    ("circuits/bits.py", "from ..protocols import errors"),  # a circuit importing a protocol
    ("protocols/runtime/link.py", "from ..mpc import exact"),  # the runtime importing a protocol above it
    ("mpc_auc/api.py", "from .sims import security"),  # the API importing an experiment
])
def test_an_upward_import_breaks_the_contract(tmp_path, module, upward):
    stage = _stage(tmp_path)
    with open(PYPROJECT, "rb") as f:
        package_dir = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
    folder, name = module.split("/", 1)
    package = next(p for p, d in package_dir.items() if d == folder)
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
    """docs/architecture.md's map names every module of the tree, and every module it names exists."""
    text = open(os.path.join(ROOT, "docs", "architecture.md")).read()
    section = text[text.index("## Module map"):text.index("## Roles")]
    first_cells = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]
    named = {name.split("/")[-1] for cell in first_cells for name in re.findall(r"`([a-z0-9_/]+)`", cell)}
    stems = {os.path.splitext(os.path.basename(p))[0] for p in _sources()} - {"__init__", "__main__"}
    assert not stems - named, f"modules missing from the map: {sorted(stems - named)}"
    assert not named - stems, f"the map names modules the tree lacks: {sorted(named - stems)}"
