"""The structured hinge in score space (docs/design.md §5): relevance, queries and an oracle.

Given the scores ``s`` of every row, query ``q``'s structured hinge is ``H_q = delta_q + s_q @ c_q``
where ``(c_q, delta_q)`` is its oracle's answer, and ``∂H_q/∂s_q = c_q``. :class:`ScoreHinge`
evaluates the mean ``H = (1/Q) Σ_q H_q`` and its score-space gradient ``c / Q``; it never sees
features. The in-memory problem (:class:`~ssvm.problem.StructuredHinge`, which adds the products
``s = X w`` and ``g = Xᵀ c``), a network's loss layer and a dask block all call it.

Scores live in a *stacked* layout: every query's rows form one range ``starts[q]:ends[q]`` of a
stacked vector. When the queries are ascending, disjoint ranges of rows (``qid``-sorted data, even
with some queries dropped) the stacked vector is a slice of the rows (rows between queries are
carried along and ignored); otherwise it is the queries' rows gathered query after query.
:meth:`ScoreHinge.stack` and :meth:`ScoreHinge.unstack` convert between the two orders.
"""

import time

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs

from .._queries import check_relevance
from ..losses.oracle import as_oracle
from .protocol import ScorePlane

__all__ = ["ScoreHinge", "check_relevance", "check_queries"]

# Below this many samples per pass, shipping work to other processes costs more than it saves
# (measured break-even on LETOR-like queries: between 3e4 and 2e5 samples).
_MIN_PARALLEL_SAMPLES = 100_000
# Chunks per worker: a few, so that unequal query sizes still balance.
_CHUNKS_PER_JOB = 4


def check_queries(queries, n, y):
    """Queries as a tuple of int64 index arrays, each in range with a positive and a negative.

    Parameters
    ----------
    queries : sequence of array-like of int
    n : int
        Number of rows.
    y : ndarray of bool, shape (n,)

    Returns
    -------
    tuple of ndarray of int64

    Raises
    ------
    ValueError
        On an empty sequence, a query that is not a non-empty 1-D integer array, indices out of
        range, or a query without a positive or without a negative.
    """
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


def _stack_layout(queries):
    """``(rows, starts, ends)``: the stacked rows (a slice or an index array) and the ranges."""
    first = np.array([q[0] for q in queries])
    last = np.array([q[-1] for q in queries])
    sizes = np.array([q.size for q in queries], dtype=np.int64)
    rows = np.concatenate(queries)
    ends = np.cumsum(sizes)
    step = np.diff(rows)
    step[ends[:-1] - 1] = 1  # from one query to the next: checked below
    if np.all(step == 1) and np.all(first[1:] > last[:-1]):  # every query a range, in ascending order
        lo, hi = int(first[0]), int(last[-1]) + 1
        return slice(lo, hi), first - lo, last + 1 - lo
    return rows, ends - sizes, ends


def _oracle_chunk(oracle, scores, y, starts, ends):
    """``oracle.batch`` (module-level, for joblib)."""
    return oracle.batch(scores, y, starts, ends)


