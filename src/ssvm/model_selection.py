"""``RankSVMCV``: ``RankSVM`` with C chosen by cross-validation in one call, on a warm path over C.

This module validates, splits and collects; the warm path of one fold, the folds and the scoring
rule live in :mod:`ssvm._cv_path`, the training in :class:`ssvm.RankSVM` and :mod:`ssvm.solvers`.
"""

import time
from numbers import Integral

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.metrics import check_scoring
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from ssvm._cv_path import check_Cs, fold_path, query_labels, score_with, split_folds
from ssvm._fitting import check_solver_params, draw_seeds, say
from ssvm._queries import resolve_queries
from ssvm.estimators import RankSVM
from ssvm.losses import loss_entry
from ssvm.problem.training_set import class_targets

__all__ = ["RankSVMCV"]

#: RankSVM parameters that RankSVMCV passes through to every fit (n_jobs goes to the refit only)
_PASSED = ("loss", "oracle", "solver", "k", "gain", "tol", "max_iter", "random_state", "verbose",
           "solver_params")


class RankSVMCV(ClassifierMixin, BaseEstimator):
    """``RankSVM`` with ``C`` chosen by cross-validation, solved as a warm path over C.

    For every fold, the values of ``Cs`` are solved in increasing order, each starting from the
    previous ``C``'s weights and, with the cutting plane, its working set of planes: the
    structured hinge does not depend on ``C``, so those planes stay valid lower bounds, and each
    ``C`` still stops on its own certified duality gap (``tol``). Each ``C`` is scored on the
    fold's test rows; the ``C`` with the best mean score is refitted on all the data.

    Parameters
    ----------
    Cs : int or array-like of float, default=10
        The values of C: an integer ``n`` means ``np.logspace(-4, 4, n)`` (as
        ``LogisticRegressionCV``); otherwise the positive values themselves, in any order (the
        path sorts them; the results keep the given order).
    cv : int, cross-validation generator or iterable, default=None
        With ``qid`` / ``group``: ``None`` (5) or an integer means ``GroupKFold`` on the
        queries; a splitter gets ``groups`` = the query of each row and must keep every query on
        one side of each fold (a ValueError otherwise). Without queries: ``StratifiedKFold``.
    loss : {"ap", "ndcg", "zero_one", "precision_at_k"} or QSLoss, default="ap"
        As :class:`~ssvm.RankSVM`.
    scoring : str, callable or None, default=None
        ``None``: the trained measure per query, i.e. ``RankSVM.score`` with the test fold's
        ``qid`` (mean AP, mean NDCG with the trained ``gain``, precision@k, or accuracy for
        ``"zero_one"``). A string or
        a scikit-learn scorer is called as ``scorer(estimator, X, y)``; it also gets ``qid=``
        when metadata routing is enabled and it requests ``qid``. Any other callable gets
        ``qid=`` when its signature has a ``qid`` parameter.
    n_jobs : int, default=None
        Parallel jobs (joblib) over the folds; the refit on all data uses them as ``RankSVM``
        does (over the classes, or the queries' oracle calls).
    refit : bool, default=True
        Refit ``RankSVM(C=C_)`` on all the data as ``best_estimator_``; ``decision_function``,
        ``predict`` and ``score`` use it. With False only the selection is done.
    oracle, solver, k, gain, tol, max_iter, random_state, verbose, solver_params
        As :class:`~ssvm.RankSVM` (same validation), used for every fit. ``verbose=1`` prints
        one line per fold and C, ``≥ 2`` also the solver's iterations.

    Attributes
    ----------
    C_ : float
        The chosen C, shared by all classes of a one-vs-rest problem (the mean score over the
        classes picks it, as ``GridSearchCV`` over ``RankSVM`` would).
    Cs_ : ndarray of shape (n_Cs,)
        The grid of C, in the given order.
    scores_ : ndarray of shape (n_folds, n_Cs)
        Validation score of every fold and C.
    n_iter_ : ndarray of shape (n_folds, n_Cs)
        Solver iterations of every fold and C (the maximum over classes).
    cv_results_ : dict of ndarrays
        Keyed as ``GridSearchCV``'s: ``params``, ``param_C``, ``split{k}_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score``, ``mean_fit_time``,
        ``std_fit_time``, ``mean_score_time``, ``std_score_time``.
    best_index_ : int
        Index of ``C_`` in ``Cs_`` (the first of equal best mean scores).
    best_score_ : float
        Mean validation score at ``C_``.
    best_estimator_ : RankSVM
        Fitted on all data at ``C_`` (``refit=True`` only).
    refit_time_ : float
        Seconds of the refit (``refit=True`` only).
    n_splits_ : int
        Number of folds.
    coef_, intercept_, classes_ : ndarray
        ``best_estimator_``'s (``classes_`` also with ``refit=False``).
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    ssvm.RankSVM : the estimator fitted at each C.
    sklearn.linear_model.LogisticRegressionCV : the same idea for logistic regression.

    Examples
    --------
    >>> from ssvm import RankSVMCV
    >>> from ssvm.datasets import load_letor_sample
    >>> X, y, qid = load_letor_sample()
    >>> search = RankSVMCV(Cs=[0.1, 1.0], cv=3).fit(X, y, qid=qid)
    >>> float(search.C_) in (0.1, 1.0)
    True
    """

    _parameter_constraints: dict = {
        **{name: RankSVM._parameter_constraints[name] for name in _PASSED + ("n_jobs",)},
        "Cs": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "cv": ["cv_object"],
        "scoring": [str, callable, None],
        "refit": ["boolean"],
    }
    __metadata_request__fit = {"qid": True}
    __metadata_request__score = {"qid": True}

    def __init__(self, Cs=10, cv=None, loss="ap", *, scoring=None, n_jobs=None, refit=True,
                 oracle="auto", solver="cutting_plane", k=None, gain="exponential", tol=1e-3,
                 max_iter=None, random_state=None, verbose=0, solver_params=None):
        self.Cs = Cs
        self.cv = cv
        self.loss = loss
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.refit = refit
        self.oracle = oracle
        self.solver = solver
        self.k = k
        self.gain = gain
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose
        self.solver_params = solver_params

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = True
        return tags

    def _ranksvm(self, C, n_jobs=None):
        """The RankSVM this search fits at ``C``."""
        return RankSVM(C=C, n_jobs=n_jobs, **{name: getattr(self, name) for name in _PASSED})

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, qid=None, group=None):
        """Choose C by cross-validation on the warm path, then (``refit``) fit on all data.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Class labels, or relevance grades (``y > 0`` relevant) with ``qid`` / ``group``.
        qid : array-like of shape (n_samples,), default=None
            Query id per row; the folds keep queries whole and score per query.
        group : array-like of int, default=None
            Sizes of consecutive queries (instead of ``qid``).

        Returns
        -------
        self : RankSVMCV

        Raises
        ------
        ValueError
            On a bad ``Cs``, more folds than queries (or than members of a class), a splitter
            that splits a query, and everything :meth:`RankSVM.fit` refuses.
        """
        Cs = check_Cs(self.Cs)
        template = self._ranksvm(C=1.0)
        oracle = template._make_oracle()
        solver_params = check_solver_params(self.solver, self.solver_params, "RankSVMCV")
        scorer = None if self.scoring is None else check_scoring(template, self.scoring)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32])
        if qid is not None or group is not None:
            groups = query_labels(resolve_queries(X.shape[0], qid=qid, group=group), X.shape[0])
            classes = np.array([0, 1])
        else:
            groups, classes = None, class_targets(y)[0]
        graded = groups is not None and "gain" in loss_entry(self.loss).params  # the default score's gain
        folds = split_folds(self.cv, X, y, groups)
        order = np.argsort(Cs, kind="stable")
        n_tasks = len(classes) if groups is None and len(classes) > 2 else 1
        job = delayed(fold_path)
        paths = Parallel(n_jobs=self.n_jobs)(
            job(X, y, groups, train, test, Cs[order], classes=classes, make_model=self._ranksvm,
                oracle=oracle,
                zero_one=loss_entry(self.loss).intercept, solver=self.solver,
                tol=self.tol, max_iter=self.max_iter,
                seeds=draw_seeds(self.random_state, n_tasks), solver_params=solver_params,
                scorer=scorer, score_params=self._score_params(graded), verbose=self.verbose,
                fold=k)
            for k, (train, test) in enumerate(folds))
        unsort = np.argsort(order)
        self.Cs_ = Cs
        self.n_splits_ = len(folds)
        self.scores_ = np.array([path["scores"][unsort] for path in paths])
        self.n_iter_ = np.array([path["n_iter"][unsort] for path in paths]).astype(np.int64)
        self.cv_results_ = _cv_results(Cs, paths, unsort)
        self.best_index_ = int(self.cv_results_["rank_test_score"].argmin())
        self.best_score_ = float(self.cv_results_["mean_test_score"][self.best_index_])
        self.C_ = float(Cs[self.best_index_])
        if self.verbose:
            say(f"RankSVMCV: C_={self.C_:.4g}, mean validation score {self.best_score_:.4f} "
                f"over {self.n_splits_} folds")
        self.classes_ = classes
        if self.refit:
            tic = time.perf_counter()
            self.best_estimator_ = self._ranksvm(self.C_, self.n_jobs).fit(X, y, qid=qid,
                                                                           group=group)
            self.refit_time_ = time.perf_counter() - tic
            self.coef_ = self.best_estimator_.coef_
            self.intercept_ = self.best_estimator_.intercept_
            self.classes_ = self.best_estimator_.classes_
        return self

    def _score_params(self, graded):
        """The default score's NDCG gains: the trained ``gain`` on queries (binary otherwise)."""
        return {"gain": self.gain} if graded else {}

    def _refitted(self):
        check_is_fitted(self, "cv_results_")
        if not hasattr(self, "best_estimator_"):
            raise ValueError("RankSVMCV was fitted with refit=False, so no model was trained on "
                             "all data: fit RankSVM(C=search.C_) or use refit=True.")
        return self.best_estimator_

    def decision_function(self, X):
        """Scores of ``best_estimator_`` (see :meth:`RankSVM.decision_function`).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        return self._refitted().decision_function(X)

    def predict(self, X):
        """Labels predicted by ``best_estimator_`` (see :meth:`RankSVM.predict`).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self._refitted().predict(X)

    def score(self, X, y, qid=None):
        """The ``scoring`` of ``best_estimator_`` on ``(X, y)`` (per query with ``qid``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        qid : array-like of shape (n_samples,), default=None

        Returns
        -------
        float
        """
        model = self._refitted()
        scorer = None if self.scoring is None else check_scoring(model, self.scoring)
        graded = model._fitted_on_queries and "gain" in loss_entry(self.loss).params
        return score_with(scorer, model, X, y, qid, self._score_params(graded))


def _cv_results(Cs, paths, unsort):
    """``GridSearchCV``-style results from the folds' paths (``unsort``: back to the given order)."""
    def per_fold(key):
        return np.array([path[key][unsort] for path in paths])

    results = {}
    for key in ("fit_time", "score_time"):
        times = per_fold(key)
        results[f"mean_{key}"] = times.mean(axis=0)
        results[f"std_{key}"] = times.std(axis=0)
    results["param_C"] = np.ma.MaskedArray(Cs.copy(), mask=np.zeros(Cs.size, dtype=bool))
    results["params"] = [{"C": float(C)} for C in Cs]
    scores = per_fold("scores")
    for k, row in enumerate(scores):
        results[f"split{k}_test_score"] = row
    means = scores.mean(axis=0)
    results["mean_test_score"] = means
    results["std_test_score"] = scores.std(axis=0)
    if np.isnan(means).all():  # as GridSearchCV: NaN means rank last
        ranks = np.ones(means.size, dtype=np.int32)
    else:
        filled = np.where(np.isnan(means), np.nanmin(means) - 1, means)
        ranks = rankdata(-filled, method="min").astype(np.int32)
    results["rank_test_score"] = ranks
    return results
