"""circuits.gates and circuits.comparators: the gates and comparison trees between P0 and P1 (processes over TCP with
the TTP dealer), against the clear; triples reserved exactly; a second engine on one key refused; the
attack that reused triples allow; and the numbered dealer line against CrypTen's first-come reads.
"""
import numpy as np
import pytest

from mpc_auc.circuits.bits import pack_bits, planes, unpack_bits
from mpc_auc.circuits.comparators import tree_ands
from mpc_auc.protocols.runtime.session import run_parties

N = 1000


def _inputs(seed=3):
    rng = np.random.default_rng(seed)
    x, y = rng.integers(0, 2**13, N), rng.integers(0, 2**13, N)
    y[:200] = x[:200]  # ties
    x[200], y[201], x[202], y[202] = 0, 0, 2**13 - 1, 2**13 - 1  # the range's ends
    return x, y


def _edge_values():
    """Signed values at the comparison's edges and XOR inputs with all low bits set, with random splits."""
    rng = np.random.default_rng(4)
    signed = np.array([0, 1, -1, 2**62, -2**62, 2**63 - 1, -2**63 + 1, 12345, -12345], dtype=np.int64)
    words = rng.integers(-2**63, 2**63 - 1, N, dtype=np.int64, endpoint=True)
    words[:300] = -1
    words[300:400] = ~(np.int64(1) << rng.integers(0, 64, 100))  # one bit clear
    return signed, words, rng.integers(-2**63, 2**63 - 1, len(signed), dtype=np.int64), \
        rng.integers(-2**63, 2**63 - 1, N, dtype=np.int64)


DECOMPOSED = (1, 2, 5, 21, 33)  # widths of bit_decompose: one level, odd and even adder depths


