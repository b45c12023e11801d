"""Independent sub-circuits run side by side, the gates they reach at the same step merged into one round.

The metrics of a full report (DeLong's variance, average precision, the curve points, KS, the partial AUC) are
independent circuits over the same tie groups, each a chain of rounds: their long divisions, comparisons and
tournament take hundreds of rounds, one after the other.  :func:`lockstep` runs each circuit (a *task*: a function
of a gates engine) in a thread of its own, with a :class:`_Lane` in place of circuits.gates.Gates.  A lane's gate
call hands the call to the conductor (the calling thread) and waits; when every task still running waits on a call,
the conductor makes all their gates in one round (circuits.gates.Gates.batch: each call's opening as it alone would
make it, in task order, one message each way), or first their reservations of triples (which send nothing to the
other party), and hands each task its output.  The rounds are then the longest task's, not their sum.

Both parties run the same tasks, whose gates are the same whatever the data (each circuit's schedule is public),
so both merge the same calls the same way: the openings are those of the calls made one by one, each masked by
its own correlation, only sent together.  Only the conductor talks to the other party and the dealer; a task
computes locally between its calls (numpy releases the interpreter lock).
"""
import threading

_PENDING = object()  # a lane's answer not yet given


class LockstepCancelled(RuntimeError):
    """Raised in a task whose partner task failed: the conductor makes no more calls."""


class _Lane:
    """A task's gates engine: each call waits for the conductor's merged call (module docstring)."""

    def __init__(self, condition: threading.Condition, rank: int):
        self.rank = rank
        self._condition = condition
        self.call, self.answer, self.done, self.stopped = None, _PENDING, False, False

    def reserve(self, kind: str, count: int) -> None:
        self._wait("reserve", (kind, count))

    def and_(self, *pairs) -> list:
        return self._wait("and", pairs)

    def multiply(self, *pairs) -> list:
        return self._wait("mul", pairs)

    def to_additive(self, packed, count: int):
        return self._wait("bits", (packed, count))

    def _wait(self, kind: str, args):
        with self._condition:
            if self.stopped:
                raise LockstepCancelled("the conductor stopped")
            self.call = (kind, args)
            self._condition.notify_all()
            self._condition.wait_for(lambda: self.answer is not _PENDING)
            answer, self.answer = self.answer, _PENDING
        if isinstance(answer, LockstepCancelled):
            raise answer
        return answer


def lockstep(gates, tasks) -> list:
    """Each task's result (a task: a function of one argument, the gates engine it calls), the tasks run side by
    side with their gate rounds merged (module docstring).  A task that raises stops the others at their next
    gate call; the first error is raised here.  A single task runs in this thread on ``gates`` itself."""
    if len(tasks) <= 1:
        return [task(gates) for task in tasks]
    condition = threading.Condition()
    lanes = [_Lane(condition, gates.rank) for _ in tasks]
    results, errors = [None] * len(tasks), [None] * len(tasks)

    def body(i: int) -> None:
        try:
            results[i] = tasks[i](lanes[i])
        except BaseException as error:  # handed to the conductor, which raises it
            errors[i] = error
        finally:
            with condition:
                lanes[i].done = True
                condition.notify_all()

    threads = [threading.Thread(target=body, args=(i,), daemon=True, name=f"lockstep-{i}") for i in range(len(tasks))]
    for thread in threads:
        thread.start()
    try:
        _conduct(gates, lanes, errors, condition)
    finally:  # (the conductor's own call may have failed: the other party lost, say) no task waits on it now or later
        with condition:
            for lane in lanes:
                lane.stopped = True
                if not lane.done and lane.call is not None:
                    lane.call, lane.answer = None, LockstepCancelled("the conductor stopped")
            condition.notify_all()
    for thread in threads:
        thread.join()
    failed = next((error for error in errors if error is not None and not isinstance(error, LockstepCancelled)),
                  None)
    if failed is not None:
        raise failed
    return results


def _conduct(gates, lanes, errors, condition) -> None:
    """The conductor's loop: wait until every running task waits on a call, make that step's calls (:func:`_step`),
    hand the answers out; after a task's error, answer every call with LockstepCancelled until all are done."""
    while True:
        with condition:
            condition.wait_for(lambda: all(lane.done or lane.call is not None for lane in lanes))
            waiting = [lane for lane in lanes if not lane.done]
            if not waiting:
                break
            if any(error is not None for error in errors):  # every other task stopped at its next call
                for lane in waiting:
                    lane.call, lane.answer = None, LockstepCancelled("a task run beside this one failed")
                condition.notify_all()
                continue
            calls = [(lane, lane.call) for lane in waiting]
        answers = _step(gates, calls)
        with condition:
            for lane, _ in calls:
                if id(lane) in answers:
                    lane.call, lane.answer = None, answers[id(lane)]
            condition.notify_all()


def _step(gates, calls) -> dict:
    """id(lane) -> its answer, for the calls of one step (lane, (kind, args)), in task order: the reservations
    alone if any task asks for one (the others' gates wait for the next step, so that a reservation costs no
    round), else every gate call in one round (circuits.gates.Gates.batch)."""
    reserving = [(lane, args) for lane, (kind, args) in calls if kind == "reserve"]
    for _, args in reserving:
        gates.reserve(*args)
    if reserving:
        return {id(lane): None for lane, _ in reserving}
    return {id(lane): output for (lane, _), output in zip(calls, gates.batch([call for _, call in calls]))}
