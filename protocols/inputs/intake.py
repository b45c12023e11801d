"""How a compute party takes in one job's submissions and agrees with the other party on them.

1. **Open.** P0 and P1 exchange the digest of the evaluation they were
   given and 32 fresh bytes each (``secrets``) over their secure channel; a
   different evaluation stops the job, the two draws make the job nonce
   (protocols.inputs.submission.job_nonce) and the ticket a client needs.
2. **Collect.** Relayed: one ``submissions`` message from the coordinator,
   which must list them in roster order.  Direct: each rostered client
   dials the party (TLS; the roster's certificates are trusted for this job
   only), receives the ticket (with what this party's ledger holds for its
   key, and the most rows it and all clients together may send), states its
   row count and is given room for them in the evaluation's total (first
   come; its link takes a message of that size only, so what the party
   keeps of all submissions stays within Evaluation.max_total_bytes), sends
   its submission and is told
   ``accepted`` or ``refused`` with the cause, or declines the job with its
   reason (its terms refuse the release).  The parties poll each other
   every POLL_S seconds until each rostered client has submitted or
   declined at both, either has passed the deadline, or a client declined
   an evaluation that does not allow missing clients.
3. **Agree.** Both close their intake and exchange, for each roster name
   in order, the SHA-256 of the statement they admitted (zeros if none).  A
   client counts as present when both parties hold the same statement (it
   covers both bundles); one that sent P0 and P1 different submissions
   counts as missing.  The job runs on the present clients, in roster
   order, if that is the whole roster (or the evaluation allows missing
   clients and at least one is present).  Relayed submissions must all be
   admitted, and must hold the row counts the coordinator announced with
   the job (the privacy ledger was charged for those): one refused
   submission refuses the job.  A refusal names its cause, both parties
   refuse alike, and nothing is computed.
4. **Finish.** Direct clients get their rank bundle (if the evaluation
   delivers ranks) or ``done``, or the job's refusal, on their own link;
   the link of a client still being served (one that stalled) is cut, so
   nothing of the job outlives it.
"""
import dataclasses
import secrets
import struct
import threading
import time

import numpy as np
import torch

from ...circuits.crypten_compat import crypten
from ..errors import ChannelIntegrityError, PeerLost
from ..runtime.identity import CLIENT_PREFIX
from ..runtime.control import recv_message, send_message
from .submission import Inbox, ReleaseTerms, SubmissionRefused, Ticket, job_nonce
from ..runtime.wire import WireError

POLL_S = 0.5  # how often the parties compare their intake while waiting for direct submissions
JOIN_S = 10.0  # the longest the clients' threads may take, together, to end once the job has (links aborted)


def gather_bytes(data: bytes) -> list:
    """``data`` (a multiple of 8 bytes, the same length at both parties) from P0 and P1, over their channel."""
    mine = torch.from_numpy(np.frombuffer(data, dtype=np.int64).copy())
    return [t.numpy().tobytes() for t in crypten.communicator.get().all_gather(mine)]


def refusal(problem: str) -> str:
    return f"inputs refused: {problem}; nothing was computed"


