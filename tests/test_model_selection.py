"""RankSVMCV: the same choice and validation scores as a routed GridSearchCV, the warm path's
certified optima, its bad input, and its scikit-learn plumbing."""

import doctest
import warnings

import numpy as np
import pytest
import sklearn
from joblib import parallel_config
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.metrics import make_scorer
from sklearn.model_selection import GridSearchCV, GroupKFold, GroupShuffleSplit, KFold
from sklearn.utils.estimator_checks import parametrize_with_checks

from ssvm import RankSVM, RankSVMCV
from ssvm._cv_path import fold_path, query_labels
from ssvm._queries import informative_queries, resolve_queries
from ssvm.datasets import load_letor_sample
from ssvm.losses import get_oracle
from ssvm.metrics import mean_average_precision, mean_ndcg
from ssvm.problem import StructuredHinge
from ssvm.solvers import cutting_plane

TIGHT = 1e-5  # a tight certified gap, so that warm and cold fits land on (nearly) the same w


@pytest.fixture(scope="module")
def letor():
    X, y, qid = load_letor_sample()
    keep = np.isin(qid, np.unique(qid)[:90])  # a part of the sample keeps the tests quick
    return X[keep], y[keep], qid[keep]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_picks_what_a_routed_grid_search_picks(letor, loss):
    X, y, qid = letor
    Cs = [3.0, 0.01, 0.3, 0.1]  # unsorted on purpose: results keep the given order
    tol = TIGHT if loss == "ap" else TIGHT / 100  # graded NDCG's test scores move more within a gap
    search = RankSVMCV(Cs=Cs, cv=3, loss=loss, tol=tol).fit(X, y, qid=qid)
    # the default score is the trained measure: NDCG with the trained (exponential) gain
    gain = {"gain": "exponential"} if loss == "ndcg" else {}
    with sklearn.config_context(enable_metadata_routing=True):
        scoring = make_scorer(mean_ndcg, response_method="decision_function",
                              **gain).set_score_request(qid=True) if gain else None
        grid = GridSearchCV(RankSVM(loss=loss, tol=tol), {"C": Cs}, cv=GroupKFold(3),
                            scoring=scoring).fit(X, y, qid=qid, groups=qid)
    assert search.C_ == grid.best_params_["C"]
    assert search.best_index_ == grid.best_index_
    # the two fits of a fold and C are both within TIGHT of min J; the measure, a step function
    # of w, can still move by a swap or two of a 30-query fold
    for k in range(3):
        np.testing.assert_allclose(search.cv_results_[f"split{k}_test_score"],
                                   grid.cv_results_[f"split{k}_test_score"], atol=1e-2)
    np.testing.assert_array_equal(search.cv_results_["rank_test_score"],
                                  grid.cv_results_["rank_test_score"])
    assert set(search.cv_results_) == set(grid.cv_results_)
    assert search.cv_results_["params"] == grid.cv_results_["params"]
    np.testing.assert_array_equal(search.cv_results_["param_C"], grid.cv_results_["param_C"])
    assert search.best_score_ == pytest.approx(grid.best_score_, abs=2e-3)
    np.testing.assert_allclose(search.coef_, grid.best_estimator_.coef_, atol=1e-8)
    assert search.score(X, y, qid=qid) == grid.best_estimator_.score(X, y, qid=qid, **gain)


def test_one_vs_rest_shares_one_C_as_grid_search_does():
    X, y = make_classification(150, 6, n_informative=4, n_classes=3, random_state=0)
    Cs = [0.1, 1.0, 10.0]
    search = RankSVMCV(Cs=Cs, cv=3, tol=TIGHT).fit(X, y)
    grid = GridSearchCV(RankSVM(tol=TIGHT), {"C": Cs}, cv=3).fit(X, y)  # StratifiedKFold(3)
    np.testing.assert_allclose(search.cv_results_["mean_test_score"],
                               grid.cv_results_["mean_test_score"], atol=2e-3)
    assert search.C_ == grid.best_params_["C"]
    assert search.coef_.shape == (3, 6)
    np.testing.assert_array_equal(search.predict(X), grid.predict(X))


