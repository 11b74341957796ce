"""The fused training round (docs/design.md §11): ``X w``, the oracles and ``Xᵀ c`` block by block.

A cutting-plane round needs the plane ``(H, offset, g)`` at ``w``: the scores ``s = X w``, every
query's oracle on its scores, and ``g = Xᵀ c``. Done as three passes (:class:`StructuredHinge`'s
two-pass path) the round reads ``X`` twice. Here the queries are cut into *blocks* of whole queries
of about ``_BLOCK_BYTES`` of ``X`` (a share of a core's L2 cache), and one compiled loop does, per
block, ``s_b = X_b w``, the block's oracles into ``c_b``, and ``g += X_bᵀ c_b`` while ``X_b`` is
still in cache: the round reads ``X`` once. The blocks are split into a fixed number of *chunks*
(of about equal rows and at least ``_PARALLEL_BYTES`` of ``X``, never more than ``_MAX_CHUNKS``;
one chunk runs in the calling thread) that numba's threads take in parallel, each chunk summing
into its own float64 accumulator; the chunks' sums are added in chunk order, so the
result does not depend on the number of threads.

Every number is the two-pass path's up to the order of the float64 sums of ``g`` and ``s @ c``:
the scores come from the same compiled loops (:mod:`._products`, on a block's rows) and the oracles
are the compiled forms of the registry's (QS for AP and NDCG: the walk or the grid as
:func:`~ssvm.losses.qs.qs_batch` picks; graded NDCG: the per-level walks of
:func:`~ssvm.losses.graded.graded_ndcg_batch`, one call per block; 0-1 and precision@k:
:mod:`ssvm.losses._classification_kernels`). An oracle without a compiled form (a user's callable,
a :class:`~ssvm.losses.QSLoss` without ``compiled_batch``, ...) has no fused round: the caller keeps
its two-pass path. QS and graded queries larger than the batch kernels' limit run after the loop,
one at a time, on the two-pass path (one query that does not fit a cache gains nothing from fusing).

``X`` is read in its own precision (float32 or float64, dense C-contiguous or CSR) and never copied.

The oracles' time is measured inside the loop: each chunk sums the CPU's cycle counter
(:func:`._ticks.ticks`, an ``@intrinsic`` of ``llvm.readcyclecounter``) around each block's oracles,
and the sum over the chunks, times a factor calibrated against ``time.perf_counter``
(:func:`._ticks.seconds_per_tick`), is charged to the hinge's ``oracle_seconds``, with one
``n_oracle_calls`` per query, as its two-pass oracle runs charge them. With threads that sum is
CPU-seconds (it may exceed the round's wall time). It is a part of the round's time, not disjoint
from it: callers that time the whole round (``fused_seconds``) count the oracles in it too. The
counter is trusted on x86-64 only (see :mod:`._ticks`); elsewhere the oracles inside the loop read
0 seconds.
"""

import time

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from ..losses._classification_kernels import precision_at_k_batch, precision_at_k_into, zero_one_into
from ..losses.classification import zero_one_batch
from . import _products
from ._ticks import seconds_per_tick, ticks

__all__ = ["FusedRound", "fused_plane"]

_BLOCK_BYTES = 256 * 1024  # X per block: a quarter of a 1 MiB L2, leaving room for s, c and g
_MAX_CHUNKS = 16  # parallel chunks of blocks, each with its own accumulator of g
_PARALLEL_BYTES = 4 << 20  # X per chunk at least: below, one chunk in the calling thread
_MAX_ACCUMULATOR_ENTRIES = 1 << 22  # chunks x features: at most 32 MiB of accumulators
MODE_QS, MODE_ZERO_ONE, MODE_TOP_K, MODE_GRADED = 0, 1, 2, 3
_NO_GRADES = np.zeros(0, dtype=np.int64)
_NO_TABLE = np.zeros(1)
_BATCH_GRID = (True, 8, 0)


