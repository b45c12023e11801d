"""Experiments, benchmarks and the security evaluation (tier 4: docs/architecture.md); the CLI finds their
commands through the mpc_auc.commands entry points (sims.commands)."""