def test_warm_path_reaches_every_certified_optimum(letor):
    X, y, qid = letor
    relevant = y > 0
    queries = informative_queries(resolve_queries(X.shape[0], qid=qid), relevant, warn=False)
    problem = StructuredHinge(X, relevant, queries, get_oracle("ap", "auto"))
    tol = 1e-4
    w, planes, warm_rounds, cold_rounds = None, None, 0, 0
    rng = np.random.default_rng(0)
    for C in np.logspace(-2, 2, 5):
        cold = cutting_plane(problem, C, tol=tol)
        warm = cutting_plane(problem, C, tol=tol, w0=w, planes=planes)
        assert cold.converged and warm.converged
        # both certified: each within tol of min J, so of each other
        assert abs(warm.objective - cold.objective) <= tol * max(warm.objective, cold.objective)
        assert warm.objective == pytest.approx(problem.objective(warm.w, C))
        # the bundle's point is the returned w, its H is H(w) and its last plane is tight there
        b, A = warm.planes.b, warm.planes.A
        np.testing.assert_array_equal(warm.planes.w, warm.w)
        assert warm.planes.H == pytest.approx(problem.hinge_value(warm.w), rel=1e-12, abs=1e-15)
        assert b[-1] + A[-1] @ warm.w == pytest.approx(warm.planes.H, rel=1e-9, abs=1e-12)
        # every carried plane is a lower bound of H, wherever it is evaluated
        for point in [warm.w, cold.w, rng.normal(size=problem.n_features)]:
            assert np.all(b + A @ point <= problem.hinge_value(point) + 1e-9)
        w, planes = warm.w, warm.planes
        warm_rounds += warm.n_iter
        cold_rounds += cold.n_iter
    assert warm_rounds < cold_rounds


def test_warm_planes_alone_certify_a_solved_C(letor):
    """Re-solving the same C from its own planes and w stops after the first round."""
    X, y, qid = letor
    relevant = y > 0
    queries = informative_queries(resolve_queries(X.shape[0], qid=qid), relevant, warn=False)
    problem = StructuredHinge(X, relevant, queries, get_oracle("ap", "auto"))
    for ocas in (True, False):
        first = cutting_plane(problem, 1.0, tol=1e-3, ocas=ocas)
        again = cutting_plane(problem, 1.0, tol=1e-3, planes=first.planes, ocas=ocas)
        assert again.n_iter == 1 and again.converged
        assert again.history[-1]["oracle_passes"] == 0  # the bundle's point needs no oracle
        assert again.objective == pytest.approx(first.objective, rel=1e-12)
        # (b, A) alone: the same planes, the start evaluated by the oracles
        plain = cutting_plane(problem, 1.0, tol=1e-3, ocas=ocas, w0=first.w,
                              planes=(first.planes.b, first.planes.A))
        assert plain.n_iter == 1 and plain.history[-1]["oracle_passes"] == 1


def test_group_equals_qid_and_n_jobs_changes_nothing(letor):
    X, y, qid = letor
    order = np.argsort(qid, kind="stable")
    X, y, qid = X[order], y[order], qid[order]
    group = np.unique(qid, return_counts=True)[1]
    a = RankSVMCV(Cs=[0.1, 1.0], cv=3).fit(X, y, qid=qid)
    with parallel_config(backend="threading"):  # no worker start-up in the test
        b = RankSVMCV(Cs=[0.1, 1.0], cv=3, n_jobs=2).fit(X, y, group=group)
    np.testing.assert_array_equal(a.scores_, b.scores_)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_any_group_splitter_and_scorer(letor):
    X, y, qid = letor
    seen = []

    def scorer(estimator, X, y, qid=None):
        seen.append(qid)
        return mean_average_precision(y, estimator.decision_function(X), qid=qid)

    search = RankSVMCV(Cs=[0.1, 1.0], cv=GroupShuffleSplit(2, test_size=0.3, random_state=0),
                       scoring=scorer).fit(X, y, qid=qid)
    assert search.n_splits_ == 2 and all(q is not None for q in seen)
    default = RankSVMCV(Cs=[0.1, 1.0], cv=GroupShuffleSplit(2, test_size=0.3, random_state=0))
    np.testing.assert_allclose(default.fit(X, y, qid=qid).scores_, search.scores_)
    accuracy = RankSVMCV(Cs=[0.1, 1.0], cv=2, scoring="accuracy").fit(X, y > 0, qid=qid)
    assert np.all((accuracy.scores_ >= 0) & (accuracy.scores_ <= 1))


