"""The version of mpc-auc (pyproject.toml reads it from here)."""
__version__ = "0.1.0"
