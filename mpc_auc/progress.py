"""How much the commands say on stderr: ``--quiet`` (errors only), default, ``--verbose``.

Long loops show a tqdm bar with its ETA when stderr is a terminal; status lines go through
:func:`say` (default and verbose) or :func:`detail` (verbose only); :func:`warn` always speaks.
"""
import sys

from tqdm import tqdm

QUIET, NORMAL, VERBOSE = 0, 1, 2
_level = NORMAL


def set_level(level: int) -> None:
    global _level
    _level = level


def say(text: str) -> None:
    if _level >= NORMAL:
        print(text, file=sys.stderr, flush=True)


def warn(text: str) -> None:
    """A warning about a result (shown even with --quiet: it qualifies what the command wrote)."""
    print(f"warning: {text}", file=sys.stderr, flush=True)


def detail(text: str) -> None:
    if _level >= VERBOSE:
        print(text, file=sys.stderr, flush=True)


def bar(iterable=None, total=None, desc: str = None, unit: str = "it"):
    """A progress bar with ETA on a terminal; silent when quiet or when stderr is not a terminal."""
    return tqdm(iterable, total=total, desc=desc, unit=unit, file=sys.stderr, leave=False, dynamic_ncols=True,
                disable=True if _level == QUIET else None)
