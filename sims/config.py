"""Experiment configs: one YAML file is one experiment, checked key by key, flags on top.

A command declares its parameters as :class:`Param` (name, type, default, help, check).  The
effective parameters are the defaults, then the YAML file's values, then the flags given on the
command line; each is checked before any work starts, an unknown key or a bad value is an
:class:`InputError` naming it, and the effective config is written beside the results
(``config.yaml``) so that ``--config`` on it repeats the experiment.
"""
import argparse
import numbers
from dataclasses import dataclass
from typing import Callable

import yaml

from ..protocols.errors import InputError
from ..results import strict, write_atomically


@dataclass(frozen=True)
class Param:
    name: str
    kind: type  # int, float, str, bool or list (of ``item``)
    default: object
    help: str
    check: Callable = None  # value -> error text or None
    item: type = float
    choices: tuple = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


def positive(value):
    return None if value > 0 else "must be positive"


def probability(value):
    return None if 0 < value < 1 else "must lie strictly between 0 and 1"


def all_positive(values):
    return None if values and all(v > 0 for v in values) else "must be a non-empty list of positive numbers"


def add_options(parser: argparse.ArgumentParser, params) -> None:
    """One flag per parameter (default None: a flag overrides the config only when given)."""
    parser.add_argument("--config", metavar="FILE.yaml",
                        help="YAML file of this experiment's parameters (the flags below override it)")
    for p in params:
        shown = p.default if p.kind is not list else " ".join(str(v) for v in p.default)
        kwargs = {"help": p.help if p.default is None else f"{p.help} (default: {shown})", "default": None}
        if p.kind is bool:
            kwargs["action"] = argparse.BooleanOptionalAction
        elif p.kind is list:
            kwargs.update(nargs="+", type=p.item, choices=p.choices, metavar=p.name.upper())
        else:
            kwargs.update(type=p.kind, choices=p.choices)
        parser.add_argument(p.flag, **kwargs)


def _coerce(p: Param, value, where: str):
    def bad(why):
        return InputError(f"{where}: {p.name} {why}, not {value!r}")

    if value is None:
        return None
    if p.kind is list:
        values = value if isinstance(value, list) else [value]
        return [_coerce(Param(p.name, p.item, None, "", choices=p.choices), v, where) for v in values]
    if p.kind is bool:
        if not isinstance(value, bool):
            raise bad("must be true or false")
    elif p.kind is int:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise bad("must be an integer")
        value = int(value)
    elif p.kind is float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise bad("must be a number")
        value = float(value)
    elif not isinstance(value, str):
        raise bad("must be a string")
    if p.choices and value not in p.choices:
        raise bad(f"must be one of {', '.join(map(str, p.choices))}")
    return value


def read_config(path: str) -> dict:
    try:
        with open(path) as f:
            config = yaml.safe_load(f) or {}
    except OSError as err:
        raise InputError(f"cannot read config {path}: {err.strerror}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        why = getattr(err, "problem", None) or " ".join(str(err).split())
        raise InputError(f"config {path} is not valid YAML{where}: {why}") from None
    if not isinstance(config, dict):
        raise InputError(f"config {path} must be a mapping of parameters")
    return config


def resolve(params, config_path: str = None, flags: dict = None) -> dict:
    """Defaults, then the config file, then the flags given; every value checked by name."""
    known = {p.name: p for p in params}
    chosen = {p.name: p.default for p in params}
    if config_path:
        config = read_config(config_path)
        unknown = sorted(set(config) - set(known))
        if unknown:
            raise InputError(f"config {config_path}: unknown parameter(s) {', '.join(map(str, unknown))}; "
                             f"known: {', '.join(sorted(known))}")
        chosen.update({k: _coerce(known[k], v, f"config {config_path}") for k, v in config.items()})
    for name, value in (flags or {}).items():
        if name in known and value is not None:
            chosen[name] = _coerce(known[name], value, known[name].flag)
    for name, value in chosen.items():
        problem = known[name].check and value is not None and known[name].check(value)
        if problem:
            raise InputError(f"{name} {problem}, not {value!r}")
    return chosen


def write_config(path: str, config: dict) -> None:

    def write(tmp):
        with open(tmp, "w") as f:
            yaml.safe_dump(strict(config), f, sort_keys=False)

    write_atomically(path, write)
