"""The API's results are numbers (issue 40): every scalar result goes where scikit-learn's float goes (float,
comparison, format, round, numpy, pickle, copy, ``cross_val_score(make_scorer(...))``), the curves unpack as
scikit-learn's and DeLong's test as scipy's; scikit-learn's input conventions (one-column scores, empty input)
and messages in Python's words."""
import copy
import json
import math
import pickle
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import sklearn.metrics as skm
from scipy.stats import norm
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import mpc_auc
from mpc_auc.evaluations import EvaluationResult
from mpc_auc.keywords import python_words
from mpc_auc.protocols.inputs.submission import Accepts, ReleaseTerms
from mpc_auc.protocols.inputs.submitter import JobRefused, Policy, _accept_terms

Y = np.array([0, 0, 1, 1, 0, 1, 0, 1])
S = np.array([0.1, 0.4, 0.35, 0.8, 0.2, 0.9, 0.55, 0.3])
OTHER = np.array([0.3, 0.2, 0.6, 0.7, 0.1, 0.5, 0.45, 0.65])
SCALARS = {  # every public function whose result is one number, in the clear (the MPC adds nothing to these checks)
    "roc_auc_score": lambda: mpc_auc.roc_auc_score(Y, S, protocol="clear"),
    "roc_auc_score ovr": lambda: mpc_auc.roc_auc_score([0, 1, 2, 2, 1, 0, 2, 1], np.eye(8, 3)[[0, 1, 2, 2, 1, 0, 2, 1]],
                                                       multi_class="ovr", protocol="clear"),
    "average_precision_score": lambda: mpc_auc.average_precision_score(Y, S, protocol="clear"),
    "evaluate": lambda: mpc_auc.evaluate(Y, S, metrics="auc,ap,ks", protocol="clear"),
    "delong_test": lambda: mpc_auc.delong_test(Y, S, OTHER, protocol="clear"),
    "EvaluationResult": lambda: EvaluationResult({"auc": 0.8125}, "mpc-exact", 8, 2, missing=("c",)),
    "u_statistic": lambda: mpc_auc.u_statistic(S, kernel="gini", epsilon=2.0, seed=3),  # 2PC: a few seconds
}


def _same_attributes(a, b) -> bool:
    """The two results hold the same attributes (arrays compared by value)."""
    return vars(a).keys() == vars(b).keys() and all(repr(vars(a)[k]) == repr(vars(b)[k]) for k in vars(a))


def _assert_a_number(result):
    """``result`` behaves as scikit-learn's float of the same value."""
    number = float(result)
    assert type(number) is float and math.isfinite(number)
    assert result == number and result > number - 1 and result <= number and not result < number
    assert f"{result:.3f}" == f"{number:.3f}" and str(result) == str(number) and json.dumps(result) == str(number)
    assert round(result, 3) == round(number, 3) and type(result + 1) is float and -result == -number
    assert np.mean([result, result]) == number and np.array([result]).dtype == np.float64
    assert pd.Series([result]).dtype == np.float64 and hash(result) == hash(number)
    for twin in (pickle.loads(pickle.dumps(result)), copy.copy(result), copy.deepcopy(result)):
        assert type(twin) is type(result) and twin == result and _same_attributes(twin, result)
    with pytest.raises(AttributeError):
        result.wall_s = -1.0  # frozen, as before


@pytest.mark.parametrize("name", SCALARS)
def test_every_scalar_result_is_a_number_with_its_attributes(name):
    result = SCALARS[name]()
    _assert_a_number(result)
    assert result.value == float(result) or isinstance(result, mpc_auc.Report)  # a report's value: its metrics
    assert getattr(result, "protocol", "clear") in ("clear", "mpc-exact") and getattr(result, "m", 8) == 8


def test_the_real_path_gives_numbers_too():
    """mpc-exact (the roles run here): the AUC, its interval and the alias ``auc``."""
    result = mpc_auc.roc_auc_score(Y, S, clients=list("abababab"))
    _assert_a_number(result)
    assert result.auc == result.value == pytest.approx(skm.roc_auc_score(Y, S), abs=1e-12)
    assert result.ci[0] < result < result.ci[1] and result.clients == 2


