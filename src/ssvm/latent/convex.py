"""The convex problems of latent training: the CCCP bound of a step, and the mean-feature start."""

import numpy as np

from ssvm._fitting import is_dask_array
from ssvm.losses.pooled import pooled_oracle, segment_argmax
from ssvm.problem import StructuredHinge

__all__ = ["ConvexBound", "OracleMeter", "mean_feature_problem"]


def _problem(X, y, oracle, n_jobs):
    """One query over all rows; ``X``, ``y`` and the query are valid by construction."""
    return StructuredHinge(X, y, (np.arange(X.shape[0], dtype=np.int64),), oracle,
                           fit_intercept=False, n_jobs=n_jobs, check_input=False)


class ConvexBound:
    """The convex bound of one CCCP step, rebuilt cheaply for every imputation.

    The design matrix holds the windows of the negative images (``negatives="all"``/``"best"``:
    all of them; ``"best"`` pools them inside the oracle, :func:`ssvm.losses.pooled.pooled_oracle`)
    followed by one row per positive image, its imputed window; only those last rows change
    between steps. The intercept, if any, is a constant column (regularised like the weights).
    Features are checked once: the negatives' rows here, each positive window through its
    (finite) score when it is imputed.

    When the window features are a dask array (``da.from_zarr(...)``, or a memory-mapped store
    wrapped by ``da.from_array``), the negatives' windows stay where they are — on the cluster's
    workers (persisted once), or read block by block from disk every round — and each step's
    problem is a :class:`~ssvm.problem.dask_gathered.DaskGatheredHinge` over them plus the
    imputed positives in memory (the intercept a virtual feature): only vectors of one number
    per window are ever held in one process, and non-finite features are found in the rounds.

    Parameters
    ----------
    data : Bags
    positive : ndarray of bool, shape (n_images,)
    loss_oracle : Oracle
    negatives : {"best", "all"}
    intercept : bool
    n_jobs : int or None
    """

    def __init__(self, data, positive, loss_oracle, negatives, intercept, n_jobs):
        self.data = data
        self.positive_images = np.flatnonzero(positive)
        negative_images = np.flatnonzero(~positive)
        starts, stops = data.offsets[negative_images], data.offsets[negative_images + 1]
        neg_rows = np.concatenate([np.arange(a, b) for a, b in zip(starts, stops)])
        self.n_neg_rows = neg_rows.size
        n_pos = self.positive_images.size
        d = data.n_features
        if is_dask_array(data.features):  # the negatives stay out of this process
            from ssvm.problem._dask_cluster import distributed_client

            self.X, self.neg_rows = None, neg_rows
            self.features = (data.features.persist() if distributed_client() is not None
                             else data.features)
        else:
            self.X = np.empty((self.n_neg_rows + n_pos, d + int(intercept)))
            self.X[:self.n_neg_rows, :d] = data.rows(neg_rows)
            if not np.all(np.isfinite(self.X[:self.n_neg_rows, :d])):
                raise ValueError("window features contain NaN or infinite values")
            if intercept:
                self.X[:, d] = 1.0
        self.y = np.concatenate((np.zeros(self.n_neg_rows, dtype=bool), np.ones(n_pos, dtype=bool)))
        if negatives == "best":
            neg_offsets = np.concatenate(([0], np.cumsum(stops - starts))).astype(np.int64)
            self.oracle = pooled_oracle(loss_oracle, neg_offsets)
        else:
            self.oracle = loss_oracle
        self.intercept = intercept
        self.n_jobs = n_jobs
        self.pos_offsets = np.stack((data.offsets[self.positive_images],
                                     data.offsets[self.positive_images + 1]), 1)

    def impute(self, w):
        """Global window index of every positive image's best window under w."""
        d = self.data.n_features
        coef, bias = w[:d], (w[d] if self.intercept else 0.0)
        index = np.concatenate([np.arange(lo, hi) for lo, hi in self.pos_offsets])
        scores = self.data.row_scores(index, coef, bias)
        sizes = self.pos_offsets[:, 1] - self.pos_offsets[:, 0]
        local = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        return index[segment_argmax(scores, local)]

    def problem(self, imputed):
        """The problem of the convex bound with positives fixed to ``imputed`` windows."""
        if self.X is None:
            from ssvm.problem.dask_gathered import DaskGatheredHinge

            return DaskGatheredHinge(self.features, self.y, self.oracle, rows=self.neg_rows,
                                     extra=self.data.rows(imputed), fit_intercept=self.intercept,
                                     persist=False, n_jobs=self.n_jobs)
        d = self.data.n_features
        self.X[self.n_neg_rows:, :d] = self.data.rows(imputed)
        return _problem(self.X, self.y, self.oracle, self.n_jobs)


def mean_feature_problem(data, positive, loss_oracle, intercept, n_jobs):
    """The same convex model on one sample per image, its mean window (``init="mean"``).

    Parameters
    ----------
    data : Bags
    positive : ndarray of bool, shape (n_images,)
    loss_oracle : Oracle
    intercept : bool
    n_jobs : int or None

    Returns
    -------
    StructuredHinge
    """
    X = data.means()
    if not np.all(np.isfinite(X)):
        raise ValueError("window features contain NaN or infinite values")
    if intercept:
        X = np.hstack((X, np.ones((X.shape[0], 1))))
    return _problem(X, np.asarray(positive, dtype=bool), loss_oracle, n_jobs)


class OracleMeter:
    """Loss-augmented inference seconds and calls summed over the problems of a fit."""

    def __init__(self, seconds=0.0, calls=0):
        self.seconds = seconds
        self.calls = calls
        self._problem = None
        self._seen = (0.0, 0)

    def charge(self, problem):
        """Add what ``problem``'s oracle spent since it was last charged."""
        if problem is not self._problem:
            self._problem, self._seen = problem, (0.0, 0)
        self.seconds += problem.oracle_seconds - self._seen[0]
        self.calls += problem.n_oracle_calls - self._seen[1]
        self._seen = (problem.oracle_seconds, problem.n_oracle_calls)
