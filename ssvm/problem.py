"""The structured hinge over queries, shared by every solver (DESIGN.md §1).

For a weight vector ``w`` and queries ``q = 1..Q`` (index sets into the rows of ``X``), each
query's structured hinge is evaluated by its loss-augmented inference oracle
``(scores_q, y_q) -> (c_q, delta_q)``:

    H_q(w) = delta_q + s_q @ c_q = delta_q + w @ G_q,   s_q = X_q @ w,   G_q = X_q.T @ c_q,

and the training objective is ``J(w) = ½‖w‖² + C · (1/Q) Σ_q H_q(w)``. ``G_q`` is a subgradient
of ``H_q`` at ``w`` and ``(delta_q, G_q)`` is the tight supporting plane there. This module is the
only place in the package that calls oracles.
"""

import logging
import time

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed, effective_n_jobs

from .losses.registry import batched_oracle

logger = logging.getLogger(__name__)

__all__ = ["StructuredHinge"]

# Below this many samples per pass, shipping work to other processes costs more than it saves
# (measured break-even on LETOR-like queries: between 3e4 and 2e5 samples).
_MIN_PARALLEL_SAMPLES = 100_000
# Chunks per worker: a few, so that unequal query sizes still balance.
_CHUNKS_PER_JOB = 4


def _oracle_chunk(oracle, scores, y, starts, ends):
    """Run ``oracle`` on the queries ``scores[starts[k]:ends[k]]`` (module-level for joblib).

    Parameters
    ----------
    oracle : callable
        ``(scores, y) -> (c, delta)``.
    scores : ndarray of float64
        Scores of a range of stacked rows holding the queries (rows between queries are ignored).
    y : ndarray of bool
        Their relevance.
    starts, ends : ndarray of int
        Query ``k`` is ``scores[starts[k]:ends[k]]``; ranges ascending and disjoint.

    Returns
    -------
    c : ndarray
        The queries' ``c`` in their rows, zero elsewhere (same length as ``scores``).
    delta : ndarray
        ``delta`` per query.
    """
    batched = batched_oracle(oracle)
    if batched is not None:  # one compiled loop over the queries
        return batched(scores, y, starts, ends)
    c_all = np.zeros(scores.shape[0])
    delta = np.empty(starts.shape[0])
    for k in range(delta.shape[0]):
        a, b = starts[k], ends[k]
        c, delta[k] = oracle(scores[a:b], y[a:b])
        c = np.asarray(c, dtype=np.float64)
        if c.shape != (b - a,):
            raise ValueError(f"oracle returned c of shape {c.shape} for a query of {b - a} samples")
        c_all[a:b] = c
    return c_all, delta


def _row_block(X, start, stop):
    """Rows ``start:stop`` of ``X`` without copying the values (a view for dense and CSR input)."""
    if sp.issparse(X):
        lo, hi = X.indptr[start], X.indptr[stop]
        return sp.csr_matrix(
            (X.data[lo:hi], X.indices[lo:hi], X.indptr[start : stop + 1] - lo),
            shape=(stop - start, X.shape[1]),
        )
    return X[start:stop]


def _check_X(X, fit_intercept):
    """Validate ``X`` (dense or sparse, finite) and append the intercept column if asked."""
    if sp.issparse(X):
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}")
        X = sp.csr_matrix(X, dtype=np.float64)
        if not np.all(np.isfinite(X.data)):
            raise ValueError("X contains NaN or infinity")
        if fit_intercept:
            ones = sp.csr_matrix(np.ones((X.shape[0], 1)))
            X = sp.hstack([X, ones], format="csr")
        X.sort_indices()
        return X
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinity")
    if fit_intercept:
        X = np.hstack([X, np.ones((X.shape[0], 1))])
    return np.ascontiguousarray(X)


def _check_y(y, n):
    """Relevance as a boolean vector of length ``n`` (bool or 0/1 input)."""
    y = np.asarray(y)
    if y.shape != (n,):
        raise ValueError(f"y must have shape ({n},) to match X, got {y.shape}")
    if y.dtype != bool:
        if not np.all((y == 0) | (y == 1)):
            raise ValueError("y must be boolean relevance (bool or 0/1 values)")
        y = y.astype(bool)
    return y


