"""The MPC AUC protocols (mpc-exact, mpc-central) and the parties' privacy ledger."""