@pytest.mark.parametrize("Cs, match", [
    ([], "non-empty"), (0, "Cs"), ([1.0, 0.0], "positive"), ([1.0, -2.0], "positive"),
    ([1.0, np.nan], "positive"), ([1.0, np.inf], "positive"), ([[1.0, 2.0]], "1-D"),
    (["a"], "list of positive numbers"),
])
def test_bad_Cs(letor, Cs, match):
    X, y, qid = letor
    with pytest.raises(ValueError, match=match):
        RankSVMCV(Cs=Cs).fit(X, y, qid=qid)


def test_bad_folds(letor):
    X, y, qid = letor
    with pytest.raises(ValueError, match="splits .* query"):
        RankSVMCV(Cs=[1.0], cv=KFold(3)).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="cv=1000 folds need at least 1000 queries"):
        RankSVMCV(Cs=[1.0], cv=1000).fit(X, y, qid=qid)
    Xc, yc = make_classification(40, 4, random_state=0)
    with pytest.raises(ValueError, match="cv=30 stratified folds"):
        RankSVMCV(Cs=[1.0], cv=30).fit(Xc, yc)
    with pytest.raises(ValueError, match="planes"):
        problem = StructuredHinge(Xc, yc == 1, [np.arange(40)], get_oracle("ap", "auto"))
        cutting_plane(problem, 1.0, planes=(np.zeros(2), np.zeros((2, 5))))


def test_clone_params_and_refit_false(letor):
    X, y, qid = letor
    search = RankSVMCV(Cs=[0.5, 2.0], cv=2, loss="ndcg", tol=1e-2, refit=False)
    params = clone(search).get_params()
    assert params["Cs"] == [0.5, 2.0] and params["loss"] == "ndcg" and params["refit"] is False
    assert set(params) >= {"oracle", "solver", "k", "tol", "max_iter", "random_state",
                           "verbose", "solver_params", "n_jobs", "cv", "scoring"}
    search.fit(X, y, qid=qid)
    assert search.C_ in (0.5, 2.0) and not hasattr(search, "best_estimator_")
    with pytest.raises(ValueError, match="refit=False"):
        search.predict(X)
    with pytest.raises(ValueError, match="solver"):
        RankSVMCV(solver="newton").fit(X, y, qid=qid)  # RankSVM's parameter validation


