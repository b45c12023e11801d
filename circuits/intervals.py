"""A numeric parameter's interval, and the one wording that refuses a value outside it.

protocols.validation declares every parameter's interval with :class:`Interval` and refuses through
:func:`admitted` (as its InputError); the circuits' noise laws (circuits.noise_laws) guard their own
parameters through the same function (as ValueError: this layer knows no protocol error), so a bad epsilon
reads the same whoever refuses it.  NaN and infinities lie in no interval.
"""
import math
import numbers
from dataclasses import dataclass


@dataclass(frozen=True)
class Interval:
    """The values a parameter takes: ``kind`` (int or float), finite, between ``lo`` and ``hi``."""
    kind: type
    lo: float = None
    hi: float = None
    lo_open: bool = False
    hi_open: bool = False
    what: str = "a number"

    def rule(self) -> str:
        low = "" if self.lo is None else f"{'>' if self.lo_open else '>='} {self.lo:g}"
        high = "" if self.hi is None else f"{'<' if self.hi_open else '<='} {self.hi:g}"
        return " and ".join(r for r in (low, high) if r)

    def admits(self, value) -> bool:
        if self.kind is int and not (isinstance(value, numbers.Integral) and not isinstance(value, bool)):
            return False
        if not (isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)):
            return False
        if self.lo is not None and (value <= self.lo if self.lo_open else value < self.lo):
            return False
        return self.hi is None or (value < self.hi if self.hi_open else value <= self.hi)


EPSILON = Interval(float, 0, lo_open=True, what="a privacy budget epsilon")  # protocols.validation's "epsilon"


def admitted(name: str, value, interval: Interval, error: type = ValueError):
    """``value`` as ``interval``'s kind, or ``error`` naming the parameter, the rule and the value."""
    if isinstance(value, numbers.Real) and interval.kind is float and not isinstance(value, bool):
        value = float(value)
    if not interval.admits(value):
        bounds = interval.rule()
        raise error(f"{name} must be {interval.what}: {'an integer' if interval.kind is int else 'a number'}, "
                    f"finite{', ' + bounds if bounds else ''}; not {value!r}")
    return interval.kind(value)
