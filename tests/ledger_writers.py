"""The processes of tests/protocols/runtime/test_ledger.py that write one party's ledger: a module of their own, so
that each spawned process imports the ledger alone, not the test module (dp_accounting, the command line)."""
from mpc_auc.protocols.runtime.ledger import Budget, Charge, Ledger, Release


def write_forever(directory):
    """Charge P0's ledger in ``directory`` without end (the test kills this process mid-write)."""
    ledger = Ledger(directory, "P0")
    release = Release("mpc-central", ((0.001, 500),) * 50, 1e-13)
    while True:
        ledger.charge(Charge(release, sets=("crash",), budget=Budget(1e9)))


def charge_many(directory, results):
    """Charge 8 releases of epsilon 0.25 against a budget of 1 to P0's ledger in ``directory``; put each fit."""
    ledger = Ledger(directory, "P0")
    release = Release("mpc-central", ((0.25, 1),), 0.0)
    for _ in range(8):
        results.put(ledger.charge(Charge(release, (("shared", "c0"),), budget=Budget(1.0)))["fits"])
