"""When a DP release says next to nothing: one rule for every release the project makes.

A release is *swamped* when its noise leaves it uninformative: its 95% interval (estimate +- 1.96 std) is
wider than half the statistic's range, or the estimate falls outside that range (a release clamped into
its range, as mpc-central's AUC, is judged by its interval alone).
mpc-central's AUC (range [0, 1]) and ustat-2pc's U-statistics (Kendall's tau: [-1, 1]; the others
[0, 1]) are flagged by it, with a warning, in their results.
"""


def swamped(estimate: float, std: float, lo: float = 0.0, hi: float = 1.0) -> bool:
    """True when the release's noise swamps it (module docstring)."""
    return not (lo <= estimate <= hi) or not 1.96 * std <= (hi - lo) / 2
