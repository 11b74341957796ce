"""LabelRankSVM: fitting, prediction, errors, kernels through a pipeline, sklearn conventions."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import make_multilabel_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import Nystroem, PolynomialCountSketch
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ssvm import LabelRankSVM
from ssvm.exceptions import DegenerateQueriesWarning
from ssvm.label_ranking import star_inference


@pytest.fixture(scope="module")
def data():
    X, Y = make_multilabel_classification(n_samples=160, n_features=8, n_classes=5,
                                          n_labels=2, random_state=0)
    Y[Y.sum(axis=1) == 0, 0] = 1
    Y[Y.sum(axis=1) == 5, 4] = 0
    return X / X.max(), Y


def fit(model, X, Y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, Y)


def test_independent_model_scores_are_linear(data):
    X, Y = data
    model = fit(LabelRankSVM(C=5.0), X, Y)
    assert model.core_.size == 0 and not model.pairwise_.any()
    unary = X @ model.coef_.T + model.intercept_
    assert np.allclose(model.decision_function(X), unary - model.threshold_)
    assert np.array_equal(model.predict(X), (unary > model.threshold_).astype(int))
    bep = [np.sum(Y[q][np.argsort(-unary[q], kind="stable")[: Y[q].sum()]]) / Y[q].sum()
           for q in range(len(Y))]
    assert model.score(X, Y) == pytest.approx(np.mean(bep))


def test_cstar_model_predictions_agree_with_inference(data):
    X, Y = data
    model = fit(LabelRankSVM(C=5.0, n_core=2), X, Y)
    assert model.core_.size == 2 and np.array_equal(model.pairwise_, model.pairwise_.T)
    non_core = np.setdiff1d(np.arange(5), model.core_)
    assert not model.pairwise_[np.ix_(non_core, non_core)].any()
    pred, dec = model.predict(X), model.decision_function(X)
    assert np.array_equal(pred.astype(bool), dec > 0) or np.all((dec > 0) <= pred)
    assert model.objective_ > 0 and model.n_iter_ >= 1 and model.history_


def test_fixed_k_predicts_k_labels_and_imputes(data):
    X, Y = data
    model = fit(LabelRankSVM(C=5.0, k=2, n_core=1), X, Y)
    assert np.all(model.predict(X).sum(axis=1) == 2)
    assert 1 <= model.n_cccp_iter_ <= 10
    assert not hasattr(model, "threshold_")
    dec = model.decision_function(X)
    assert np.all((dec > 0).sum(axis=1) <= 2)


def test_explicit_core_and_solvers(data):
    X, Y = data
    ref = fit(LabelRankSVM(C=1.0, n_core=2, core=[3, 1], tol=1e-6, max_iter=500), X, Y)
    assert ref.core_.tolist() == [3, 1]
    for solver, tol in (("frank_wolfe", 1e-4), ("pegasos", 1e-2)):
        other = fit(LabelRankSVM(C=1.0, n_core=2, core=[3, 1], solver=solver, tol=tol,
                                 max_iter=20000, random_state=0), X, Y)
        assert other.objective_ == pytest.approx(ref.objective_, rel=3e-2)
    plain = fit(LabelRankSVM(C=1.0, n_core=2, core=[3, 1], tol=1e-6, max_iter=500,
                             solver_params={"ocas": False}), X, Y)
    assert plain.objective_ == pytest.approx(ref.objective_, rel=1e-5)


@pytest.mark.parametrize("features", [
    Nystroem(kernel="rbf", gamma=0.5, n_components=60, random_state=0),
    PolynomialCountSketch(degree=2, n_components=60, random_state=0),
])
def test_kernel_pipeline(data, features):
    X, Y = data
    pipe = fit(make_pipeline(StandardScaler(), features, LabelRankSVM(C=5.0, n_core=1)), X, Y)
    assert pipe.predict(X).shape == Y.shape
    assert 0.3 < pipe.score(X, Y) <= 1.0


def test_interactive_bep(data):
    X, Y = data
    model = fit(LabelRankSVM(C=5.0, n_core=2), X, Y)
    values = model.interactive_bep(X, Y, questions=(0, 1, 5))
    assert values[0] == pytest.approx(model.score(X, Y))
    assert values[2] == 1.0  # 5 questions reveal all 5 labels


def test_sparse_input_and_pickle(data):
    X, Y = data
    dense = fit(LabelRankSVM(C=2.0, n_core=1, tol=1e-8, max_iter=300), X, Y)
    for Xs in (sp.csr_matrix(X), sp.csr_array(X)):
        sparse = fit(clone(dense), Xs, sp.csr_matrix(Y))
        assert np.allclose(sparse.coef_, dense.coef_, atol=1e-6)
        assert np.allclose(sparse.decision_function(Xs), dense.decision_function(X), atol=1e-5)
    again = pickle.loads(pickle.dumps(dense))
    assert np.array_equal(again.predict(X), dense.predict(X))


def test_sklearn_contract_on_multilabel_data(data):
    """What scikit-learn's generic checks test, on data with a multi-label target."""
    X, Y = data
    model = LabelRankSVM(C=2.0, n_core=1)
    params = model.get_params()
    fitted = fit(model, X, Y)
    assert fitted is model and model.get_params() == params  # returns self, params untouched
    first = model.decision_function(X)
    assert np.allclose(fit(model, X, Y).decision_function(X), first)  # idempotent
    assert model.n_features_in_ == X.shape[1]
    state = dict(model.__dict__)
    model.predict(X)
    model.decision_function(X)
    model.score(X, Y)
    assert model.__dict__.keys() == state.keys()
    perm = np.random.default_rng(0).permutation(len(X))
    assert np.allclose(model.decision_function(X[perm]), first[perm])  # sample order
    assert np.allclose(model.decision_function(X[:7]), first[:7])  # subsets
    assert np.allclose(model.decision_function(np.asfortranarray(X)), first)
    assert np.allclose(model.decision_function(X.astype(np.float32)), first, atol=1e-5)
    readonly = X.copy()
    readonly.setflags(write=False)
    assert np.allclose(fit(clone(model), readonly, Y).decision_function(readonly), first)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :3])
    scores = cross_val_score(LabelRankSVM(C=2.0), X, Y, cv=3)
    assert scores.shape == (3,) and np.all((0 <= scores) & (scores <= 1))


