"""An organiser's sequences of evaluations on the same people (sims.security.person_ledger), decided by the compute
parties' own accounting, and by the rule before releases followed the person (the set-keyed control, which each of
these tests fails against: the attack succeeds there)."""
import pytest

from mpc_auc.sims.security.person_ledger import charge_as_parties, charge_by_set, dp_sequence, exact_sequences

RULES = {"parties": charge_as_parties, "set-keyed control": charge_by_set}


@pytest.mark.parametrize("rule", RULES)
def test_ghosts_an_extra_row_a_new_id_and_a_dropped_client_spend_from_the_same_budget(tmp_path, rule):
    """Parties at a budget of 1, epsilon 1 per release: after {c0, c1}, a silent ghost key, a ghost with two dummy
    rows, one more row of c0's, a new dataset id and c1 dropped all charge c0's key: at most 1.0 on its rows."""
    outcome = dp_sequence(str(tmp_path), RULES[rule])
    attempts = list(outcome["attempts"].values())
    if rule == "set-keyed control":  # the attack: three "sets", 3.0 epsilon on c0's rows
        assert outcome["epsilon_on_c0"] == 3.0
        return
    assert outcome["epsilon_on_c0"] == 1.0 and attempts[0] == ""
    assert all("privacy budget exceeded for client 'c0'" in why for why in attempts[1:]), attempts


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("sequence", ["cuts 100/99/98", "two max FPR in one ROC step", "re-run without a one-row client"])
def test_exact_sequences_on_the_same_clients_open_no_label(tmp_path, rule, sequence):
    """1,000 rows over two clients (each accepting 10 exact releases): curves at 100, 99, 98 cuts; two partial
    AUCs inside one ROC step; the exact AUC with and without a one-row client.  The parties admit only the
    first of each (pinned cuts, max FPR and client set); the control admits all and the organiser reads
    single labels off them, every one right (48 from the cuts)."""
    found = exact_sequences(str(tmp_path), RULES[rule])[sequence]
    if rule == "set-keyed control":
        assert found["admitted"] == found["of"] and found["labels_read"] >= 1
        assert found["right"] == found["labels_read"]
        assert sequence != "cuts 100/99/98" or found["labels_read"] == 48
        return
    assert found["admitted"] == 1 and found["labels_read"] == 0