def oracle_form(oracle):
    """``(mode, kind, k)`` of an oracle's compiled form, or None when it has none.

    INTERIM (issue #34): the QS family moved to the compiled core, which this numba loop cannot call;
    until the round is ported on top of it, QS and graded NDCG take the two-pass path."""
    if oracle.batched is zero_one_batch:
        return MODE_ZERO_ONE, 0, 0
    if oracle.batched is precision_at_k_batch:
        return MODE_TOP_K, 0, int(oracle.params["k"])
    return None


@njit(cache=True, nogil=True)
def _block_oracles(s, y, grades, starts, ends, n_pos, walk, form, lt, grid, c, delta):
    """The oracles of a block's queries ``s[starts[q]:ends[q]]`` into ``c`` (zero elsewhere);
    ``grades`` (the block's rows) only for graded NDCG, ``y`` for the others."""
    mode, kind, k = form
    for q in range(starts.size):
        a, b = starts[q], ends[q]
        if mode == MODE_ZERO_ONE:
            delta[q] = zero_one_into(s[a:b], y[a:b], c[a:b])
        else:
            delta[q] = precision_at_k_into(s[a:b], y[a:b], k, c[a:b])


@njit(cache=True, nogil=True)
def _block_scores(rows, lo, hi, w):
    """``X[lo:hi] @ w`` by the compiled loops of :mod:`._products` (see :func:`_as_rows`)."""
    X64, X32, d64, d32, i32, p32, i64, p64 = rows
    if p32.size:
        if d32.size:
            return _products._csr_scores(d32, i32, p32[lo:hi + 1], w)
        return _products._csr_scores(d64, i32, p32[lo:hi + 1], w)
    if p64.size:
        if d32.size:
            return _products._csr_scores(d32, i64, p64[lo:hi + 1], w)
        return _products._csr_scores(d64, i64, p64[lo:hi + 1], w)
    if X32.size:
        return _products._dense_scores(X32[lo:hi], w)
    return _products._dense_scores(X64[lo:hi], w)


@njit(cache=True, nogil=True)
def _dense_accumulate(X, lo, s, c, normaliser, g, sums):
    """:func:`_accumulate` of a dense ``X`` (its layout known: the row loop vectorises)."""
    for i in range(c.size):
        if c[i] != 0.0:
            ci = c[i] / normaliser
            sums[0] += ci
            sums[1] += s[i] * ci
            for j in range(g.size):
                g[j] += X[lo + i, j] * ci


@njit(cache=True, nogil=True)
def _csr_accumulate(data, indices, indptr, lo, s, c, normaliser, g, sums):
    """:func:`_accumulate` of a CSR ``X``."""
    for i in range(c.size):
        if c[i] != 0.0:
            ci = c[i] / normaliser
            sums[0] += ci
            sums[1] += s[i] * ci
            for p in range(indptr[lo + i], indptr[lo + i + 1]):
                g[indices[p]] += data[p] * ci


@njit(cache=True, nogil=True)
def _accumulate(rows, lo, s, c, normaliser, g, sums):
    """``g += X[lo:lo+n]ᵀ (c / Q)``; ``sums`` += (Σ c / Q, Σ s c / Q); rows with ``c = 0`` skipped.

    The layout is chosen once per block, outside the row loop."""
    X64, X32, d64, d32, i32, p32, i64, p64 = rows
    if p32.size:
        if d32.size:
            _csr_accumulate(d32, i32, p32, lo, s, c, normaliser, g, sums)
        else:
            _csr_accumulate(d64, i32, p32, lo, s, c, normaliser, g, sums)
    elif p64.size:
        if d32.size:
            _csr_accumulate(d32, i64, p64, lo, s, c, normaliser, g, sums)
        else:
            _csr_accumulate(d64, i64, p64, lo, s, c, normaliser, g, sums)
    elif X32.size:
        _dense_accumulate(X32, lo, s, c, normaliser, g, sums)
    else:
        _dense_accumulate(X64, lo, s, c, normaliser, g, sums)


