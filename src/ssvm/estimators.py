"""``RankSVM``: the scikit-learn estimator over the structured-hinge solvers.

This module only validates, builds queries, dispatches and stores results; the math lives in
``ssvm.problem`` (the objective), ``ssvm.solvers`` (the minimisers), ``ssvm.losses`` (the
loss-augmented inference oracles) and ``ssvm.metrics`` (scores and the decision threshold).
``predict`` is scikit-learn's (``LinearClassifierMixin``), on ``decision_function`` by ssvm's compiled product.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ssvm._fitting import check_solver_params, draw_seeds, fit_task, is_dask_array, say
from ssvm.exceptions import MissingQidWarning, external_stacklevel, warn_once
from ssvm.losses import LOSS_NAMES, ORACLE_NAMES, QSLoss, get_oracle, loss_entry, supported_oracles
from ssvm.losses.graded import GAINS
from ssvm.losses.targets import fit_targets
from ssvm.metrics import _renamed_gain, accuracy_threshold, one_vs_rest_score, ranking_score
from ssvm.problem import matvec
from ssvm.problem.training_set import in_memory_training_set
from ssvm.solvers import SOLVERS

__all__ = ["RankSVM"]


class RankSVM(LinearClassifierMixin, BaseEstimator):
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
        Task loss whose structured hinge is minimised. ``"ndcg"`` with ``qid`` / ``group`` uses
        the relevance grades (see ``gain``); the other losses are binary: a row is relevant or
        not (``y > 0``). ``"zero_one"`` is the usual linear SVM (hinge loss with a
        regularised intercept, as liblinear): ``RankSVM(loss="zero_one", C=C)`` minimises the
        same function as ``LinearSVC(loss="hinge", C=C / n_samples)``. A user loss object (an
        ``ssvm.losses.QSLoss`` instance, served by the "qs" and "brute" oracles) can be passed
        as well.
    oracle : str, default="auto"
        Loss-augmented inference algorithm (``ssvm.losses.ORACLE_NAMES``). It must support the
        loss (``ssvm.losses.supported_oracles(loss)``); ``"auto"`` picks the fastest exact one.
    solver : str, default="cutting_plane"
        Minimiser of J, a key of ``ssvm.solvers.SOLVERS`` (``"cutting_plane"``, ``"pegasos"``,
        ``"frank_wolfe"``).
    C : float, default=1.0
        Weight of the mean structured hinge against ``½‖w‖²``; must be positive.
    k : int, default=None
        Cut-off of ``loss="precision_at_k"`` (None means 10; clipped to the size of each
        query). The other losses have no cut-off: setting ``k`` with them warns.
    gain : {"exponential", "linear", "binary"}, default="exponential"
        Gains of ``loss="ndcg"`` (ignored by the other losses): g(r) = 2^r − 1, r, or [r > 0].
        With graded relevance (``qid`` / ``group`` and integer grades ``y``) the hinge is the
        exact graded NDCG hinge ``Σ_t α_t H_t`` over the grade thresholds (the docs: "How it
        works"); with 0/1 labels the three gains train the same model. ``score`` measures NDCG
        with the same gain.
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
        ``0``: silent; ``1``: one line per fitted task (and the queries used) on stdout, as
        scikit-learn estimators print; ``≥ 2``: also one line per solver iteration. A
        one-vs-rest fit with ``n_jobs > 1`` prints from the worker processes.
    warm_start : bool, default=False
        Start the solver from the previous ``coef_`` (and ``intercept_`` for ``"zero_one"``)
        instead of zero. The previous fit must have the same number of tasks and features.
    solver_params : dict, default=None
        Extra keyword arguments of the solver function (see its docstring in ``ssvm.solvers``),
        e.g. for the cutting plane ``{"qp": "cvxpy"}`` (its dual QP through cvxpy),
        ``{"ocas": False}`` (the plain method of Joachims et al. instead of OCAS's cut rule),
        ``{"line_search": True}`` (OCAS's line search too) or ``{"mu": 0.2}`` (OCAS's cut
        parameter). An unknown key raises a ValueError listing the accepted ones.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Weights; one row for a binary / ranking problem, one per class for one-vs-rest.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Decision threshold as an offset, so that ``decision_function = X @ coef_.T + intercept_``
        and ``predict`` thresholds it at 0. For ``"zero_one"`` it is the learnt (regularised)
        intercept. The ranking losses are invariant to shifting all scores, so they do not fix
        one: it is chosen after training as the cut of the training scores that maximises
        training accuracy (:func:`ssvm.metrics.accuracy_threshold`).
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
        Number of queries trained on.
    n_skipped_queries_ : int
        Number of queries skipped because they have no relevant or no non-relevant row (graded
        NDCG: all their grades equal), announced by a
        :class:`~ssvm.exceptions.DegenerateQueriesWarning`.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit (only when ``X`` has string column names).

    See Also
    --------
    sklearn.svm.LinearSVC : the 0-1 (hinge) special case, solved by liblinear.
    ssvm.metrics : the per-query measures behind ``score``.

    Notes
    -----
    **Model selection on queries.** Keep queries whole (``GroupKFold`` with ``groups=qid``) and
    score per query. Per-query scoring needs ``qid`` at ``score`` time, which scikit-learn
    passes only with metadata routing; ``RankSVM`` requests ``qid`` for ``fit`` and ``score``
    by default, so enabling routing is all it takes::

        import sklearn
        sklearn.set_config(enable_metadata_routing=True)
        search = GridSearchCV(RankSVM(), {"C": [0.01, 0.1, 1.0]}, cv=GroupKFold(5))
        search.fit(X, y, qid=qid, groups=qid)

    Without routing, ``GridSearchCV`` still passes ``qid`` to ``fit`` but calls ``score``
    without it: each test fold is ranked as one query, and a
    :class:`~ssvm.exceptions.MissingQidWarning` says so. ``group`` sizes cannot be split with
    the rows; use ``qid`` for model selection.

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
        "k": [Interval(Integral, 1, None, closed="left"), None],
        "gain": [StrOptions(set(GAINS))],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
        "solver_params": [dict, None],
    }
    # with metadata routing on, meta-estimators pass qid to fit and score without being asked
    __metadata_request__fit = {"qid": True}
    __metadata_request__score = {"qid": True}

    def __init__(
        self,
        loss="ap",
        oracle="auto",
        solver="cutting_plane",
        C=1.0,
        *,
        k=None,
        gain="exponential",
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
        self.gain = gain
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
            Class labels, or numeric relevance grades (``y > 0`` is relevant) when ``qid`` or
            ``group`` is given.
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
            On an oracle that does not support the loss, an unknown ``solver_params`` key,
            both ``qid`` and ``group``, malformed queries, non-numeric relevance, a single
            class, all queries degenerate, or NaN / infinity in the input.
        """
        oracle = self._make_oracle()
        solver_params = check_solver_params(self.solver, self.solver_params, "RankSVM")
        ranking_mode = qid is not None or group is not None
        intercept = loss_entry(self.loss).intercept  # the loss is not invariant to a shift
        if is_dask_array(X):
            from ssvm.problem.dask_training import training_set  # dask only when it is used

            if oracle.graded and ranking_mode:
                if loss_entry(self.loss).reads_grades:
                    raise ValueError(f"loss={self.loss!r} reads relevance grades, which do not run on dask arrays "
                                     "yet; pass X as a numpy array or scipy matrix")
                raise ValueError(f"graded NDCG (gain={self.gain!r}) does not run on dask arrays yet; pass "
                                 "gain='binary' (y > 0 relevant) or X as a numpy array or scipy matrix")
            validate_data(self, X, skip_check_array=True)  # n_features_in_; X is not computed
            oracle, _ = fit_targets(oracle, None)  # binary targets: the classes, or y > 0 on the blocks
            data = training_set(X, y, qid=qid, group=group, oracle=oracle,
                                fit_intercept=intercept, solver=self.solver)
        else:
            X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32])
            data = in_memory_training_set(X, y, qid=qid, group=group, oracle=oracle)
            oracle = data.oracle  # fit_targets' choice: graded, or binary on 0/1 targets
        self.classes_ = data.classes
        self.n_queries_, self.n_skipped_queries_ = data.n_queries, data.n_skipped
        if self.verbose and ranking_mode:
            say(f"RankSVM: {self.n_queries_} queries, {self.n_skipped_queries_} skipped "
                "(nothing to rank: no relevant or no non-relevant row, or all grades equal)")

        one_vs_rest = len(data.targets) > 1
        starts = self._warm_start_points(len(data.targets), data.X.shape[1], intercept)
        jobs = [
            delayed(fit_task)(
                data.X, target, data.queries, oracle, fit_intercept=intercept,
                n_jobs=None if one_vs_rest else self.n_jobs, solver=self.solver, C=self.C,
                tol=self.tol, max_iter=self.max_iter, w0=w0, random_state=seed,
                verbose=self.verbose, solver_params=solver_params,
                name=f"RankSVM class {_plain(self.classes_[j])!r}" if one_vs_rest else "RankSVM",
                problem=problem,
            )
            for j, (target, problem, w0, seed) in enumerate(zip(
                data.targets, data.problems, starts, draw_seeds(self.random_state, len(starts))))
        ]
        in_memory = data.problems[0] is None  # a dask fit's problems run on the cluster, one by one
        results = Parallel(n_jobs=self.n_jobs if one_vs_rest and in_memory else 1)(jobs)
        self._store_results(data.X, data.targets, results, intercept)
        self._fitted_on_queries = ranking_mode
        return self

    def _make_oracle(self, **override):
        """The oracle for (loss, oracle, k, gain), ``override`` replacing loss parameters; ValueError
        if the oracle cannot do the loss."""
        entry = loss_entry(self.loss)
        supported = supported_oracles(self.loss)
        if self.oracle not in supported:
            raise ValueError(
                f"oracle={self.oracle!r} does not support loss={entry.name!r}; "
                f"oracles for this loss: {', '.join(map(repr, supported))}."
            )
        if self.k is not None and "k" not in entry.params:
            warnings.warn(
                f"k={self.k} is ignored: only loss='precision_at_k' has a cut-off "
                f"(loss={entry.name!r}). Leave k=None with this loss.",
                UserWarning,
                stacklevel=external_stacklevel(),
            )
        return get_oracle(self.loss, self.oracle, **{**self._loss_params(), **override})

    def _loss_params(self):
        """The loss parameters set on the estimator (the loss table fills in the defaults)."""
        params = loss_entry(self.loss).params
        given = {"k": self.k, "gain": self.gain}
        return {name: value for name, value in given.items() if name in params and value is not None}

    def _warm_start_points(self, n_tasks, n_features, intercept):
        """Initial w of each task: zeros (``None``) or the previous solution."""
        if not (self.warm_start and hasattr(self, "coef_")):
            return [None] * n_tasks
        if self.coef_.shape != (n_tasks, n_features):
            raise ValueError(
                f"warm_start=True needs the previous fit to have the same shape: coef_ has shape "
                f"{self.coef_.shape} but this fit has {n_tasks} task(s) and {n_features} features."
            )
        if intercept:
            return [np.append(row, b) for row, b in zip(self.coef_, self.intercept_)]
        return [row.copy() for row in self.coef_]

    def _store_results(self, X, targets, results, fit_intercept, threshold=True):
        """Set the fitted attributes from the solver results (``threshold=False``: the ranking
        losses' intercept_ stays 0, for a caller that only ranks, e.g. RankSVMCV's default score)."""
        n_features = X.shape[1]
        coef = np.empty((len(results), n_features))
        intercept = np.zeros(len(results))
        for j, (target, result) in enumerate(zip(targets, results)):
            w = np.asarray(result.w, dtype=np.float64)
            coef[j] = w[:n_features]
            if fit_intercept:
                intercept[j] = w[n_features]
            elif threshold and is_dask_array(X):  # the scores stay on the blocks
                from ssvm._dask_threshold import dask_accuracy_threshold

                intercept[j] = -dask_accuracy_threshold(X, coef[j], target)
            elif threshold:
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
                stacklevel=external_stacklevel(),
            )

    # -------------------------------------------------------------- score

    def decision_function(self, X):
        """Confidence scores ``X @ coef_.T + intercept_``.

        By the compiled product of training (:func:`ssvm.problem.matvec`): each row's sum in
        float64 and in the order training used, a float32 ``X`` read as it is (never up-cast or
        copied).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of float64, shape (n_samples,) for a binary or ranking model, else
        (n_samples, n_classes)
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", reset=False, dtype=[np.float64, np.float32])
        scores = matvec(X, self.coef_.T) + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def score(self, X, y, qid=None, gain=None, sample_weight=None, *, gains=None):
        """One minus the mean task loss of the ranking by ``decision_function``.

        Mean AP for ``"ap"``, mean NDCG for ``"ndcg"``, precision@k for ``"precision_at_k"``
        and accuracy of ``predict`` for ``"zero_one"``, per query with the conventions of
        :mod:`ssvm.metrics` (ties by row order; a query whose ranking cannot change the
        measure — no relevant or no non-relevant row — is left out of the mean).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.
        y : array-like of shape (n_samples,)
            True labels (numeric relevance grades, ``y > 0`` relevant, if fitted with ``qid``
            / ``group``).
        qid : array-like of shape (n_samples,), default=None
            Query id per row: the score is then the mean over queries. Without it all rows
            form one query (a :class:`~ssvm.exceptions.MissingQidWarning` says so if the model
            was fitted with ``qid`` / ``group``).
        gain : {"exponential", "linear", "binary"}, default=None
            Gains of the NDCG (``loss="ndcg"`` only; see :func:`ssvm.metrics.mean_ndcg`). None:
            the estimator's ``gain``, the one it was trained with.
        sample_weight : None
            Not supported (a ValueError if given): per-query measures weigh queries equally.
            The argument exists so that ``Pipeline.score`` works with metadata routing.
        gains : str, optional
            The former name of ``gain`` (deprecated; a ``FutureWarning``).

        Returns
        -------
        score : float
            For one-vs-rest, the mean over the classes present in ``y`` of the per-class
            score (``"zero_one"``: the multi-class accuracy of ``predict``). NaN, with a
            warning, if no query counts.
        """
        if sample_weight is not None:
            raise ValueError("RankSVM.score does not take sample_weight: its per-query measures "
                             "weigh every query equally.")
        scores = self.decision_function(X)
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != scores.shape[0]:
            raise ValueError(
                f"y must be 1-D with one label per row of X ({scores.shape[0]}); "
                f"got shape {y.shape}."
            )
        if qid is None and self._fitted_on_queries:
            warn_once(
                "RankSVM was fitted on queries (qid / group) but score() got no qid, so all "
                "rows are ranked as one query. Pass qid=... to score per query. Within "
                "GridSearchCV / cross_validate, enable metadata routing "
                "(sklearn.set_config(enable_metadata_routing=True); RankSVM requests qid for "
                "fit and score by default, or call set_score_request(qid=True)) and pass "
                "qid=... and groups=qid to the search's fit.",
                MissingQidWarning,
            )
        if scores.ndim == 2 and loss_entry(self.loss).metric == "accuracy":
            return float(np.mean(self.predict(X) == y))
        gain = _renamed_gain(gain, gains)
        if gain is None:
            gain = self._loss_params().get("gain")
        options = {"qid": qid, "loss": self.loss, "gain": gain, "k": self._loss_params().get("k")}
        if self._fitted_on_queries:
            return ranking_score(y, scores, **options)
        if scores.ndim == 1:
            return ranking_score(y == self.classes_[1], scores, **options)
        return one_vs_rest_score(y, scores, self.classes_, **options)


def _plain(value):
    """A numpy scalar as the Python value it holds (so messages show ``1.0``, not ``np.float64(1.0)``)."""
    return value.item() if isinstance(value, np.generic) else value
