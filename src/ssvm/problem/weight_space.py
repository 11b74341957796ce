"""The structured hinge over queries in weight space, shared by every in-memory solver (docs/design.md §1).

For a weight vector ``w`` and queries ``q = 1..Q`` (index sets into the rows of ``X``):

    H_q(w) = delta_q + s_q @ c_q = delta_q + w @ G_q,   s_q = X_q @ w,   G_q = X_q.T @ c_q,

and the training objective is ``J(w) = ½‖w‖² + C · (1/Q) Σ_q H_q(w)``. ``G_q`` is a subgradient
of ``H_q`` at ``w`` and ``(delta_q, G_q)`` is the tight supporting plane there. This module holds
only the products with ``X``; everything about queries and oracles is the score-space half,
:class:`~ssvm.problem.score_space.ScoreHinge`.
"""

import time

import numpy as np
import scipy.sparse as sp

from .._arrays import is_dask_array
from . import _products
from ._fused import FusedRound
from .protocol import Plane, Planes, ScoreSpaceProblem
from .score_space import ScoreHinge, check_queries, check_relevance

__all__ = ["StructuredHinge", "LinearScores", "check_features", "matvec"]


def _row_block(X, start, stop):
    """Rows ``start:stop`` of ``X`` without copying the values (a view for dense and CSR input)."""
    if sp.issparse(X):
        lo, hi = X.indptr[start], X.indptr[stop]
        return sp.csr_matrix(
            (X.data[lo:hi], X.indices[lo:hi], X.indptr[start:stop + 1] - lo),
            shape=(stop - start, X.shape[1]),
        )
    return X[start:stop]


def check_features(X):
    """``X`` as a finite float 2-D array or CSR matrix: float32 kept, anything else as float64.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)

    Returns
    -------
    ndarray or scipy.sparse.csr_matrix
        float32 input is neither up-cast nor copied (a non-contiguous dense array is made
        contiguous); other dtypes are converted to float64.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D or holds NaN or infinity.
    """
    dtype = np.float32 if getattr(X, "dtype", None) == np.float32 else np.float64
    if sp.issparse(X):
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}")
        X = sp.csr_matrix(X, dtype=dtype)
        values = X.data
    else:
        X = np.ascontiguousarray(X, dtype=dtype)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}")
        values = X
    if not np.all(np.isfinite(values)):
        raise ValueError("X contains NaN or infinity")
    return X


class LinearScores:
    """The products of a linear model with a block of rows: ``w -> X w (+ b)``, ``c -> Xᵀ c``.

    With ``fit_intercept`` the last entry of ``w`` is an intercept ``b``: a constant-1 feature
    that is not stored (``X`` is never copied to append it). The products read ``X`` in its own
    precision (a float32 ``X`` is never up-cast) and sum in float64, by compiled loops
    (:mod:`ssvm.problem._products`); results are float64.

    Parameters
    ----------
    X : ndarray or scipy.sparse.csr_matrix of shape (n, d)
        float64 or float32.
    fit_intercept : bool
    """

    def __init__(self, X, fit_intercept):
        self.X = X
        self.fit_intercept = bool(fit_intercept)
        self.n_features = X.shape[1] + self.fit_intercept

    def scores(self, w):
        """``X @ w`` (plus the intercept).

        Parameters
        ----------
        w : ndarray of shape (n_features,)

        Returns
        -------
        ndarray of float64, shape (n,)
        """
        s = matvec(self.X, w[:-1] if self.fit_intercept else w)
        return s + w[-1] if self.fit_intercept else s

    def transpose(self, c):
        """``Xᵀ @ c`` (and ``Σ c`` for the intercept).

        Parameters
        ----------
        c : ndarray of shape (n,)

        Returns
        -------
        ndarray of float64, shape (n_features,)
        """
        g = _products.transpose(self.X, c)
        return np.append(g, c.sum()) if self.fit_intercept else g


def matvec(X, w):
    """``X @ w`` as float64, in ``X``'s precision: a float32 ``X`` is never up-cast.

    Parameters
    ----------
    X : ndarray or sparse matrix of float32 or float64, or dask array, of shape (n, d)
        In-memory ``X`` by :func:`~ssvm.problem._products.scores` (sums in float64, other
        dtypes as float64); a dask ``X`` block by block, and computed.
    w : ndarray of shape (d,) or, for an in-memory ``X``, (d, k)

    Returns
    -------
    ndarray of float64, shape (n,) or (n, k)
    """
    w = np.asarray(w, dtype=np.float64)
    if is_dask_array(X):
        return np.asarray(X.map_blocks(matvec, w, drop_axis=1, dtype=np.float64))
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    if sp.issparse(X):
        X = X.tocsr()
    return _products.scores(X, w)