class ScoreHinge:
    """The mean structured hinge ``H = (1/Q) Σ_q H_q`` of queries, as a function of their scores.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Relevance of every row: bool, or numbers of which those > 0 are relevant.
    queries : sequence of int ndarrays
        Row indices of each query; each needs a positive and a negative.
    oracle : Oracle or callable
        Loss-augmented inference (:func:`ssvm.losses.get_oracle`, or any
        ``f(scores, y) -> (c, delta)``), called without validation.
    n_jobs : int or None, default=None
        Parallel oracle calls over queries (joblib semantics), used for full passes over many
        queries with enough samples; queries are batched into a few chunks per worker.
    check_input : bool, default=True
        Validate ``y`` and ``queries``; callers that already did pass False.
    normaliser : int, optional
        The ``Q`` of ``H = (1/Q) Σ_q H_q`` (default: the number of ``queries``). A part of a larger
        problem, such as the queries of one block of a dask array, passes the whole problem's
        ``Q``: the parts' hinges and planes then add up to the whole's.

    Attributes
    ----------
    n_samples : int
        Rows ``y`` describes.
    n_queries : int
        Number of queries.
    normaliser : int
        ``Q``.
    n_stacked : int
        Length of the stacked score vector.
    rows : slice or ndarray of int64
        The rows in stacked order: ``stacked = values[rows]``.
    starts, ends : ndarray of int64
        Query ``q`` is ``stacked[starts[q]:ends[q]]``.
    y_stacked : ndarray of bool, shape (n_stacked,)
        Relevance in stacked order.
    oracle : Oracle
    oracle_seconds : float
        Cumulative wall time of the oracle calls; a fused round over these queries
        (:class:`~ssvm.problem._fused.FusedRound`) adds its oracles' time, summed over its threads.
    n_oracle_calls : int
        Cumulative number of per-query oracle calls.
    """

    def __init__(self, y, queries, oracle, *, n_jobs=None, check_input=True, normaliser=None):
        self.oracle = as_oracle(oracle)
        if check_input:
            y = np.asarray(y)
            y = check_relevance(y, y.shape[0] if y.ndim == 1 else -1)  # the one convention: y > 0
            queries = check_queries(queries, y.shape[0], y)
        self.n_samples = y.shape[0]
        self.n_queries = len(queries)
        self.normaliser = self.n_queries if normaliser is None else int(normaliser)
        self.n_jobs = n_jobs
        self.rows, self.starts, self.ends = _stack_layout(queries)
        self.y_stacked = y[self.rows]
        self.n_stacked = self.y_stacked.shape[0]
        self.oracle_seconds = 0.0
        self.n_oracle_calls = 0

    def stack(self, values):
        """``values`` (one entry or row per sample, in row order) in the stacked order.

        Parameters
        ----------
        values : ndarray of shape (n_samples, ...)

        Returns
        -------
        ndarray of shape (n_stacked, ...)
            A view when the stacked rows are a slice.
        """
        return values[self.rows]

    def unstack(self, stacked):
        """A stacked vector (such as the coefficients ``c``) back in row order.

        Parameters
        ----------
        stacked : ndarray of shape (n_stacked,)

        Returns
        -------
        ndarray of shape (n_samples,)
            Zero on the rows outside the stacked range; rows between queries inside it keep what
            ``stacked`` holds there (zero for the coefficients).
        """
        out = np.zeros(self.n_samples, dtype=stacked.dtype)
        out[self.rows] = stacked
        return out

    def __call__(self, s):
        """Mean hinge at the stacked scores ``s``, with its tight supporting plane in score space.

        Parameters
        ----------
        s : ndarray of float64, shape (n_stacked,)

        Returns
        -------
        ScorePlane
            ``H = (1/Q) Σ_q H_q`` at ``s`` (``Q`` the normaliser); ``c`` (shape (n_stacked,)) the
            oracles' coefficients divided by ``Q`` (zero on rows outside the queries): the
            gradient ``∂H/∂s`` where ``H`` is differentiable, a subgradient everywhere;
            ``offset = (1/Q) Σ_q delta_q``. The plane ``offset + s' @ c`` lies below ``H`` at
            every stacked score vector ``s'`` and touches it at ``s`` (up to rounding).
        """
        c, delta = self.terms(s)
        c /= self.normaliser
        offset = float(delta.sum()) / self.normaliser
        return ScorePlane(offset + float(s @ c), c, offset)

    def terms(self, s, queries=None):
        """The oracles' ``(c, delta)`` of every query, or of some, at the scores ``s``.

        Parameters
        ----------
        s : ndarray of float64
            Stacked scores (shape ``(n_stacked,)``) or, with ``queries``, the scores of those
            queries' rows concatenated in that order.
        queries : ndarray of int64, optional
            Query numbers.

        Returns
        -------
        c : ndarray of shape s.shape
            Each query's ``c`` in its rows (not divided by ``Q``).
        delta : ndarray of shape (m,)
            ``delta`` per query.
        """
        if queries is None:
            return self._run(s, self.y_stacked, self.starts, self.ends)
        sizes = self.ends[queries] - self.starts[queries]
        ends = np.cumsum(sizes)
        y = np.concatenate([self.y_stacked[self.starts[k]:self.ends[k]] for k in queries])
        return self._run(s, y, ends - sizes, ends)

    def _n_jobs(self, n_samples, n_queries):
        """Workers for a pass over ``n_queries`` queries of ``n_samples`` rows (1: in process)."""
        if n_queries < 2 or n_samples < _MIN_PARALLEL_SAMPLES:
            return 1
        return max(1, effective_n_jobs(self.n_jobs))

    def _run(self, scores, y, starts, ends):
        """``oracle.batch`` on the queries ``scores[starts[k]:ends[k]]``, in parallel chunks of
        about equal size when worthwhile (a chunk ships as contiguous arrays)."""
        t0 = time.perf_counter()
        m = starts.shape[0]
        n_jobs = self._n_jobs(int((ends - starts).sum()), m)
        if n_jobs < 2:
            c_all, delta = self.oracle.batch(scores, y, starts, ends)
        else:
            n_chunks = min(m, n_jobs * _CHUNKS_PER_JOB)
            cum = np.cumsum(ends - starts)
            cuts = np.searchsorted(cum, cum[-1] * np.arange(1, n_chunks) / n_chunks) + 1
            cuts = np.unique(np.concatenate([[0], cuts, [m]]).clip(0, m))
            parts = Parallel(n_jobs=n_jobs)(
                delayed(_oracle_chunk)(
                    self.oracle,
                    scores[starts[a]:ends[b - 1]],
                    y[starts[a]:ends[b - 1]],
                    starts[a:b] - starts[a],
                    ends[a:b] - starts[a],
                )
                for a, b in zip(cuts[:-1], cuts[1:])
            )
            c_all = np.zeros(scores.shape[0])
            for (a, b), (c, _) in zip(zip(cuts[:-1], cuts[1:]), parts):
                c_all[starts[a]:ends[b - 1]] = c
            delta = np.concatenate([d for _, d in parts])
        self.oracle_seconds += time.perf_counter() - t0
        self.n_oracle_calls += m
        return c_all, delta
