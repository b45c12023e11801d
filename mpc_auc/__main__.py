"""``python -m mpc_auc``: the ``mpc-auc`` command."""
import sys

from .cli import main

sys.exit(main())
