"""View (transcript) tests: what each compute party opens or receives, against what it may learn.

**Radix sort.**
The radix sort (circuits.radix) opens, per digit, the masked digit and
Beaver differences, and per stable partition the destinations sigma[pi]
under a fresh joint shuffle pi; a party also records the masked shares and
the dealer's correction of each shuffle step it permutes, how its share
changed there, and the one-hot words it receives (:func:`word_uniformity`
and the controls of sims.security.weakened_shuffles).  Over many runs on two inputs of the same
public shape (distinct keys vs all tied), every opened value must follow
one distribution (chi-square homogeneity over the cells below) and every
opened destination vector must be a uniform permutation (chi-square
goodness of fit).  The controls open sigma itself, without the shuffle, or
reuse one digit mask for every digit: the same tests must reject both.

**Bitonic sort** (the reference ranking): the same recording while the
parties sort secret keys; no received vector may carry the keys, the sorted
keys or any key's destination; the control appends the keys to a view.

**ustat-2pc.**  P0 and P1 evaluate Gini-Laplace and AUC-RR on known inputs
while every message they receive is recorded (from each other: recv,
all_reduce, all_gather, broadcast, ...; from the dealer: its broadcasts and
objects).  Each received array is cut into vectors aligned with the pairs
(element-wise chunks, and packed bit words unpacked) and compared with every
secret of the run: the kernel values, the noise, the noisy output, the other
party's input and the noise's bits.  A vector *carries* a secret when it
equals it in more positions than an independent vector with the same value
frequencies would: Bernstein's bound on that tail probability is at most the
check's alpha divided by its number of tests (:func:`flagged`).  The control:
a view to which the kernel values were added must be flagged.
"""
import itertools

import numpy as np
import torch
from scipy.stats import chi2, chisquare, rankdata

from ...circuits import bitonic, kernels, noise
from ...circuits.bitonic import BitonicRanking, padded_size
from ...circuits.bits import unpack_bits
from ...circuits.correlations import position_bytes, widen
from ...circuits.crypten_compat import crypten
from ...circuits.gates import Gates
from ...circuits.noise_laws import DiscreteLaplace, RandomizedResponse
from ...circuits.radix import RadixRanking
from ...circuits.select import ONEHOT_PERIOD, unpack_digits
from ...circuits.shares import from_share, public_share, reveal_int
from ...circuits.shuffle import Shuffler
from ...protocols.dp.central_law import CentralNoise
from ...protocols.inputs.encoding import PAD_KEY
from ...protocols.mpc import ranking_party

VIEW_INPUTS = (np.array([7, 2, 5, 0]), np.array([3, 3, 3, 3]))  # distinct keys vs all tied; same shape
VIEW_BITS = 3
PERMUTATIONS = [tuple(p) for p in itertools.permutations(range(4))]


class OpenSigma(Shuffler):
    """A deliberately leaky variant: opens sigma itself instead of sigma[pi]."""
    PREFETCH = False  # it asks the dealer for no shuffle

    def open_shuffled(self, sigma, columns, xor_columns=0, widths=None, fold=None):
        return self.open(sigma, width=position_bytes(len(sigma))), None, columns

    def gather_back(self, s, pi, rows, widths=None):
        return rows[:, s]


class ReusedMask(Shuffler):
    """A deliberately weakened variant: every digit selection reuses the first one-hot correlation, i.e. the
    same digit mask and product masks (the dealer serves that index again, so the sort stays correct)."""
    PREFETCH = False  # its one-hot requests repeat index 0

    @property
    def onehot_count(self) -> int:
        return 0

    @onehot_count.setter
    def onehot_count(self, value) -> None:
        pass


