"""A client's own privacy ledger: what its rows have spent, kept by the client whatever the parties say.

One JSON file per owner (``mpc-auc client submit --ledger FILE``, API ``ledger=``; by default one per client
key, ``$XDG_STATE_HOME/mpc-auc/client-ledger/<key>.json``), written atomically and durably under an exclusive
lock (protocols.runtime.durable).  Before the client sends its rows to a job it records the job's release
as both parties' tickets state it: a DP release by its (epsilon, delta), an exact one by its count; and it
refuses to submit past its budget or past the exact releases it accepts.  The record stays when the job is
refused after the rows went out (the client cannot tell whether the parties opened anything), and is voided
only when nothing was sent.  Composition: protocols.runtime.ledger.compose, each release as its (epsilon,
delta) pair's dominating mechanism.  This is the one budget that holds even if both compute parties and
the organiser agree to overspend.
"""
import json
import os
import secrets
import tempfile
import time

from ..errors import InputError
from ..runtime.durable import locked, write_durably
from ..runtime.ledger import Exact, Release, compose
from ..runtime.identity import PublicIdentity

FORMAT = "mpc-auc-client-ledger/1"


def default_path(member: PublicIdentity) -> str:
    """The default ledger file of the client whose key ``member`` carries: one per key."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(state, "mpc-auc", "client-ledger", member.key_sha256[:32] + ".json")


def ticket_release(terms) -> Release:
    """What a job whose ticket states ``terms`` (protocols.inputs.submission.ReleaseTerms) charges the client."""
    if terms.exact:
        return Release("mpc-exact", (), 0.0, exact=Exact(()))
    return Release(terms.protocol, (), terms.delta or 0.0, pure_epsilon=terms.epsilon)


class OwnLedger:
    """The ledger file at ``path`` (its directory made if absent, mode 0700)."""

    def __init__(self, path: str):
        self.path = os.path.abspath(path)
        try:
            os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=os.path.dirname(self.path), prefix=".mpc-auc-check-"):
                pass
        except OSError as err:
            raise InputError(f"the client's own ledger {self.path}: cannot write there ({err.strerror or err})") \
                from None
        self.state()  # a file that is no client ledger is refused before anything is sent

    def state(self) -> dict:
        try:
            with open(self.path) as f:
                state = json.load(f)
        except FileNotFoundError:
            return {"format": FORMAT, "releases": []}
        except (OSError, ValueError) as err:
            raise InputError(f"the client's own ledger {self.path} cannot be read ({err})") from None
        if not isinstance(state, dict) or state.get("format") != FORMAT:
            raise InputError(f"{self.path} is not a client ledger ({FORMAT})")
        return state

    def releases(self) -> list:
        return [Release.of(r) for r in self.state()["releases"] if not r.get("void")]

    def refusal(self, release: Release, budget=None, max_exact: int = None) -> str:
        """Why recording ``release`` would pass ``budget`` (protocols.runtime.ledger.Budget) or ``max_exact``, or ""."""
        releases = self.releases()
        if release.exact is not None:
            had = sum(r.exact is not None for r in releases)
            if max_exact is not None and had + 1 > max_exact:
                return (f"this client accepts at most {max_exact} exact release(s) of its rows and its own ledger "
                        f"{self.path} records {had}")
            return ""
        if budget is None:
            return ""
        before, after = compose(releases, budget.delta), compose(releases + [release], budget.delta)
        if after.epsilon <= budget.epsilon * (1 + 1e-9) and after.delta <= budget.delta:
            return ""
        return (f"this client's own budget ({budget.epsilon:g}, {budget.delta:g}) would be passed: its ledger "
                f"{self.path} records epsilon {before.epsilon:.6g} spent, this release asks {release.epsilon:g}")

    def charge(self, release: Release, about: dict, budget=None, max_exact: int = None):
        """Record ``release`` (``about``: the job it belongs to) unless it passes the limits: (entry stamp, "") or
        (None, why not)."""
        try:
            with locked(self.path + ".lock"):
                why = self.refusal(release, budget, max_exact)
                if why:
                    return None, why
                state = self.state()
                stamp = secrets.token_hex(8)
                state["releases"].append({**release.entry(), **about, "entry": stamp,
                                          "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
                write_durably(self.path, json.dumps(state, indent=1))
        except OSError as err:
            raise InputError(f"the client's own ledger {self.path} cannot be written ({err.strerror or err}): "
                             "not submitting") from None
        return stamp, ""

    def void(self, stamp: str, reason: str) -> None:
        """Mark the release recorded under ``stamp`` as not made (nothing was sent)."""
        with locked(self.path + ".lock"):
            state = self.state()
            for r in state["releases"]:
                if r.get("entry") == stamp:
                    r["void"] = reason
            write_durably(self.path, json.dumps(state, indent=1))
