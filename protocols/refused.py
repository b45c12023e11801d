"""The value that stands where a refused result would: why it was not computed.

A party answers a job it will not run with one instead of its ticket or its result (``missing``: the rostered
clients that did not submit; ``invalid``: those whose rows failed the in-MPC domain check), and a metric the
parties leave out (DeLong's variance when a class has fewer than two rows, a bounded metric past its rows) is one
in the opened metrics.  It travels in control messages (registered by protocols.mpc.ranking_job) and is written
to JSON as ``{"refused": reason}``.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Refused:
    """Why a job or a value was refused.

    Attributes
    ----------
    reason : str
        Why, in words.
    missing, invalid : tuple of str
        A refused job's rostered clients that did not submit, and those whose rows failed the in-MPC domain
        check.

    Examples
    --------
    >>> Refused("DeLong's variance needs two rows of each class").as_json()
    {'refused': "DeLong's variance needs two rows of each class"}
    """
    reason: str
    missing: tuple = ()
    invalid: tuple = ()

    def as_json(self) -> dict:
        """The strict-JSON form of the output files."""
        return {"refused": self.reason}