def test_unfitted_raises():
    from sklearn.exceptions import NotFittedError
    with pytest.raises(NotFittedError):
        LabelRankSVM().predict(np.zeros((2, 3)))


def test_score_without_relevant_labels_warns(data):
    X, Y = data
    model = fit(LabelRankSVM(), X, Y)
    with pytest.warns(UserWarning, match="undefined"):
        assert np.isnan(model.score(X[:3], np.zeros((3, 5), dtype=int)))


def test_degenerate_samples_are_skipped_with_a_warning(data):
    X, Y = data
    Y = Y.copy()
    Y[:4] = 0
    Y[4:6] = 1
    with warnings.catch_warnings():
        warnings.simplefilter("always", DegenerateQueriesWarning)
        with pytest.warns(DegenerateQueriesWarning, match="n_skipped_queries_"):
            model = fit(LabelRankSVM(), X, Y)
    assert model.n_samples_fit_ == 154 and model.n_skipped_queries_ == 6


@pytest.mark.parametrize("params, X_fn, Y_fn, match", [
    ({}, lambda X: X, lambda Y: np.where(Y == 1, 2, 0), "binary"),
    ({}, lambda X: X, lambda Y: Y[:, 0], "indicator matrix"),
    ({}, lambda X: X, lambda Y: Y[:, :1], "at least two labels"),
    ({}, lambda X: X, lambda Y: Y[:, :0], "at least two labels"),
    ({"k": 5}, lambda X: X, lambda Y: Y, "k=5 must be smaller"),
    ({"k": 9}, lambda X: X, lambda Y: Y, "k=9 must be smaller"),
    ({"n_core": 21}, lambda X: np.tile(X, (1, 1)), lambda Y: np.tile(Y, (1, 5)), "at most 20"),
    ({"n_core": 6}, lambda X: X, lambda Y: Y, "at most the number of labels"),
    ({}, lambda X: np.where(np.arange(X.shape[1]) == 2, np.nan, X), lambda Y: Y, "NaN"),
    ({}, lambda X: np.where(np.arange(X.shape[1]) == 2, np.inf, X), lambda Y: Y, "infinity"),
    ({"n_core": 1, "core": [0, 1]}, lambda X: X, lambda Y: Y, "n_core=1"),
    ({"n_core": 1, "core": [7]}, lambda X: X, lambda Y: Y, "distinct label indices"),
    ({"n_core": 2, "core": [1, 1]}, lambda X: X, lambda Y: Y, "distinct label indices"),
    ({}, lambda X: X, lambda Y: np.zeros_like(Y), "nothing to learn"),
    ({"solver_params": {"C": 3}}, lambda X: X, lambda Y: Y, "solver_params must not"),
    ({"solver_params": {"bogus": 1}}, lambda X: X, lambda Y: Y, "unknown key"),
    ({"C": -1.0}, lambda X: X, lambda Y: Y, "'C' parameter"),
    ({"k": "all"}, lambda X: X, lambda Y: Y, "'k' parameter"),
])
def test_bad_input_raises_clear_errors(data, params, X_fn, Y_fn, match):
    X, Y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(ValueError, match=match):
            LabelRankSVM(**params).fit(X_fn(X), Y_fn(Y))