def test_a_report_is_its_auc_and_keeps_its_metrics():
    report = mpc_auc.evaluate(Y, S, metrics="auc,ap", protocol="clear")
    assert report.auc == float(report) == report["auc"] == pytest.approx(skm.roc_auc_score(Y, S))
    assert report.value["ap"] == pytest.approx(skm.average_precision_score(Y, S))
    assert math.isnan(mpc_auc.Report({"auc": None}, "clear", 8, 1))  # no AUC released: NaN


def _cross_validated(scoring):
    X, y = load_breast_cancer(return_X_y=True)
    rows = np.r_[0:45, 300:345]  # 90 rows of both classes
    model = make_pipeline(StandardScaler(), LogisticRegression(C=0.05))
    return cross_val_score(model, X[rows][:, [1, 4]], y[rows], scoring=scoring, cv=3)  # texture, smoothness: AUC < 1


@pytest.mark.parametrize("protocol", ["clear", "mpc-exact"])
def test_cross_val_score_with_make_scorer_gives_scikit_learns_scores(protocol):
    scorer = skm.make_scorer(mpc_auc.roc_auc_score, response_method="predict_proba", protocol=protocol)
    found, expected = _cross_validated(scorer), _cross_validated("roc_auc")
    print(f"{protocol}: {found} against scikit-learn's {expected}")
    assert not np.isnan(found).any() and np.allclose(found, expected, rtol=0, atol=1e-12)


def test_cross_val_score_with_average_precision():
    scorer = skm.make_scorer(mpc_auc.average_precision_score, response_method="predict_proba", protocol="clear")
    assert np.allclose(_cross_validated(scorer), _cross_validated("average_precision"), rtol=0, atol=1e-9)


def test_the_curves_unpack_as_scikit_learns_at_every_cut():
    """No ties and one cut per row: every point is scikit-learn's, in its order and with its ends (ROC from (0, 0),
    PR to (1, 0)); the thresholds themselves stay secret (NaN; the ROC's start inf, as scikit-learn's)."""
    m = len(S)
    fpr, tpr, thresholds = roc = mpc_auc.roc_curve(Y, S, points=m, protocol="clear")
    sk_fpr, sk_tpr, _ = skm.roc_curve(Y, S, drop_intermediate=False)
    assert np.allclose(fpr, sk_fpr) and np.allclose(tpr, sk_tpr) and thresholds[0] == np.inf == _[0]
    assert np.isnan(thresholds[1:]).all() and skm.auc(fpr, tpr) == pytest.approx(skm.roc_auc_score(Y, S))
    assert roc.flagged.tolist() == list(range(m + 1)) and (roc.fpr is fpr) and len(roc) == 3
    precision, recall, thresholds = pr = mpc_auc.precision_recall_curve(Y, S, points=m, protocol="clear")
    sk_precision, sk_recall, sk_thresholds = skm.precision_recall_curve(Y, S, drop_intermediate=False)
    assert np.allclose(precision, sk_precision) and np.allclose(recall, sk_recall)
    assert len(thresholds) == len(sk_thresholds) and np.isnan(thresholds).all()
    assert pr.recall is recall and pr.value == tuple(pr) and pr.flagged.tolist() == [*range(m, 0, -1), 0]
    twin = pickle.loads(pickle.dumps(roc))
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(twin, roc)) and _same_attributes(twin, roc)
    with pytest.raises(AttributeError):
        roc.protocol = "forged"
    with pytest.raises(AttributeError, match="precision"):
        roc.precision  # an ROC curve has no precision  # noqa: B018


def test_delong_test_unpacks_as_scipys_test_results():
    test = mpc_auc.delong_test(Y, S, OTHER, protocol="clear")
    statistic, pvalue = test
    assert (statistic, pvalue) == (test.statistic, test.pvalue) and pvalue == pytest.approx(2 * norm.sf(abs(statistic)))
    assert test == test.aucs[0] - test.aucs[1] and test.aucs[0] == pytest.approx(skm.roc_auc_score(Y, S))