def radix_views(ctx, shuffler, gates, inputs, bits: int, runs: int) -> dict:
    """In a party: every (kind, value) it opens in ``runs`` radix sorts of each input, for the real sort
    ("radix") and for the controls "leaky" (sigma opened without the shuffle) and "reused" (one mask reused),
    which share the dealer streams."""

    variants = [("radix", shuffler)]
    for name, weakened in (("leaky", OpenSigma), ("reused", ReusedMask)):
        service = weakened.__new__(weakened)
        service.__dict__ = shuffler.__dict__
        variants.append((name, service))
    out = {name: [sort_views(ctx, service, gates, keys, bits, runs)[0] for keys in inputs]
           for name, service in variants}
    shuffler.view = None
    return out


def sort_views(ctx, service, gates, keys, bits: int, runs: int) -> tuple:
    """(the views of ``runs`` radix sorts of ``keys`` by ``service``, the last sort's ranking), the runs aligned
    to the one-hot receivers' pattern (:func:`align_onehots`); the service's view is None afterwards."""
    align_onehots(service)
    seen = []
    for _ in range(runs):
        service.view = []
        ranking = RadixRanking(service, gates, bits)
        ranking.sort(None, public_share(keys, ctx.rank), [])
        seen.append(service.view)
    service.view = None
    return seen, ranking


