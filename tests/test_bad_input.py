"""RankSVM rejects bad input with a ValueError that names the problem (issue #3, part 6)."""

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from ssvm import RankSVM
from ssvm._queries import queries_from_group, queries_from_qid
from ssvm.exceptions import DegenerateQueriesWarning


@pytest.fixture
def data():
    rng = np.random.RandomState(0)
    X = rng.randn(40, 3)
    y = (X[:, 0] + 0.3 * rng.randn(40) > 0).astype(int)
    return X, y


def fast(**params):
    return RankSVM(**{"max_iter": 50, "tol": 1e-2, **params})


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("sparse", [False, True])
def test_non_finite_X(data, bad, sparse):
    X, y = data
    X = X.copy()
    X[3, 1] = bad
    if sparse:
        X = sp.csr_matrix(X)
    with pytest.raises(ValueError, match="Input X contains (NaN|infinity)"):
        fast().fit(X, y)


def test_non_finite_X_at_predict(data):
    X, y = data
    clf = fast().fit(X, y)
    X = X.copy()
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clf.decision_function(X)


def test_non_finite_relevance(data):
    X, y = data
    rel = y.astype(float)
    rel[2] = np.nan
    with pytest.raises(ValueError, match="y contains NaN"):
        fast().fit(X, rel, qid=np.repeat(np.arange(4), 10))


def test_one_class(data):
    X, _ = data
    # the label is shown as the user wrote it, not as numpy's repr (np.float64(1.0))
    with pytest.raises(ValueError, match=r"only one class: 1\.0\.$"):
        fast().fit(X, np.ones(X.shape[0]))
    with pytest.raises(ValueError, match=r"only one class: 'spam'\.$"):
        fast().fit(X, np.array(["spam"] * X.shape[0], dtype=object))


@pytest.mark.parametrize("dtype", ["U", object])
def test_string_relevance_with_qid(data, dtype):
    X, y = data
    labels = np.where(y == 1, "relevant", "other").astype(dtype)
    with pytest.raises(ValueError, match=r"y must hold numeric relevance grades .*Encode"):
        fast().fit(X, labels, qid=np.repeat(np.arange(4), 10))
    clf = fast().fit(X, y, qid=np.repeat(np.arange(4), 10))
    with pytest.raises(ValueError, match="y_true must hold numeric relevance grades"):
        clf.score(X, labels, qid=np.repeat(np.arange(4), 10))


def test_numeric_relevance_held_as_objects_is_accepted(data):
    X, y = data
    qid = np.repeat(np.arange(4), 10)
    a = fast().fit(X, y.astype(object), qid=qid)
    b = fast().fit(X, y, qid=qid)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_k_with_a_loss_that_has_no_cut_off_warns(data):
    X, y = data
    with pytest.warns(UserWarning, match=r"k=5 is ignored: only loss='precision_at_k'"):
        fast(loss="ap", k=5).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning where k is used, or left unset
        fast(loss="precision_at_k", k=5).fit(X, y)
        fast(loss="ap").fit(X, y)


def test_unknown_solver_params_key_lists_the_accepted_ones(data):
    X, y = data
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['batch_size'\] for "
                       r"solver='cutting_plane'; it accepts \['qp', 'capacity', 'prune_after', "
                       r"'ocas', 'line_search', 'mu'\]"):
        fast(solver_params={"batch_size": 3}).fit(X, y)
    with pytest.raises(ValueError, match=r"for solver='pegasos'; it accepts \['batch_size', "
                       r"'check_every'\]"):
        fast(solver="pegasos", solver_params={"qp": "cvxpy"}).fit(X, y)


def test_continuous_labels_without_qid(data):
    X, _ = data
    with pytest.raises(ValueError, match="Unknown label type"):
        fast().fit(X, np.linspace(0, 1, X.shape[0]))


def test_query_without_positive_is_skipped_with_warning(data):
    X, y = data
    qid = np.repeat(np.arange(4), 10)
    y = y.copy()
    y[qid == 2] = 0  # query 2 has no relevant row
    with pytest.warns(DegenerateQueriesWarning, match="Skipping queries that cannot be ranked"):
        clf = fast().fit(X, y, qid=qid)
    assert (clf.n_queries_, clf.n_skipped_queries_) == (3, 1)
    # the skipped query does not change the model: fitting without it gives the same weights
    keep = qid != 2
    ref = fast().fit(X[keep], y[keep], qid=qid[keep])
    np.testing.assert_allclose(clf.coef_, ref.coef_, rtol=1e-10, atol=1e-12)


def test_query_without_negative_is_skipped_with_warning(data):
    X, y = data
    qid = np.repeat(np.arange(4), 10)
    y = y.copy()
    y[qid == 1] = 3
    with pytest.warns(DegenerateQueriesWarning, match="without a non-relevant row"):
        clf = fast().fit(X, y, qid=qid)
    assert (clf.n_queries_, clf.n_skipped_queries_) == (3, 1)


