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

import platform
import threading
import time
from contextlib import contextmanager

import numba
import numpy as np
import scipy.sparse as sp
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from .._threads import effective_n_threads
from ..losses._classification_kernels import precision_at_k_batch
from ..losses._graded_kernel import GAIN_CODES, graded_small_batch
from ..losses._qs_walk import inverse_log_table, walk_batch
from ..losses.classification import zero_one_batch
from ..losses.graded import graded_ndcg_batch
from ..losses.qs import _BATCH_GRID, _BATCH_MAX, _NO_TABLE, _grid_batch, _use_walk, qs_batch
from ..losses.rank_losses import KIND_NDCG_LOG2
from . import _products

__all__ = ["FusedRound", "fused_plane"]

_BLOCK_BYTES = 256 * 1024  # X per block: a quarter of a 1 MiB L2, leaving room for s, c and g
_MAX_CHUNKS = 16  # parallel chunks of blocks, each with its own accumulator of g
_PARALLEL_BYTES = 4 << 20  # X per chunk at least: below, one chunk in the calling thread
_MAX_ACCUMULATOR_ENTRIES = 1 << 22  # chunks x features: at most 32 MiB of accumulators
MODE_QS, MODE_ZERO_ONE, MODE_TOP_K, MODE_GRADED = 0, 1, 2, 3
_NO_GRADES = np.zeros(0, dtype=np.int64)


# --- Temporary: numba forms of kernels ported to Cython (a numba loop cannot call Cython). ----------
# Removed when the fused round is ported (issue #34, P1): its Cython loop cimports
# ssvm.problem._round (row sums), ssvm.losses._classification_kernels (the per-query oracles) and
# ssvm.problem._ticks (the clock) instead.

@njit(cache=True, nogil=True)
def _tmp_dense_scores(X, w):  # removed when the fused round is ported
    """``X @ w`` in the order of ``_round.pxd``'s row sum (8 lanes, a fixed tree, the rest in
    order; no fastmath): bit for bit the two-pass path's scores."""
    n, d = X.shape
    s = np.empty(n)
    full = d - d % 8
    for i in range(n):
        a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = 0.0
        for j in range(0, full, 8):
            a0 += X[i, j] * w[j]
            a1 += X[i, j + 1] * w[j + 1]
            a2 += X[i, j + 2] * w[j + 2]
            a3 += X[i, j + 3] * w[j + 3]
            a4 += X[i, j + 4] * w[j + 4]
            a5 += X[i, j + 5] * w[j + 5]
            a6 += X[i, j + 6] * w[j + 6]
            a7 += X[i, j + 7] * w[j + 7]
        r = ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7))
        for j in range(full, d):
            r += X[i, j] * w[j]
        s[i] = r
    return s


@njit(cache=True, nogil=True)
def _tmp_csr_scores(data, indices, indptr, w):  # removed when the fused round is ported
    n = indptr.shape[0] - 1
    s = np.empty(n)
    for i in range(n):
        acc = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            acc += data[k] * w[indices[k]]
        s[i] = acc
    return s


@njit(cache=True, nogil=True)
def _tmp_zero_one_into(scores, y, c):  # removed when the fused round is ported
    n = scores.size
    n_viol = 0
    for i in range(n):
        ypm = 1.0 if y[i] else -1.0
        if 1.0 - ypm * scores[i] > 0.0:
            c[i] = -ypm / n
            n_viol += 1
        else:
            c[i] = 0.0
    return n_viol / n


@njit(cache=True, nogil=True)
def _tmp_precision_at_k_into(scores, y, k, c):  # removed when the fused round is ported
    n = scores.size
    k = min(k, n)
    a = np.empty(n)
    n_pos = 0
    for i in range(n):
        a[i] = scores[i] + (0.0 if y[i] else 1.0)
        n_pos += y[i]
    v = np.partition(a, n - k)[n - k]
    m = k
    for i in range(n):
        if a[i] > v:
            m -= 1
    n_neg = n - n_pos
    w_pos = min(1.0, k / n_pos)
    w_neg = max(0, k - n_pos) / n_neg if n_neg else 0.0
    n_chosen_neg = 0
    for positive in (True, False):
        for i in range(n):
            if a[i] == v and y[i] == positive:
                a[i] = np.inf if m > 0 else -np.inf
                m -= 1
    for i in range(n):
        chosen = a[i] > v
        if chosen and not y[i]:
            n_chosen_neg += 1
        c[i] = ((1.0 if chosen else 0.0) - (w_pos if y[i] else w_neg)) / k
    return n_chosen_neg / k


#: whether the numba clock below reads the cycle counter (x86-64 only); removed when the fused round is ported
COUNTER_WORKS = platform.machine().lower() in ("x86_64", "amd64")
_tmp_anchor = None
_tmp_first = threading.Lock()


