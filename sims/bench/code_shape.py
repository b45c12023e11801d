"""The shape of the product code, by ast: its widest public signatures, the length of ``roc_auc_score``, the modules
that refuse on each request option, the public names defined twice, the files over 600 lines and the packages that
declare ``__all__`` (docs/architecture.md, "The seams").

Run on a checkout: ``python -m mpc_auc.sims.bench.code_shape [ROOT]`` (default: this package's repository).
"""
import ast
import collections
import pathlib
import sys

PRODUCT = ["mpc_auc", "circuits", "protocols"]
# the request's options (aliases: the same option under another name in a signature or a value)
OPTIONS = {"protocol": {"protocol"}, "epsilon": {"epsilon"}, "budget": {"budget"}, "metrics": {"metrics"},
           "points": {"points"}, "max_fpr": {"max_fpr", "partial"}, "decimals": {"decimals", "auc_decimals"},
           "ranks": {"ranks", "return_ranks"}, "weights": {"weights", "sample_weight", "weighted", "weight_bits"},
           "ci": {"ci"}, "multi_class": {"multi_class", "ovr"}, "average": {"average"},
           "neighbours": {"neighbours"}, "method": {"method"}, "score_dtype": {"score_dtype"},
           "deployment": {"deployment"}, "ledger": {"ledger"}}
# where a request is taken in: a rule here is an option rule (the parties' own checks of a decoded message are not)
FRONT = ("mpc_auc/api.py", "mpc_auc/evaluations.py", "mpc_auc/planner.py", "mpc_auc/flower.py", "mpc_auc/context.py",
         "mpc_auc/cli/commands.py", "protocols/release_spec.py", "protocols/inputs/submission.py",
         "protocols/mpc/exact.py", "protocols/mpc/central.py", "protocols/mpc/ranking_job.py")


def files(root, dirs):
    for d in dirs:
        yield from sorted((root / d).rglob("*.py"))


def params(fn) -> int:
    a = fn.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs if x.arg not in ("self", "cls")]
    return len(names) + (a.vararg is not None) + (a.kwarg is not None)


def public_functions(tree, mod):
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            yield f"{mod}.{node.name}", node
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for sub in node.body:
                if isinstance(sub, ast.FunctionDef) and not sub.name.startswith("_"):
                    yield f"{mod}.{node.name}.{sub.name}", sub


def names_in(node) -> set:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            out.add(n.value)
    return out


def rules(tree, mod, found):
    """An option rule: an ``if`` whose test names an option and whose body raises InputError."""
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        for n in ast.walk(fn):
            if not isinstance(n, ast.If):
                continue
            raises = [b for stmt in n.body for b in ast.walk(stmt) if isinstance(b, ast.Raise) and b.exc is not None]
            if any("InputError" in names_in(b.exc) for b in raises):
                named = names_in(n.test)
                for option, aliases in OPTIONS.items():
                    if named & aliases:
                        found[option].add(mod)


def scan(root: pathlib.Path) -> dict:
    """The figures of the checkout at ``root``: signatures, rules, names, long files, packages."""
    shape = {"sigs": [], "long": [], "defs": collections.defaultdict(set), "rules": collections.defaultdict(set)}
    for f in files(root, PRODUCT + ["sims"]):
        rel, text = f.relative_to(root), f.read_text()
        mod, tree = ".".join(rel.with_suffix("").parts), ast.parse(text)
        if text.count("\n") > 600:
            shape["long"].append(f"{rel} ({text.count(chr(10))})")
        if rel.parts[0] == "sims":
            continue
        for name, fn in public_functions(tree, mod):
            body = fn.body[1:] if ast.get_docstring(fn) else fn.body
            lines = body[-1].end_lineno - body[0].lineno + 1 if body else 0
            shape["sigs"].append((params(fn), name, (fn.end_lineno - fn.lineno + 1, lines)))
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                shape["defs"][node.name].add(mod)
        if str(rel) in FRONT:
            rules(tree, mod, shape["rules"])
    packages = [p for p in files(root, PRODUCT + ["sims"]) if p.name == "__init__.py"]
    shape["packages"] = (sum("__all__" in p.read_text() for p in packages), len(packages))
    return shape


def main(root: pathlib.Path) -> None:
    """Print the figures of the checkout at ``root``."""
    shape = scan(root)
    sigs = sorted(shape["sigs"], reverse=True)
    print("largest public signatures (parameters, function):", ", ".join(f"{n} {p}" for p, n, _ in sigs[:4]))
    print("public functions over 12 parameters:", sum(p > 12 for p, _, _ in sigs))
    print("roc_auc_score: lines (docstring included, body):",
          next(lines for _, n, lines in sigs if n == "mpc_auc.api.roc_auc_score"))
    print("option rules: the modules that refuse on each option (where a request is taken in):")
    for option in OPTIONS:
        print(f"  {option:12s} {len(shape['rules'][option])}  {', '.join(sorted(shape['rules'][option]))}")
    print("options refused in more than one module:", sum(len(v) > 1 for v in shape["rules"].values()))
    twice = {k: sorted(v) for k, v in shape["defs"].items() if len(v) > 1}
    print("public names defined in more than one module:", len(twice),
          "".join(f"\n  {k}: {v}" for k, v in sorted(twice.items())))
    print("files over 600 lines:", len(shape["long"]), ", ".join(shape["long"]))
    print("packages declaring __all__: {} of {}".format(*shape["packages"]))


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