def test_scoring_shape_mismatch(data):
    X, Y = data
    model = fit(LabelRankSVM(), X, Y)
    with pytest.raises(ValueError, match="Y must have shape"):
        model.score(X, Y[:, :4])
    with pytest.raises(ValueError, match="binary"):
        model.interactive_bep(X, Y * 3)


def test_pairwise_terms_help_on_dependent_labels():
    """Labels 1 and 2 copy label 0's state, which the features barely show; label 0 itself is
    easy. The c-star with core {0} ranks them jointly; the independent model cannot."""
    rng = np.random.default_rng(0)
    n = 600
    X = rng.standard_normal((n, 6))
    hub = X[:, 0] > 0
    noise = rng.random((n, 3)) < 0.5
    Y = np.column_stack([hub, hub, hub, noise, ~hub])
    X[:, 1:] += 0.1 * hub[:, None]
    train, test = slice(0, 400), slice(400, None)
    independent = fit(LabelRankSVM(C=10.0), X[train], Y[train])
    star = fit(LabelRankSVM(C=10.0, n_core=1, core=[0]), X[train], Y[train])
    assert star.score(X[test], Y[test]) >= independent.score(X[test], Y[test]) - 0.02
    assert star.pairwise_[0, 1] > 0 and star.pairwise_[0, 2] > 0


def test_star_inference_used_for_bep_matches_decision(data):
    X, Y = data
    model = fit(LabelRankSVM(C=5.0, n_core=2), X, Y)
    unary = X @ model.coef_.T + model.intercept_
    T, _ = star_inference(unary, model.core_, model.pairwise_[model.core_], Y.sum(axis=1))
    assert model.score(X, Y) == pytest.approx(np.mean((T & (Y == 1)).sum(axis=1) / Y.sum(1)))


def test_verbose_prints_like_the_other_estimators(data, capsys):
    X, Y = data
    fit(LabelRankSVM(max_iter=5), X, Y)
    assert capsys.readouterr().out == ""
    fit(LabelRankSVM(max_iter=5, verbose=2), X, Y)
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("LabelRankSVM: iteration 1, J=") for line in lines)
    assert lines[-1].startswith("LabelRankSVM: J=")
