"""Who a job's release is charged to (protocols.mpc.accounting), and the jobs whose accounting the parties
refuse as a coordinator sent them: every refusal here is a way to a release charged to no one, or to someone
else."""
import pytest

from mpc_auc.protocols.dp.central_law import CentralNoise
from mpc_auc.protocols.inputs.submission import Accepts, Admitted, Declaration, Roster
from mpc_auc.protocols.mpc import accounting
from mpc_auc.protocols.mpc.ranking_job import Job
from mpc_auc.protocols.runtime.identity import Identity, client_role

MEMBERS = tuple(Identity(client_role(n)).public for n in ("a", "b", "ghost"))


def _job(direct=True, **fields):
    evaluation = Declaration("e", Roster(MEMBERS), direct=direct, deadline_s=60.0 if direct else None)
    return Job(evaluation, "radix", False, **fields)


@pytest.mark.parametrize("fields, direct, why", [
    ({"rows": (3, 4)}, True, "the parties' to find"),
    ({"owners": ("a",)}, True, "the parties' to find"),
    ({"central": CentralNoise(1.0)}, False, "must announce its row counts"),
    ({"datasets": (accounting.KEY_ACCOUNT + MEMBERS[0].key_sha256,)}, True, "not the ledger account"),
    ({"datasets": ("owner:a",)}, False, "not the ledger account"),
    ({"datasets": ("roster-keys-sha256:00",)}, False, "not the ledger account"),
])
def test_a_coordinator_cannot_steer_a_charge_off_the_people_whose_rows_it_uses(fields, direct, why):
    assert why in accounting.job_refusal(_job(direct, **fields))


def test_a_direct_release_is_charged_to_each_participant_by_key_and_the_sets_once():
    job = _job(central=CentralNoise(1.0), datasets=("declared:x", "declared:x"))
    assert accounting.job_refusal(job) == ""
    admitted = [Admitted(m.role[7:], 10, "", None, m, Accepts()) for m in MEMBERS[:2]]  # the ghost stays silent
    charge = accounting.charge(job, 20, admitted)
    assert [a for a, _ in charge.owners] == [accounting.key_account(m) for m in MEMBERS[:2]]
    assert charge.sets == (f"roster-keys-sha256:{job.evaluation.roster.key_set_digest}", "declared:x")
    renamed = Roster((Identity(client_role("z")).public,) + MEMBERS[1:])
    assert renamed.key_set_digest != job.evaluation.roster.key_set_digest  # another key: another set
    assert Roster(MEMBERS[::-1]).key_set_digest == job.evaluation.roster.key_set_digest  # order does not matter