def test_default_grid_and_verbose(letor, capsys):
    X, y, qid = letor
    search = RankSVMCV(Cs=3, cv=2, max_iter=10, verbose=1).fit(X, y, qid=qid)
    np.testing.assert_allclose(search.Cs_, np.logspace(-4, 4, 3))
    assert search.scores_.shape == search.n_iter_.shape == (2, 3)
    out = capsys.readouterr().out
    assert "RankSVMCV fold 1: C=1e+04" in out and "C_=" in out


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@parametrize_with_checks([RankSVMCV(Cs=[0.1, 1.0], cv=2, random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_docstring_example_runs():
    import ssvm.model_selection

    result = doctest.testmod(ssvm.model_selection)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("loss", ["ap", "ndcg", "zero_one"])  # ndcg: graded (exponential gain)
def test_fold_path_objectives_are_the_cold_fits(letor, loss):
    X, y, qid = letor
    tol, Cs = 1e-4, np.array([0.01, 0.3, 3.0])
    search = RankSVMCV(Cs=list(Cs), loss=loss, tol=tol)
    oracle = search._ranksvm(1.0)._make_oracle()
    groups = query_labels(resolve_queries(X.shape[0], qid=qid), X.shape[0])
    train, test = next(GroupKFold(3).split(X, y, qid))
    out = fold_path(X, y, groups, train, test, Cs, classes=np.array([0, 1]),
                    make_model=search._ranksvm, oracle=oracle, zero_one=loss == "zero_one",
                    solver="cutting_plane", tol=tol, max_iter=None, seeds=[0], solver_params={},
                    scorer=None, score_params={}, verbose=0, fold=0)
    for C, objective in zip(Cs, out["objective"][:, 0]):
        cold = RankSVM(loss=loss, C=C, tol=tol).fit(X[train], y[train], qid=qid[train])
        assert abs(objective - cold.objective_) <= tol * max(objective, cold.objective_)


def _separable_queries():
    """6 queries of 10 rows, 3 relevant each: feature 0 is the label up to noise, so every C ranks
    every test query perfectly."""
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(6), 10)
    y = np.tile(np.r_[np.ones(3), np.zeros(7)], 6)
    noise = rng.standard_normal((60, 2))
    return np.column_stack([y + 0.01 * noise[:, 0], noise[:, 1]]), y, qid


@pytest.mark.parametrize("Cs", [[1.0, 0.1], [0.1, 1.0], [0.1, 10.0, 1.0]])
def test_equal_best_scores_choose_the_first_C_given(Cs):
    X, y, qid = _separable_queries()
    search = RankSVMCV(Cs=Cs, cv=3).fit(X, y, qid=qid)
    np.testing.assert_array_equal(search.cv_results_["mean_test_score"], 1.0)  # all tie
    assert search.best_index_ == 0 and search.C_ == Cs[0]  # as documented, and as GridSearchCV
    with sklearn.config_context(enable_metadata_routing=True):
        grid = GridSearchCV(RankSVM(), {"C": Cs}, cv=GroupKFold(3)).fit(X, y, qid=qid, groups=qid)
    assert search.C_ == grid.best_params_["C"]


def test_rank_test_score_ranks_ties_as_grid_search_does():
    X, y, qid = _separable_queries()
    Cs = [1.0, 0.1, 1e-4, 10.0]

    def scoring(estimator, X, y):  # equal scores for two of the C, a lower one between them
        return {1.0: 1.0, 0.1: 1.0, 1e-4: 0.6, 10.0: 0.8}[estimator.C]

    search = RankSVMCV(Cs=Cs, cv=3, scoring=scoring).fit(X, y, qid=qid)
    with sklearn.config_context(enable_metadata_routing=True):
        grid = GridSearchCV(RankSVM(), {"C": Cs}, cv=GroupKFold(3), scoring=scoring).fit(X, y, qid=qid,
                                                                                        groups=qid)
    np.testing.assert_array_equal(grid.cv_results_["rank_test_score"], [1, 1, 4, 3])
    np.testing.assert_array_equal(search.cv_results_["rank_test_score"], grid.cv_results_["rank_test_score"])


def test_a_scorer_of_predicted_labels_sees_the_intercept_of_a_ranking_loss():
    # all scores are near 5: the labels predict() draws depend on the intercept RankSVM.fit sets
    X, y, qid = _separable_queries()
    X = X[:, :1] + 5.0
    search = RankSVMCV(Cs=[0.1, 1.0], cv=3, scoring="accuracy").fit(X, y, qid=qid)
    with sklearn.config_context(enable_metadata_routing=True):
        grid = GridSearchCV(RankSVM(), {"C": [0.1, 1.0]}, cv=GroupKFold(3), scoring="accuracy").fit(
            X, y, qid=qid, groups=qid)
    for k in range(3):
        np.testing.assert_array_equal(search.scores_[k], grid.cv_results_[f"split{k}_test_score"])
    np.testing.assert_array_equal(search.scores_, 1.0)


def test_one_C_and_results_of_one_entry_per_C():
    X, y, qid = _separable_queries()
    single = RankSVMCV(Cs=1, cv=2).fit(X, y, qid=qid)  # an integer: that many values on logspace(-4, 4)
    np.testing.assert_array_equal(single.Cs_, [1e-4])
    assert single.C_ == 1e-4
    search = RankSVMCV(Cs=[0.1, 1.0, 10.0, 100.0], cv=3).fit(X, y, qid=qid)  # 3 folds, 4 values of C
    for key, value in search.cv_results_.items():
        assert len(value) == 4, key
    assert search.scores_.shape == search.n_iter_.shape == (3, 4)


@pytest.mark.parametrize("Cs", [[1.0, -0.5], [0.0], [1.0, -1e-9]])
def test_Cs_at_or_below_zero_are_refused_by_name(Cs):
    X, y, qid = _separable_queries()
    with pytest.raises(ValueError, match=r"Cs must hold positive finite numbers .*; got \[-?\d"):
        RankSVMCV(Cs=Cs, cv=2).fit(X, y, qid=qid)


def test_as_many_folds_as_queries_leave_one_query_out():
    X, y, qid = _separable_queries()
    search = RankSVMCV(Cs=[1.0], cv=6).fit(X, y, qid=qid)
    assert search.n_splits_ == 6
    np.testing.assert_array_equal(search.scores_, 1.0)


def test_one_vs_rest_ndcg_without_queries_as_grid_search():
    X, y = make_classification(120, 5, n_informative=3, n_classes=3, random_state=1)
    search = RankSVMCV(Cs=[0.1, 1.0], cv=3, loss="ndcg", tol=TIGHT).fit(X, y)
    grid = GridSearchCV(RankSVM(loss="ndcg", tol=TIGHT), {"C": [0.1, 1.0]}, cv=3).fit(X, y)
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], grid.cv_results_["mean_test_score"], atol=2e-3)
    np.testing.assert_allclose(search.coef_, grid.best_estimator_.coef_, atol=1e-6)


