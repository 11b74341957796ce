"""The work of :class:`ssvm.RankSVMCV`: the grid of C, the folds, the warm path of one fold, scoring.

The structured hinge ``H(w)`` of a training fold does not depend on ``C``, so every cutting plane
found while solving for one ``C`` is a valid lower bound of ``H`` at every other ``C``. A fold's
path therefore solves its values of C in increasing order, each from the previous ``C``'s ``w``
and (with the cutting plane) its working set of planes; each ``C`` still stops on its own
certified gap. Other solvers start from the previous ``w`` only.
"""

import inspect
import time
from numbers import Integral

import numpy as np
from sklearn.metrics._scorer import _BaseScorer
from sklearn.model_selection import GroupKFold, StratifiedKFold, check_cv
from sklearn.utils.metadata_routing import _routing_enabled, get_routing_for_object

from ssvm._fitting import run_solver, say
from ssvm.problem import StructuredHinge
from ssvm.problem.training_set import in_memory_training_set

__all__ = ["check_Cs", "fold_path", "query_labels", "score_with", "split_folds"]

_DEFAULT_FOLDS = 5


def check_Cs(Cs):
    """The grid of C: ``np.logspace(-4, 4, Cs)`` for an integer, else the given positive values.

    Raises
    ------
    ValueError
        If the grid is empty or holds a value that is not a positive finite number.
    """
    if isinstance(Cs, Integral) and not isinstance(Cs, bool):
        if Cs < 1:
            raise ValueError(f"Cs as an integer is the number of values of C, at least 1; got {Cs}.")
        return np.logspace(-4, 4, int(Cs))
    try:
        grid = np.asarray(Cs, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"Cs must be an integer or a list of positive numbers; got {Cs!r}.") from None
    if grid.ndim != 1 or grid.size == 0:
        raise ValueError(f"Cs must be an integer or a non-empty 1-D list of positive numbers; got "
                         f"{Cs!r}.")
    bad = ~(np.isfinite(grid) & (grid > 0))
    if bad.any():
        raise ValueError(f"Cs must hold positive finite numbers (C weighs the hinge against "
                         f"½‖w‖²); got {grid[bad].tolist()} in Cs.")
    return grid


def query_labels(queries, n_samples):
    """One integer label per row: the index of its query (the groups of the folds)."""
    labels = np.empty(n_samples, dtype=np.int64)
    for k, rows in enumerate(queries):
        labels[rows] = k
    return labels


def split_folds(cv, X, y, groups):
    """The (train, test) index pairs of ``cv``; ``groups`` are the query labels, or None.

    With queries, an integer (or None: 5) means ``GroupKFold``; any splitter gets ``groups`` and
    must keep every query on one side. Without, an integer means ``StratifiedKFold``.

    Raises
    ------
    ValueError
        If there are fewer queries (or members of the smallest class) than folds, or a fold
        splits a query between its training and test rows.
    """
    cv = _DEFAULT_FOLDS if cv is None else cv
    if isinstance(cv, Integral):
        if groups is not None:
            n_queries = np.unique(groups).size
            if cv > n_queries:
                raise ValueError(f"cv={cv} folds need at least {cv} queries; the data have "
                                 f"{n_queries}. Use fewer folds.")
            cv = GroupKFold(cv)
        else:
            smallest = int(np.unique(y, return_counts=True)[1].min())
            if cv > smallest:
                raise ValueError(f"cv={cv} stratified folds need at least {cv} samples of every "
                                 f"class; the smallest class has {smallest}. Use fewer folds.")
            cv = StratifiedKFold(cv)
    cv = check_cv(cv, y, classifier=True)
    folds = list(cv.split(X, y, groups))
    if not folds:
        raise ValueError("cv gave no folds.")
    for k, (train, test) in enumerate(folds):
        if groups is not None:
            split = np.intersect1d(groups[train], groups[test])
            if split.size:
                raise ValueError(
                    f"cv splits {split.size} query(ies) between the training and test rows of fold "
                    f"{k}: a query must stay whole. Use a group splitter (GroupKFold, "
                    "GroupShuffleSplit, LeaveOneGroupOut, ...); RankSVMCV passes groups=qid.")
        if len(train) == 0 or len(test) == 0:
            raise ValueError(f"cv fold {k} has an empty training or test set.")
    return folds


