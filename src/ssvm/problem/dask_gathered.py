"""A hinge whose queries span the blocks of a dask array: the scores come to the client.

When a query does not fit in one block — the whole training set as one query (classification), or
the latent detector's negatives, every window of every negative image — no block task can run its
oracle. A round then takes two passes over the blocks: the scores ``X_b w`` come back to the client
(8 bytes a row), the score-space hinge (:class:`~ssvm.problem.ScoreHinge`) runs there, and every
block gets its coefficients ``c_b`` back (8 bytes a row) for ``X_bᵀ c_b``. ``X`` itself stays where
it is — on the workers, or in a zarr store read block by block — so its ``n × d`` numbers never
need to fit in one process; only vectors of ``n`` numbers do. Rows held in memory (a detector's
imputed positive windows) can be added after the rows of ``X``.

For one query of all the rows with an AP, NDCG, 0-1 or precision@k oracle,
:class:`~ssvm.problem.dask_giant.DaskGiantHinge` splits the oracle across the blocks instead, and
no per-row data come to the client; this class serves the other losses and the latent detector.
"""

import time

import numpy as np

from ._dask_cluster import ClusterBlocks, DaskProblem, place
from ._dask_tasks import non_finite_error
from .dask_space import check_dask_features
from .protocol import Plane, Planes
from .score_space import ScoreHinge, check_queries, check_relevance
from .weight_space import LinearScores, check_features

__all__ = ["DaskGatheredHinge"]


def block_scores(X_b, block, w, fit_intercept):
    """``X_b w`` of one block (float64), or a ValueError naming the block and the first bad row."""
    t0 = time.perf_counter()
    with np.errstate(invalid="ignore", over="ignore"):  # non-finite scores are reported below
        s = LinearScores(X_b, fit_intercept).scores(w)
    if not np.all(np.isfinite(s)):
        raise non_finite_error(X_b, block[1], block, X_b.shape[0])
    return s, time.perf_counter() - t0


def block_transpose(X_b, c_b, fit_intercept):
    """``X_bᵀ c_b`` of one block (float64)."""
    t0 = time.perf_counter()
    return LinearScores(X_b, fit_intercept).transpose(c_b), time.perf_counter() - t0