class StructuredHinge(ScoreSpaceProblem):
    """The structured hinge ``H(w) = (1/Q) Σ_q H_q(w)`` of a training set split into queries.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or scipy sparse matrix
        Features (float32 kept as it is, other dtypes converted to float64; sparse input to
        CSR). Must be finite.
    y : ndarray of shape (n_samples,)
        Binary relevance (bool, or 0/1).
    queries : sequence of int ndarrays
        Row indices of each query. Each must hold at least one positive and one negative
        (the estimator drops degenerate queries before building the problem).
    oracle : Oracle or callable
        Loss-augmented inference ``f(scores, y) -> (c, delta)`` (:func:`ssvm.losses.get_oracle`),
        called without validation.
    fit_intercept : bool, default=False
        Add a constant-1 feature, regularised like the other weights (as liblinear does);
        ``w`` then has ``n_features + 1`` entries, the last being the intercept.
    n_jobs : int or None, default=None
        Parallel oracle calls over queries (see :class:`ScoreHinge`).
    check_input : bool, default=True
        Validate ``X``, ``y`` and ``queries``. Pass False only with a finite float64 or float32
        array or CSR matrix, boolean ``y`` and queries as :func:`check_queries` returns them (the
        estimators validate once, at their edge).
    fused : bool, default=True
        Compute :meth:`plane` by the fused round (:mod:`ssvm.problem._fused`: products and oracles
        block by block, one pass over ``X``, on the kernels' threads: :mod:`ssvm._threads`) when
        the oracle has a compiled form; False, or an oracle without one: the two-pass path. Both
        give the same plane up to the order of float64 sums.

    Attributes
    ----------
    X : ndarray or scipy.sparse.csr_matrix
        The (validated) features, without an intercept column.
    n_features : int
        Length of ``w`` (``d``, plus one with an intercept).
    n_queries : int
        ``Q``.
    n_samples : int
        Rows of ``X``.
    score_hinge : ScoreHinge
        The score-space half: queries, relevance, oracle.
    oracle_seconds : float
        Cumulative time spent in oracle calls: wall time on the two-pass path; inside fused rounds,
        the oracles' time summed over the round's threads (CPU-seconds: see
        :mod:`ssvm.problem._fused`).
    matvec_seconds : float
        Cumulative wall time spent in products with ``X`` or ``X.T`` (outside fused rounds).
    n_oracle_calls : int
        Cumulative number of per-query oracle calls (one per query per round, fused or not).
    fused_seconds : float
        Cumulative wall time of fused rounds, products and oracles together: the oracles' part of
        it is also in ``oracle_seconds`` (as ``fused_oracle_seconds``); the products' part is in
        no other counter.
    fused_oracle_seconds : float
        The part of ``oracle_seconds`` spent inside fused rounds (CPU-seconds): a split of the
        time that adds ``matvec_seconds``, ``oracle_seconds`` and ``fused_seconds`` must subtract it
        once, or the oracles of fused rounds count twice.

    Notes
    -----
    The products run over the stacked rows of :class:`ScoreHinge` (a view of ``X`` when the
    queries are ascending ranges of rows, otherwise their rows copied once); each query's rows are
    a zero-copy block for the per-query planes (made on first use). A full pass costs one product
    ``X @ w``, the oracle calls and one product with ``X.T``, in ``X``'s precision (float32 or
    float64, see :class:`LinearScores`); the hinge, the planes and everything after are float64.
    """

    def __init__(self, X, y, queries, oracle, *, fit_intercept=False, n_jobs=None, check_input=True,
                 fused=True):
        if check_input:
            X = check_features(X)
            y = check_relevance(y, X.shape[0])
            queries = check_queries(queries, X.shape[0], y)
        self._set_up(X, ScoreHinge(y, queries, oracle, n_jobs=n_jobs, check_input=False),
                     fit_intercept, fused)

    @classmethod
    def from_score_hinge(cls, X, score_hinge, *, fit_intercept=False):
        """The problem of the rows ``X`` and an existing score-space hinge (nothing re-checked).

        A dask block (:mod:`ssvm.problem.dask_space`) keeps its :class:`ScoreHinge` between
        rounds and pairs it with its rows this way: no validation, no query bookkeeping redone.

        Parameters
        ----------
        X : ndarray or scipy.sparse.csr_matrix of shape (score_hinge.n_samples, n_features)
            Finite float64 or float32 features.
        score_hinge : ScoreHinge
        fit_intercept : bool, default=False

        Returns
        -------
        StructuredHinge
        """
        problem = cls.__new__(cls)
        problem._set_up(X, score_hinge, fit_intercept)
        return problem

    def _set_up(self, X, score_hinge, fit_intercept, fused=False):
        self.score_hinge = score_hinge
        rows = score_hinge.rows
        self._X_stacked = (_row_block(X, rows.start, rows.stop) if isinstance(rows, slice)
                           else X[rows])
        self._all = LinearScores(X, fit_intercept)
        self._stacked = LinearScores(self._X_stacked, fit_intercept)
        self._query_blocks = None  # per-query views, made on the first call of `planes`
        self.X = X
        self.fit_intercept = bool(fit_intercept)
        self.n_samples = X.shape[0]
        self.n_features = self._all.n_features
        self.n_queries = score_hinge.n_queries
        self.matvec_seconds = 0.0
        self.fused_seconds = 0.0
        self._fused = None if fused else False  # the FusedRound, made on the first call of `plane`

    @property
    def _blocks(self):
        """Each query's rows as a zero-copy :class:`LinearScores` (for the per-query planes)."""
        if self._query_blocks is None:
            sh = self.score_hinge
            self._query_blocks = [
                LinearScores(_row_block(self._X_stacked, a, b), self.fit_intercept)
                for a, b in zip(sh.starts, sh.ends)
            ]
        return self._query_blocks

    @property
    def oracle_seconds(self):
        return self.score_hinge.oracle_seconds

    @property
    def n_oracle_calls(self):
        return self.score_hinge.n_oracle_calls

    @property
    def fused_oracle_seconds(self):
        return self._fused.oracle_seconds if self._fused else 0.0

    # ------------------------------------------------------------------ helpers
    def _timed(self, product, v):
        t0 = time.perf_counter()
        out = product(v)
        self.matvec_seconds += time.perf_counter() - t0
        return out

    # ------------------------------------------------------------------ the protocol
    def scores(self, w):
        """Scores ``X @ w`` of all samples, in the original row order.

        Parameters
        ----------
        w : ndarray of shape (n_features,)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self._timed(self._all.scores, self._check_w(w))

    def plane(self, w):
        """See :meth:`ScoreSpaceProblem.plane`; in one fused pass over the rows when it applies."""
        if self._fused is None:
            self._fused = FusedRound(self._X_stacked, self.score_hinge, self.fit_intercept)
        if self._fused and self._fused.supported:
            t0 = time.perf_counter()
            out = Plane(*self._fused.plane(self._check_w(w)))
            self.fused_seconds += time.perf_counter() - t0  # the FusedRound charged the oracles
            return out
        return super().plane(w)

    def planes(self, w, queries=None):
        """Tight supporting planes of the per-query hinges at ``w``.

        Parameters
        ----------
        w : ndarray of shape (n_features,)
        queries : sequence of int, optional
            Query numbers (default: all, in order).

        Returns
        -------
        Planes
            ``delta_q`` per requested query and ``G_q = X_q.T @ c_q`` (shape (m, n_features)), so
            that ``H_q(w') >= delta_q + w' @ G_q`` with equality at ``w``.
        """
        w = self._check_w(w)
        idx = self._query_numbers(queries)
        if idx.size == 0:
            return Planes(np.zeros(0), np.zeros((0, self.n_features)))
        if queries is None:
            c, delta = self.score_hinge.terms(self.stacked_scores(w))
            starts, ends = self.score_hinge.starts, self.score_hinge.ends
        else:
            s = np.concatenate([self._timed(self._blocks[k].scores, w) for k in idx])
            c, delta = self.score_hinge.terms(s, idx)
            ends = np.cumsum([self._blocks[k].X.shape[0] for k in idx])
            starts = ends - np.array([self._blocks[k].X.shape[0] for k in idx])
        G = np.empty((idx.size, self.n_features))
        for row, k in enumerate(idx):
            G[row] = self._timed(self._blocks[k].transpose, c[starts[row]:ends[row]])
        return Planes(delta, G)

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
            The stacked rows' scores (see :class:`ScoreHinge`).
        """
        return self._timed(self._stacked.scores, self._check_w(w))

    def hinge_at_scores(self, s):
        """Mean hinge at given stacked scores, with its tight supporting plane in score space.

        Parameters
        ----------
        s : ndarray of shape (n_stacked,)
            Stacked scores (a `stacked_scores` result, or an affine combination of such results).

        Returns
        -------
        ScorePlane
            See :meth:`ScoreHinge.__call__`; ``(offset, coefficients_to_subgradient(c))`` is the
            supporting plane ``H(w') >= offset + w' @ g`` in weight space.
        """
        return self.score_hinge(self._check_stacked(s, self.score_hinge.n_stacked, "s"))

    def coefficients_to_subgradient(self, c):
        """``X_stackedᵀ @ c``: the weight-space subgradient of a `hinge_at_scores` plane.

        Parameters
        ----------
        c : ndarray of shape (n_stacked,)

        Returns
        -------
        ndarray of shape (n_features,)
        """
        c = self._check_stacked(c, self.score_hinge.n_stacked, "c")
        return self._timed(self._stacked.transpose, c)
