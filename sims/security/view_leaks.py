"""The carry tests of the view (transcript) tests: what a run must hide from each party, and whether a message
the party received carries it.

**What is hidden**: the bitonic sort's keys, sorted keys and destinations,
and per layer the compared keys, the comparison and the swap bits; ustat-2pc's
kernel values, noise, noisy output and the noise's bits; a ranking job's
keys, labels, destinations, sorted labels and ranks.

**The test.**  Each received array is cut into vectors aligned with the
elements (element-wise chunks, packed bit words unpacked, the narrowed wire
layouts decoded) and compared with every secret of the run.  A vector
*carries* a secret when it equals it in more positions than an independent
vector with the same value frequencies would: Bernstein's bound on that tail
probability is at most the check's alpha divided by its number of tests
(:func:`flagged`).  The controls (sims.security.view_parties): a view to which
a secret was added must be flagged.
"""
import numpy as np
from scipy.stats import rankdata

from ...circuits.bitonic import padded_size
from ...circuits.bits import unpack_bits
from ...circuits.correlations import packed_size, position_bits, widen
from ...circuits.radix import DIGIT_BITS


def bitonic_layers(keys: np.ndarray, pad_key: int) -> list:
    """Per layer of the bitonic network on the keys, in the clear: the n/2 compared pairs' lo and hi keys, the
    comparison bits and the swap bits (Batcher 1968; the schedule of circuits.bitonic.bitonic_sort).  The
    input positions the sort carries start public (every layer-0 pair is (2i, 2i + 1)), so they are moved
    here but not listed; where they end is the destinations' secret."""

    m, n = len(keys), padded_size(len(keys))
    rows = np.stack([np.concatenate([keys, np.full(n - m, pad_key)]), np.arange(n)]).astype(np.int64)
    out, k = [], 2
    while k <= n:
        j = k // 2
        while j >= 1:
            blocks = n // (2 * j)
            view = rows.reshape(2, blocks, 2, j)
            lo, hi = view[:, :, 0, :], view[:, :, 1, :]
            descending = (((np.arange(blocks) * 2 * j) & k) != 0)[:, None]
            greater = lo[0] > hi[0]
            swap = greater ^ descending
            out.append({"lo keys": lo[0].ravel(), "hi keys": hi[0].ravel(),
                        "comparison bits": greater.ravel().astype(np.int64),
                        "swap bits": swap.ravel().astype(np.int64)})
            rows = np.stack([np.where(swap, hi, lo), np.where(swap, lo, hi)], axis=2).reshape(2, n)
            j //= 2
        k *= 2
    return out


def bitonic_secrets(keys) -> dict:
    """What the bitonic sort must hide: the keys, the keys in sorted order, and each key's destination."""
    destination = np.empty(len(keys), dtype=np.int64)
    destination[np.argsort(keys, kind="stable")] = np.arange(len(keys))
    return {"keys": np.asarray(keys, dtype=np.int64), "sorted keys": np.sort(keys), "destinations": destination}


def ustat_secrets(x, y, outs) -> dict:
    """Every secret of the run, from the inputs and both parties' output shares."""
    gini = outs[0]["gini"] + outs[1]["gini"]
    kernel = np.abs(x - y)
    noise = gini - kernel
    return {"gini kernel": kernel, "gini noise": noise, "gini output": gini, "noise sign": np.sign(noise),
            "noise non-zero": (noise != 0).astype(np.int64), "auc kernel bit": (x > y).astype(np.int64),
            "auc output bit": (outs[0]["auc"] ^ outs[1]["auc"]).astype(np.int64)}


