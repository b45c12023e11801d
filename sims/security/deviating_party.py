"""A compute party that deviates, for the tests and ``mpc-auc security``: cheats on the authenticated radix sort.

The cheat is made where a malicious party can always make it: on the frame it hands its link to the other
compute party, after the protocol built the frame (:class:`Cheat`): an offset on one word, a stale frame
replayed, or random words in place of its share (another value opened).  :func:`sort_party` runs, in one
session, honest authenticated sorts (circuits.auth_radix) and then one sort per cheat, the checks kept or
skipped (the weakened variant), and reports each run's opened ranks or the deviation's message;
:func:`deviation_checks` is the security suite's step.  The same cheats inside the real job loop:
sims.security.deviating_jobs.
"""
import numpy as np

from ...protocols.runtime.session import run_parties
from .report import check

# each phase with the frames each party sends in it over a run of CHEAT_BITS / 2 = 3 digits (at least)
PHASES = {"the shuffle of digit": 2, "opening the destinations of digit": 4, "opening digit": 3,
          "the one-hot products of digit": 3, "the unshuffle of digit": 2, "moving the columns": 1,
          "opening the destinations of the move": 2}
WEAKENED_RUNS = 5  # per phase and cheating party, the checks skipped
CHEAT_M, CHEAT_BITS = 40, 6


