"""ssvm.metrics: per-query AP / NDCG / precision@k against slow twins and scikit-learn."""

import doctest
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import config_context
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import average_precision_score, make_scorer, ndcg_score
from sklearn.model_selection import GridSearchCV, GroupKFold

import ssvm.losses.graded
from ssvm import RankSVM
from ssvm.exceptions import DegenerateQueriesWarning
from ssvm.losses import NDCGLoss
from ssvm.metrics import (
    mean_average_precision,
    mean_ndcg,
    ndcg_at_k,
    query_scores,
    ranking_score,
)


# ------------------------------------------------------------------ slow, obviously-right twins
def ranked(grades, scores):
    """Grades in rank order: by decreasing score, ties by row order (a plain Python sort)."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return [grades[i] for i in order]


def slow_ap(relevant, scores):
    hits, total = 0, 0.0
    for position, r in enumerate(ranked(list(relevant), list(scores)), start=1):
        if r:
            hits += 1
            total += hits / position
    return total / hits


def slow_ndcg(gains, scores, k=None):
    gains = list(gains)
    k = len(gains) if k is None else min(k, len(gains))
    dcg = sum(g / np.log2(1 + i) for i, g in enumerate(ranked(gains, list(scores))[:k], start=1))
    ideal = sum(g / np.log2(1 + i) for i, g in enumerate(sorted(gains, reverse=True)[:k], start=1))
    return dcg / ideal


def slow_mean(per_query, grades, scores, qid, counts):
    """Mean of ``per_query`` over the query ids (any row order) whose grades ``counts``."""
    values = []
    for q in dict.fromkeys(qid):  # first appearance
        rows = [i for i in range(len(qid)) if qid[i] == q]
        g, s = [grades[i] for i in rows], [scores[i] for i in rows]
        if counts(g):
            values.append(per_query(g, s))
    return np.mean(values) if values else np.nan


def both_classes(g):
    return 0 < sum(x > 0 for x in g) < len(g)


def several_grades(g):
    return min(g) < max(g)


@st.composite
def queries(draw, max_grade=1):
    n = draw(st.integers(1, 30))
    grades = draw(st.lists(st.integers(0, max_grade), min_size=n, max_size=n))
    scores = draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))  # many ties
    qid = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    scale = draw(st.sampled_from([1e-300, 1e-9, 1.0, 1e9, 1e300]))
    return np.array(grades), np.array(scores, dtype=np.float64) * scale, np.array(qid)


def compare(actual, expected):
    if np.isnan(expected):
        assert np.isnan(actual)
    else:
        assert actual == pytest.approx(expected, rel=1e-12, abs=1e-12)


# ------------------------------------------------------------------ against the twins
@settings(max_examples=300, deadline=None)
@given(queries(max_grade=3))
def test_mean_ap_and_binary_ndcg_match_the_slow_twins(data):
    grades, scores, qid = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        compare(mean_average_precision(grades, scores, qid=qid),
                slow_mean(lambda g, s: slow_ap([x > 0 for x in g], s), grades, scores, qid,
                          both_classes))
        compare(mean_ndcg(grades, scores, qid=qid, gain="binary"),
                slow_mean(lambda g, s: slow_ndcg([float(x > 0) for x in g], s), grades, scores,
                          qid, both_classes))


@settings(max_examples=300, deadline=None)
@given(queries(max_grade=4), st.sampled_from([None, 1, 3, 10]))
def test_graded_ndcg_matches_the_slow_twin(data, k):
    grades, scores, qid = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        for gains, gain in [("linear", float), ("exponential", lambda x: 2.0 ** x - 1.0),
                            ("binary", lambda x: float(x > 0))]:
            counts = both_classes if gains == "binary" else several_grades
            expected = slow_mean(lambda g, s, gain=gain: slow_ndcg([gain(x) for x in g], s, k),
                                 grades, scores, qid, counts)
            compare(mean_ndcg(grades, scores, qid=qid, gain=gains, k=k), expected)
            if k is not None:
                compare(ndcg_at_k(grades, scores, qid=qid, gain=gains, k=k), expected)


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 40), st.integers(0, 10_000), st.sampled_from([1e-9, 1.0, 1e9]))
def test_without_ties_scikit_learn_agrees(n, seed, scale):
    rng = np.random.default_rng(seed)
    scores = rng.permutation(n).astype(float) * scale
    grades = rng.integers(0, 4, size=n)
    grades[0], grades[1] = 2, 0  # both classes, several grades
    assert mean_average_precision(grades, scores) == pytest.approx(
        average_precision_score(grades > 0, scores), abs=1e-12)
    assert mean_ndcg(grades, scores, gain="linear") == pytest.approx(
        ndcg_score([grades], [scores]), abs=1e-12)
    assert mean_ndcg(grades, scores, gain="linear", k=5) == pytest.approx(
        ndcg_score([grades], [scores], k=5), abs=1e-12)
    assert mean_ndcg(grades, scores, gain="binary") == pytest.approx(
        ndcg_score([grades > 0], [scores]), abs=1e-12)
    assert mean_ndcg(grades, scores) == pytest.approx(  # the default gain: 2^y − 1
        ndcg_score([2.0 ** grades - 1], [scores]), abs=1e-12)


def test_binary_ndcg_is_one_minus_the_training_loss_of_every_ndcg_object():
    rng = np.random.default_rng(3)
    y, s = rng.random(50) < 0.3, rng.normal(size=50)
    by_name = ranking_score(y, s, loss="ndcg")
    assert ranking_score(y, s, loss=NDCGLoss()) == pytest.approx(by_name, abs=1e-12)
    # the DCG formula of the graded path agrees with the QS loss object on binary gains
    assert ssvm.losses.graded.graded_ndcg_value(s, y.astype(float), "linear") == pytest.approx(by_name, abs=1e-12)


def test_zero_one_labels_give_the_binary_ndcg_bit_for_bit_with_every_gain():
    rng = np.random.default_rng(4)
    for _ in range(20):
        y, s = rng.random(60) < 0.3, np.round(rng.normal(size=60), 1)
        qid = rng.integers(0, 5, 60)
        binary = mean_ndcg(y, s, qid=qid, gain="binary")
        for gain in ("exponential", "linear"):
            assert mean_ndcg(y.astype(int), s, qid=qid, gain=gain) == binary


def test_the_former_name_gains_still_works_with_a_future_warning():
    y, s = [2, 1, 0], [0.1, 0.9, 0.5]
    with pytest.warns(FutureWarning, match="renamed gain="):
        assert mean_ndcg(y, s, gains="binary") == mean_ndcg(y, s, gain="binary")
    with pytest.warns(FutureWarning, match="renamed gain="):
        assert ranking_score(y, s, loss="ndcg", gains="linear") == mean_ndcg(y, s, gain="linear")


def test_precision_at_k_and_accuracy():
    y = np.array([1, 0, 1, 0, 0, 1])
    s = np.array([6.0, 5.0, 4.0, 3.0, 2.0, 1.0])
    assert ranking_score(y, s, loss="precision_at_k", k=3) == pytest.approx(2 / 3)
    assert ranking_score(y, s, loss="precision_at_k", k=100) == pytest.approx(0.5)  # k clipped
    assert ranking_score(y, s, loss="precision_at_k") == pytest.approx(0.5)  # k=None means 10
    # accuracy of s > 0 counts every query, also those of a single class
    qid = np.array([0, 0, 1, 1, 2, 2])
    s = np.array([1.0, -1.0, -1.0, -1.0, 1.0, 1.0])
    y = np.array([1, 0, 1, 1, 1, 1])
    assert ranking_score(y, s, qid=qid, loss="zero_one") == pytest.approx((1 + 0 + 1) / 3)


# ------------------------------------------------------------------ the convention
def test_queries_whose_ranking_cannot_change_the_measure_do_not_count():
    scores = np.array([3.0, 2.0, 1.0, 5.0, 4.0, 0.5, 0.1, 0.2, 0.3])
    grades = np.array([0, 1, 0, 2, 0, 1, 2, 0, 0])
    qid = np.array([7, 7, 7, 2, 2, 9, 9, 4, 4])  # 9: all relevant; 4: none relevant
    # query 7: the relevant row is 2nd -> AP 1/2; query 2: first -> AP 1
    assert query_scores(grades, scores, qid=qid).tolist() == [0.5, 1.0]
    assert mean_average_precision(grades, scores, qid=qid) == pytest.approx(0.75)
    # graded gains: query 9 (grades 1 and 2) now depends on the ranking; query 4 still does not
    assert query_scores(grades, scores, qid=qid, loss="ndcg", gain="linear").size == 3
    assert query_scores(grades, scores, qid=qid, loss="ndcg").size == 3  # exponential by default
    assert query_scores(grades, scores, qid=qid, loss="ndcg", gain="binary").size == 2


def test_no_query_counts_gives_nan_with_a_warning():
    for y in ([1, 1, 1], [0, 0, 0]):
        with pytest.warns(UndefinedMetricWarning, match="no query has both a relevant and a "
                          "non-relevant row"):
            assert np.isnan(mean_average_precision(y, [1.0, 2.0, 3.0]))
    with pytest.warns(UndefinedMetricWarning):
        assert np.isnan(mean_ndcg([2, 2], [1.0, 2.0], gain="exponential"))


@pytest.mark.parametrize("call, message", [
    (lambda: mean_average_precision([1, 0], [1.0]), "y_true has 2 rows, y_score 1"),
    (lambda: ndcg_at_k([1, 0, 1], [1.0, 2.0]), "y_true has 3 rows, y_score 2"),
    (lambda: mean_average_precision([[1, 0]], [1.0, 2.0]), "y_true must be 1-D"),
    (lambda: mean_average_precision([1, 0], [1.0, np.nan]), "NaN"),
    (lambda: mean_average_precision([1, 0], [[1.0, 2.0]]), "1-D"),
    (lambda: mean_average_precision(["a", "b"], [1.0, 2.0]), "numeric relevance grades"),
    (lambda: mean_average_precision([1, 0], [1.0, 2.0], qid=[1]), "qid"),
    (lambda: ranking_score([1, 0], [1.0, 2.0], loss="ap", gain="linear"), "NDCG only"),
    (lambda: ranking_score([1, 0], [1.0, 2.0], loss="ap", k=3), "does not use it"),
    (lambda: mean_ndcg([1, 0], [1.0, 2.0], gain="log"), "gain must be one of"),
    (lambda: mean_ndcg([2, -1], [1.0, 2.0], gain="linear"), "1 of 2 rows with negative relevance grades"),
    (lambda: mean_ndcg([2, 0.5], [1.0, 2.0]), "1 of 2 rows with non-integer relevance grades"),
    (lambda: ndcg_at_k([2, -1], [1.0, 2.0]), "non-negative"),
    (lambda: mean_ndcg([1, 0], [1.0, 2.0], k=0), "k must be an integer"),
    (lambda: ranking_score([1, 0], [1.0, 2.0], loss="hinge"), "unknown loss"),
])
def test_bad_input_raises_a_clear_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ------------------------------------------------------------------ users of the module
def test_graded_ndcg_scorer_recipe_with_metadata_routing():
    """make_scorer(mean_ndcg, gain=...) + set_score_request(qid=True) scores each fold per query."""
    rng = np.random.RandomState(0)
    X = rng.randn(180, 5)
    grades = np.digitize(X @ rng.randn(5) + 0.7 * rng.randn(180), [0.3, 1.2])
    qid = np.repeat(np.arange(12), 15)
    cv = GroupKFold(n_splits=3)
    with config_context(enable_metadata_routing=True):
        scorer = make_scorer(mean_ndcg, response_method="decision_function", gain="exponential")
        search = GridSearchCV(RankSVM(loss="ndcg", tol=1e-2), {"C": [0.1, 10.0]}, cv=cv,
                              scoring=scorer.set_score_request(qid=True))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateQueriesWarning)
            search.fit(X, grades, qid=qid, groups=qid)
    train, test = next(cv.split(X, grades, groups=qid))
    model = RankSVM(loss="ndcg", C=0.1, tol=1e-2).fit(X[train], grades[train], qid=qid[train])
    expected = mean_ndcg(grades[test], model.decision_function(X[test]), qid=qid[test],
                         gain="exponential")
    assert search.cv_results_["split0_test_score"][0] == pytest.approx(expected, abs=1e-12)
    # RankSVM.score offers the same graded measure
    assert model.score(X[test], grades[test], qid=qid[test], gain="exponential") == expected
    assert model.score(X[test], grades[test], qid=qid[test]) == expected  # the gain it was trained with
    with pytest.raises(ValueError, match="NDCG only"):
        RankSVM(loss="ap", tol=1e-2).fit(X, grades, qid=qid).score(X, grades, qid=qid,
                                                                   gain="linear")


def test_docstring_examples_run():
    import ssvm.estimators

    for module in (ssvm.metrics, ssvm.estimators):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.attempted > 0 and result.failed == 0, module.__name__