class DaskGatheredHinge(DaskProblem):
    """The structured hinge of queries over rows of a dask array (and rows in memory).

    Parameters
    ----------
    X : dask.array.Array of shape (n, n_features)
        Dense features (see :func:`~ssvm.problem.dask_space.check_dask_features`). Must be finite
        (non-finite values are found in the rounds, in the blocks that hold them).
    y : array-like of shape (m,)
        Binary relevance of the problem's rows: ``X[rows]``, then ``extra``.
    oracle : Oracle or callable
        Loss-augmented inference on the problem's rows (a pooled oracle is fine).
    rows : array-like of int, optional
        Ascending rows of ``X`` in the problem (default: all).
    extra : ndarray of shape (k, n_features), optional
        Rows held in memory, after those of ``X``.
    queries : sequence of int arrays, optional
        Queries as indices into the problem's rows (default: all rows form one query).
    fit_intercept : bool, default=False
        As in :class:`~ssvm.problem.StructuredHinge`.
    persist : bool, optional
        Hold the blocks of ``X`` in the cluster's memory; default: under a ``dask.distributed``
        client only.
    n_jobs : int or None, default=None
        Parallel oracle calls over the queries on the client (see :class:`ScoreHinge`).

    Attributes
    ----------
    X : dask.array.Array
    score_hinge : ScoreHinge
    n_features, n_queries, n_blocks : int
    matvec_seconds : float
        Time in the products, summed over the blocks' tasks (and the rows in memory).
    oracle_seconds : float
    round_seconds : float
        Wall time of the rounds (both passes), as the client sees them.
    n_rounds, n_passes : int
    result_bytes : int
        Cumulative size (pickled) of what the tasks sent back (the scores: 8 bytes a row a round).
    cluster : ClusterBlocks
        The blocks on the cluster, the client and these statistics
        (:class:`~ssvm.problem._dask_cluster.ClusterBlocks`).
    """

    def __init__(self, X, y, oracle, *, rows=None, extra=None, queries=None, fit_intercept=False,
                 persist=None, n_jobs=None):
        X = check_dask_features(X)
        n, d = X.shape
        rows = np.arange(n) if rows is None else np.asarray(rows)
        if rows.ndim != 1 or not np.issubdtype(rows.dtype, np.integer):
            raise ValueError("rows must be a 1-D array of row numbers of X")
        if rows.size and (rows[0] < 0 or rows[-1] >= n or np.any(np.diff(rows) <= 0)):
            raise ValueError(f"rows must be ascending, distinct and in [0, {n})")
        extra = np.empty((0, d), dtype=X.dtype) if extra is None else check_features(extra)
        if extra.ndim != 2 or extra.shape[1] != d:
            raise ValueError(f"extra must have {d} columns like X, got shape {extra.shape}")
        m = rows.size + extra.shape[0]
        y = check_relevance(y, m)
        queries = [np.arange(m)] if queries is None else queries
        self.score_hinge = ScoreHinge(y, check_queries(queries, m, y), oracle, n_jobs=n_jobs,
                                      check_input=False)
        (X,), client = place(persist, X)
        bounds = np.concatenate(([0], np.cumsum(X.chunks[0])))
        owner = np.searchsorted(bounds, rows, side="right") - 1
        x_blocks = X.to_delayed().ravel()
        # (block, (number, first row), its rows in the problem (local), its number of rows); on a
        # cluster, each pass submits one task per block on the blocks' futures
        self.cluster = ClusterBlocks([(x_blocks[k], (int(k), int(bounds[k])), rows[owner == k] - bounds[k],
                                       int(bounds[k + 1] - bounds[k])) for k in np.unique(owner)], client)
        self._extra = LinearScores(extra, fit_intercept)
        self.X = X
        self.fit_intercept = bool(fit_intercept)
        self.n_features = d + self.fit_intercept
        self.n_queries = self.score_hinge.n_queries

    @property
    def oracle_seconds(self):
        return self.score_hinge.oracle_seconds

    @property
    def n_oracle_calls(self):
        return self.score_hinge.n_oracle_calls

    def _pass(self, task, per_block, shared=()):
        """``task(X_b, *args, *shared)`` for each block and its ``args`` in ``per_block``."""
        parts = self.cluster.run(task, [(block[0], *args) for block, args in zip(self.cluster.blocks, per_block)],
                                 shared)
        self.matvec_seconds += sum(seconds for _, seconds in parts)
        return [value for value, _ in parts]

    def scores(self, w):
        """Scores of the problem's rows: ``X[rows] w``, then ``extra w`` (one pass over X).

        Parameters
        ----------
        w : ndarray of shape (n_features,)

        Returns
        -------
        ndarray of float64, shape (m,)
        """
        w = self._check_w(w)
        parts = self._pass(block_scores, [(block,) for _, block, _, _ in self.cluster.blocks],
                           (w, self.fit_intercept))
        t0 = time.perf_counter()
        extra = self._extra.scores(w)
        self.matvec_seconds += time.perf_counter() - t0
        return np.concatenate([s[local] for s, (_, _, local, _) in zip(parts, self.cluster.blocks)]
                              + [extra])

    def plane(self, w):
        """:meth:`Problem.plane` by two passes over the blocks (scores out, coefficients in).

        Parameters
        ----------
        w : ndarray of shape (n_features,)

        Returns
        -------
        Plane
            As :meth:`Problem.plane`.
        """
        sh = self.score_hinge
        with self.cluster.round():
            H, c, offset = sh(sh.stack(self.scores(w)))
            c = sh.unstack(c)
            per_block, start = [], 0
            for _, _, local, n_rows in self.cluster.blocks:
                c_b = np.zeros(n_rows)
                c_b[local] = c[start:start + local.size]
                per_block.append((c_b, self.fit_intercept))
                start += local.size
            g = self._extra.transpose(c[start:])
            for g_b in self._pass(block_transpose, per_block):  # in block order, float64
                g += g_b
        return Plane(H, offset, g)

    def planes(self, w, queries=None):
        """:meth:`Problem.planes` for a problem of one query (the whole plane); more queries
        spanning blocks need in-memory data.

        Parameters
        ----------
        w : ndarray of shape (n_features,)
        queries : sequence of int, optional

        Returns
        -------
        Planes
            As :meth:`Problem.planes`.
        """
        idx = self._query_numbers(queries)
        if self.n_queries != 1:
            raise ValueError("per-query planes of queries that span the blocks of a dask array "
                             "are not available (they need in-memory data); use the cutting plane")
        if idx.size == 0:
            return Planes(np.zeros(0), np.zeros((0, self.n_features)))
        _, offset, g = self.plane(w)
        return Planes(np.full(idx.size, offset), np.tile(g, (idx.size, 1)))