def keys_for(seed: int, m: int, bits: int) -> np.ndarray:
    """Keys of ``bits`` bits with a tie group of a third of them (a fixed input: the cheats' test data)."""
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 2 ** bits, m, dtype=np.int64)
    keys[: m // 3] = keys[0]  # a tie group
    return keys


def digits_of(keys: np.ndarray, bits: int) -> np.ndarray:
    """The 2-bit digits of the keys, least significant first (D, M)."""
    return np.stack([(keys >> t) & 3 for t in range(0, bits, 2)])


class Cheat:
    """A party's link to the other compute party that changes the ``frame``-th frame it sends while the circuit's
    phase starts with ``phase``: ``offset`` added to word ``word`` (mod the frame's words), or (mode) the frame
    replaced by the last one of its length sent before (a stale frame replayed), or by random words (its share
    of some other value: a substituted share, a different value opened)."""

    def __init__(self, auth, link):
        self.auth, self.link, self._send = auth, link, link.send
        self.plan, self.seen, self.done = None, 0, False
        self.sent = {}  # frame length -> the last frame of that length sent
        link.send = self.send

    def arm(self, phase: str, frame: int, word: int, offset: int, mode: str = "offset") -> None:
        self.plan, self.seen, self.done = (phase, frame, word, offset, mode), 0, False

    def send(self, channel, payload=b""):
        raw = payload.tobytes() if isinstance(payload, np.ndarray) else bytes(payload)
        if self.plan is not None and not self.done and self.auth.phase.startswith(self.plan[0]):
            phase, frame, word, offset, mode = self.plan
            if self.seen == frame and len(raw) >= 8 and (mode != "replay" or len(raw) in self.sent):
                payload = self._changed(raw, word, offset, mode)
                self.done = True
            self.seen += 1
        self.sent[len(raw)] = raw
        return self._send(channel, payload)

    def _changed(self, raw: bytes, word: int, offset: int, mode: str) -> bytes:
        if mode == "replay":
            return self.sent[len(raw)]
        if mode == "substitute":
            return np.random.default_rng(word).integers(0, 256, len(raw), dtype=np.uint8).tobytes()
        words = np.frombuffer(raw, np.uint8)[: len(raw) // 8 * 8].copy().view(np.int64)
        words[word % len(words)] += offset
        return words.view(np.uint8).tobytes() + raw[len(words) * 8:]


def _sort(ctx, shuffler, auth, keys, bits, check=True):
    """Rank ``keys`` (P0's input) and move their positions along; (ranks, moved origins) opened, or the
    deviation's message."""
    from ...circuits.auth_radix import AuthRadixRanking  # lazily: CrypTen only in the role processes
    from ...circuits.macs import Deviation  # lazily, as above

    m = len(keys)
    if not check:
        skip_checks(auth)
    try:
        auth.phase = "the input"
        digits = np.stack([auth.input(d if ctx.rank == 0 else None, 0, (m,)) for d in digits_of(keys, bits)])
        ranking = AuthRadixRanking(shuffler, auth)
        sigma = ranking.permutation(digits)
        origin = ranking.apply(sigma, auth.input(np.arange(m) if ctx.rank == 0 else None, 0, (m,))[None])[0]
        return auth.release(np.stack([sigma, origin], axis=1), "ranks and origins")
    except Deviation as failure:
        return str(failure)
    finally:
        auth.__dict__.pop("check", None)


def sort_party(ctx, honest_cases, cheats, prefetch):
    """One compute party: the honest sorts of ``honest_cases`` (M, bits), then a sort of CHEAT_M keys per cheat
    (cheating party, phase, checked[, mode]), the cheat made by that party at a frame, word and offset drawn
    from the run's number; each run's (ranks, origins) or the deviation's message, and whether the cheat was
    made."""
    from ...circuits.auth_radix import AuthRadixRanking  # lazily: CrypTen only in the role processes
    from ...circuits.macs import Authenticator, value_bits  # lazily, as above
    from ...circuits.shuffle import Shuffler  # lazily, as above

    AuthRadixRanking.PREFETCH = prefetch  # False: the session goes on after an abort, so nothing is posted ahead
    shuffler = Shuffler(ctx.stream_key)
    auth = Authenticator(ctx.stream_key, value_bits(max([m for m, _ in honest_cases] + [CHEAT_M])))
    out = {"s": auth.s, "honest": [_sort(ctx, shuffler, auth, keys_for(m, m, bits), bits) for m, bits in honest_cases]}
    cheat = Cheat(auth, shuffler.comm.links[1 - ctx.rank])
    out["cheats"] = []
    for n, (party, phase, check, *mode) in enumerate(cheats):
        if auth.failed:  # the last run was caught: its MAC keys are done with, the next run draws new ones
            auth = cheat.auth = Authenticator(ctx.stream_key, auth.k)
        rng = np.random.default_rng(n)
        if party == ctx.rank:  # the run's frame, word and offset: the cheater's choice
            cheat.arm(phase, int(rng.integers(0, PHASES[phase])), int(rng.integers(0, 1 << 20)),
                      int(rng.integers(1, 1 << 20)), *mode)
        out["cheats"].append(_sort(ctx, shuffler, auth, keys_for(100 + n, CHEAT_M, CHEAT_BITS), CHEAT_BITS, check))
        out.setdefault("armed", []).append(cheat.done if party == ctx.rank else None)
        cheat.plan = None
    return out


def crypten_link(ctx):
    """This compute party's link to the other one (the session's communicator)."""
    from ...circuits.crypten_compat import crypten  # lazily: CrypTen only in the role processes

    return crypten.communicator.get().links[1 - ctx.rank]


def skip_checks(auth) -> None:
    """The weakened variant: this authenticator's checks check nothing and forget what was opened (undone by
    ``del auth.check``)."""
    auth.check = lambda phase: auth.__dict__.update(_opened=[], _deferred=None)


def expected_ranks(keys):
    """(ranks, order) of numpy's stable sort: what an honest run opens."""
    order = np.argsort(keys, kind="stable")
    ranks = np.empty(len(keys), dtype=np.int64)
    ranks[order] = np.arange(len(keys))
    return ranks, order


def cheat_runs(per_phase: int, weakened: int = WEAKENED_RUNS):
    """The cheats (party, phase, checked) and both parties' results: ``per_phase`` checked runs and ``weakened``
    runs without checks per phase and cheating party, in one session."""
    cheats = [(party, phase, check) for check in (True, False) for party in (0, 1) for phase in PHASES
              for _ in range(per_phase if check else weakened)]
    return cheats, run_parties(sort_party, ([], cheats, False), timeout_s=120)


def outcomes(cheats, results) -> dict:
    """(party, phase) -> {"caught": runs both parties stopped, "made": cheats made, "checked": checked runs,
    "wrong": weakened runs whose honest party opened wrong ranks, "weakened": weakened runs}."""
    table = {}
    for n, (party, phase, check, *_) in enumerate(cheats):
        row = table.setdefault((party, phase), dict.fromkeys(("caught", "made", "checked", "wrong", "weakened"), 0))
        seen = [results[rank]["cheats"][n] for rank in (0, 1)]
        if check:
            row["checked"] += 1
            row["made"] += bool(results[party]["armed"][n])
            row["caught"] += all(isinstance(s, str) and "a compute party deviated" in s for s in seen)
        else:
            row["weakened"] += 1
            honest = seen[1 - party]
            right = expected_ranks(keys_for(100 + n, CHEAT_M, CHEAT_BITS))
            row["wrong"] += not isinstance(honest, str) and not all(np.array_equal(a, b) for a, b in zip(honest, right))
    return table


def deviation_checks(cfg: dict, rng) -> list:
    """The suite's step, per cheating party: the share of its cheats (one offset on one word, in each phase)
    that both parties caught, which must be all; and the control, the same cheats with the checks skipped,
    which must release wrong ranks (the check is what catches them)."""
    cheats, results = cheat_runs(cfg["deviation_runs"])
    table = outcomes(cheats, results)
    out = []
    for party in (0, 1):
        rows = {phase: row for (p, phase), row in table.items() if p == party}
        checked, caught = (sum(r[k] for r in rows.values()) for k in ("checked", "caught"))
        made, wrong = (sum(r[k] for r in rows.values()) for k in ("made", "wrong"))
        label = "authenticated radix sort (security with abort)"
        out.append(check(f"P{party} adds an offset to one word it sends, in every phase: both parties stop",
                         "attack", label, None, None, caught / checked, 1.0, caught == checked == made,
                         {"runs per phase": cfg["deviation_runs"], "cheats made": made,
                          "caught per phase": {phase: r["caught"] for phase, r in rows.items()},
                          "measured": "share of the cheats both parties caught"}, pass_if="==", chance=False))
        out.append(check(f"P{party}'s same cheats with the MAC checks skipped: runs releasing wrong ranks",
                         "control", label, None, None, wrong, 0, wrong <= 0,
                         {"runs per phase": WEAKENED_RUNS,
                          "wrong per phase": {phase: r["wrong"] for phase, r in rows.items()}}))
    return out