def align_onehots(shuffler) -> None:
    """Both parties: skip to the next one-hot correlation that starts the receivers' pattern
    (circuits.select.onehot_receiver), so that the runs of every input see the same schedule of who receives
    which (public, the same for any data; the homogeneity test compares inputs under one schedule)."""
    shuffler.onehot_count = -(-shuffler.onehot_count // ONEHOT_PERIOD) * ONEHOT_PERIOD


def view_party(ctx, inputs, bits: int, runs: int) -> dict:
    """The session target of the view experiment."""

    return radix_views(ctx, Shuffler(ctx.stream_key), Gates(ctx.stream_key), inputs, bits, runs)


def _cells(run):
    """The cells one run's opened values fall in: (kind, which, position..., value)."""
    seen = {}
    for kind, opened in run:
        j = seen[kind] = seen.get(kind, -1) + 1
        if kind == "destinations":
            yield kind, j, tuple(opened.tolist())  # the whole permutation
        elif kind == "digit":
            yield from ((kind, j, i, int(v)) for i, v in enumerate(opened))
        else:  # masked Beaver differences, received messages: two bits per slot
            yield from ((kind, j, i, u, bucket(v)) for i, row in enumerate(opened) for u, v in enumerate(row))


def bucket(value) -> int:
    """Two bits of a 64-bit word by multiplicative hashing (the top bits of value * 0x9E3779B97F4A7C15 mod
    2^64): uniform for a uniform word, and two different fixed words (say two opened outputs) fall in
    different buckets with probability about 3/4, where their lowest bits often agree."""
    return ((int(value) * 0x9E3779B97F4A7C15) % 2 ** 64) >> 62


def table(views) -> dict:
    cells = {}
    for run in views:
        for cell in _cells(run):
            cells[cell] = cells.get(cell, 0) + 1
    return cells


def homogeneity(views_a, views_b) -> float:
    """p-value of a chi-square test that two inputs' opened values follow one distribution.

    One 2 x k contingency table per opened element (k: the values seen there), its Pearson statistic
    scaled by (N - 1)/N (N: the element's runs), which makes its null mean exactly the degrees of freedom
    under fixed margins.  Two tests, each at half the level: the statistics summed (many small
    differences; elements fixed by the public shape add nothing) and the smallest per-element p-value,
    Bonferroni-corrected (one element that differs).  An element opened in a different share of the runs
    of the two inputs (a schedule that depends on the data) gives p = 0.

    When every run of both inputs opens the same messages in the same shapes (the protocols' public
    schedule), the word-valued messages are counted with numpy per element (:func:`_word_tables`); the
    same statistics as the general path (:func:`_cell_tables`), which any other schedule takes.
    """
    shapes = {_schedule(run) for run in list(views_a) + list(views_b)}
    tables = _word_tables(views_a, views_b) if len(shapes) == 1 else _cell_tables(views_a, views_b)
    if tables is None:
        return 0.0
    statistics, dfs = [], []
    for counts in tables:  # (elements, values, 2 inputs)
        n = counts.sum(1)
        total = n.sum(1)
        rows = counts.sum(2)
        seen = rows > 0
        expected = rows[:, :, None] * n[:, None, :] / total[:, None, None]
        cells = np.where(seen[:, :, None], (counts - expected) ** 2 / np.where(expected > 0, expected, 1), 0.0)
        df = seen.sum(1) - 1
        keep = df > 0
        statistics.extend((cells.sum((1, 2)) * (total - 1) / total)[keep].tolist())
        dfs.extend(df[keep].tolist())
    if not dfs:
        return 1.0
    summed = chi2.sf(sum(statistics), sum(dfs))
    single = chi2.sf(statistics, dfs).min() * len(dfs)
    return float(min(1.0, 2 * min(summed, single)))


def _schedule(run) -> tuple:
    return tuple((kind, np.shape(opened)) for kind, opened in run)


def _word_tables(views_a, views_b) -> list:
    """Per message of the common schedule: counts (elements, values, 2) over the runs of each input; the
    word-valued messages by :func:`bucket` over whole arrays, the others (digits, destination vectors) by cell."""
    tables, other = [], []
    for index, (kind, opened) in enumerate(views_a[0]):
        if kind in ("destinations", "digit"):
            other.append(index)
            continue
        counts = np.zeros((np.size(opened), 4, 2))
        for side, views in enumerate((views_a, views_b)):
            words = np.stack([np.asarray(run[index][1]).reshape(-1) for run in views]).astype(np.int64)
            buckets = (words.view(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(62)
            for value in range(4):
                counts[:, value, side] = (buckets == value).sum(0)
        tables.append(counts)
    if other:
        rest = _cell_tables([[run[i] for i in other] for run in views_a], [[run[i] for i in other] for run in views_b])
        if rest is None:
            return None
        tables.extend(rest)
    return tables


def _cell_tables(views_a, views_b):
    """The general path: every opened value as a cell (:func:`_cells`); None when an element is opened in a
    different share of the two inputs' runs."""
    a, b = table(views_a), table(views_b)
    elements = {}
    for cell in set(a) | set(b):
        elements.setdefault(cell[:-1], []).append((a.get(cell, 0), b.get(cell, 0)))
    tables = []
    for counts in elements.values():
        counts = np.array(counts, dtype=float)
        n = counts.sum(0)
        if n[0] * len(views_b) != n[1] * len(views_a):
            return None
        tables.append(counts[None])
    return tables


def uniformity(views) -> float:
    """p-value of a chi-square test that each opened destination vector is a uniform permutation of 4."""
    counts = table(views)
    opened = sum(1 for kind, _ in views[0] if kind == "destinations")
    observed = [counts.get(("destinations", j, p), 0) for j in range(opened) for p in PERMUTATIONS]
    return float(chisquare(observed).pvalue)


def word_uniformity(views, kind: str) -> float:
    """p-value of a chi-square test that the low two bits of every word of ``kind`` (the shuffle's
    "correction", the receiver's "one-hot part") are uniform, as the low bits of a word under a uniform mask
    are.  One goodness-of-fit test per element (its occurrence in a run, row, column) over the runs; the
    statistics summed and the smallest p-value (Bonferroni), each at half the level, as in :func:`homogeneity`."""
    counts = {}
    for run in views:
        occurrence = 0
        for seen, value in run:
            if seen != kind:
                continue
            low = np.asarray(value).astype(np.int64).reshape(len(value), -1) & 3
            for (i, u), v in np.ndenumerate(low):
                counts.setdefault((occurrence, i, u), np.zeros(4))[v] += 1
            occurrence += 1
    if not counts:
        raise ValueError(f"no {kind!r} in the views")
    statistics = [chisquare(c).statistic for c in counts.values()]
    summed = chi2.sf(sum(statistics), 3 * len(statistics))
    single = chi2.sf(statistics, 3).min() * len(statistics)
    return float(min(1.0, 2 * min(summed, single)))


def p_values(party_views) -> list:
    """[homogeneity, uniformity on input A, uniformity on input B] of one party's views of one variant."""
    return [homogeneity(*party_views), uniformity(party_views[0]), uniformity(party_views[1])]


# ------------------------------------------------------------- ustat-2pc

RECORDED = ("recv", "all_reduce", "all_gather", "broadcast", "recv_obj", "gather", "reduce", "scatter", "recv_array")


def record_received(log: list) -> None:
    """In a role process: append every array this party receives (from the other party or the dealer) to ``log``,
    and every value it opens through the gates (circuits.gates: its own share combined with the other's, by
    XOR and by addition, as the gate combines them).  CrypTen's openings are all_reduce results, recorded
    as received."""


    exchange = Gates._exchange

    def opening(self, own):
        other = exchange(self, own)
        log.extend([(own ^ other).ravel(), (own + other).ravel()])
        return other

    Gates._exchange = opening

    cls = crypten.communicator.DistributedCommunicator

    def record(value):
        if isinstance(value, torch.Tensor):
            log.append(value.detach().clone().to(torch.int64).numpy().ravel())
        elif isinstance(value, np.ndarray):
            log.append(value.astype(np.int64).ravel())
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


def ustat_view_party(ctx, x, y) -> dict:
    """In a pair-party: Gini-Laplace and AUC-RR on the pairs (x[i], y[i]) in [0, 4096], recording every
    received message."""

    log = []
    record_received(log)
    gates = Gates(ctx.stream_key)
    own = x if ctx.rank == 0 else y
    gini = kernels.gini(gates, own, DiscreteLaplace(1.0, 4096), 4096)
    auc = kernels.auc_public_classes(gates, own, RandomizedResponse(1.0), 4096)
    return {"views": list(log), "gini": gini, "auc": auc}


def leaky_ustat_view_party(ctx, x, y) -> dict:
    """A deliberately weakened pair-party (a control): :func:`ustat_view_party` whose AUC kernel opens the
    kernel bits [x >* y] before randomized response."""

    honest = kernels.greater_tie_coin

    def opening(gates, own, bound):
        b = honest(gates, own, bound)
        gates.open(b, xor=True)
        return b

    kernels.greater_tie_coin = opening
    return ustat_view_party(ctx, x, y)


def bitonic_view_party(ctx, key_shares) -> dict:
    """In a party: the bitonic sort (circuits.bitonic, the reference ranking) of its additive share of the keys
    (index = rank), recording every received message and where each layer's messages end."""

    log, layer_ends = [], []
    record_received(log)
    BitonicRanking(PAD_KEY, lambda done, total: layer_ends.append(len(log))).sort(
        from_share(key_shares[ctx.rank]), None, [])
    return {"views": list(log), "layer_ends": layer_ends}


def leaky_bitonic_view_party(ctx, key_shares) -> dict:
    """A deliberately weakened party (a control): :func:`bitonic_view_party` whose first layer opens its swap
    bits to both parties."""

    honest = bitonic._swap_bits

    def opening_first(lo, hi, descending):
        swap = honest(lo, hi, descending)
        if bitonic._swap_bits is opening_first:
            swap.get_plain_text()
            bitonic._swap_bits = honest
        return swap

    bitonic._swap_bits = opening_first
    return bitonic_view_party(ctx, key_shares)


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
    layout), packed bit words unpacked, and the words of the protocol's narrowed layouts decoded
    (:func:`narrowed`)."""
    words = -(-pairs // 64)
    out = []
    if len(array) % pairs == 0:
        out += list(array.reshape(-1, pairs))
        if len(array) > pairs:
            out += list(array.reshape(pairs, -1).T)
    if len(array) and len(array) % words == 0 and array.dtype.itemsize == 8:  # bits travel in 64-bit words
        out += list(unpack_bits(array.reshape(-1, words), pairs))
    return out + narrowed(array, pairs)


def narrowed(array: np.ndarray, pairs: int) -> list:
    """The vectors of a byte message in every layout circuits.correlations.narrow makes for ``pairs`` elements:
    one column of words of w = position_bytes(pairs) bytes (rows of pairs), columns of w bytes, w then a digit
    byte, w then 64-bit words, and 2-bit digits four to a byte (circuits.select)."""
    if array.dtype != np.uint8 or not len(array):
        return []
    n, w = len(array), position_bytes(pairs)
    out = []
    if n == -(-pairs // 4):  # 2-bit digits
        out.append(unpack_digits(array, pairs))
    if n % w == 0 and (n // w) % pairs == 0:
        out += list(widen(array, (w,), np.int64, n // w).reshape(-1, pairs))
    if n % pairs == 0:
        k = n // pairs
        layouts = [(w,) * (k // w)] if k % w == 0 else []
        layouts += [(w, 1)] if k == w + 1 else []
        layouts += [(w,) + (8,) * ((k - w) // 8)] if k > w and (k - w) % 8 == 0 else []
        for widths in layouts:
            out += list(widen(array, widths, np.int64, pairs).T)
    return out


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
    matches, mean, variance = carry_moments(vectors, secret, secret_values, secret_freq)
    excess = matches - mean
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.exp(-excess ** 2 / (2 * (variance + excess / 3)))
    return np.where(excess > 0, bound, 1.0)


def leak_pvalues(views, secrets: dict, pairs: int, statistic=carry_pvalues) -> list:
    """(message index, secret name, p) for every received vector and secret: :func:`carry_pvalues`, or another
    ``statistic`` of the same arguments (one value or row per vector)."""
    tables = {name: np.unique(s, return_counts=True) for name, s in secrets.items()}
    tables = {name: (v, c / len(secrets[name])) for name, (v, c) in tables.items()}
    out = []
    for i, array in enumerate(views):
        vectors = aligned(array, pairs)
        if not vectors:
            continue
        stacked = np.stack(vectors)
        for name, secret in secrets.items():
            out += [(i, name, p) for p in statistic(stacked, secret, *tables[name]).tolist()]
    return out


def flagged(tested: list, alpha: float) -> list:
    """(message index, secret name) of the tests whose p-value is at most alpha / (number of tests): the
    check's false-alarm rate stays below alpha whatever the number of tests (Bonferroni)."""
    limit = alpha / max(1, len(tested))
    return [(i, name) for i, name, p in tested if p <= limit]


def leaks(views, secrets: dict, pairs: int, alpha: float) -> list:
    """(message index, secret name) of every received vector that carries a secret, at false-alarm rate alpha."""
    return flagged(leak_pvalues(views, secrets, pairs), alpha)


def bitonic_tests(views, layer_ends, hidden: dict, layers: list, m: int, statistic=carry_pvalues) -> list:
    """(message index, secret name, p) of one party's bitonic view: every vector aligned with the keys against
    the sort's secrets, and every vector of a layer's messages against that layer's secrets."""
    tested = leak_pvalues(views, hidden, m, statistic)
    for layer, (start, end) in enumerate(zip([0] + layer_ends[:-1], layer_ends)):
        tested += [(start + i, f"layer {layer}: {name}", p)
                   for i, name, p in leak_pvalues(views[start:end], layers[layer], m // 2, statistic)]
    return tested


# ------------------------------------------------ whole jobs: mpc-central, mpc-exact with rank delivery

def recording_party(ctx, fraction_bits: int) -> list:
    """The real party loop (protocols.mpc.ranking_party.serve_jobs), recording per job every message received, the input
    shares it opened from the clients' bundles, the rank shares it sealed for them and its dealer key."""
    return _recorded_loop(ctx, fraction_bits)


def leaky_recording_party(ctx, fraction_bits: int) -> list:
    """A deliberately weakened party (a control): :func:`recording_party` with two mistakes, the labels opened
    to both parties before the sort and the ranks opened before they are sealed for the clients."""

    def weaken(party):
        check, seal = party._invalid_clients, party._rank_bundles

        def opening_labels(ctx, job, gates, held):
            reveal_int(from_share(held.labels))
            return check(ctx, job, gates, held)

        def sealing_opened(ctx, job_id, owners, twice_rank):
            opened = reveal_int(from_share(twice_rank)).numpy()
            return seal(ctx, job_id, owners, opened if ctx.rank == 0 else np.zeros_like(opened))

        party._invalid_clients, party._rank_bundles = opening_labels, sealing_opened

    return _recorded_loop(ctx, fraction_bits, weaken)


def _recorded_loop(ctx, fraction_bits: int, weaken=None) -> list:
    log, sent, jobs = [], [], []
    record_received(log)
    compute, seal = ranking_party._compute, ranking_party._rank_bundles

    def recorded_compute(ctx, job, intake, held, *args):
        shares = [rows.reshape(-1) for rows in (held[0].keys, held[0].key_xor, held[0].labels)]  # one score column
        log.extend(shares)
        out = compute(ctx, job, intake, held, *args)
        jobs.append({"received": list(log), "sealed ranks": list(sent), "input shares": shares,
                     "dealer key": ctx.stream_key})
        log.clear()
        sent.clear()
        return out

    def recorded_seal(ctx, job_id, owners, twice_rank):
        sent.append(twice_rank.copy())
        return seal(ctx, job_id, owners, twice_rank)

    ranking_party._compute, ranking_party._rank_bundles = recorded_compute, recorded_seal
    if weaken is not None:
        weaken(ranking_party)
    ranking_party.serve_jobs(ctx, fraction_bits)
    return jobs


def job_secrets(keys: np.ndarray, labels: np.ndarray) -> dict:
    """What a ranking job must hide from each party: keys, labels, each key's destination, the labels in
    sorted order and the doubled 0-based mid-ranks in input order."""

    out = bitonic_secrets(keys)
    order = np.argsort(keys, kind="stable")
    return {**out, "labels": np.asarray(labels, dtype=np.int64), "sorted labels": np.asarray(labels)[order],
            "doubled ranks": (2 * rankdata(keys) - 2).astype(np.int64)}


def as_runs(jobs) -> list:
    """Each job's received arrays as one run of the homogeneity test (cells: message, position, low bits)."""
    return [[("message", np.asarray(a).reshape(1, -1)) for a in job] for job in jobs]


def leaky_noise_party(ctx, epsilon: float, m: int, count: int) -> dict:
    """A deliberately weakened party (a control): :func:`central_noise_party` whose gadget opens each draw."""

    honest = noise.discrete_laplace

    def opening(gates, law, size):
        z = honest(gates, law, size)
        gates.open(z)
        return z

    noise.discrete_laplace = opening
    return central_noise_party(ctx, epsilon, m, count)


def central_noise_party(ctx, epsilon: float, m: int, count: int) -> dict:
    """In a party: ``count`` draws of mpc-central's statistic and count noise (at M = m), recording every
    received message; the draws are opened only after the recording ends (to name the secrets)."""

    log = []
    record_received(log)
    gates, central = Gates(ctx.stream_key), CentralNoise(epsilon)
    draw = noise.discrete_laplace  # looked up now: the weakened control replaces it
    drawn = [draw(gates, central.statistic_noise(m), count), draw(gates, central.count_noise(), count)]
    views = list(log)
    return {"views": views, "noise": [gates.open(z) for z in drawn]}