def _as_rows(X):
    """``X`` as the one tuple type the compiled loop takes, whatever its layout and dtype (one
    compilation for all): ``(X64, X32, data64, data32, indices32, indptr32, indices64, indptr64)``,
    the arrays ``X`` does not use empty. Nothing is copied (a non-contiguous dense ``X`` is made
    contiguous; a CSR matrix's ``indptr`` takes its ``indices``' dtype)."""
    empty = {np.float64: np.zeros((0, 0)), np.float32: np.zeros((0, 0), dtype=np.float32)}
    flat = {np.float64: np.zeros(0), np.float32: np.zeros(0, dtype=np.float32)}
    index = {np.int32: np.zeros(0, dtype=np.int32), np.int64: np.zeros(0, dtype=np.int64)}
    dense, data = dict(empty), dict(flat)
    indices, indptr = dict(index), dict(index)
    if sp.issparse(X):
        kind = X.indices.dtype.type
        data[X.dtype.type] = X.data
        indices[kind] = X.indices
        indptr[kind] = X.indptr.astype(kind, copy=False)
    else:
        dense[X.dtype.type] = np.ascontiguousarray(X)
    return (dense[np.float64], dense[np.float32], data[np.float64], data[np.float32],
            indices[np.int32], indptr[np.int32], indices[np.int64], indptr[np.int64])


@njit(cache=True, nogil=True)
def _chunk(rows, d, w, bias, use_bias, y, grades, starts, ends, n_pos, walk, form, lt, grid, block_cuts, b0, b1,
           normaliser, delta):
    """The blocks ``b0:b1``, one after the other: scores, oracles (Δ into ``delta``), ``Xᵀ c``.

    Returns the chunk's ``g`` and ``(Σ c, Σ s c)``, divided by the normaliser, and the ticks
    (:func:`._ticks.ticks`) its oracles took."""
    g = np.zeros(d)
    acc = np.zeros(2)
    oracle_ticks = 0
    for blk in range(b0, b1):
        q0, q1 = block_cuts[blk], block_cuts[blk + 1]
        lo, hi = starts[q0], ends[q1 - 1]
        s = _block_scores(rows, lo, hi, w)
        if use_bias:
            s += bias
        c = np.zeros(hi - lo)
        t0 = ticks()
        _block_oracles(s, y[lo:hi], grades[lo:hi] if grades.size else grades, starts[q0:q1] - lo,
                       ends[q0:q1] - lo, n_pos[q0:q1], walk[q0:q1], form, lt, grid, c, delta[q0:q1])
        oracle_ticks += ticks() - t0
        _accumulate(rows, lo, s, c, normaliser, g, acc)
    return g, acc, oracle_ticks


@njit(cache=True, parallel=True)
def _round(rows, d, w, bias, use_bias, y, grades, starts, ends, n_pos, walk, form, lt, grid, block_cuts,
           chunk_cuts, normaliser, delta):
    """The chunks in parallel (numba's threads), each by :func:`_chunk` with its own accumulator.

    Returns the chunks' ``g`` (one row each), their ``(Σ c, Σ s c)`` and their oracles' ticks."""
    n_chunks = chunk_cuts.size - 1
    G = np.zeros((n_chunks, d))
    sums = np.zeros((n_chunks, 2))
    oracle_ticks = np.zeros(n_chunks, dtype=np.int64)
    for t in prange(n_chunks):
        G[t], sums[t], oracle_ticks[t] = _chunk(rows, d, w, bias, use_bias, y, grades, starts, ends, n_pos, walk,
                                                form, lt, grid, block_cuts, chunk_cuts[t], chunk_cuts[t + 1],
                                                normaliser, delta)
    return G, sums, oracle_ticks


@njit(cache=True)
def _positives(y, starts, ends):
    n_pos = np.zeros(starts.size, dtype=np.int64)
    for q in range(starts.size):
        for i in range(starts[q], ends[q]):
            n_pos[q] += y[i]
    return n_pos