def _wants_qid(scorer):
    """Whether a scorer is given ``qid``: a scikit-learn scorer when metadata routing is on and it
    requests ``qid``; another callable when its signature has a ``qid`` parameter."""
    if isinstance(scorer, _BaseScorer):
        return _routing_enabled() and bool(get_routing_for_object(scorer).consumes("score", ["qid"]))
    try:
        return "qid" in inspect.signature(scorer).parameters
    except (TypeError, ValueError):
        return False


def score_with(scorer, estimator, X, y, qid, score_params):
    """Validation score of a fitted ``estimator``: its own ``score`` (with ``qid`` and
    ``score_params``) for ``scorer=None``, else ``scorer(estimator, X, y[, qid=qid])``."""
    if scorer is None:
        return float(estimator.score(X, y, qid=qid, **score_params))
    if qid is not None and _wants_qid(scorer):
        return float(scorer(estimator, X, y, qid=qid))
    return float(scorer(estimator, X, y))


def fold_path(X, y, groups, train, test, Cs, *, classes, make_model, oracle, zero_one,
              solver, tol, max_iter, seeds, solver_params, scorer, score_params, verbose, fold):
    """Solve fold ``fold``'s path over ``Cs`` (increasing) warm and score each C on its test rows.

    The fold's targets and oracle (graded, or binary on 0/1 training grades) are
    :func:`~ssvm.losses.targets.fit_targets`' choice, as in ``RankSVM.fit``.
    ``make_model(C)`` returns an unfitted :class:`~ssvm.RankSVM` whose fitted state is set here
    from the path's solutions as its ``fit`` would set it (with the default scoring, which ranks
    within queries, without the intercept of the ranking losses: it does not change that score).

    Returns
    -------
    dict
        ``scores``, ``fit_time``, ``score_time``, ``n_iter``: arrays over ``Cs``; ``objective``:
        array (n_Cs, n_tasks).
    """
    qid_train = None if groups is None else groups[train]
    qid_test = None if groups is None else groups[test]
    X_train, X_test, y_test = X[train], X[test], y[test]
    data = in_memory_training_set(X_train, y[train], qid=qid_train, group=None, oracle=oracle)
    if not np.array_equal(data.classes, classes):
        raise ValueError(f"the training rows of cv fold {fold} hold the classes "
                         f"{data.classes.tolist()}, not all of {classes.tolist()}: use stratified "
                         "folds (cv=None or an integer) or fewer folds.")
    problems = [StructuredHinge(X_train, target, data.queries, data.oracle, fit_intercept=zero_one,
                                check_input=False) for target in data.targets]
    starts = [(None, None)] * len(problems)  # (w, planes) carried from the previous C
    out = {key: np.empty(len(Cs)) for key in ("scores", "fit_time", "score_time", "n_iter")}
    out["objective"] = np.empty((len(Cs), len(problems)))
    for i, C in enumerate(Cs):
        tic = time.perf_counter()
        results = []
        for j, (problem, (w0, planes)) in enumerate(zip(problems, starts)):
            params = dict(solver_params)
            if solver == "cutting_plane" and planes is not None:
                params["planes"] = planes
            results.append(run_solver(problem, solver, C, tol=tol, max_iter=max_iter, w0=w0,
                                      random_state=seeds[j], verbose=verbose,
                                      name=f"RankSVMCV fold {fold} C={C:.4g}",
                                      solver_params=params))
        starts = [(r.w, r.planes) for r in results]
        model = make_model(C)
        model.classes_ = data.classes
        model.n_features_in_ = X.shape[1]
        model.n_queries_, model.n_skipped_queries_ = data.n_queries, data.n_skipped
        model._fitted_on_queries = groups is not None
        # the default score ranks within queries (or classes): it does not depend on the
        # ranking losses' intercept, a search over the training scores that is skipped then
        model._store_results(X_train, data.targets, results, zero_one, threshold=scorer is not None)
        out["fit_time"][i] = time.perf_counter() - tic
        tic = time.perf_counter()
        out["scores"][i] = score_with(scorer, model, X_test, y_test, qid_test, score_params)
        out["score_time"][i] = time.perf_counter() - tic
        out["n_iter"][i] = model.n_iter_
        out["objective"][i] = [r.objective for r in results]
        if verbose:
            say(f"RankSVMCV fold {fold}: C={C:.4g}, score={out['scores'][i]:.4f}, "
                f"{model.n_iter_} iterations, {out['fit_time'][i]:.2f}s")
    return out
