"""MPC gadgets on CrypTen shares: pure functions of secret-shared tensors.

This layer imports only torch and CrypTen (through :mod:`.crypten_compat`);
it starts no processes and knows nothing about clients or files.
"""
