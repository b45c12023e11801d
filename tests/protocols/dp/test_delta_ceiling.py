"""The delta a ticket states before M is known (a direct evaluation): a ceiling of the circuit's delta at every M
up to the largest the evaluation admits (circuits.noise_laws.DiscreteLaplace.delta_ceiling)."""
import numpy as np
import pytest

from mpc_auc.protocols.dp.central_law import CentralNoise
from mpc_auc.protocols.dp.curve_law import CurveNoise


@pytest.mark.parametrize("noise", [CentralNoise(1.0), CentralNoise(0.3, 0.7, "record"), CentralNoise(4.0),
                                   CurveNoise(1.0, 100), CurveNoise(2.0, 7)])
def test_the_ceiling_at_the_largest_m_bounds_the_delta_at_every_smaller_one(noise):
    largest = 10**9
    ceiling = noise.delta_ceiling(largest)
    sizes = np.unique(np.geomspace(2, largest, 400).astype(np.int64))
    deltas = [noise.delta(int(m)) for m in sizes]
    assert max(deltas) <= ceiling < 20 * max(deltas)  # a bound, and not a vacuous one
