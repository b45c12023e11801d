"""View test for ustat-2pc: what the two pair-parties receive holds no kernel value or noise in the clear.

P0 and P1 (with the TTP dealer, over TCP) evaluate Gini-Laplace and AUC-RR
on known inputs while every message they receive is recorded: from each
other (recv, all_reduce, all_gather, broadcast, ...) and from the dealer
(its broadcasts and objects).  Each received array is cut into vectors
aligned with the pairs (element-wise arrays, and packed bit arrays
unpacked) and compared with every secret of the run: the kernel values,
the noise, the noisy output, the other party's input and the noise's bits.
A vector "carries" a secret when it equals it in more positions than an
independent vector with the same value frequencies would (Bernstein's bound
on that tail at most the check's alpha over its number of tests).
The same checker must flag a view to which the kernel values were added.
The recording and the checker live in sims/security/view_parties.py and view_leaks.py (also run by
``mpc-auc security``).
"""
import numpy as np
import pytest

from mpc_auc.protocols.runtime.session import run_parties
from mpc_auc.sims.security.false_alarms import CHECK_ALPHA
from mpc_auc.sims.security.view_leaks import aligned, leaks, ustat_secrets
from mpc_auc.sims.security.view_parties import ustat_view_party

PAIRS = 1024  # the checks' cost grows with the pairs; the security command's quick suite views 4,096


@pytest.fixture(scope="module")
def run():
    rng = np.random.default_rng(31)
    x, y = rng.integers(0, 4097, PAIRS), rng.integers(0, 4097, PAIRS)
    out = run_parties(ustat_view_party, (x, y), provider="TTP", timeout_s=60)
    return x, y, out, ustat_secrets(x, y, out)


@pytest.mark.parametrize("party", [0, 1])
def test_pair_parties_receive_no_kernel_value_or_noise(run, party):
    x, y, out, secrets = run
    views = out[party]["views"]
    checked = sum(len(aligned(a, PAIRS)) for a in views)
    assert checked > 50  # the comparison, the coins, the conversion and the products were all seen
    other_input = {"other party's input": y if party == 0 else x}
    assert leaks(views, {**secrets, **other_input}, PAIRS, CHECK_ALPHA) == []


def test_the_checker_flags_a_leaky_view(run):
    _, _, out, secrets = run
    leaky = out[0]["views"] + [secrets["gini kernel"], secrets["auc output bit"]]
    found = {name for _, name in leaks(leaky, secrets, PAIRS, CHECK_ALPHA)}
    assert {"gini kernel", "auc output bit"} <= found
