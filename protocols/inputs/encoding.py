"""Order-preserving integer encoding of classifier scores.

A finite IEEE-754 float maps to a signed integer by its bit pattern with the
sign fixed (negative floats: minus the magnitude bits).  The map is strictly
increasing, so order and ties are exact, and -0.0 and +0.0 share a key.
Keys are then offset by the declared lower bound and, only where the declared
range holds more than 2^62 representable values, shifted right (documented
as ``exact = False``): secure comparison in the 64-bit ring is exact only
while keys differ by less than 2^63, and the sort needs one spare value above
every key for padding.

float32 scores are always exact; float64 scores are exact on ranges such as
[0, 1] (2^61.998 values) and lose their lowest bit on e.g. [-1, 1].
"""
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..runtime import wire

KEY_BITS = 62
KEY_OFFSET = 1 << (KEY_BITS - 1)  # keys are centred on [-2^61, 2^61)
PAD_KEY = KEY_OFFSET  # public padding key, larger than every encoded score

_FORMATS = {"float32": (np.float32, np.int32, 0x7FFFFFFF), "float64": (np.float64, np.int64, 0x7FFFFFFFFFFFFFFF)}


def ordered_bits(values, dtype: str = "float64") -> np.ndarray:
    """Strictly increasing int64 image of finite floats of the given format."""
    ftype, itype, magnitude = _FORMATS[dtype]
    raw = np.ascontiguousarray(np.asarray(values, dtype=ftype)).view(itype).astype(np.int64)
    return np.where(raw < 0, -(raw & magnitude), raw)


@wire.message
@dataclass(frozen=True)
class ScoreEncoder:
    """Maps scores in [lo, hi] to integer keys in [-2^61, 2^61)."""

    lo: float = 0.0
    hi: float = 1.0
    dtype: str = "float64"

    def __post_init__(self):
        if self.dtype not in _FORMATS:
            raise InputError(f"score dtype must be float32 or float64, not {self.dtype!r}")
        if not (np.isfinite(self.lo) and np.isfinite(self.hi) and self.lo < self.hi):
            raise InputError(f"declared score range [{self.lo}, {self.hi}] must be finite with lo < hi")
        largest = float(np.finfo(_FORMATS[self.dtype][0]).max)
        if max(abs(self.lo), abs(self.hi)) > largest:
            raise InputError(f"declared score range [{self.lo}, {self.hi}] exceeds the {self.dtype} range "
                             f"(|score| <= {largest:.6g})")

    @property
    def _base(self) -> int:
        return int(ordered_bits([self.lo], self.dtype)[0])

    @property
    def shift(self) -> int:
        span = int(ordered_bits([self.hi], self.dtype)[0]) - self._base
        return max(0, span.bit_length() - KEY_BITS)

    @property
    def key_bits(self) -> int:
        """Bits of key + KEY_OFFSET, which lies in [0, 2^key_bits) for every score in range."""
        span = int(ordered_bits([self.hi], self.dtype)[0]) - self._base
        return max(1, (span >> self.shift).bit_length())

    @property
    def digits(self) -> int:
        """The radix sort's 2-bit digits of a key + KEY_OFFSET (ceil(key_bits / 2))."""
        return -(-self.key_bits // 2)

    def key_digits(self, radix_keys: np.ndarray) -> np.ndarray:
        """The 2-bit digits (digits, rows) of non-negative keys (key + KEY_OFFSET), least significant first."""
        keys = np.asarray(radix_keys, dtype=np.int64)
        return np.stack([(keys >> (2 * t)) & 3 for t in range(self.digits)])

    @property
    def exact(self) -> bool:
        """True when distinct scores of this dtype in range always get distinct keys."""
        return self.shift == 0

    def check(self, scores: np.ndarray, locate=lambda i: f"score #{i}", declared_by: str = None) -> None:
        """Raise InputError naming the first non-finite or out-of-range score.

        ``locate(i)`` turns an index into the place to name (e.g. a file line); ``declared_by``: who declared the
        range when it is not the caller's to change (a client's evaluation: its organiser sets it).
        """
        scores = np.asarray(scores, dtype=np.float64)
        bad = ~np.isfinite(scores)
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(f"{locate(i)}: score {scores[i]} is not a finite number")
        bad = (scores < self.lo) | (scores > self.hi)
        if bad.any() and declared_by is not None:
            i = int(np.argmax(bad))
            raise InputError(f"{locate(i)}: score {float(scores[i])!r} is outside the range [{self.lo}, {self.hi}] "
                             f"that {declared_by} declares; its organiser sets the range (ask them to declare one "
                             "that holds these scores, or map the scores into it)")
        if bad.any():
            i = int(np.argmax(bad))
            hint = (f"; the scores span [{scores.min():.6g}, {scores.max():.6g}] (logits or margins?): declare a "
                    "range that holds them, e.g. --score-range LO HI") if bad.sum() > 1 else ""
            raise InputError(f"{locate(i)}: score {float(scores[i])!r} is outside the declared range "
                             f"[{self.lo}, {self.hi}]{hint}")

    def narrower(self, scores):
        """A float32 encoder of the same range with fewer key bits, if every (checked) score is a float32
        value, so that both encoders give the same order and ties; else None.  For a hint to the one who
        holds the scores: the precision is declared, never read from the data by the parties."""
        scores = np.asarray(scores, dtype=np.float64)
        if self.dtype != "float64" or not np.array_equal(scores.astype(np.float32).astype(np.float64), scores):
            return None
        try:
            narrow = ScoreEncoder(self.lo, self.hi, "float32")
        except InputError:  # the range exceeds float32's
            return None
        return narrow if narrow.key_bits < self.key_bits else None

    def encode(self, scores) -> np.ndarray:
        """Integer keys of validated scores; equal scores get equal keys, order is kept."""
        self.check(scores)
        shifted = (ordered_bits(scores, self.dtype) - np.int64(self._base)).view(np.uint64)
        return (shifted >> np.uint64(self.shift)).astype(np.int64) - np.int64(KEY_OFFSET)


FINITE = ScoreEncoder(-float(np.finfo(np.float64).max), float(np.finfo(np.float64).max), "float64")  # any finite
# float64 score: what a reader checks before the evaluation's declared range is known
