"""``RankSVM.fit`` on a dask array: the training problems and targets (imported only then).

With queries (``qid`` or ``group``), one :class:`~ssvm.problem.dask_space.DaskStructuredHinge`:
blocks of whole queries, one task per block per round. Without, the training set is one query per
binary task (classification: two classes, or one-vs-rest), which no block can hold: one
:class:`~ssvm.problem.dask_giant.DaskGiantHinge` per task for AP, NDCG, 0-1 and precision@k (the blocks find
their own coefficients; no per-row data reach the client), else one
:class:`~ssvm.problem.dask_gathered.DaskGatheredHinge`, whose rounds bring the scores to the
client.
"""

import dask
import dask.array as da
import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from .._queries import check_group
from ._dask_cluster import distributed_client
from .dask_gathered import DaskGatheredHinge
from .dask_giant import DaskGiantHinge, giant_form
from .dask_space import DaskStructuredHinge, check_dask_features, dask_rows
from .training_set import TrainingSet, class_targets

__all__ = ["training_set"]


def training_set(X, y, *, qid, group, oracle, fit_intercept, solver):
    """The training problems of ``RankSVM.fit`` on a dask ``X``.

    Parameters
    ----------
    X : dask.array.Array
    y : array-like or dask array
        Class labels, or relevance grades (``y > 0`` relevant) with ``qid`` or ``group``.
    qid : array-like or dask array, or None
    group : array-like of int, or None
    oracle : Oracle
    fit_intercept : bool
    solver : str
        The estimator's solver name.

    Returns
    -------
    TrainingSet

    Raises
    ------
    ValueError
        With both ``qid`` and ``group``, with ``solver="frank_wolfe"``, labels of a single
        class, or on the errors of the problems.
    """
    if qid is not None and group is not None:
        raise ValueError("Pass either qid (a query id per row) or group (sizes of consecutive "
                         "queries), not both.")
    if solver == "frank_wolfe":
        raise ValueError("solver='frank_wolfe' visits one query at a time, a round trip to the "
                         "cluster each; it needs in-memory data. Use solver='cutting_plane' (or "
                         "'pegasos') with a dask X.")
    if qid is None and group is None:
        return _classification(X, y, oracle, fit_intercept)
    if group is not None:
        qid = np.repeat(np.arange(len(group)), check_group(group, X.shape[0]))
    problem = DaskStructuredHinge(X, y, qid, oracle, fit_intercept=fit_intercept)
    y = y if isinstance(y, da.Array) else da.from_array(np.asarray(y), chunks=(problem.chunks,))
    return TrainingSet(problem.X, np.array([0, 1]), [y.rechunk((problem.chunks,)) > 0],
                       [problem], problem.n_queries, problem.n_skipped_queries)


def block_classes(y_b):
    """The classes of a block's labels, sorted, or the ValueError of labels that are not classes
    (as in memory). Runs on a worker."""
    y_b = np.asarray(y_b)
    if y_b.size:
        check_classification_targets(y_b)
    return np.unique(y_b)


def _classification(X, y, oracle, fit_intercept):
    """One query of all rows per binary task. The labels stay on the blocks: their classes come to
    the client, and each task's target is a dask array (with an oracle that runs on the client,
    :class:`~ssvm.problem.dask_gathered.DaskGatheredHinge`, the targets come too)."""
    X = check_dask_features(X)
    n = X.shape[0]
    y = y if isinstance(y, da.Array) else np.asarray(y)
    if y.shape != (n,) and not np.isnan(y.shape).any():
        raise ValueError(f"y has shape {y.shape} but X has {n} rows")
    y = dask_rows(y, "y", n, X.chunks[0])
    if distributed_client() is not None:
        X, y = X.persist(), y.persist()  # once, for all the tasks
    classes = np.unique(np.concatenate(dask.compute(*map(dask.delayed(block_classes), y.to_delayed().ravel()))))
    classes, _ = class_targets(classes)  # the checks of the in-memory fit (two classes at least)
    targets = [y == c for c in (classes[1:] if classes.shape[0] == 2 else classes)]
    hinge = DaskGiantHinge if giant_form(oracle) is not None else DaskGatheredHinge
    if hinge is DaskGatheredHinge:  # its oracle runs on the client, on the labels there
        targets = [np.asarray(target.compute()) for target in targets]
    problems = [hinge(X, target, oracle, fit_intercept=fit_intercept, persist=False)
                for target in targets]
    return TrainingSet(X, classes, targets, problems, 1, 0)