def test_one_column_scores_are_taken_as_scikit_learn_takes_them():
    column = S[:, None]
    for found, expected in [(mpc_auc.roc_auc_score(Y, pd.DataFrame(column), protocol="clear"),
                             skm.roc_auc_score(Y, pd.DataFrame(column))),
                            (mpc_auc.roc_auc_score(Y[:, None], column, protocol="clear"), skm.roc_auc_score(Y, column)),
                            (mpc_auc.average_precision_score(Y, column, protocol="clear"),
                             skm.average_precision_score(Y, column))]:
        assert found == pytest.approx(expected, abs=1e-12)
    with pytest.raises(mpc_auc.InputError, match="one column per class"):
        mpc_auc.roc_auc_score(Y, np.c_[1 - S, S], protocol="clear")  # two columns: still scikit-learn's refusal


@pytest.mark.parametrize("call", [mpc_auc.roc_auc_score, mpc_auc.average_precision_score, mpc_auc.roc_curve])
def test_empty_input_is_a_value_error_naming_it(call):
    with pytest.raises(ValueError, match="y_true is empty"):
        call([], [], protocol="clear")


def test_messages_in_python_name_keywords_not_command_line_options(tmp_path):
    with pytest.raises(mpc_auc.InputError, match=r"score_range=\(LO, HI\)") as raised:
        mpc_auc.roc_auc_score(Y, S * 4 - 2, protocol="clear")  # logits in a [0, 1] range
    messages = [str(raised.value)]
    path = tmp_path / "site.csv"
    path.write_text("site,p,y\nnorth,0.2,0\nsouth,0.7,1\n")
    for options, words in [({}, "client_col="), ({"client_col": "site", "score_col": "p", "label_col": "y",
                                                  "limits": {"max_rows": 1}}, r"limits=ReadLimits\(max_rows=N\)")]:
        with pytest.raises(mpc_auc.InputError, match=words) as raised:
            mpc_auc.read_predictions(path, **options)
        messages.append(str(raised.value))
    assert not [m for m in messages if "--" in m], messages


@pytest.mark.parametrize("max_epsilon", [None, 1.0])
def test_a_clients_refusal_of_an_exact_job_names_its_client_terms(max_epsilon):
    """mpc_auc.submit's terms are ClientTerms: the submitter's refusal (client submit's words) names them."""
    ticket = SimpleNamespace(terms=ReleaseTerms("mpc-exact"), roster_size=2)
    with pytest.raises(JobRefused, match="ClientTerms") as raised, python_words():
        _accept_terms(ticket, [], Policy(max_epsilon, accepts=Accepts(max_exact=0)), None)
    assert "--" not in str(raised.value), raised.value


def test_a_client_that_requires_security_with_abort_refuses_a_semi_honest_ticket():
    """ClientTerms(require_security="malicious") (client submit --require-security): the tickets of both parties state
    the job's security; a semi-honest one is refused before anything is sent, a malicious one is not."""
    ticket = SimpleNamespace(terms=ReleaseTerms("mpc-exact"), roster_size=2)
    with pytest.raises(JobRefused, match="runs under security semi-honest and this client requires malicious "
                                         r"\(ClientTerms.require_security\)"), python_words():
        _accept_terms(ticket, [], Policy(require_security="malicious"), None)
    secured = SimpleNamespace(terms=ReleaseTerms("mpc-exact", security="malicious"), roster_size=2)
    _accept_terms(secured, [], Policy(require_security="malicious"), None)
    assert "under security with abort" in secured.terms.describe()


def test_read_predictions_reads_one_clients_file_without_a_client_column(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("score,label\n0.1,0\n0.7,1\n0.3,0\n")
    rows = mpc_auc.read_predictions(path, client_col=None)
    assert rows.columns.tolist() == ["client", "score", "label"] and rows.client.nunique() == 1
    assert mpc_auc.roc_auc_score(rows.label, rows.score, clients=rows.client, protocol="clear") == 1.0


@pytest.mark.parametrize("pos_label", [np.str_("malignant"), np.int64(7)])
def test_label_messages_show_plain_values_not_numpy_reprs(pos_label):
    labels = np.array(["benign", "cyst", "benign"]) if isinstance(pos_label, str) else np.array([3, 4, 3])
    with pytest.raises(mpc_auc.InputError, match="is not a label of y_true") as raised:
        mpc_auc.average_precision_score(labels, [0.1, 0.8, 0.3], pos_label=pos_label, protocol="clear")
    assert "np." not in str(raised.value) and repr(pos_label.item()) in str(raised.value)
