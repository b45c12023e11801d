"""How much the commands say on stderr: ``--quiet`` (errors only), default, ``--verbose``.

Long loops show a tqdm bar with its ETA when stderr is a terminal, or tqdm's notebook bar in Jupyter
(``tqdm.auto``); status lines go through :func:`say` (default and verbose) or :func:`detail` (verbose only);
:func:`warn` always speaks.  :class:`RoleProgress` shows the roles' progress messages (the command line's,
and the API's with ``progress=True``).
"""
import re
import sys

from tqdm.auto import tqdm

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


class RoleProgress:
    """The roles' progress messages: the sort's steps as a bar with ETA (a terminal's or a notebook's; status
    lines elsewhere), the rest as status lines ([role] text)."""
    STEP = re.compile(r"^(oblivious \w+ sort of \d+ scores): step (\d+)/(\d+)$")

    def __init__(self):
        self._bar = None

    def __call__(self, role: str, text: str) -> None:
        step = self.STEP.match(text)
        if step is None:
            say(f"  [{role}] {text}")
            return
        done, total = int(step[2]), int(step[3])
        if self._bar is None:
            self._bar = bar(total=total, desc=step[1], unit="step")
        if self._bar.disable:
            say(f"  [{role}] {text}")
        self._bar.update(done - self._bar.n)
        if done == total:
            self._bar.close()
            self._bar = None
