"""Experiments, benchmarks and the security evaluation (tier 4: docs/architecture.md), in three rooms that never
import one another: ``security`` (the security suite of ``mpc-auc security`` and the security experiments),
``papers`` (paper reproductions and the statistical studies) and ``bench`` (the benchmarks).  What several rooms
share sits here: ``commands`` (the CLI's door: it finds the experiment commands through the ``mpc_auc.commands``
entry points), ``config`` (the experiments' YAML configs), ``host`` (the measuring machine and the processes a
measurement starts) and ``plots`` (figures in one style)."""
__all__ = ["bench", "commands", "config", "host", "papers", "plots", "security"]
