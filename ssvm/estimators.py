"""``RankSVM``: the scikit-learn estimator over the structured-hinge solvers.

This module only validates, builds queries, dispatches and stores results; the math lives in
``ssvm.problem`` (the objective), ``ssvm.solvers`` (the minimisers) and ``ssvm.losses`` (the
loss-augmented inference oracles).
"""

import logging
import sys
import warnings
from functools import partial
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ssvm._queries import informative_queries, resolve_queries
from ssvm.losses import (
    LOSS_NAMES,
    ORACLE_NAMES,
    QSLoss,
    get_oracle,
    ranking_loss,
    supported_oracles,
)
from ssvm.problem import Problem, StructuredHinge, matvec
from ssvm.solvers import SOLVERS

__all__ = ["RankSVM"]

logger = logging.getLogger(__name__)

_MAX_SEED = np.iinfo(np.int32).max
# arguments of a solver that RankSVM sets from its own parameters
_RESERVED_SOLVER_PARAMS = frozenset(
    {"problem", "C", "tol", "max_iter", "w0", "callback", "random_state"}
)


class RankSVM(ClassifierMixin, BaseEstimator):
    """Linear structured SVM that directly optimises a ranking loss (AP, NDCG, precision@k) or 0-1.

    Minimises, for each binary task, ``J(w) = ½‖w‖² + C · (1/Q) Σ_q H_q(w)`` where ``H_q`` is the
    structured hinge of query ``q`` for the chosen loss (the docs: "How it works"). Without ``qid`` /
    ``group`` the whole training set is one query and ``y`` holds class labels: two classes give a
    binary problem, more classes are fitted one-vs-rest (in parallel with ``n_jobs``). With ``qid``
    or ``group``, ``y`` is graded relevance, rows with ``y > 0`` are relevant, and queries are
    ranked independently.

    Parameters
    ----------
    loss : {"ap", "ndcg", "zero_one", "precision_at_k"} or QSLoss, default="ap"
        Task loss whose structured hinge is minimised. ``"zero_one"`` is the usual linear SVM
        (hinge loss with a regularised intercept, as liblinear): ``RankSVM(loss="zero_one", C=C)``
        minimises the same function as ``LinearSVC(loss="hinge", C=C / n_samples)``. A user loss
        object (an ``ssvm.losses.QSLoss`` instance, served by the "qs" and "brute" oracles) can
        be passed as well.
    oracle : str, default="auto"
        Loss-augmented inference algorithm (``ssvm.losses.ORACLE_NAMES``). It must support the
        loss (``ssvm.losses.supported_oracles(loss)``); ``"auto"`` picks the fastest exact one.
    solver : str, default="cutting_plane"
        Minimiser of J, a key of ``ssvm.solvers.SOLVERS`` (``"cutting_plane"``, ``"pegasos"``,
        ``"frank_wolfe"``).
    C : float, default=1.0
        Weight of the mean structured hinge against ``½‖w‖²``; must be positive.
    k : int, default=10
        Cut-off of ``loss="precision_at_k"`` (clipped to the size of each query); ignored by
        the other losses.
    tol : float, default=1e-3
        Stopping tolerance passed to the solver (a certified duality gap for ``"cutting_plane"``
        and ``"frank_wolfe"``).
    max_iter : int, default=None
        Maximum number of solver iterations per binary task (the unit is the solver's: cutting
        plane rounds, Pegasos steps, Frank–Wolfe passes); ``None`` uses the solver's own default.
        A ``ConvergenceWarning`` is emitted when it is reached before ``tol``.
    n_jobs : int, default=None
        Parallel jobs (joblib): over the classes of a one-vs-rest fit, otherwise over the
        queries' oracle calls. ``None`` means 1 unless in a ``joblib.parallel_backend`` context.
    random_state : int, RandomState instance or None, default=None
        Seeds the stochastic solvers (``"pegasos"``, ``"frank_wolfe"``); one seed per class is
        drawn from it up front, so results do not depend on ``n_jobs``.
    verbose : int, default=0
        ``0``: silent; ``1``: one ``INFO`` log record per fitted task; ``≥ 2``: also one
        ``DEBUG`` record per solver iteration. Records go to the ``ssvm.estimators`` logger
        (configure it with :mod:`logging`); nothing is printed. A one-vs-rest fit with
        ``n_jobs > 1`` on joblib's default (process) backend logs inside the worker processes.
    warm_start : bool, default=False
        Start the solver from the previous ``coef_`` (and ``intercept_`` for ``"zero_one"``)
        instead of zero. The previous fit must have the same number of tasks and features.
    solver_params : dict, default=None
        Extra keyword arguments of the solver function (see its docstring in ``ssvm.solvers``),
        e.g. for the cutting plane ``{"qp": "cvxpy"}`` (its dual QP through cvxpy),
        ``{"ocas": False}`` (the plain method of Joachims et al. instead of OCAS's cut rule),
        ``{"line_search": True}`` (OCAS's line search too) or ``{"mu": 0.2}`` (OCAS's cut
        parameter).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Weights; one row for a binary / ranking problem, one per class for one-vs-rest.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Decision threshold as an offset, so that ``decision_function = X @ coef_.T + intercept_``
        and ``predict`` thresholds it at 0. For ``"zero_one"`` it is the learnt (regularised)
        intercept. The ranking losses are invariant to shifting all scores, so they do not fix
        one: it is chosen after training as the cut of the training scores that maximises
        training accuracy (the middle one of the maximising cuts; cuts lie halfway between
        consecutive distinct scores).
    classes_ : ndarray of shape (n_classes,)
        Class labels. When fitted with ``qid`` / ``group``, ``array([0, 1])`` (not relevant,
        relevant) and ``predict`` returns 0/1 relevance.
    n_iter_ : int
        Solver iterations (the maximum over classes for one-vs-rest).
    objective_ : float or ndarray of shape (n_classes,)
        Final objective J(w) of each task.
    history_ : list
        The solver's history records (one list per class for one-vs-rest).
    n_queries_ : int
        Number of queries trained on (degenerate queries are skipped with a warning).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit (only when ``X`` has string column names).

    See Also
    --------
    sklearn.svm.LinearSVC : the 0-1 (hinge) special case, solved by liblinear.

    Notes
    -----
    Within scikit-learn's model selection, pass ``qid`` to ``fit`` (it is split with the rows;
    ``group`` sizes cannot be) and keep queries whole with ``GroupKFold`` (``groups=qid``). To
    score per query, enable metadata routing and call ``set_score_request(qid=True)`` (and
    ``set_fit_request(qid=True)``); otherwise ``score`` ranks each test fold as one query.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from ssvm import RankSVM
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = RankSVM(loss="ap", C=10.0).fit(X / X.max(axis=0), y)
    >>> round(clf.score(X / X.max(axis=0), y), 2) > 0.9
    True
    """

    _parameter_constraints: dict = {
        "loss": [StrOptions(set(LOSS_NAMES)), QSLoss],
        "oracle": [StrOptions(set(ORACLE_NAMES))],
        "solver": [StrOptions(set(SOLVERS))],
        "C": [Interval(Real, 0.0, None, closed="neither")],
        "k": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
        "solver_params": [dict, None],
    }

    def __init__(
        self,
        loss="ap",
        oracle="auto",
        solver="cutting_plane",
        C=1.0,
        *,
        k=10,
        tol=1e-3,
        max_iter=None,
        n_jobs=None,
        random_state=None,
        verbose=0,
        warm_start=False,
        solver_params=None,
    ):
        self.loss = loss
        self.oracle = oracle
        self.solver = solver
        self.C = C
        self.k = k
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.solver_params = solver_params

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = True
        tags.classifier_tags.poor_score = False
        return tags

    # ------------------------------------------------------------------ fit

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, qid=None, group=None):
        """Fit the model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data (sparse input is converted to CSR).
        y : array-like of shape (n_samples,)
            Class labels, or graded relevance (``y > 0`` is relevant) when ``qid`` or ``group``
            is given.
        qid : array-like of shape (n_samples,), default=None
            Query id of each row (as svmlight's ``qid:``); rows of a query need not be
            consecutive. Not together with ``group``.
        group : array-like of int of shape (n_queries,), default=None
            Sizes of consecutive queries (LightGBM / XGBoost ``group``); must sum to
            ``n_samples``. Not together with ``qid``.

        Returns
        -------
        self : RankSVM
            The fitted estimator.

        Raises
        ------
        ValueError
            On an oracle that does not support the loss, both ``qid`` and ``group``, malformed
            queries, a single class, all queries degenerate, or NaN / infinity in the input.
        """
        oracle_fn = self._make_oracle()
        reserved = _RESERVED_SOLVER_PARAMS.intersection(self.solver_params or {})
        if reserved:
            raise ValueError(
                f"solver_params must not set {sorted(reserved)}: RankSVM passes them itself "
                "(use the estimator's parameters of the same name)."
            )
        ranking_mode = qid is not None or group is not None
        zero_one = _is_loss(self.loss, "zero_one")
        if _is_dask_array(X):
            from ssvm.problem.dask_training import training_set  # dask only when it is used

            validate_data(self, X, skip_check_array=True)  # n_features_in_; X is not computed
            data = training_set(X, y, qid=qid, group=group, oracle=oracle_fn,
                                fit_intercept=zero_one, solver=self.solver)
            X, targets, problems, n_queries = data.X, data.targets, data.problems, data.n_queries
            self.classes_, ranking_mode = data.classes, data.ranking
        else:
            X, queries, targets = self._validate_in_memory(X, y, qid, group, ranking_mode)
            n_queries = len(queries)
            problems = [
                partial(StructuredHinge, X, target, queries, oracle_fn, fit_intercept=zero_one,
                        n_jobs=None if len(targets) > 1 else self.n_jobs,
                        check_input=False)  # validated once, here
                for target in targets
            ]
        n_features = X.shape[1]
        w0s = self._warm_start_points(len(targets), n_features, zero_one)
        rng = check_random_state(self.random_state)
        seeds = rng.randint(_MAX_SEED, size=len(targets))
        solver = SOLVERS[self.solver]
        one_vs_rest = len(targets) > 1
        jobs = [
            delayed(_fit_task)(
                problem,
                solver,
                C=self.C,
                tol=self.tol,
                max_iter=self.max_iter,
                w0=w0,
                random_state=int(seed),
                verbose=self.verbose,
                name=f"class {self.classes_[j]!r}" if one_vs_rest else "task",
                solver_params=self.solver_params or {},
            )
            for j, (problem, w0, seed) in enumerate(zip(problems, w0s, seeds))
        ]
        in_process = not isinstance(problems[0], partial)  # dask problems: the cluster works
        results = Parallel(n_jobs=self.n_jobs if one_vs_rest and not in_process else 1)(jobs)
        self._store_results(X, targets, results, zero_one)
        self.n_queries_ = n_queries
        self._fitted_on_queries = ranking_mode
        return self

    def _validate_in_memory(self, X, y, qid, group, ranking_mode):
        """Validated ``X`` (float32 kept, else float64), the queries and the binary targets."""
        X, y = validate_data(
            self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32],
            y_numeric=ranking_mode,
        )
        n_samples = X.shape[0]
        if ranking_mode:
            queries = resolve_queries(n_samples, qid=qid, group=group)
            relevant = np.asarray(y > 0)
            queries = informative_queries(queries, relevant)
            self.classes_ = np.array([0, 1])
            return X, queries, [relevant]
        check_classification_targets(y)
        self.classes_, y_index = np.unique(y, return_inverse=True)
        n_classes = self.classes_.shape[0]
        if n_classes < 2:
            raise ValueError(
                "RankSVM needs samples of at least two classes; the data contain only one "
                f"class: {self.classes_[0]!r}."
            )
        queries = [np.arange(n_samples, dtype=np.int64)]
        if n_classes == 2:
            return X, queries, [y_index == 1]
        return X, queries, [y_index == j for j in range(n_classes)]

    def _make_oracle(self):
        """The oracle callable for (loss, oracle, k); ValueError if the oracle cannot do the loss."""
        supported = supported_oracles(self.loss)
        if self.oracle not in supported:
            raise ValueError(
                f"oracle={self.oracle!r} does not support loss={_loss_label(self.loss)!r}; "
                f"oracles for this loss: {', '.join(map(repr, supported))}."
            )
        return get_oracle(self.loss, self.oracle, **self._loss_params())

    def _loss_params(self):
        return {"k": self.k} if _is_loss(self.loss, "precision_at_k") else {}

    def _warm_start_points(self, n_tasks, n_features, zero_one):
        """Initial w of each task: zeros (``None``) or the previous solution."""
        if not (self.warm_start and hasattr(self, "coef_")):
            return [None] * n_tasks
        if self.coef_.shape != (n_tasks, n_features):
            raise ValueError(
                f"warm_start=True needs the previous fit to have the same shape: coef_ has shape "
                f"{self.coef_.shape} but this fit has {n_tasks} task(s) and {n_features} features."
            )
        if zero_one:
            return [np.append(row, b) for row, b in zip(self.coef_, self.intercept_)]
        return [row.copy() for row in self.coef_]

    def _store_results(self, X, targets, results, zero_one):
        n_features = X.shape[1]
        coef = np.empty((len(results), n_features))
        intercept = np.empty(len(results))
        for j, (target, result) in enumerate(zip(targets, results)):
            w = np.asarray(result.w, dtype=np.float64)
            coef[j] = w[:n_features]
            if zero_one:
                intercept[j] = w[n_features]
            else:
                intercept[j] = -accuracy_threshold(matvec(X, coef[j]), np.asarray(target))
        self.coef_ = coef
        self.intercept_ = intercept
        self.n_iter_ = int(max(result.n_iter for result in results))
        objectives = np.array([float(result.objective) for result in results])
        histories = [list(result.history) for result in results]
        if len(results) == 1:
            self.objective_ = float(objectives[0])
            self.history_ = histories[0]
        else:
            self.objective_ = objectives
            self.history_ = histories
        unconverged = [result.n_iter for result in results if not result.converged]
        if unconverged:
            # with max_iter=None the solver's own default was the limit that was hit
            max_iter = self.max_iter if self.max_iter is not None else max(unconverged)
            warnings.warn(
                f"RankSVM (solver={self.solver!r}) did not converge to tol={self.tol} within "
                f"max_iter={max_iter} iterations; increase max_iter or tol.",
                ConvergenceWarning,
                stacklevel=4,  # _store_results < fit < sklearn's _fit_context wrapper < caller
            )

    # ------------------------------------------------------------ predict

    def decision_function(self, X):
        """Scores ``X @ coef_.T + intercept_``; positive means the positive class / relevant.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            One column per class for one-vs-rest, a vector otherwise. Sorting by it gives the
            ranking the model was trained to produce.
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        scores = matvec(X, self.coef_.T) + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Class labels: the decision function thresholded at 0 (argmax for one-vs-rest).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Labels from ``classes_`` (0/1 relevance when fitted with ``qid`` / ``group``).
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]

    def score(self, X, y, qid=None):
        """One minus the mean task loss of the ranking by ``decision_function``.

        Mean AP for ``"ap"``, mean NDCG for ``"ndcg"``, precision@k for ``"precision_at_k"``
        (ties broken by index, computed with ``ssvm.losses.ranking_loss``) and accuracy of
        ``predict`` for ``"zero_one"``. A query whose rows are all relevant scores 1.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.
        y : array-like of shape (n_samples,)
            True labels (graded relevance, ``y > 0`` relevant, if fitted with ``qid`` /
            ``group``).
        qid : array-like of shape (n_samples,), default=None
            Query id per row: the score is then the mean over queries that have a relevant
            row (every query for ``"zero_one"``). Without it all rows form one query.

        Returns
        -------
        score : float
            For one-vs-rest, the mean over the classes present in ``y`` of the per-class
            score (``"zero_one"``: the multi-class accuracy of ``predict``). NaN, with a
            warning, if no query has a relevant row.
        """
        scores = self.decision_function(X)
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != scores.shape[0]:
            raise ValueError(
                f"y must be 1-D with one label per row of X ({scores.shape[0]}); "
                f"got shape {y.shape}."
            )
        queries = resolve_queries(scores.shape[0], qid=qid)
        if scores.ndim == 2 and _is_loss(self.loss, "zero_one"):
            return float(np.mean(self.classes_[np.argmax(scores, axis=1)] == y))
        if self._fitted_on_queries:
            try:
                relevance = y.astype(np.float64)
            except (TypeError, ValueError):
                raise ValueError(
                    "y must hold numeric relevance grades for a model fitted with qid / group; "
                    f"got dtype {y.dtype}."
                ) from None
            tasks = [(scores, relevance > 0)]
        elif scores.ndim == 1:
            tasks = [(scores, y == self.classes_[1])]
        else:
            tasks = [(scores[:, j], y == c) for j, c in enumerate(self.classes_) if np.any(y == c)]
        values = [self._task_score(s, r, queries) for s, r in tasks]
        values = [v for v in values if v is not None]
        if not values:
            warnings.warn(
                "score is undefined: no query has a relevant row; returning nan.",
                UserWarning,
                stacklevel=2,
            )
            return float("nan")
        return float(np.mean(values))

    def _task_score(self, scores, relevant, queries):
        """Mean over the counted queries of 1 - loss; None if no query counts.

        ``ranking_loss`` needs both classes in a query; the other cases have closed forms: a
        query whose rows are all relevant is ranked perfectly (loss 0), one without a relevant row
        does not count for ranking losses, and the 0-1 loss is the error rate of ``scores > 0``.
        """
        zero_one = _is_loss(self.loss, "zero_one")
        params = self._loss_params()
        values = []
        for q in queries:
            s, r = scores[q], relevant[q]
            n_pos = int(np.count_nonzero(r))
            if zero_one:
                values.append(float(np.mean((s > 0) == r)))
            elif n_pos == r.shape[0]:
                values.append(1.0)
            elif n_pos > 0:
                values.append(1.0 - ranking_loss(s, r, loss=self.loss, **params))
        return float(np.mean(values)) if values else None

def _is_loss(loss, name):
    return isinstance(loss, str) and loss == name


def _loss_label(loss):
    return loss if isinstance(loss, str) else type(loss).__name__


class _IterationLogger:
    """Solver callback logging each iteration record at DEBUG level (picklable; never stops)."""

    def __init__(self, name):
        self.name = name

    def __call__(self, record):
        logger.debug("RankSVM %s: %s", self.name, record)
        return False


def _is_dask_array(X):
    """Whether ``X`` is a dask array (dask is not imported here: a dask array means it was)."""
    dask_array = sys.modules.get("dask.array")
    return dask_array is not None and isinstance(X, dask_array.Array)


def _fit_task(problem, solver, *, C, tol, max_iter, w0, random_state, verbose, name, solver_params):
    """Minimise one binary task's problem (a joblib worker builds it from a partial)."""
    if not isinstance(problem, Problem):
        problem = problem()
    if max_iter is not None:  # otherwise the solver's own default
        solver_params = {**solver_params, "max_iter": max_iter}
    result = solver(
        problem,
        C,
        tol=tol,
        w0=w0,
        callback=_IterationLogger(name) if verbose >= 2 else None,
        random_state=random_state,
        **solver_params,
    )
    if verbose:
        logger.info(
            "RankSVM %s: J=%.6g after %d iterations (converged=%s, oracle %.3fs)",
            name, result.objective, result.n_iter, result.converged, problem.oracle_seconds,
        )
    return result


