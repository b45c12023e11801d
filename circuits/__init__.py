"""MPC gadgets on CrypTen shares: pure functions of secret-shared tensors.

This layer imports only torch and CrypTen (through :mod:`.crypten_compat`);
it starts no processes and knows nothing about clients or files.
"""

# the modules other layers import
__all__ = ["bitonic", "bits", "comparators", "correlations", "crypten_compat", "dealer_line", "division", "gates",
           "kernels", "noise", "noise_laws", "radix", "rank_auc", "rank_metrics", "scales", "select", "shares",
           "shuffle", "streams", "validity", "workers"]