def test_five_query_folds_by_default():
    X, y, qid = _separable_queries()  # 6 queries
    search = RankSVMCV(Cs=[1.0]).fit(X, y, qid=qid)
    assert search.n_splits_ == 5 and search.scores_.shape == (5, 1)
    with pytest.raises(ValueError, match="cv=5 folds need at least 5 queries"):
        RankSVMCV(Cs=[1.0]).fit(X[:40], y[:40], qid=qid[:40])  # 4 queries


@pytest.mark.parametrize("empty", ["training", "test"])
def test_a_given_fold_with_an_empty_side_is_refused(empty):
    X, y, qid = _separable_queries()
    rows, none = np.arange(60), np.array([], dtype=int)
    fold = (none, rows) if empty == "training" else (rows, none)
    with pytest.raises(ValueError, match="cv fold 1 has an empty training or test set"):
        RankSVMCV(Cs=[1.0], cv=[(rows[:30], rows[30:]), fold]).fit(X, y, qid=qid)


def test_a_scorer_whose_signature_cannot_be_read_is_called_without_qid():
    """As some compiled callables: ``inspect.signature`` raises, so the scorer gets no ``qid``."""
    X, y, qid = _separable_queries()

    class Opaque:
        __signature__ = "unreadable"  # inspect.signature raises TypeError

        def __call__(self, estimator, X, y):
            return mean_average_precision(y, estimator.decision_function(X))

    search = RankSVMCV(Cs=[1.0], cv=3, scoring=Opaque()).fit(X, y, qid=qid)
    np.testing.assert_array_equal(search.scores_, 1.0)



@pytest.mark.parametrize("loss", ["ndcg", "pairwise"])
def test_folds_train_the_oracle_that_rank_svm_trains(monkeypatch, letor, loss):
    """Each fold's problem gets the target and oracle RankSVM's fit gets (fit_targets decides both):
    on 0/1 relevance the binary oracle of a loss that has one (graded NDCG), with its compiled
    forms; the pairwise loss keeps its oracle, which reads 0/1 as two grades."""
    import ssvm._cv_path as cv_path
    import ssvm._fitting as fitting

    X, y, qid = letor
    y = (y > 0).astype(int)  # 0/1 grades
    seen = {"fold": [], "fit": []}

    class Recording(StructuredHinge):
        def __init__(self, X, target, queries, oracle, **kwargs):
            seen[where].append((oracle.graded, oracle.batched, target.dtype.name))
            super().__init__(X, target, queries, oracle, **kwargs)

    monkeypatch.setattr(cv_path, "StructuredHinge", Recording)
    monkeypatch.setattr(fitting, "StructuredHinge", Recording)
    where = "fold"
    RankSVMCV(Cs=[1.0], loss=loss, cv=2, refit=False, max_iter=3).fit(X, y, qid=qid)
    where = "fit"
    RankSVM(loss=loss, C=1.0, max_iter=3).fit(X, y, qid=qid)
    assert len(seen["fold"]) == 2 and len(seen["fit"]) == 1
    assert set(seen["fold"]) == set(seen["fit"])
    graded, _, dtype = seen["fit"][0]
    assert dtype == "bool" and graded == (loss == "pairwise")