def accuracy_threshold(scores, relevant):
    """Threshold t maximising the accuracy of ``scores > t`` as a predictor of ``relevant``.

    Candidate cuts lie halfway between consecutive distinct scores, or just below the smallest /
    above the largest score; among the cuts of maximal accuracy the middle one is taken (so the
    result is deterministic and not on the edge of the tie set).

    Parameters
    ----------
    scores : ndarray of shape (n,)
        Finite training scores.
    relevant : ndarray of bool of shape (n,)
        True labels.

    Returns
    -------
    t : float
        Finite; ``scores > t`` is exactly the chosen cut (rows tied in score fall on the same
        side). Usually strictly between two scores; it equals the lower one only when the two
        are adjacent floats.
    """
    order = np.argsort(scores, kind="stable")
    s = scores[order]
    r = np.asarray(relevant, dtype=bool)[order]
    n = s.shape[0]
    # cut i: rows s[:i] predicted negative, s[i:] positive
    correct = np.concatenate(([0], np.cumsum(~r))) + (
        np.count_nonzero(r) - np.concatenate(([0], np.cumsum(r)))
    )
    allowed = np.ones(n + 1, dtype=bool)
    allowed[1:n] = s[:-1] < s[1:]
    correct = np.where(allowed, correct, -1)
    best = np.flatnonzero(correct == correct.max())
    i = int(best[(best.shape[0] - 1) // 2])
    spread = s[-1] - s[0]
    step = spread / n if 0 < spread < np.inf else max(1.0, abs(s[0]) / 2)
    if i == 0:
        t = s[0] - step
        return float(t if t < s[0] else np.nextafter(s[0], -np.inf))
    if i == n:
        t = s[-1] + step
        return float(t if t > s[-1] else s[-1])
    lo, hi = s[i - 1], s[i]
    t = lo + (hi - lo) / 2
    return float(t if lo <= t < hi else lo)