class ClientIntake:
    """One job's submissions at this party (module docstring)."""

    def __init__(self, ctx, job, terms: ReleaseTerms = None, standing=None):
        """terms: what the job releases, for the clients' tickets (both parties must pass the same); standing:
        a client's roster entry -> what this party's ledger holds for it (runtime.ledger.Standing), stated in
        its ticket."""
        self.ctx, self.evaluation, self.rows = ctx, job.evaluation, job.rows
        self.links, self._links_lock = {}, threading.Lock()  # direct: client name -> its link
        self._serving = []  # direct: (thread, link) of every client served, to end with the job
        self.missing = []
        draws = gather_bytes(bytes.fromhex(self.evaluation.digest) + secrets.token_bytes(32))
        self.problem = "" if draws[0][:32] == draws[1][:32] else "P0 and P1 were given different evaluations"
        if job.ranks and self.evaluation.weight_bits is not None:
            self.problem = "a weighted evaluation delivers no ranks (the weights do not change them: ask unweighted)"
        nonce = job_nonce(self.evaluation.id, [d[32:] for d in draws])
        self.ticket = Ticket(self.evaluation.id, nonce, self.evaluation.encoder, job.ranks, terms,
                             self.evaluation.columns, len(self.evaluation.roster.members),
                             self.evaluation.max_rows if self.evaluation.direct else None,
                             self.evaluation.max_total_rows if self.evaluation.direct else None)
        self._held, self._rooms = 0, {}  # direct: the rows given room for (at most max_total_rows), per client
        self._standing = standing
        self.inbox = Inbox(self.evaluation, nonce, ctx.rank, ctx.seal_key)

    def collect(self) -> list:
        """The admitted submissions both parties hold, in roster order; [] with :attr:`problem` set if refused."""
        if self.evaluation.direct:
            self._receive_direct()
        else:
            self._receive_relayed()
        return self._agree()

    def _receive_relayed(self) -> None:
        """The relay's count of submissions, then each in its own message (one client's bundle in memory at a
        time before it is opened: each is offered as it arrives, duplicates and strangers refused by the inbox); a
        count that is no count is refused before any is read."""
        count, roster = self.ctx.recv("submissions"), self.evaluation.roster.names
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            self.problem = self.problem or f"the relay announced {count!r} submissions: refused"
            return
        names = []
        for submission in (self.ctx.recv("submission") for _ in range(count)):
            try:
                names.append(self.inbox.offer(submission).client)
            except SubmissionRefused:
                pass  # recorded in inbox.refusals
        if not self.inbox.refusals and names != [n for n in roster if n in names]:
            self.problem = self.problem or "the relay delivered the submissions out of roster order (reordered)"

    def _receive_direct(self) -> None:
        ctx, evaluation = self.ctx, self.evaluation
        members = evaluation.roster.members
        match = (lambda h: h.get("purpose") == "submit" and h.get("evaluation") == evaluation.id
                 and h["from"].startswith(CLIENT_PREFIX))
        ctx.listener.trust(members)
        try:
            start, shown = time.monotonic(), -1
            while True:
                taken = ctx.listener.take(match, POLL_S)
                while taken is not None:
                    serving = threading.Thread(target=self._serve_client, args=taken, daemon=True)
                    try:
                        serving.start()
                        self._serving.append((serving, taken[1]))
                    except RuntimeError as err:  # no thread to be had: that link goes, the intake stays
                        taken[1].abort(PeerLost([taken[1].peer], "the job's intake", err))
                    taken = ctx.listener.take(match, 0)
                present = self.inbox.present
                if ctx.rank == 0 and sum(present) != shown:
                    shown = sum(present)
                    ctx.progress(f"evaluation {evaluation.id}: {shown} of {len(present)} clients submitted here")
                late = time.monotonic() - start > evaluation.deadline_s
                declined = self.inbox.declined
                settled = all(p or n in declined for p, n in zip(present, evaluation.roster.names))
                hopeless = bool(declined) and not evaluation.allow_missing
                flags = [struct.unpack(">qqq", f) for f in gather_bytes(struct.pack(">qqq", settled, late, hopeless))]
                if all(f[0] for f in flags) or any(f[1] or f[2] for f in flags):
                    return
        finally:
            ctx.listener.distrust(members)
            ctx.listener.drop(lambda h: h.get("purpose") == "submit")  # too late, or for another evaluation

    def _serve_client(self, hello, link) -> None:
        name = hello["from"][len(CLIENT_PREFIX):]
        holding = admitted = False  # this link holds the client's room; its submission was admitted
        try:
            standing = self._standing(self.evaluation.roster.member(name)) if self._standing else None
            send_message(link, "ticket", dataclasses.replace(self.ticket, standing=standing))
            kind, submission = recv_message(link, "waiting for the client's row count")
            held_rows = submission
            if kind == "rows":  # room for them first; until then its link holds 64 KiB unread at most (HELLO_MAX)
                self._hold(name, held_rows)
                holding = True
                link.max_frame = self.evaluation.submission_bytes(held_rows)  # a larger message ends this link
                send_message(link, "room")
                kind, submission = recv_message(link, "waiting for the submission")
            link.max_frame = 0  # nothing more is read from this client: one more message ends its link
            if kind == "declined":  # the client refused the job's terms: no need to wait for it
                self.inbox.decline(name, str(submission)[:500])
                _tell(link, [])
                return
            if kind != "submission" or not holding:
                raise SubmissionRefused(f"client {name!r} sent {kind!r} where its "
                                        f"{'submission' if holding else 'row count'} was due")
            self.inbox.offer(submission, sender=name, rows=held_rows)
            admitted = True
            with self._links_lock:
                self.links[name] = link
            send_message(link, "accepted")
        except SubmissionRefused as err:
            _tell(link, [("refused", str(err))])
        except (PeerLost, ChannelIntegrityError, WireError, OSError) as err:
            link.abort(err)
        finally:
            if holding and not admitted:  # its room goes back: the client may dial again (its link dropped)
                with self._links_lock:
                    self._held -= self._rooms.pop(name)

    def _hold(self, name: str, rows) -> None:
        """Hold room for client ``name``'s ``rows`` in the evaluation's total (max_total_rows over all its
        clients: what this party keeps of their submissions is at most Evaluation.max_total_bytes), or raise
        SubmissionRefused naming why not.  First come, first held, until the job ends."""
        evaluation = self.evaluation
        if not (isinstance(rows, int) and not isinstance(rows, bool) and 1 <= rows <= evaluation.max_rows):
            why = (f"client {name!r} stated {str(rows)[:40]} rows; the evaluation takes 1 to "
                   f"{evaluation.max_rows:,} per client")
        else:
            with self._links_lock:
                if name in self._rooms:  # one room a client: more links of its own take no more
                    raise SubmissionRefused(f"client {name!r} already submitted to this job or holds room for "
                                            f"{self._rooms[name]:,} rows in it: a second submission is refused")
                left = evaluation.max_total_rows - self._held
                if rows <= left:
                    self._held, self._rooms[name] = self._held + rows, rows
                    return
            why = (f"client {name!r} would send {rows:,} rows when {left:,} are left of the evaluation's "
                   f"{evaluation.max_total_rows:,} over all its clients (first come)")
        self.inbox.turn_away(name, why)  # the organiser's refusal names it; the intake waits for it no more
        raise SubmissionRefused(why)

    def _agree(self) -> list:
        names = self.evaluation.roster.names
        held = gather_bytes(self.inbox.close())
        digests = [[h[32 * i:32 * i + 32] for h in held] for i in range(len(names))]
        both = [n for n, d in zip(names, digests) if d[0] == d[1] != bytes(32)]
        split = [n for n, d in zip(names, digests) if bytes(32) not in d and d[0] != d[1]]
        self.missing = [n for n in names if n not in both]
        if not self.problem:
            self.problem = self._policy(both, split)
        admitted = self.inbox.hand_over(set(both))
        if not self.problem and self.rows is not None and [a.rows for a in admitted] != list(self.rows):
            self.problem = "the submissions do not hold the row counts announced with the job"
        flags = gather_bytes(struct.pack(">q", bool(self.problem)))  # both parties decide alike
        if not self.problem and any(struct.unpack(">q", f)[0] for f in flags):
            self.problem = "the other compute party refused the inputs"
        return [] if self.problem else admitted

    def _policy(self, both, split) -> str:
        """Why the clients present at both parties may not be computed on, or ""."""
        refusals = self.inbox.refusals + [f"client {n!r} sent P0 and P1 different submissions" for n in split]
        if refusals and not self.evaluation.direct:
            return refusals[0] + (f" (and {len(refusals) - 1} more refusal(s))" if len(refusals) > 1 else "")
        if not self.missing:
            return ""
        if self.evaluation.allow_missing and both:
            return ""
        shown = ", ".join(repr(n) for n in self.missing[:10]) + (" ..." if len(self.missing) > 10 else "")
        why = f" (refused here: {'; '.join(refusals[:3])})" if refusals else ""
        if not both:
            return f"no client submitted to both parties{why}"
        return f"no submission from {shown} at both parties, and the evaluation does not allow missing clients{why}"

    def finish(self, outcome, shared: dict = None, computed=()) -> None:
        """Tell each direct client how the job ended: ``outcome(name)`` gives (kind, payload); with ``shared``
        (an evaluation that shares its result), each client in ``computed`` gets ("shared", shared) first."""
        with self._links_lock:
            links, self.links = dict(self.links), {}
        for name, link in links.items():
            first = [("shared", shared)] if shared is not None and name in computed else []
            _tell(link, first + [outcome(name)])
        ended = PeerLost(["client"], "the job's intake", TimeoutError("the job has ended"))
        for _, link in self._serving:  # every other client link ends with the job (a stalled client's too)
            if link not in links.values():
                link.abort(ended)
        deadline = time.monotonic() + JOIN_S
        for thread, _ in self._serving:
            thread.join(max(0.0, deadline - time.monotonic()))


def _tell(link, messages) -> None:
    try:
        for kind, payload in messages:
            send_message(link, kind, payload)
    except (PeerLost, ChannelIntegrityError, OSError):
        pass  # the client has gone; the job does not depend on it any more
    link.close(flush_s=5.0)
