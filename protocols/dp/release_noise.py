"""The one interface of mpc-central's release noises: the AUC's (protocols.dp.central_law.CentralNoise) and the
DP curve's (protocols.dp.curve_law.CurveNoise).

A job carries one (protocols.mpc.ranking_job.Job.central); the parties state it in every ticket, charge its
:meth:`ReleaseNoise.release` to their ledgers and draw it inside the MPC.  Each states its own parameters; this
names what the job, the tickets and the ledgers ask of any of them.
"""
from abc import ABC, abstractmethod

from ..errors import InputError


class ReleaseNoise(ABC):
    """A DP release's noise: ``epsilon`` (each repetition's), ``neighbours`` ("label" or "record") and
    ``repetitions`` (releases of the same statistic, each charged) are fields of every implementation."""
    epsilon: float
    neighbours: str
    repetitions: int

    @abstractmethod
    def delta(self, m: int) -> float:
        """The delta of one release over ``m`` rows (the noise circuit's failure bound)."""

    @abstractmethod
    def delta_ceiling(self, m: int) -> float:
        """The largest delta of one release over at most ``m`` rows (a direct evaluation states it before M)."""

    @abstractmethod
    def release(self, m: int):
        """What the release over ``m`` rows charges to a ledger (protocols.runtime.ledger.Release)."""

    @abstractmethod
    def drawn(self, m: int) -> str:
        """What each of the circuit's draws gets of epsilon over ``m`` rows, in words."""

    def check(self, m: int) -> None:
        """InputError if the circuit cannot draw this noise over ``m`` rows (epsilon too small or too large for its
        coins), naming the epsilon asked for and the share each draw gets."""
        try:
            self.delta(m)
        except ValueError as err:
            raise InputError(f"epsilon {self.epsilon:g} cannot be drawn over {m} rows ({self.drawn(m)}): "
                             f"{err}") from None

    def opened(self) -> tuple:
        """The metrics the release opens, as a ticket states them."""
        return ("auc",)

    def cuts(self):
        """The public cuts of a released curve (None: no curve)."""
        return None
