"""The recording parties of the view (transcript) tests: what each compute party opens or receives, recorded
while it runs the project's own code, and the deliberately weakened variants (the controls).

**Radix sort** (circuits.radix): per digit the masked digit and Beaver
differences, per stable partition the destinations sigma[pi] under a fresh
joint shuffle pi; a party also records the masked shares and the dealer's
correction of each shuffle step it permutes, how its share changed there,
and the one-hot words it receives.  The controls open sigma itself, without
the shuffle (OpenSigma), or reuse one digit mask for every digit (ReusedMask).

**Every other view** (:func:`record_received`): every message a party receives,
from the other party (recv, all_reduce, all_gather, broadcast, ...) or from
the dealer (its broadcasts and objects), and every value it opens through the
gates or the authenticator (circuits.macs, with the destinations the
authenticated sort derives from its openings): ustat-2pc's Gini-Laplace and
AUC-RR, the bitonic sort (with where each layer ends), whole jobs through
the real party loop (under security with abort too), and mpc-central's noise
gadgets.  Each has a leaky control that opens what it must hide.

The tests of what is recorded: sims.security.view_distributions and sims.security.view_leaks.
"""
import numpy as np
import torch

from ...circuits import bitonic, kernels, noise
from ...circuits.auth_radix import AuthRadixRanking
from ...circuits.bitonic import BitonicRanking
from ...circuits.correlations import position_bits
from ...circuits.crypten_compat import crypten
from ...circuits.gates import Gates
from ...circuits.macs import Authenticator
from ...circuits.noise_laws import DiscreteLaplace, RandomizedResponse
from ...circuits.radix import RadixRanking
from ...circuits.select import ONEHOT_PERIOD
from ...circuits.shares import exchange, from_share, public_share, reveal_int
from ...circuits.shuffle import Shuffler
from ...protocols.dp.central_law import CentralNoise
from ...protocols.inputs.encoding import PAD_KEY
from ...protocols.mpc import malicious, ranking_party

VIEW_INPUTS = (np.array([7, 2, 5, 0]), np.array([3, 3, 3, 3]))  # distinct keys vs all tied; same shape
VIEW_BITS = 3


class OpenSigma(Shuffler):
    """A deliberately leaky variant: opens sigma itself instead of sigma[pi]."""
    PREFETCH = False  # it asks the dealer for no shuffle

    def open_shuffled(self, sigma, columns, xor_columns=0, widths=None, fold=None, checked=True):
        return self.open(sigma, width=position_bits(len(sigma))), None, np.array(columns)  # (c, M), list or not

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


# ------------------------------------------- every message received: ustat-2pc, the bitonic sort

RECORDED = ("recv", "all_reduce", "all_gather", "broadcast", "recv_obj", "gather", "reduce", "scatter", "recv_array")


def as_recorded(array: np.ndarray) -> np.ndarray:
    """A received array as the whole-job views keep it: flat, packed bytes as bytes (the audit decodes their
    layouts: sims.security.view_leaks.narrowed), every other word as int64."""
    return array.ravel().copy() if array.dtype == np.uint8 else array.astype(np.int64).ravel()


def record_received(log: list) -> None:
    """In a role process: append every array this party receives (from the other party or the dealer) to ``log``,
    and every value it opens through the gates (circuits.gates: its own share combined with the other's, by
    XOR and by addition, as the gate combines them) or the authenticator (circuits.macs: the opened words,
    and each destination vector the authenticated sort derives from its openings).  CrypTen's openings are
    all_reduce results, recorded as received."""

    gates_exchange, auth_open, destinations = Gates._exchange, Authenticator.open, AuthRadixRanking._destinations

    def opening(self, own):
        other = gates_exchange(self, own)
        log.extend([(own ^ other).ravel(), (own + other).ravel()])
        return other

    def auth_opening(self, x, kind):
        opened = auth_open(self, x, kind)
        log.append(opened.ravel())
        return opened

    def derived(self, shuffled_sigma, t):
        s = destinations(self, shuffled_sigma, t)
        log.append(s.ravel())
        return s

    Gates._exchange, Authenticator.open, AuthRadixRanking._destinations = opening, auth_opening, derived

    cls = crypten.communicator.DistributedCommunicator

    def record(value):
        if isinstance(value, torch.Tensor):
            log.append(value.detach().clone().to(torch.int64).numpy().ravel())
        elif isinstance(value, np.ndarray):
            log.append(as_recorded(value))
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


# ------------------------------------------------ whole jobs: mpc-central, mpc-exact with rank delivery