def aligned(array: np.ndarray, pairs: int) -> list:
    """The pair-aligned vectors in a received array: element-wise chunks (of a (c, pairs) or a (pairs, c)
    layout), in a message of pairs + 1 to 2 pairs - 1 words every window of ``pairs`` (a vector among a merged
    opening's few other values: the full report's results, opened in one exchange), packed bit words unpacked, and
    the words of the protocol's narrowed layouts decoded (:func:`narrowed`)."""
    words = -(-pairs // 64)
    out = []
    if len(array) % pairs == 0:
        out += list(array.reshape(-1, pairs))
        if len(array) > pairs:
            out += list(array.reshape(pairs, -1).T)
    elif pairs < len(array) < 2 * pairs and array.dtype.itemsize == 8:
        out += list(np.lib.stride_tricks.sliding_window_view(array, pairs))
    if len(array) and len(array) % words == 0 and array.dtype.itemsize == 8:  # bits travel in 64-bit words
        out += list(unpack_bits(array.reshape(-1, words), pairs))
    return out + narrowed(array, pairs)


def narrowed(array: np.ndarray, pairs: int) -> list:
    """The vectors of a byte message in every layout circuits.correlations.narrow makes for ``pairs`` elements, its
    bits unpacked: columns of w = position_bits(pairs) bits (positions), w bits then a 2-bit digit, w bits then
    64-bit words, 64-bit words alone, and 2-bit digits alone (circuits.select)."""
    if array.dtype != np.uint8 or not len(array):
        return []
    n, w = len(array), position_bits(pairs)
    one, word = packed_size(pairs, (w,)), packed_size(pairs, (64,))
    layouts = [(DIGIT_BITS,), (w, DIGIT_BITS)]
    layouts += [(w,) * (n // one)] if n % one == 0 else []
    layouts += [(w,) + (64,) * ((n - one) // word)] if n > one and (n - one) % word == 0 else []
    layouts += [(64,) * (n // word)] if n % word == 0 else []  # 64-bit words alone (a revealed column's correction)
    return [column for widths in layouts if packed_size(pairs, widths) == n
            for column in widen(array, widths, np.int64, pairs).T]


def carry_moments(vectors: np.ndarray, secret: np.ndarray, secret_values: np.ndarray,
                  secret_freq: np.ndarray) -> tuple:
    """Per row of ``vectors`` (V, n): the positions equal to ``secret``, and the mean and variance of that count
    were the row independent of the secret (position i matches with P(secret = vector_i))."""
    vectors = np.atleast_2d(vectors)
    if _dense(secret_values, vectors):  # a table of the frequencies by value, a slot past them for the rest
        lo, span = int(secret_values[0]), int(secret_values[-1]) - int(secret_values[0])
        table = np.zeros(span + 2)
        table[secret_values - lo] = secret_freq
        offset = np.subtract(vectors, lo, dtype=np.int64)  # wraps only to values outside [0, span]
        p = table[np.where((offset >= 0) & (offset <= span), offset, span + 1)]
    else:
        at = np.searchsorted(secret_values, vectors).clip(0, len(secret_values) - 1)
        p = np.where(secret_values[at] == vectors, secret_freq[at], 0.0)
    return (vectors == secret).sum(axis=1), p.sum(axis=1), (p * (1 - p)).sum(axis=1)


DENSE_SPAN = 1 << 16  # secrets whose values span less than this look frequencies up in a table


def _dense(secret_values: np.ndarray, vectors: np.ndarray) -> bool:
    """Integer secret values spanning less than DENSE_SPAN, and vectors whose offsets from them are exact in
    int64 (any integer type but uint64)."""
    return (secret_values.dtype.kind in "iu" and vectors.dtype.kind in "iub" and vectors.dtype != np.uint64
            and int(secret_values[-1]) - int(secret_values[0]) < DENSE_SPAN)


def carry_pvalues(vectors: np.ndarray, secret: np.ndarray, secret_values: np.ndarray,
                  secret_freq: np.ndarray) -> np.ndarray:
    """Per row of ``vectors`` (V, n): an upper bound on the probability of at least as many positions equal to
    ``secret`` as observed, were the row independent of the secret.

    Under independence position i matches with probability p_i = P(secret = vector_i) (the secret's value
    frequencies), so the match count S has mean sum p_i and variance sum p_i (1 - p_i); Bernstein's
    inequality bounds P(S - E S >= t) <= exp(-t^2 / (2 (Var S + t / 3))) for any such sum of independent
    indicators, rare values included (no normal approximation).
    """
    return _bernstein(*carry_moments(vectors, secret, secret_values, secret_freq))


def _bernstein(matches, mean, variance) -> np.ndarray:
    """Bernstein's bound on P(S >= matches) for a sum S of independent indicators of ``mean`` and ``variance``
    (1 where matches do not exceed the mean)."""
    excess = matches - mean
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.exp(-excess ** 2 / (2 * (variance + excess / 3)))
    return np.where(excess > 0, bound, 1.0)


class BinaryCarry:
    """:func:`carry_pvalues` of 0/1 vectors against every secret at once: a vector's matches are its dot product with
    (secret == 1) - (secret == 0) plus the secret's zeros, and position i matches with P(secret = bit i), the
    secret's frequency of 0 or 1 (a float matrix product: most of a view's vectors are the bits of its 64-bit
    words, circuits.bits)."""

    def __init__(self, secrets: dict, tables: dict):
        columns = np.stack(list(secrets.values()), axis=1)
        self.sign = (columns == 1).astype(np.float64) - (columns == 0)
        self.zeros = (columns == 0).sum(axis=0)
        self.freq = np.array([[_frequency(*tables[name], bit) for bit in (0, 1)] for name in secrets])  # (S, 2)

    def pvalues(self, bits: np.ndarray) -> np.ndarray:
        """(V, secrets) p-values of the 0/1 rows of ``bits`` (V, n)."""
        ones = bits.sum(axis=1, dtype=np.float64)[:, None]
        zeros = bits.shape[1] - ones
        f0, f1 = self.freq[:, 0], self.freq[:, 1]
        return _bernstein(bits.astype(np.float64) @ self.sign + self.zeros, zeros * f0 + ones * f1,
                          zeros * f0 * (1 - f0) + ones * f1 * (1 - f1))


def _frequency(values: np.ndarray, freq: np.ndarray, value: int) -> float:
    """The frequency of ``value`` among a secret's sorted ``values`` (0 if absent)."""
    at = min(int(np.searchsorted(values, value)), len(values) - 1)
    return float(freq[at]) if values[at] == value else 0.0


def leak_pvalues(views, secrets: dict, pairs: int, statistic=carry_pvalues) -> list:
    """(message index, secret name, p) for every received vector and secret: :func:`carry_pvalues`, or another
    ``statistic`` of the same arguments (one value or row per vector)."""
    if statistic is carry_pvalues:
        return [(i, name, p) for i, found in _carry_tables(views, secrets, pairs) for row in found.tolist()
                for name, p in zip(secrets, row)]
    tables = _frequencies(secrets)
    out = []
    for i, array in enumerate(views):
        vectors = aligned(array, pairs)
        if vectors:
            stacked = np.stack(vectors)
            for name, secret in secrets.items():
                out += [(i, name, p) for p in statistic(stacked, secret, *tables[name]).tolist()]
    return out


def _frequencies(secrets: dict) -> dict:
    """Each secret's (sorted values, their frequencies)."""
    tables = {name: np.unique(s, return_counts=True) for name, s in secrets.items()}
    return {name: (v, c / len(secrets[name])) for name, (v, c) in tables.items()}


def _carry_tables(views, secrets: dict, pairs: int):
    """Per received message with aligned vectors: (its index, the :func:`carry_pvalues` of its vectors against
    the secrets, (vectors, secrets)), the 0/1 vectors by :class:`BinaryCarry`."""
    tables = _frequencies(secrets)
    binary_carry = BinaryCarry(secrets, tables)
    for i, array in enumerate(views):
        vectors = aligned(array, pairs)
        if not vectors:
            continue
        stacked = np.stack(vectors)
        binary = ((stacked == 0) | (stacked == 1)).all(axis=1)
        found = [binary_carry.pvalues(stacked[binary])] if binary.any() else []
        if not binary.all():
            rest = stacked[~binary]
            found.append(np.stack([carry_pvalues(rest, s, *tables[name]) for name, s in secrets.items()], axis=1))
        yield i, np.concatenate(found)


def flagged(tested: list, alpha: float) -> list:
    """(message index, secret name) of the tests whose p-value is at most alpha / (number of tests): the
    check's false-alarm rate stays below alpha whatever the number of tests (Bonferroni)."""
    limit = alpha / max(1, len(tested))
    return [(i, name) for i, name, p in tested if p <= limit]


def leaks(views, secrets: dict, pairs: int, alpha: float) -> list:
    """(message index, secret name) of every received vector that carries a secret, at false-alarm rate alpha:
    :func:`flagged` of :func:`leak_pvalues`, keeping only the tests at most alpha (the rest cannot be flagged)."""
    names, tests, small = list(secrets), 0, []
    for i, found in _carry_tables(views, secrets, pairs):
        tests += found.size
        small += [(i, names[s], found[v, s]) for v, s in zip(*np.nonzero(found <= alpha))]
    limit = alpha / max(1, tests)
    return [(i, name) for i, name, p in small if p <= limit]


def bitonic_tests(views, layer_ends, hidden: dict, layers: list, m: int, statistic=carry_pvalues) -> list:
    """(message index, secret name, p) of one party's bitonic view: every vector aligned with the keys against
    the sort's secrets, and every vector of a layer's messages against that layer's secrets."""
    tested = leak_pvalues(views, hidden, m, statistic)
    for layer, (start, end) in enumerate(zip([0] + layer_ends[:-1], layer_ends)):
        tested += [(start + i, f"layer {layer}: {name}", p)
                   for i, name, p in leak_pvalues(views[start:end], layers[layer], m // 2, statistic)]
    return tested


def job_secrets(keys: np.ndarray, labels: np.ndarray) -> dict:
    """What a ranking job must hide from each party: keys, labels, each key's destination, the labels in
    sorted order and the doubled 0-based mid-ranks in input order."""

    out = bitonic_secrets(keys)
    order = np.argsort(keys, kind="stable")
    return {**out, "labels": np.asarray(labels, dtype=np.int64), "sorted labels": np.asarray(labels)[order],
            "doubled ranks": (2 * rankdata(keys) - 2).astype(np.int64)}
