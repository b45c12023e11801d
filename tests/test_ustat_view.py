"""View test for ustat-2pc: what the two pair-parties receive holds no kernel value or noise in the clear.

P0 and P1 (with the TTP dealer, over TCP) evaluate Gini-Laplace and AUC-RR
on known inputs while every message they receive is recorded: from each
other (recv, all_reduce, all_gather, broadcast, ...) and from the dealer
(its broadcasts and objects).  Each received array is cut into vectors
aligned with the pairs (element-wise arrays, and packed bit arrays
unpacked) and compared with every secret of the run: the kernel values,
the noise, the noisy output, the other party's input and the noise's bits.
A vector "carries" a secret when it equals it in more positions than an
independent vector with the same value frequencies would (5-sigma band).
The same checker must flag a view to which the kernel values were added.
"""
import numpy as np
import pytest

from mpc_auc.circuits.dealer import unpack_bits
from mpc_auc.protocols.runtime import run_parties

PAIRS = 4096
RECORDED = ("recv", "all_reduce", "all_gather", "broadcast", "recv_obj", "gather", "reduce", "scatter")


def _party(ctx, x, y):
    import torch

    from mpc_auc.circuits import kernels
    from mpc_auc.circuits.bits import BitConverter
    from mpc_auc.circuits.crypten_compat import crypten
    from mpc_auc.circuits.noise import DiscreteLaplace, RandomizedResponse

    log = []
    cls = crypten.communicator.DistributedCommunicator

    def record(value):
        if isinstance(value, torch.Tensor):
            log.append(value.detach().clone().to(torch.int64).numpy().ravel())
        elif isinstance(value, (list, tuple)):
            for v in value:
                record(v)
        elif isinstance(value, (bytes, bytearray)) and len(value) % 8 == 0:
            log.append(np.frombuffer(bytes(value), dtype=np.int64).copy())

    for name in RECORDED:
        original = getattr(cls, name)

        def recording(self, *args, _original=original, **kwargs):
            out = _original(self, *args, **kwargs)
            record(out)
            return out

        setattr(cls, name, recording)
    converter = BitConverter(ctx.stream_key)
    own = x if ctx.rank == 0 else y
    gini = kernels.gini(own, DiscreteLaplace(1.0, 4096), converter)
    auc = kernels.auc_public_classes(own, RandomizedResponse(1.0))
    views = list(log)
    return {"views": views, "gini": gini, "auc": auc}


@pytest.fixture(scope="module")
def run():
    rng = np.random.default_rng(31)
    x, y = rng.integers(0, 4097, PAIRS), rng.integers(0, 4097, PAIRS)
    out = run_parties(_party, (x, y), provider="TTP", timeout_s=60)
    gini = out[0]["gini"] + out[1]["gini"]
    kernel = np.abs(x - y)
    noise = gini - kernel
    auc = (out[0]["auc"] ^ out[1]["auc"]).astype(np.int64)
    secrets = {"gini kernel": kernel, "gini noise": noise, "gini output": gini, "noise sign": np.sign(noise),
               "noise non-zero": (noise != 0).astype(np.int64), "auc kernel bit": (x > y).astype(np.int64),
               "auc output bit": auc}
    return x, y, out, secrets


def aligned(array: np.ndarray) -> list:
    """The pair-aligned vectors in a received array: element-wise chunks, and packed bit words unpacked."""
    words = -(-PAIRS // 64)
    out = []
    if len(array) % PAIRS == 0:
        out += list(array.reshape(-1, PAIRS))
    if len(array) % words == 0:
        out += list(unpack_bits(array.reshape(-1, words), PAIRS))
    return out


def carries(vector: np.ndarray, secret: np.ndarray, secret_values: np.ndarray, secret_freq: np.ndarray) -> bool:
    """More equal positions than independence allows (5 sigma above sum_t P(vector=t) P(secret=t))."""
    observed = float(np.mean(vector == secret))
    if observed == 0.0:
        return False
    chance = float((np.isin(vector, secret_values) * secret_freq[np.searchsorted(secret_values, vector)
                                                                 .clip(0, len(secret_values) - 1)]).mean())
    return observed > chance + 5 * np.sqrt(max(chance * (1 - chance), 1e-12) / len(secret)) + 1e-3


def leaks(views, secrets) -> list:
    tables = {name: np.unique(s, return_counts=True) for name, s in secrets.items()}
    tables = {name: (v, c / len(secrets[name])) for name, (v, c) in tables.items()}
    return [(i, name) for i, array in enumerate(views) for vector in aligned(array)
            for name, secret in secrets.items() if carries(vector, secret, *tables[name])]


@pytest.mark.parametrize("party", [0, 1])
def test_pair_parties_receive_no_kernel_value_or_noise(run, party):
    x, y, out, secrets = run
    views = out[party]["views"]
    checked = sum(len(aligned(a)) for a in views)
    assert checked > 50  # the comparison, the coins, the conversion and the products were all seen
    other_input = {"other party's input": y if party == 0 else x}
    assert leaks(views, {**secrets, **other_input}) == []


def test_the_checker_flags_a_leaky_view(run):
    _, _, out, secrets = run
    leaky = out[0]["views"] + [secrets["gini kernel"], secrets["auc output bit"]]
    found = {name for _, name in leaks(leaky, secrets)}
    assert {"gini kernel", "auc output bit"} <= found
