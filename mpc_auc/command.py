"""The ``mpc-auc`` command's entry point: a Ctrl-C at any moment, imports included, ends it with one line
and exit status 130 (the roles are stopped by the session it interrupts: protocols.runtime.session)."""
import sys


def main(argv=None) -> int:
    try:
        from .cli import main as run

        return run(argv)
    except KeyboardInterrupt:
        print("mpc-auc: interrupted: every role stopped, nothing written", file=sys.stderr)
        return 130
