"""The MPC AUC protocols: mpc-exact and mpc-central over one ranking job (ranking_job) and the parties'
loop (ranking_party)."""

# the modules other layers import; the package's own: held_rows
__all__ = ["accounting", "central", "exact", "ranking_job", "ranking_party"]