def _party(ctx, x, y):
    from mpc_auc.circuits import comparators as compare
    from mpc_auc.circuits.gates import Gates
    from mpc_auc.circuits.noise import joint_random_words

    gates = Gates(ctx.stream_key)
    sources, receive = [], gates.comm.recv_array
    gates.comm.recv_array = lambda shape, dtype, src, *rest, **kw: sources.append(src) or receive(
        shape, dtype, src, *rest, **kw)
    own = x if ctx.rank == 0 else y
    bits_x = pack_bits(x & 1) if ctx.rank == 0 else np.zeros(-(-N // 64), dtype=np.int64)  # XOR shares
    bits_y = pack_bits(y & 1) if ctx.rank == 1 else np.zeros(-(-N // 64), dtype=np.int64)
    additive = own if ctx.rank == 0 else -own  # shares of x - y
    out = {}
    (both,) = gates.and_((bits_x, bits_y))
    out["and"] = gates.open(both, xor=True)
    (product,) = gates.multiply((additive, additive))
    out["square"] = gates.open(product)
    out["additive bits"] = gates.open(gates.to_additive(np.stack([bits_x ^ bits_y, both]), N))
    for bits in (13, 14, 17):  # 13 and 17 leaves: odd runs pass up the tree
        out[f"greater {bits}"] = gates.open(compare.greater_private(gates, own, bits), xor=True)
    u = joint_random_words((20, 3, 2))
    out["u"] = gates.open(u, xor=True)
    out["less"] = gates.open(compare.less_than_public(gates, u, [0, 123_456, 2**20 - 1]), xor=True)
    signed, words, split, xor_split = _edge_values()
    out["nonnegative"] = gates.open(compare.nonnegative(gates, signed - split if ctx.rank == 0 else split))
    for bits in (5, 8, 62, 64):
        out[f"all set {bits}"] = gates.open(compare.all_set(gates, words ^ xor_split if ctx.rank == 0 else xor_split,
                                                            bits), xor=True)
    for bits in DECOMPOSED:  # the bits of x mod 2^bits, from additive shares (x - y, y)
        value = x & ((1 << bits) - 1)
        out[f"bits {bits}"] = gates.open(compare.bit_decompose(gates, value - y if ctx.rank == 0 else y, bits))
    out["left"] = [gates.left("and"), gates.left("mul")]
    out["sources"] = sorted(set(sources))
    try:
        Gates(ctx.stream_key)
        out["second engine"] = "accepted"
    except RuntimeError as err:
        out["second engine"] = str(err)
    return out


@pytest.fixture(scope="module")
def outs():
    x, y = _inputs()
    out = run_parties(_party, (x, y), provider="TTP", timeout_s=120)
    for key in ("and", "square", "additive bits", "greater 13", "less", "nonnegative", "all set 62"):
        assert np.array_equal(out[0][key], out[1][key])
    return x, y, out


@pytest.fixture(scope="module")
def opened(outs):
    x, y, out = outs
    return x, y, out[0]


def test_p1_receives_nothing_from_the_dealer_and_p0_only_its_shares(outs):
    """The gates' messages: P1 hears only P0; P0 hears P1 and the dealer (rank 2: its shares of c and r)."""
    *_, out = outs
    assert out[1]["sources"] == [0]
    assert out[0]["sources"] == [1, 2]


def test_gates_match_the_clear(opened):
    x, y, out = opened
    assert np.array_equal(unpack_bits(out["and"][None], N)[0], x & y & 1)
    assert np.array_equal(out["square"], (x - y) ** 2)
    assert np.array_equal(out["additive bits"], np.stack([(x ^ y) & 1, x & y & 1]))


def test_sign_and_all_bits_set_match_the_clear(opened):
    *_, out = opened
    signed, words, _, _ = _edge_values()
    assert np.array_equal(out["nonnegative"], (signed >= 0).astype(np.int64))
    for bits in (5, 8, 62, 64):
        low = words if bits == 64 else words & ((1 << bits) - 1)
        expected = low == (-1 if bits == 64 else (1 << bits) - 1)
        assert np.array_equal(unpack_bits(out[f"all set {bits}"][None], N)[0], expected.astype(np.int64)), bits


@pytest.mark.parametrize("bits", DECOMPOSED)
def test_bit_decomposition_matches_the_clear(opened, bits):
    x, _, out = opened
    value = x & ((1 << bits) - 1)
    assert np.array_equal(out[f"bits {bits}"], (value[None] >> np.arange(bits)[:, None]) & 1)


@pytest.mark.parametrize("bits", [13, 14, 17])
def test_private_comparison_matches_the_clear(opened, bits):
    x, y, out = opened
    assert np.array_equal(unpack_bits(out[f"greater {bits}"][None], N)[0], (x > y).astype(np.int64))


def test_public_threshold_comparison_matches_the_clear(opened):
    *_, out = opened
    u = out["u"]  # (20, 3, 2) planes, the highest bit first
    lanes = unpack_bits(u.reshape(20 * 3, 2), 128).reshape(20, 3, 128)
    value = sum(lanes[j] << (19 - j) for j in range(20))
    expected = value < np.array([0, 123_456, 2**20 - 1])[:, None]
    assert np.array_equal(unpack_bits(out["less"], 128), expected.astype(np.int64))


def test_every_gadget_reserves_exactly_its_triples_and_one_engine_per_key(opened):
    *_, out = opened
    assert out["left"] == [0, 0]
    assert "second would reuse" in out["second engine"]


def test_bit_planes_and_tree_counts():
    values = np.array([[5, 0, 7], [1, 2, 3]])
    p = planes(values, 3)
    assert p.shape == (3, 2, 1)
    assert np.array_equal(unpack_bits(p.reshape(6, 1), 3).reshape(3, 2, 3), [(values >> b) & 1 for b in (2, 1, 0)])
    assert tree_ands(1, 10) == 0 and tree_ands(2, 10) == 10 and tree_ands(3, 10) == 30  # 3 -> 2 -> 1
    assert tree_ands(48, 1) == 2 * 47 - 1  # 2 per internal node, 1 at the root


def _attack_party(ctx, first, second, reuse: bool, merged: bool = False):
    """P0 ANDs two secret bit vectors with P1's all-ones vector; returns what P1 received, the openings of
    d = x XOR a.  ``reuse``: the weakened engine that hands every gate the same triple.  ``merged``: the two ANDs
    in two tasks side by side (circuits.lockstep), their openings in one round (Gates.batch)."""
    from mpc_auc.circuits.gates import Gates
    from mpc_auc.circuits.lockstep import lockstep

    class Reusing(Gates):
        def _triples(self, kind, count):
            if not hasattr(self, "first_triple"):
                self.first_triple = super()._triples(kind, count)
            return self.first_triple

    gates = (Reusing if reuse else Gates)(ctx.stream_key)
    received, exchange = [], gates._exchange
    gates._exchange = lambda own: received.append(exchange(own)) or received[-1]
    words = -(-N // 64)
    ones = pack_bits(np.ones(N, dtype=np.int64)) if ctx.rank == 1 else np.zeros(words, dtype=np.int64)
    ands = [lambda g, secret=secret: g.and_((pack_bits(secret) if ctx.rank == 0 else np.zeros(words, dtype=np.int64),
                                             ones)) for secret in (first, second)]
    if merged:
        lockstep(gates, ands)
        (both,) = received  # each call's (d, e) in task order
        return [both[:words], both[2 * words:3 * words]]
    for task in ands:
        task(gates)
    return [r[:words] for r in received]


@pytest.mark.parametrize("merged", [False, True], ids=["one by one", "merged side by side"])
@pytest.mark.parametrize("reuse", [False, True], ids=["fresh triples", "weakened: one triple reused"])
def test_reused_triples_let_p1_learn_the_xor_of_p0s_secrets(reuse, merged):
    """Also when the two gates are merged into one round (circuits.lockstep): each call keeps its own triple."""
    rng = np.random.default_rng(11)
    first, second = rng.integers(0, 2, N), rng.integers(0, 2, N)
    received = run_parties(_attack_party, (first, second, reuse, merged), provider="TTP", timeout_s=60)[1]
    guess = unpack_bits((received[0] ^ received[1])[None], N)[0]  # P1's attack: XOR the two openings
    agreement = np.mean(guess == (first ^ second))
    if reuse:
        assert agreement == 1.0  # the attack recovers x1 XOR x2 exactly
    else:
        assert abs(agreement - 0.5) < 0.07  # fresh masks: the guess is a coin flip (5 sigma at N = 1000)


def _line_party(ctx, x, y, fifo: bool):
    """A CrypTen product while the gates' reserved triples are in flight; ``fifo``: the weakened line, CrypTen's
    own ttp_request (it reads the next answer off the link, whoever asked for it)."""
    import torch

    from mpc_auc.circuits.crypten_compat import crypten
    from mpc_auc.circuits.gates import Gates
    from mpc_auc.circuits.shares import public, reveal_int

    if fifo:
        def crypten_own(client, func_name, device, *args, **kwargs):
            comm = crypten.communicator.get()
            comm.send_obj({"function": func_name, "device": None, "args": args, "kwargs": kwargs},
                          comm.get_ttp_rank(), comm.ttp_group)
            size = comm.recv_obj(comm.get_ttp_rank(), comm.ttp_group)
            return torch.from_numpy(comm.recv_array(size, np.int64, comm.get_ttp_rank(), comm.ttp_comm_group))

        crypten.mpc.provider.ttp_provider.TTPClient._TTPClient__TTPClient.ttp_request = crypten_own
    gates = Gates(ctx.stream_key)
    additive = x if ctx.rank == 0 else -y
    gates.reserve("mul", N)
    try:
        product = reveal_int(public(torch.from_numpy(x)) * public(torch.from_numpy(y))).numpy()
        square = gates.open(gates.multiply((additive, additive))[0])
    except Exception as err:  # the weakened line may also fail outright: a mixed-up answer of the wrong size
        return f"{type(err).__name__}: {err}"
    return product, square


@pytest.mark.parametrize("fifo", [False, True], ids=["numbered line", "weakened: CrypTen's first-come reads"])
def test_only_the_numbered_line_keeps_crypten_and_gate_answers_apart(fifo):
    x, y = _inputs(5)
    got = run_parties(_line_party, (x, y, fifo), provider="TTP", timeout_s=60)[0]
    right = not isinstance(got, str) and np.array_equal(got[0], x * y) and np.array_equal(got[1], (x - y) ** 2)
    assert right != fifo, got if isinstance(got, str) else "products"


def _counting_gates(ctx) -> tuple:
    """A gates engine whose exchanges with the other party are counted, and the one-element list counting them."""
    from mpc_auc.circuits.gates import Gates

    gates = Gates(ctx.stream_key)
    count, exchange = [0], gates._exchange

    def counted(own):
        count[0] += 1
        return exchange(own)

    gates._exchange = counted
    return gates, count


def _rounds_party(ctx):
    """Exchanges between P0 and P1 per kernel (1000 pairs): the round counts docs/protocols/ustat-2pc.md states."""
    from mpc_auc.circuits import kernels
    from mpc_auc.circuits.noise_laws import DiscreteLaplace, RandomizedResponse

    gates, count = _counting_gates(ctx)
    rng = np.random.default_rng(ctx.rank)
    scores, labels, values = rng.integers(0, 2**52, N), rng.integers(0, 2, N), rng.integers(0, 4097, N)
    runs = {"auc": lambda: kernels.auc_public_classes(gates, scores, RandomizedResponse(1.0), 2**52),
            "auc-private": lambda: kernels.auc_private_labels(gates, scores, labels, RandomizedResponse(1.0), 2**52),
            "gini": lambda: kernels.gini(gates, values, DiscreteLaplace(1.0, 4096), 4096),
            "kendall": lambda: kernels.kendall(gates, rng.integers(0, 2**21 + 1, (N, 2)), DiscreteLaplace(1.0, 2),
                                               2**21)}
    out = {}
    for name, run in runs.items():
        count[0] = 0
        run()
        out[name] = count[0]
    return out


def test_kernels_take_the_documented_rounds():
    assert run_parties(_rounds_party, (), provider="TTP", timeout_s=60)[0] == {
        "auc": 17, "auc-private": 18, "gini": 20, "kendall": 21}


def _lockstep_party(ctx, x, y, fail: bool):
    """Three independent circuits on shares of x and y (a long division, a comparison tournament's first levels,
    products and bit conversions), run one after the other and side by side (circuits.lockstep): each run's
    opened outputs and the gate exchanges it took.  ``fail``: one task raises after its first gate."""
    from mpc_auc.circuits.comparators import nonnegative
    from mpc_auc.circuits.division import fraction_bits
    from mpc_auc.circuits.lockstep import lockstep
    from mpc_auc.circuits.rank_metrics import maximum
    from mpc_auc.circuits.shares import public_share

    gates, exchanges = _counting_gates(ctx)
    a, b = public_share(x, ctx.rank), public_share(y, ctx.rank)
    tasks = [lambda g: fraction_bits(g, public_share(np.minimum(x, y), ctx.rank),
                                     public_share(np.maximum(x, y) + 1, ctx.rank), 20, 4),
             lambda g: maximum(g, a - b, 14),
             lambda g: g.multiply((a, b))[0] + nonnegative(g, a - b, 14)]
    if fail:
        def failing(g):
            g.multiply((a, b))
            raise ValueError("a task failed on purpose")
        tasks.append(failing)
        try:
            lockstep(gates, tasks)
        except ValueError as error:
            return str(error)
        return "no error"
    out, each = {}, []
    for task in tasks:
        before = exchanges[0]
        out.setdefault("one by one", []).append(gates.open(task(gates)))
        each.append(exchanges[0] - before - 1)  # (less the opening's exchange)
    before = exchanges[0]
    together = lockstep(gates, tasks)
    out["exchanges"] = (each, exchanges[0] - before)
    out["side by side"] = [gates.open(s) for s in together]
    return out


def test_lockstep_opens_what_the_circuits_one_by_one_open_in_fewer_rounds():
    """circuits.lockstep: the tasks' outputs side by side are those made one after the other (a division, a
    tournament, products and a comparison), in the longest task's exchanges, not their sum; a task that
    fails raises its error at both parties instead of leaving the others waiting."""
    x, y = _inputs()
    p0, p1 = run_parties(_lockstep_party, (x[:300], y[:300], False), provider="TTP", timeout_s=120)
    for party in (p0, p1):
        assert all(np.array_equal(u, v) for u, v in zip(party["one by one"], party["side by side"]))
        each, side_by_side = party["exchanges"]
        print(f"exchanges one by one {each}, side by side {side_by_side}")
        assert side_by_side == max(each)
    expected = np.floor(np.minimum(x[:300], y[:300]) * 2.0**20 / (np.maximum(x[:300], y[:300]) + 1))
    assert np.array_equal(p0["side by side"][0], expected.astype(np.int64))
    assert p0["side by side"][1][0] == np.max(x[:300] - y[:300])
    assert np.array_equal(p0["side by side"][2], x[:300] * y[:300] + (x[:300] >= y[:300]))
    assert run_parties(_lockstep_party, (x[:50], y[:50], True), provider="TTP", timeout_s=120) == \
        ["a task failed on purpose"] * 2