@intrinsic
def _tmp_read_counter(typingctx):  # removed when the fused round is ported
    def codegen(context, builder, signature, args):
        if not COUNTER_WORKS:
            return ir.Constant(ir.IntType(64), 0)
        read = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(64), []),
                                              "llvm.readcyclecounter")
        return builder.call(read, [])

    return types.int64(), codegen


@njit(cache=True, nogil=True)
def ticks():  # removed when the fused round is ported (then ssvm.problem._ticks's clock)
    """The CPU's cycle counter (0 where it is not trusted)."""
    return _tmp_read_counter()


def seconds_per_tick():  # removed when the fused round is ported
    """Seconds per tick of :func:`ticks`, calibrated against ``time.perf_counter`` from the first call."""
    global _tmp_anchor
    with _tmp_first:
        if _tmp_anchor is None:
            ticks()
            _tmp_anchor = (time.perf_counter(), ticks())
            time.sleep(0.002)
    t0, c0 = _tmp_anchor
    t1, c1 = time.perf_counter(), ticks()
    return (t1 - t0) / (c1 - c0) if c1 > c0 else 0.0


@contextmanager
def _tmp_numba_threads():  # removed when the fused round is ported
    """numba's threads for :func:`_round`: the OpenMP limit of the calling thread
    (:func:`ssvm._threads.effective_n_threads`), so that ``threadpool_limits`` and a dask block
    task's limit govern this loop as they govern the Cython kernels."""
    before = numba.get_num_threads()
    numba.set_num_threads(max(1, min(effective_n_threads(), numba.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        numba.set_num_threads(before)

# --- end of the temporary part ----------------------------------------------------------------------


def oracle_form(oracle):
    """``(mode, kind, k)`` of an oracle's compiled form, or None when it has none (graded NDCG:
    ``kind`` is the gain's code)."""
    if oracle.batched is qs_batch:  # get_oracle drops the batch form of a loss without compiled_batch
        return MODE_QS, int(oracle.params["loss"].kind), 0
    if oracle.batched is graded_ndcg_batch:
        return MODE_GRADED, GAIN_CODES[oracle.params["gain"]], 0
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
    if mode == MODE_GRADED:  # one call: the kernel loops over the queries with one set of work arrays
        graded_small_batch(s, grades, starts, ends, kind, lt, c, delta)
        return
    for q in range(starts.size):
        a, b = starts[q], ends[q]
        if mode == MODE_ZERO_ONE:
            delta[q] = _tmp_zero_one_into(s[a:b], y[a:b], c[a:b])
        elif mode == MODE_TOP_K:
            delta[q] = _tmp_precision_at_k_into(s[a:b], y[a:b], k, c[a:b])
        elif walk[q]:
            walk_batch(s, y, starts[q:q + 1], ends[q:q + 1], n_pos[q:q + 1], kind, lt, c, delta[q:q + 1])
        else:
            _grid_batch(s, y, starts[q:q + 1], ends[q:q + 1], n_pos[q:q + 1], kind, grid, c, delta[q:q + 1])


@njit(cache=True, nogil=True)
def _block_scores(rows, lo, hi, w):
    """``X[lo:hi] @ w`` by the compiled loops of :mod:`._products` (see :func:`_as_rows`)."""
    X64, X32, d64, d32, i32, p32, i64, p64 = rows
    if p32.size:
        if d32.size:
            return _tmp_csr_scores(d32, i32, p32[lo:hi + 1], w)
        return _tmp_csr_scores(d64, i32, p32[lo:hi + 1], w)
    if p64.size:
        if d32.size:
            return _tmp_csr_scores(d32, i64, p64[lo:hi + 1], w)
        return _tmp_csr_scores(d64, i64, p64[lo:hi + 1], w)
    if X32.size:
        return _tmp_dense_scores(X32[lo:hi], w)
    return _tmp_dense_scores(X64[lo:hi], w)


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
        inside = sizes <= _BATCH_MAX if mode in (MODE_QS, MODE_GRADED) else np.ones(sizes.size, dtype=bool)
        self.apart = np.flatnonzero(~inside)  # queries run one at a time after the loop
        mine = np.flatnonzero(inside)
        self.starts, self.ends, self.n_pos = starts[mine], ends[mine], n_pos[mine]
        self.walk = _use_walk(kind, self.n_pos, sizes[mine] - self.n_pos) & (mode == MODE_QS)
        ndcg = graded or (mode == MODE_QS and kind == KIND_NDCG_LOG2)
        self.lt = inverse_log_table(int(sizes[mine].max()) + 2) if ndcg and mine.size else _NO_TABLE
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
            with _tmp_numba_threads():
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