def _check_queries(queries, n, y):
    """Queries as a tuple of int64 index arrays, each in range with a positive and a negative."""
    if len(queries) == 0:
        raise ValueError("queries must contain at least one query")
    out = []
    for k, q in enumerate(queries):
        q = np.asarray(q)
        if q.ndim != 1 or q.size == 0 or not np.issubdtype(q.dtype, np.integer):
            raise ValueError(f"query {k} must be a non-empty 1-D array of integer row indices")
        if q.min() < 0 or q.max() >= n:
            raise ValueError(f"query {k} has row indices outside [0, {n})")
        n_pos = int(np.count_nonzero(y[q]))
        if n_pos == 0 or n_pos == q.size:
            raise ValueError(f"query {k} needs at least one positive and one negative sample")
        out.append(q.astype(np.int64, copy=False))
    return tuple(out)


class StructuredHinge:
    """The structured hinge ``H(w) = (1/Q) Σ_q H_q(w)`` of a training set split into queries.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or scipy sparse matrix
        Features (converted to float64; sparse input to CSR). Must be finite.
    y : ndarray of shape (n_samples,)
        Binary relevance (bool, or 0/1).
    queries : sequence of int ndarrays
        Row indices of each query. Each must hold at least one positive and one negative
        (the estimator drops degenerate queries before building the problem).
    oracle : callable
        Picklable loss-augmented inference ``f(scores, y) -> (c, delta)``
        (``ssvm.losses.get_oracle``), called without validation.
    fit_intercept : bool, default=False
        Append a constant-1 feature, regularised like the other weights (as liblinear does);
        ``w`` then has ``n_features + 1`` entries, the last being the intercept.
    n_jobs : int or None, default=None
        Parallel oracle calls over queries (joblib semantics). Used for full passes over many
        queries with enough samples; queries are batched into a few chunks per worker.

    Attributes
    ----------
    n_features : int
        Length of ``w`` (``d``, plus one with an intercept).
    n_queries : int
        ``Q``.
    n_samples : int
        Rows of ``X``.
    oracle_seconds : float
        Cumulative wall time spent in oracle calls.
    matvec_seconds : float
        Cumulative wall time spent in products with ``X`` or ``X.T``.
    n_oracle_calls : int
        Cumulative number of per-query oracle calls.

    Notes
    -----
    When the queries are ascending, disjoint ranges of rows (as ``qid``-sorted data give, even
    with degenerate queries dropped) the problem works on a view of ``X``; otherwise the queries'
    rows are copied once, query after query. Each query's rows are kept as a zero-copy block, so
    nothing is re-sliced per iteration. A full pass costs one product ``X @ w`` (over the rows from
    the first query to the last), the oracle calls and one product with ``X.T``.
    """

    def __init__(self, X, y, queries, oracle, *, fit_intercept=False, n_jobs=None):
        if not callable(oracle):
            raise ValueError(f"oracle must be callable, got {type(oracle).__name__}")
        X = _check_X(X, fit_intercept)
        n = X.shape[0]
        y = _check_y(y, n)
        queries = _check_queries(queries, n, y)
        self.X = X
        self.y = y
        self.queries = queries
        self.oracle = oracle
        self.fit_intercept = bool(fit_intercept)
        self.n_jobs = n_jobs
        self.n_samples = n
        self.n_features = X.shape[1]
        self.n_queries = len(queries)

        first = np.array([q[0] for q in queries])
        last = np.array([q[-1] for q in queries])
        sizes = np.array([q.size for q in queries], dtype=np.int64)
        contiguous = (
            np.all(last - first + 1 == sizes)
            and all(np.array_equal(q, np.arange(q[0], q[-1] + 1)) for q in queries)
            and np.all(first[1:] > last[:-1])
        )
        if contiguous:  # queries are ascending row ranges: work on a view of X, gaps ignored
            lo, hi = int(first[0]), int(last[-1]) + 1
            self._X_stacked = _row_block(X, lo, hi)
            self._y_stacked = y[lo:hi]
            self._starts, self._ends = first - lo, last + 1 - lo
        else:  # rows of the queries copied once, query after query
            order = np.concatenate(queries)
            self._X_stacked = X[order]
            self._y_stacked = y[order]
            self._ends = np.cumsum(sizes)
            self._starts = self._ends - sizes
        self._y_segments = [self._y_stacked[a:b] for a, b in zip(self._starts, self._ends)]
        self._X_blocks = [_row_block(self._X_stacked, a, b)
                          for a, b in zip(self._starts, self._ends)]
        self.oracle_seconds = 0.0
        self.matvec_seconds = 0.0
        self.n_oracle_calls = 0

    # ------------------------------------------------------------------ helpers
    def _check_w(self, w):
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise ValueError(f"w must have shape ({self.n_features},), got {w.shape}")
        return w

    def _check_query_subset(self, queries):
        idx = np.asarray(queries)
        if idx.ndim != 1 or not (idx.size == 0 or np.issubdtype(idx.dtype, np.integer)):
            raise ValueError("queries must be a 1-D sequence of query numbers")
        if idx.size and (idx.min() < 0 or idx.max() >= self.n_queries):
            raise ValueError(f"query numbers must lie in [0, {self.n_queries})")
        return idx.astype(np.int64, copy=False)

    def _matvec(self, A, v):
        t0 = time.perf_counter()
        out = A @ v
        self.matvec_seconds += time.perf_counter() - t0
        return np.asarray(out).ravel()

    def _use_parallel(self, n_samples, n_queries):
        if n_queries < 2 or n_samples < _MIN_PARALLEL_SAMPLES:
            return 0
        n_jobs = effective_n_jobs(self.n_jobs)
        return n_jobs if n_jobs > 1 else 0

    def _run_oracles(self, scores, y, starts, ends):
        """``(c, delta)`` of the queries ``scores[starts[k]:ends[k]]`` (see `_oracle_chunk`), in
        parallel chunks of about equal size when worthwhile; a chunk ships as contiguous arrays."""
        t0 = time.perf_counter()
        m = starts.shape[0]
        n_jobs = self._use_parallel(int((ends - starts).sum()), m)
        if n_jobs:
            n_chunks = min(m, n_jobs * _CHUNKS_PER_JOB)
            cum = np.cumsum(ends - starts)
            cuts = np.searchsorted(cum, cum[-1] * np.arange(1, n_chunks) / n_chunks) + 1
            cuts = np.unique(np.concatenate([[0], cuts, [m]]).clip(0, m))
            parts = Parallel(n_jobs=n_jobs)(
                delayed(_oracle_chunk)(
                    self.oracle,
                    scores[starts[a] : ends[b - 1]],
                    y[starts[a] : ends[b - 1]],
                    starts[a:b] - starts[a],
                    ends[a:b] - starts[a],
                )
                for a, b in zip(cuts[:-1], cuts[1:])
            )
            c_all = np.zeros(scores.shape[0])
            for (a, b), (c, _) in zip(zip(cuts[:-1], cuts[1:]), parts):
                c_all[starts[a] : ends[b - 1]] = c
            delta = np.concatenate([d for _, d in parts])
        else:
            c_all, delta = _oracle_chunk(self.oracle, scores, y, starts, ends)
        self.oracle_seconds += time.perf_counter() - t0
        self.n_oracle_calls += m
        return c_all, delta

    def _full_pass(self, w):
        """Scores of the stacked rows, and ``(c, delta)`` of every query at ``w``."""
        s = self._matvec(self._X_stacked, w)
        return (s, *self._run_oracles(s, self._y_stacked, self._starts, self._ends))

    # ------------------------------------------------------------------ public API
    def scores(self, w):
        """Scores ``X @ w`` of all samples, in the original row order.

        Parameters
        ----------
        w : ndarray of shape (n_features,)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self._matvec(self.X, self._check_w(w))

    def planes(self, w, queries=None):
        """Tight supporting planes of the per-query hinges at ``w``.

        Parameters
        ----------
        w : ndarray of shape (n_features,)
        queries : sequence of int, optional
            Query numbers (default: all, in order).

        Returns
        -------
        delta : ndarray of shape (m,)
            ``delta_q`` per requested query.
        G : ndarray of shape (m, n_features)
            ``G_q = X_q.T @ c_q``, so that ``H_q(w') >= delta_q + w' @ G_q`` with equality at ``w``.
        """
        w = self._check_w(w)
        if queries is None:
            _, c_all, delta = self._full_pass(w)
            sizes = self._ends - self._starts
            cols = np.concatenate([np.arange(a, b) for a, b in zip(self._starts, self._ends)])
            Cmat = sp.csr_matrix(
                (c_all[cols], cols, np.concatenate([[0], np.cumsum(sizes)])),
                shape=(self.n_queries, c_all.shape[0]),
            )
            t0 = time.perf_counter()
            G = Cmat @ self._X_stacked
            G = G.toarray() if sp.issparse(G) else np.asarray(G)
            self.matvec_seconds += time.perf_counter() - t0
            return delta, G
        idx = self._check_query_subset(queries)
        if idx.size == 0:
            return np.zeros(0), np.zeros((0, self.n_features))
        scores = np.concatenate([self._matvec(self._X_blocks[k], w) for k in idx])
        y = np.concatenate([self._y_segments[k] for k in idx])
        bounds = np.concatenate([[0], np.cumsum([self._X_blocks[k].shape[0] for k in idx])])
        c_all, delta = self._run_oracles(scores, y, bounds[:-1], bounds[1:])
        G = np.empty((idx.size, self.n_features))
        for row, k in enumerate(idx):
            G[row] = self._matvec(self._X_blocks[k].T, c_all[bounds[row] : bounds[row + 1]])
        return delta, G

    def hinge(self, w):
        """Mean hinge and a subgradient at ``w``.

        Parameters
        ----------
        w : ndarray of shape (n_features,)

        Returns
        -------
        H : float
            ``(1/Q) Σ_q H_q(w)``.
        g : ndarray of shape (n_features,)
            ``(1/Q) Σ_q G_q``, a subgradient of ``H`` at ``w``; ``H(w') >= H + g @ (w' - w)``.
        """
        w = self._check_w(w)
        s, c_all, delta = self._full_pass(w)
        H = (delta.sum() + s @ c_all) / self.n_queries
        g = self._matvec(self._X_stacked.T, c_all) / self.n_queries
        return float(H), g

    def hinge_value(self, w):
        """``(1/Q) Σ_q H_q(w)`` without the subgradient (saves one product with ``X.T``).

        Parameters
        ----------
        w : ndarray of shape (n_features,)

        Returns
        -------
        float
        """
        s, c_all, delta = self._full_pass(self._check_w(w))
        return float((delta.sum() + s @ c_all) / self.n_queries)

    def objective(self, w, C):
        """Training objective ``J(w) = ½‖w‖² + C · H(w)``.

        Parameters
        ----------
        w : ndarray of shape (n_features,)
        C : float
            Positive regularisation trade-off.

        Returns
        -------
        float
        """
        w = self._check_w(w)
        return 0.5 * float(w @ w) + float(C) * self.hinge_value(w)

    # ------------------------------------------------------------------ score-space access
    # For solvers that move along a segment in w: the scores of w_b + t (w_c − w_b) are
    # s_b + t (s_c − s_b), so the hinge along it needs oracle calls but no product with X.

    def stacked_scores(self, w):
        """Scores of the queries' rows in the stacked layout that `hinge_at_scores` takes.

        Parameters
        ----------
        w : ndarray of shape (n_features,)

        Returns
        -------
        ndarray of shape (n_stacked,)
            ``X_stacked @ w``, where the stacked rows hold every query's rows as a range (rows
            between queries, if any, are carried along and ignored by the oracles).
        """
        return self._matvec(self._X_stacked, self._check_w(w))

    def hinge_at_scores(self, s):
        """Mean hinge at given stacked scores, with its tight supporting plane in score space.

        Parameters
        ----------
        s : ndarray of shape (n_stacked,)
            Stacked scores (a `stacked_scores` result, or an affine combination of such results).

        Returns
        -------
        H : float
            ``(1/Q) Σ_q H_q`` at the scores ``s``.
        c : ndarray of shape (n_stacked,)
            The oracles' coefficients divided by ``Q`` (zero on rows outside the queries).
        offset : float
            ``(1/Q) Σ_q delta_q``. The plane ``offset + s' @ c`` lies below the hinge at every
            stacked score vector ``s'`` and touches it at ``s``; ``H = offset + s @ c`` up to
            rounding, and ``(offset, coefficients_to_subgradient(c))`` is the supporting plane
            ``H(w') >= offset + w' @ g`` in weight space.
        """
        s = np.asarray(s, dtype=np.float64)
        if s.shape != (self._X_stacked.shape[0],):
            raise ValueError(f"s must have shape ({self._X_stacked.shape[0]},), got {s.shape}")
        c_all, delta = self._run_oracles(s, self._y_stacked, self._starts, self._ends)
        c_all /= self.n_queries
        offset = float(delta.sum()) / self.n_queries
        return offset + float(s @ c_all), c_all, offset

    def coefficients_to_subgradient(self, c):
        """``X_stacked.T @ c``: the weight-space subgradient of a `hinge_at_scores` plane.

        Parameters
        ----------
        c : ndarray of shape (n_stacked,)

        Returns
        -------
        ndarray of shape (n_features,)
        """
        c = np.asarray(c, dtype=np.float64)
        if c.shape != (self._X_stacked.shape[0],):
            raise ValueError(f"c must have shape ({self._X_stacked.shape[0]},), got {c.shape}")
        return self._matvec(self._X_stacked.T, c)
