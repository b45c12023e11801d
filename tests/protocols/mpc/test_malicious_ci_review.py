"""The review of DeLong's interval under security with abort (protocols.mpc.malicious, circuits.auth_auc): what the
parties open beyond the semi-honest job.

The semi-honest job opens one bit (each class has two rows) and, only then, floor(Var 2^54).  (1) The review found
the mode releasing Q10 and Q01 with W and n1 whatever the classes' sizes: with one positive, Q01 = 4 b + t beside
2U = 2 b + t gave the number t of negatives tied with it (b: those strictly below), which the AUC alone does not.
Now the sums have their own release, made only when each class has two rows: for such sets the parties open
nothing beyond W and n1.  (2) With both classes of three rows or more the two sums split the variance into each
class's spread of placement values, one integer more than the variance gives (documented, stated in the ticket):
two sets of six rows with the same AUC, count of positives and semi-honest variance integer are told apart.  Each
test runs both modes on the real jobs; the malicious parties' opened sums are read from malicious._variance's
arguments (:func:`_recording_jobs`)."""
import numpy as np

from mpc_auc.protocols.inputs.encoding import ScoreEncoder
from mpc_auc.protocols.mpc.exact import mpc_exact_auc
from mpc_auc.protocols.mpc.ranking_job import run_ranking_jobs, simulated
from mpc_auc.protocols.refused import Refused
from mpc_auc.protocols.release_spec import ReleaseSpec
from mpc_auc.protocols.runtime.session import LOCAL

CI = ReleaseSpec("auc,ci")
MALICIOUS_CI = ReleaseSpec("auc,ci", security="malicious")


def _recording_jobs(ctx, fraction_bits: int):
    """The parties' job loop with malicious.compute's results also holding the four integers the release opened
    to the parties (W's AUC numerator 2U, n1, Q10, Q01), as malicious._variance is given them."""
    from mpc_auc.protocols.mpc import malicious, ranking_party

    seen = []

    def variance(twice_u, p, n, q10, q01, computed=malicious._variance):
        seen.append((twice_u, p, q10, q01))
        return computed(twice_u, p, n, q10, q01)

    def compute(*args, computed=malicious.compute):
        seen.clear()
        out = computed(*args)
        out["review_opened"] = list(seen)
        return out

    malicious._variance, malicious.compute = variance, compute
    return ranking_party.serve_jobs(ctx, fraction_bits)


def _opened_sums(sets) -> list:
    """(2U, n1, Q10, Q01) P0 opened in each set's malicious job (one session); None where _variance was not called."""
    requests = [simulated(c, ScoreEncoder(), spec=MALICIOUS_CI) for c in sets]
    runs = run_ranking_jobs(requests, "radix", False, None, LOCAL, 120.0, None, party=_recording_jobs)
    return [(run.outs[0]["review_opened"] or [None])[0] for run in runs]


def _one_client(scores, labels) -> list:
    return [("c0", np.asarray(scores, dtype=float), np.asarray(labels))]


def _both_modes(sets) -> list:
    return list(zip(mpc_exact_auc(sets, ScoreEncoder(), MALICIOUS_CI, timeout_s=120),
                    mpc_exact_auc(sets, ScoreEncoder(), CI, timeout_s=120)))


def test_with_one_positive_no_sums_are_opened_and_nothing_tells_ties_from_a_strict_order():
    between = _one_client([0.2, 0.5, 0.8], [0, 1, 0])  # one negative below the positive, one above: b = 1, t = 0
    tied = _one_client([0.5, 0.5, 0.5], [0, 1, 0])  # both negatives tied with it: b = 0, t = 2
    results = _both_modes([between, tied])
    for mine, theirs in results:  # what each mode releases: AUC 1/2 and the refusal, the same for both sets
        assert mine.auc == theirs.auc == 0.5
        assert isinstance(mine.metrics["ci"], Refused) and isinstance(theirs.metrics["ci"], Refused)
    assert results[0][1].metrics == results[1][1].metrics  # the semi-honest job: nothing tells them apart
    assert results[0][0].metrics == results[1][0].metrics  # nor the mode's
    assert _opened_sums([between, tied]) == [None, None]  # the sums were not released (they gave t, the ties)


def test_with_three_rows_a_class_the_opened_sums_split_the_variance_the_semi_honest_job_opens_whole():
    scores = np.arange(6) / 10  # no ties: A = 2 x negatives below each positive, B = 2 x positives above each negative
    first, second = _one_client(scores, [0, 0, 1, 1, 0, 1]), _one_client(scores, [0, 1, 0, 0, 1, 1])
    (mine_a, theirs_a), (mine_b, theirs_b) = _both_modes([first, second])
    assert mine_a.auc == mine_b.auc == theirs_a.auc  # 7/9
    assert mine_a.metrics == theirs_a.metrics == mine_b.metrics == theirs_b.metrics  # the same variance integer
    opened = _opened_sums([first, second])
    assert opened == [(14, 3, 68, 76), (14, 3, 76, 68)]  # the parties tell the two sets apart