def test_skip_warning_is_said_once_unless_always_is_asked_for(data):
    X, y = data
    qid = np.repeat(np.arange(4), 10)
    y = y.copy()
    y[qid == 2] = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DegenerateQueriesWarning)
        for _ in range(3):
            fast().fit(X, y, qid=qid)
    assert sum(w.category is DegenerateQueriesWarning for w in caught) == 3
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for _ in range(3):
            with warnings.catch_warnings():  # as scikit-learn wraps every fit of a search
                fast().fit(X, y, qid=qid)
    assert sum(w.category is DegenerateQueriesWarning for w in caught) <= 1


def test_all_queries_degenerate(data):
    X, _ = data
    qid = np.repeat(np.arange(4), 10)
    y = np.where(qid % 2 == 0, 1, 0)  # each query is all-relevant or all-irrelevant
    with pytest.raises(ValueError, match="All 4 queries are degenerate"):
        fast().fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="degenerate"):
        fast().fit(X, y, group=[10, 10, 10, 10])


@pytest.mark.parametrize("length", [39, 41])
def test_qid_wrong_length(data, length):
    X, y = data
    with pytest.raises(ValueError, match=f"qid has {length} entries but X has 40 rows"):
        fast().fit(X, y, qid=np.zeros(length))


def test_qid_not_1d(data):
    X, y = data
    with pytest.raises(ValueError, match="qid must be 1-D"):
        fast().fit(X, y, qid=np.zeros((40, 2)))


def test_qid_nan(data):
    X, y = data
    qid = np.zeros(40)
    qid[5] = np.nan
    with pytest.raises(ValueError, match="qid contains NaN"):
        fast().fit(X, y, qid=qid)


def test_qid_wrong_length_at_score(data):
    X, y = data
    clf = fast().fit(X, y)
    with pytest.raises(ValueError, match="qid has 39 entries"):
        clf.score(X, y, qid=np.zeros(39))


def test_both_qid_and_group(data):
    X, y = data
    with pytest.raises(ValueError, match="either qid .* or group .*not both"):
        fast().fit(X, y, qid=np.zeros(40), group=[40])


@pytest.mark.parametrize(
    "group, message",
    [
        ([10, 10, 10], "group sizes sum to 30 but X has 40 rows"),
        ([20, 20, 5], "group sizes sum to 45 but X has 40 rows"),
        ([20, 0, 20], "group sizes must be positive"),
        ([25, -5, 20], "group sizes must be positive"),
        ([20.5, 19.5], "group sizes must be integers"),
        (["a", "b"], "group sizes must be integers"),
        ([], "non-empty 1-D"),
        ([[20, 20]], "non-empty 1-D"),
    ],
)
def test_bad_group(data, group, message):
    X, y = data
    with pytest.raises(ValueError, match=re.escape(message)):
        fast().fit(X, y, group=group)


@pytest.mark.parametrize(
    "param, value, name",
    [
        ("loss", "hinge", "loss"),
        ("oracle", "fastest", "oracle"),
        ("solver", "sgd", "solver"),
        ("C", 0.0, "C"),
        ("C", -1.0, "C"),
        ("k", 0, "k"),
        ("max_iter", 0, "max_iter"),
        ("tol", -1e-3, "tol"),
    ],
)
def test_bad_parameter(data, param, value, name):
    X, y = data
    with pytest.raises(ValueError, match=f"The '{name}' parameter of RankSVM must be"):
        fast(**{param: value}).fit(X, y)


@pytest.mark.parametrize(
    "loss, oracle", [("zero_one", "qs"), ("ndcg", "yue"), ("ap", "chakrabarti"),
                     ("precision_at_k", "search")]
)
def test_oracle_not_supporting_loss(data, loss, oracle):
    X, y = data
    with pytest.raises(ValueError, match=f"oracle='{oracle}' does not support loss='{loss}'"):
        fast(loss=loss, oracle=oracle).fit(X, y)


def test_wrong_number_of_features_at_predict(data):
    X, y = data
    clf = fast().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :2])


def test_y_wrong_length(data):
    X, y = data
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        fast().fit(X, y[:-1])
    clf = fast().fit(X, y)
    with pytest.raises(ValueError, match="y must be 1-D with one label per row"):
        clf.score(X, y[:-1])


@pytest.mark.parametrize("key", ["tol", "max_iter", "w0", "random_state", "planes"])
def test_solver_params_cannot_override_estimator_parameters(data, key):
    X, y = data
    with pytest.raises(ValueError, match=f"solver_params must not set \\['{key}'\\]"):
        fast(solver_params={key: 1}).fit(X, y)


def test_warm_start_shape_change(data):
    X, y = data
    clf = fast(warm_start=True).fit(X, y)
    with pytest.raises(ValueError, match="warm_start=True needs the previous fit"):
        clf.fit(X[:, :2], y)


def test_query_helpers_directly():
    # the helpers keep first-appearance order and ascending rows within a query
    queries = queries_from_qid(np.array([7, 3, 7, 3, 9]), 5)
    assert [q.tolist() for q in queries] == [[0, 2], [1, 3], [4]]
    queries = queries_from_qid(np.array(["b", "a", "b"]), 3)
    assert [q.tolist() for q in queries] == [[0, 2], [1]]
    assert [q.tolist() for q in queries_from_group([2, 1, 3], 6)] == [[0, 1], [2], [3, 4, 5]]
