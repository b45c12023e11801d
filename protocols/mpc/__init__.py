"""The MPC AUC protocols: mpc-exact and mpc-central over one ranking job (ranking_job) and the parties'
loop (ranking_party)."""