def recording_party(ctx, fraction_bits: int) -> list:
    """The real party loop (protocols.mpc.ranking_party.serve_jobs), recording per job every message received, the input
    shares it opened from the clients' bundles (under security with abort: its shares of the clients' values and MAC
    words, and the authenticated shares they entered as), the rank shares it sealed for them and its dealer key."""
    return _recorded_loop(ctx, fraction_bits)


def leaky_recording_party(ctx, fraction_bits: int) -> list:
    """A deliberately weakened party (a control): :func:`recording_party` with two mistakes, the labels opened
    to both parties before the sort (under security with abort: the labels and the key's digits opened through
    Authenticator.open, unmasked) and the ranks opened before they are sealed for the clients."""

    def weaken(party):
        check, seal, compute = party._invalid_clients, party._rank_bundles, malicious.compute

        def opening_labels(ctx, job, gates, held):
            reveal_int(from_share(held.labels))
            return check(ctx, job, gates, held)

        def opening_authenticated(ctx, job, held, *args):
            held.auth.open(held.labels, "labels")
            held.auth.open(np.moveaxis(held.digits, 1, 0), "key digits")
            return compute(ctx, job, held, *args)

        def sealing_opened(ctx, job_id, owners, twice_rank, *m):
            if m:  # under security with abort: this party's shares of (2R, beta_0 2R), 2R opened
                opened = twice_rank[0] + exchange(crypten.communicator.get(), twice_rank[0], "opened ranks")
            else:
                opened = reveal_int(from_share(twice_rank)).numpy()
            sealed = opened if ctx.rank == 0 else np.zeros_like(opened)
            return seal(ctx, job_id, owners, np.stack([sealed, twice_rank[1]]) if m else sealed, *m)

        party._invalid_clients, party._rank_bundles = opening_labels, sealing_opened
        malicious.compute = opening_authenticated

    return _recorded_loop(ctx, fraction_bits, weaken)


def leaky_metrics_party(ctx, fraction_bits: int) -> list:
    """A deliberately weakened party (a control) for the full report: :func:`recording_party` whose average
    precision circuit, run side by side with the other metrics (circuits.lockstep), returns the sorted labels' shares
    beside its result, so that they are opened in the metrics' one exchange of results."""

    def weaken(party):
        average_precision = party.secret_average_precision

        def with_labels(gates, groups, sorted_labels, at_starts):
            return np.concatenate([average_precision(gates, groups, sorted_labels, at_starts), sorted_labels])

        party.secret_average_precision = with_labels

    return _recorded_loop(ctx, fraction_bits, weaken)


def _recorded_loop(ctx, fraction_bits: int, weaken=None) -> list:
    log, sent, shares, jobs = [], [], [], []
    record_received(log)
    serve, compute, seal = ranking_party._serve_job, ranking_party._compute, ranking_party._rank_bundles
    enter = malicious.AuthenticatedRows.enter

    def recorded_job(ctx, *args):
        serve(ctx, *args)
        jobs.append({"received": list(log), "sealed ranks": list(sent), "input shares": list(shares),
                     "dealer key": ctx.stream_key})
        for recorded in (log, sent, shares):
            recorded.clear()

    def recorded_compute(ctx, job, intake, held, *args):
        shares.extend(rows.reshape(-1) for rows in (held[0].keys, held[0].key_xor, held[0].labels))  # one column
        log.extend(shares)
        return compute(ctx, job, intake, held, *args)

    def recorded_enter(ctx, job, opened):
        shares.extend(np.concatenate([b.shares()[part] for b in opened], axis=1).reshape(-1)
                      for part in (0, 1))  # values (digits + 1, M), MAC words (digits + CLIENT_MAC_KEYS, M)
        held = enter(ctx, job, opened)
        shares.extend([np.moveaxis(held.digits, 1, 0).reshape(-1), held.labels.reshape(-1)])
        log.extend(shares)
        return held

    def recorded_seal(ctx, job_id, owners, twice_rank, *m):
        sent.append(twice_rank.reshape(-1).copy())
        return seal(ctx, job_id, owners, twice_rank, *m)

    ranking_party._serve_job, ranking_party._compute = recorded_job, recorded_compute
    ranking_party._rank_bundles, malicious.AuthenticatedRows.enter = recorded_seal, staticmethod(recorded_enter)
    if weaken is not None:
        weaken(ranking_party)
    ranking_party.serve_jobs(ctx, fraction_bits)
    return jobs


# ------------------------------------------------------------ mpc-central's noise gadgets

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
