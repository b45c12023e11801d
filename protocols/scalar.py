"""Results that are numbers: the base of the API's scalar results (docs/api.md, "Results are numbers").

A :class:`ScalarResult` is a ``float`` (the released value) that also carries how it was obtained as frozen
dataclass attributes, so it goes wherever scikit-learn's float goes: arithmetic and comparison (which return
plain floats), ``format``/f-strings, ``round``, ``json.dumps``, numpy (``np.array([r])`` is float64),
``make_scorer``/``cross_val_score``; pickling and ``copy`` keep the attributes.
"""
import math
from dataclasses import fields


class ScalarResult(float):
    """A float with attributes; subclasses are ``@dataclass(frozen=True, eq=False, repr=False)`` whose first field
    holds the value (``eq=False``: equality and hashing stay the float's).

    ``str()`` is the number (as a float prints); ``repr()`` shows the attributes.  A value the parties did not
    release (None) is NaN.
    """

    def __new__(cls, *args, **kwargs):
        first = args[0] if args else kwargs[fields(cls)[0].name]
        return super().__new__(cls, cls._number(first))

    @classmethod
    def _number(cls, value) -> float:
        """The float a result is, from its first field."""
        return math.nan if value is None else float(value)

    def __reduce__(self):
        return _rebuild, (type(self), float(self), dict(self.__dict__))

    __str__ = float.__repr__


def _rebuild(cls, number: float, state: dict) -> ScalarResult:
    """A pickled or copied result back: its float, then its attributes (past the frozen ``__setattr__``)."""
    result = float.__new__(cls, number)
    result.__dict__.update(state)
    return result