def _cuts(sizes, consecutive, row_bytes):
    """Block cuts (query positions) of whole queries, about ``_BLOCK_BYTES`` each, never joining two
    queries that are not ``consecutive`` (a query run apart lies between them)."""
    cap = max(1, int(_BLOCK_BYTES // max(row_bytes, 1.0)))
    cuts = [0]
    rows = 0
    for q, size in enumerate(sizes):
        if q > cuts[-1] and (rows + size > cap or not consecutive[q]):
            cuts.append(q)
            rows = 0
        rows += size
    if len(sizes):
        cuts.append(len(sizes))
    return np.array(cuts, dtype=np.int64)


def _chunk_cuts(block_rows, n_chunks):
    """``n_chunks`` runs of blocks (cuts into the blocks) of about equal rows."""
    cum = np.cumsum(block_rows)
    inner = np.searchsorted(cum, cum[-1] * np.arange(1, n_chunks) / n_chunks, side="left") + 1
    return np.unique(np.concatenate(([0], inner, [block_rows.size])).clip(0, block_rows.size))


class FusedRound:
    """The plane of :meth:`StructuredHinge.plane` in one pass over ``X`` (see the module's text).

    Parameters
    ----------
    X : ndarray or scipy.sparse.csr_matrix of float32 or float64, shape (score_hinge.n_stacked, d)
        The stacked rows (:attr:`ScoreHinge.rows` of the features), finite.
    score_hinge : ScoreHinge
        Relevance, queries, oracle and normaliser ``Q``.
    fit_intercept : bool
        ``w`` ends with an intercept (a constant-1 feature that is not stored).

    Attributes
    ----------
    supported : bool
        Whether the oracle has a compiled form; when False, :meth:`plane` must not be called (the
        caller keeps its two-pass path).
    oracle_seconds : float
        Cumulative time of the oracles inside the rounds of :meth:`plane`, summed over the chunks
        (CPU-seconds: with threads, more than the wall time); also added to the hinge's
        ``oracle_seconds``.
    """

    def __init__(self, X, score_hinge, fit_intercept):
        self.oracle_seconds = 0.0
        self.form = oracle_form(score_hinge.oracle)
        self.supported = self.form is not None
        if not self.supported:
            return
        self.X, self.hinge, self.fit_intercept = X, score_hinge, bool(fit_intercept)
        starts, ends, y = score_hinge.starts, score_hinge.ends, score_hinge.y_stacked
        mode, kind, _ = self.form
        graded = mode == MODE_GRADED
        self.grades = np.ascontiguousarray(y, dtype=np.int64) if graded else _NO_GRADES
        self.y = y > 0 if graded else y  # one compiled loop for all modes: bool y, int64 grades
        sizes = ends - starts
        n_pos = _positives(self.y, starts, ends)
        inside = np.ones(sizes.size, dtype=bool)
        self.apart = np.flatnonzero(~inside)  # queries run one at a time after the loop
        mine = np.flatnonzero(inside)
        self.starts, self.ends, self.n_pos = starts[mine], ends[mine], n_pos[mine]
        self.walk = np.zeros(mine.size, dtype=bool)
        self.lt = _NO_TABLE
        self._rows = _as_rows(X)
        if sp.issparse(X):
            row_bytes = (X.data.nbytes + X.indices.nbytes) / max(X.shape[0], 1) + 8
        else:
            row_bytes = X.shape[1] * X.itemsize
        consecutive = np.ones(mine.size, dtype=bool)
        consecutive[1:] = np.diff(mine) == 1
        self.block_cuts = _cuts(sizes[mine], consecutive, row_bytes)
        n_blocks = self.block_cuts.size - 1
        block_rows = self.ends[self.block_cuts[1:] - 1] - self.starts[self.block_cuts[:-1]]
        n_chunks = max(1, min(n_blocks, _MAX_CHUNKS, _MAX_ACCUMULATOR_ENTRIES // max(X.shape[1], 1),
                              int(block_rows.sum() * row_bytes // _PARALLEL_BYTES)))
        self.chunk_cuts = _chunk_cuts(block_rows, n_chunks) if n_blocks else np.zeros(1, dtype=np.int64)

    def plane(self, w):
        """The mean hinge at ``w`` and its tight supporting plane (see :meth:`Problem.plane`).

        Charges the hinge's counters as its own oracle runs do: ``n_oracle_calls`` by one per
        query, ``oracle_seconds`` by the oracles' time (the ticks of every chunk, see the module).

        Parameters
        ----------
        w : ndarray of float64, shape (d,) or (d + 1,) with the intercept

        Returns
        -------
        H : float
        offset : float
        g : ndarray of float64, shape (w.size,)
        """
        w = np.asarray(w, dtype=np.float64)
        w_x, bias = (w[:-1], float(w[-1])) if self.fit_intercept else (w, 0.0)
        d = self.X.shape[1]
        normaliser = float(self.hinge.normaliser)
        args = (self._rows, d, np.ascontiguousarray(w_x), bias, self.fit_intercept, self.y, self.grades,
                self.starts, self.ends, self.n_pos, self.walk, self.form, self.lt, _BATCH_GRID, self.block_cuts)
        delta = np.empty(self.starts.size)
        if self.chunk_cuts.size <= 2:  # one chunk or none: no threads to wake (they may wait for a core)
            g, (c_sum, sc), oracle_ticks = _chunk(*args, 0, self.chunk_cuts[-1], normaliser, delta)
        else:
            G, sums, chunk_ticks = _round(*args, self.chunk_cuts, normaliser, delta)
            g, (c_sum, sc), oracle_ticks = G.sum(axis=0), sums.sum(axis=0), int(chunk_ticks.sum())
        oracle_seconds = oracle_ticks * seconds_per_tick() if oracle_ticks else 0.0
        delta_sum = float(delta.sum())
        for q in self.apart:  # large QS and graded queries, on the two-pass path
            a, b = self.hinge.starts[q], self.hinge.ends[q]
            rows = self.X[a:b]
            s = _products.scores(rows, w_x) + bias if self.fit_intercept else _products.scores(rows, w_x)
            t0 = time.perf_counter()
            c, dq = self.hinge.oracle.batch(s, self.hinge.y_stacked[a:b], np.zeros(1, dtype=np.int64),
                                            np.array([b - a], dtype=np.int64))
            oracle_seconds += time.perf_counter() - t0
            c /= normaliser
            g += _products.transpose(rows, c)
            c_sum += c.sum()
            sc += float(s @ c)
            delta_sum += float(dq[0])
        self.oracle_seconds += oracle_seconds
        self.hinge.oracle_seconds += oracle_seconds
        self.hinge.n_oracle_calls += self.hinge.n_queries
        offset = delta_sum / normaliser
        if self.fit_intercept:
            g = np.append(g, c_sum)
        return offset + sc, offset, g


def fused_plane(X, score_hinge, w, fit_intercept=False):
    """The plane at ``w`` of the stacked rows ``X`` and a :class:`ScoreHinge` in one pass over ``X``.

    The task of a dask block and of an in-memory round alike (:class:`FusedRound` once).

    Parameters
    ----------
    X : ndarray or scipy.sparse.csr_matrix of float32 or float64, shape (score_hinge.n_stacked, d)
    score_hinge : ScoreHinge
    w : ndarray of float64, shape (d,) or (d + 1,) with the intercept
    fit_intercept : bool, default=False

    Returns
    -------
    tuple or None
        ``(H, offset, g)`` as :meth:`Problem.plane`, or None when the oracle has no compiled form
        (then use the two-pass path).
    """
    fused = FusedRound(X, score_hinge, fit_intercept)
    return fused.plane(w) if fused.supported else None
