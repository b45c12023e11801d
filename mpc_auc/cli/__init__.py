"""The ``mpc-auc`` command: its entry point.  A Ctrl-C at any moment, imports included, ends it with one line
and exit status 130 (the roles are stopped by the session it interrupts: protocols.runtime.session).

The package: ``parser`` (the options, grouped and shared, and the dispatch), ``commands`` (what each command
does), ``records`` (what they write).
"""
import sys

# what other layers import: the entry point (pyproject's script, __main__) and the options (sims.commands)
__all__ = ["main", "parser"]


def main(argv=None) -> int:
    try:
        from .parser import run  # lazily: a Ctrl-C while the command's modules import ends with one line too

        return run(argv)
    except KeyboardInterrupt:
        print("mpc-auc: interrupted: every role stopped, nothing written", file=sys.stderr)
        return 130
