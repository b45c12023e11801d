"""Every numeric parameter's constraint, declared once; the API, the CLI and the protocols check through it.

In the manner of scikit-learn's ``validate_params``: :data:`PARAMETERS` names each parameter and the
interval it must lie in; :func:`checked` returns the value as its kind or raises :class:`InputError`
with one message, whoever asks (``mpc_auc.roc_auc_score(epsilon=0)`` and ``mpc-auc run --epsilon 0``
print the same words).  NaN and infinities are refused everywhere: no parameter takes an infinite value.
The interval and its wording are circuits.intervals', which the circuits' noise laws guard epsilon with too.
"""
from ..circuits.intervals import EPSILON, Interval, admitted
from .errors import InputError

MAX_SECONDS = 1e6  # about 11.6 days: any timeout or deadline past it is a typo (1e300 overflowed the sockets)
MAX_AUC_DECIMALS = 12  # an AUC rounded to more decimals than this is as good as the 52-bit one

PARAMETERS = {
    "epsilon": EPSILON,  # declared by the circuits, whose noise laws guard it too
    "delta": Interval(float, 0, 1, hi_open=True, what="a privacy parameter delta"),  # a budget's: 0 is pure DP
    "mechanism_delta": Interval(float, 0, 1, lo_open=True, hi_open=True,
                                what="the delta of an (epsilon, delta) mechanism"),  # a Gaussian's: never 0
    "alpha": Interval(float, 0, 1, lo_open=True, hi_open=True, what="a share strictly between 0 and 1"),
    "timeout": Interval(float, 0, MAX_SECONDS, lo_open=True, what="a number of seconds"),
    "deadline": Interval(float, 0, MAX_SECONDS, lo_open=True, what="a number of seconds"),
    "rows": Interval(int, 1, 10**10, what="a count of rows"),
    "count": Interval(int, 1, 10**9, what="a count"),
    "threads": Interval(int, 1, 1024, what="a number of threads"),
    "k": Interval(int, 1, 10**9, what="a number of pairs per user"),
    "draws": Interval(int, 2, 10**9, what="a number of noise draws"),
    "seed": Interval(int, 0, 2**63 - 1, what="a non-negative integer seed"),
    "port": Interval(int, 1, 65535 - 2, what="a TCP port (P0's; P1 and the dealer take the next two)"),
    "decimals": Interval(int, 0, 17, what="a number of decimals"),
    "auc_decimals": Interval(int, 1, MAX_AUC_DECIMALS, what="a number of decimals"),
    "auc": Interval(float, 0, 1, lo_open=True, hi_open=True, what="a share strictly between 0 and 1"),
    "points": Interval(int, 1, 10**4, what="a number of curve points"),
    "columns": Interval(int, 1, 16, what="a number of score columns"),
    "max_fpr": Interval(float, 0, 1, lo_open=True, what="a false positive rate"),
    "max_exact": Interval(int, 0, 10**6, what="a number of exact releases"),
    "max_decimals": Interval(int, 1, MAX_AUC_DECIMALS, what="a number of decimals"),
}


def checked(name: str, value, interval: Interval = None):
    """``value`` as the kind parameter ``name`` takes, or InputError naming the parameter, the rule and the value.

    interval: the parameter's :data:`PARAMETERS` entry unless given (a parameter named otherwise, e.g.
    ``m`` with the ``rows`` rule)."""
    return admitted(name, value, interval or PARAMETERS[name], InputError)
