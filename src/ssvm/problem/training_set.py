"""What ``RankSVM.fit`` trains on: one binary target per task, with its queries or its problem.

Classification (no ``qid`` / ``group``): one query of all rows, one task for two classes and one
per class (one-vs-rest) for more. Ranking: one task whose target and oracle
:func:`~ssvm.losses.targets.fit_targets` decides (relevance ``y > 0``, or the grades for an oracle
that reads them), the queries that have a relevant and a non-relevant row (two distinct grades).
In memory each task builds its :class:`~ssvm.problem.StructuredHinge` in its own (joblib) worker
from ``queries``; a dask ``X`` brings its problems built (:mod:`ssvm.problem.dask_training`).
"""

from typing import NamedTuple

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from .._queries import informative_queries, resolve_queries
from ..losses.targets import fit_targets

__all__ = ["TrainingSet", "class_targets", "in_memory_training_set"]


class TrainingSet(NamedTuple):
    """One binary target (and, on dask, one problem) per task."""

    X: object  # the features as the problems read them (dask: re-chunked, persisted)
    classes: np.ndarray
    targets: list  # binary relevance (or the grades, for a graded oracle) of every row, per task
    problems: list  # built problems (dask), or None per task: the task builds it from `queries`
    n_queries: int  # queries trained on
    n_skipped: int  # queries skipped (no relevant or no non-relevant row)
    queries: list = None  # in memory: the row indices of each query trained on
    oracle: object = None  # in memory: the oracle the targets are for (fit_targets)


def class_targets(y):
    """The classes of ``y`` and one binary target per task.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Class labels.

    Returns
    -------
    classes : ndarray
        The sorted classes.
    targets : list of ndarray of bool
        ``y == classes[1]`` for two classes, else ``y == c`` for every class ``c``.

    Raises
    ------
    ValueError
        If ``y`` holds a single class (or is not a classification target).
    """
    check_classification_targets(y)
    classes, index = np.unique(y, return_inverse=True)
    if classes.shape[0] < 2:
        raise ValueError("RankSVM needs samples of at least two classes; the data contain only "
                         f"one class: {classes[:1].tolist()[0]!r}.")
    labels = [1] if classes.shape[0] == 2 else range(classes.shape[0])
    return classes, [index == j for j in labels]


def in_memory_training_set(X, y, *, qid, group, oracle):
    """The training set of validated in-memory data.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Class labels, or relevance grades (``y > 0`` relevant) with ``qid`` or ``group``.
    qid : array-like of shape (n_samples,) or None
    group : array-like of int or None
    oracle : Oracle
        The fit's oracle: :func:`~ssvm.losses.targets.fit_targets` decides the target (graded or
        binary) and the oracle that reads it (``TrainingSet.oracle``).

    Returns
    -------
    TrainingSet
    """
    n_samples = X.shape[0]
    if qid is None and group is None:
        classes, targets = class_targets(y)
        return TrainingSet(X, classes, targets, [None] * len(targets), 1, 0,
                           [np.arange(n_samples, dtype=np.int64)], fit_targets(oracle, None)[0])
    oracle, target = fit_targets(oracle, y, n_samples)
    every_query = resolve_queries(n_samples, qid=qid, group=group)
    queries = informative_queries(every_query, target)
    return TrainingSet(X, np.array([0, 1]), [target], [None], len(queries),
                       len(every_query) - len(queries), queries, oracle)
