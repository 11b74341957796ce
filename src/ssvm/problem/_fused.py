"""The fused training round (docs/design.md §11): ``X w``, the oracles and ``Xᵀ c`` block by block.

A cutting-plane round needs the plane ``(H, offset, g)`` at ``w``: the scores ``s = X w``, every
query's oracle on its scores, and ``g = Xᵀ c``. Done as three passes (:class:`StructuredHinge`'s
two-pass path) the round reads ``X`` twice. Here the queries are cut into *blocks* of whole queries
of about ``_BLOCK_BYTES`` of ``X`` (a share of a core's L2 cache), and one compiled loop does, per
block, ``s_b = X_b w``, the block's oracles into ``c_b``, and ``g += X_bᵀ c_b`` while ``X_b`` is
still in cache: the round reads ``X`` once. The blocks are split into a fixed number of *chunks*
(of about equal rows and at least ``_PARALLEL_BYTES`` of ``X``, never more than ``_MAX_CHUNKS``;
one chunk runs in the calling thread) that OpenMP threads take in parallel (as many as
:func:`ssvm._threads.effective_n_threads` allows: ``threadpoolctl``'s OpenMP limit and
``OMP_NUM_THREADS`` are obeyed), each chunk summing into its own float64 accumulator with its own
work memory; the chunks' sums are added in chunk order, so the result does not depend on the number
of threads. The loop is compiled (:mod:`._fused_round`, which says what it does per block).

Every number is the two-pass path's up to the order of the float64 sums of ``g`` and ``s @ c``:
the scores come from the same compiled loops (:mod:`._products`' row loops, on a block's rows) and
the oracles are the compiled forms of the registry's, as the oracle's
:class:`~ssvm.losses.oracle.FusedForm` (the loss table's ``fused``) names them: ``"qs"``, QS for AP
and NDCG, the walk or the grid as :func:`~ssvm.losses.qs.qs_batch` picks; ``"graded"``, the per-level
walks of :func:`~ssvm.losses.graded.graded_ndcg_batch`; ``"per_row"`` and ``"top_k"``, 0-1 and
precision@k (:mod:`ssvm.losses._classification_kernels`). An oracle without a fused form (a user's
callable, a :class:`~ssvm.losses.QSLoss` without ``compiled_batch``, ...) has no fused round: the
caller keeps its two-pass path. QS and graded queries larger than the batch kernels' limit run after the loop,
one at a time, on the two-pass path (one query that does not fit a cache gains nothing from fusing).

``X`` is read in its own precision (float32 or float64, dense C-contiguous or CSR) and never copied.

The oracles' time is measured inside the loop: each chunk sums the monotonic clock's ticks
(:mod:`._ticks`, nanoseconds) around each block's oracles, and the sum over the chunks, times
:data:`._ticks.SECONDS_PER_TICK`, is charged to the hinge's ``oracle_seconds``, with one
``n_oracle_calls`` per query, as its two-pass oracle runs charge them. With threads that sum is
thread-seconds (it may exceed the round's wall time). It is a part of the round's time, not disjoint
from it: callers that time the whole round (``fused_seconds``) count the oracles in it too.
"""
import time

import numpy as np
import scipy.sparse as sp

from .._threads import effective_n_threads
from ..losses._core.derivative import count_positives, inverse_log_table
from ..losses.oracle import as_oracle
from ..losses.qs import _BATCH_MAX, _NO_TABLE, _use_walk
from ..losses.rank_losses import KIND_NDCG_LOG2
from . import _products
from ._fused_round import MODE_GRADED, MODE_QS, MODE_TOP_K, MODE_ZERO_ONE, csr_round, dense_round
from ._ticks import SECONDS_PER_TICK

__all__ = ["FusedRound", "fused_plane"]

_BLOCK_BYTES = 256 * 1024  # X per block: a quarter of a 1 MiB L2, leaving room for s, c and g
_MAX_CHUNKS = 16  # parallel chunks of blocks, each with its own accumulator of g
_PARALLEL_BYTES = 4 << 20  # X per chunk at least: below, one chunk in the calling thread
_MAX_ACCUMULATOR_ENTRIES = 1 << 22  # chunks x features: at most 32 MiB of accumulators
_NO_GRADES = np.zeros(0, dtype=np.int64)


# the compiled loop's mode of each fused form (ssvm.losses.oracle.FUSED_MODES)
_MODES = {"qs": MODE_QS, "graded": MODE_GRADED, "per_row": MODE_ZERO_ONE, "top_k": MODE_TOP_K}


def oracle_form(oracle):
    """``(mode, kind, k)`` of the compiled loop for an oracle's fused form
    (:attr:`Oracle.fused <ssvm.losses.Oracle.fused>`), or None when it has none (graded NDCG:
    ``kind`` is the gain's code)."""
    form = as_oracle(oracle).fused
    if form is None:
        return None
    return _MODES[form.mode], int(form.kind), int(form.k)


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
        # one compiled loop for all modes: labels as uint8 (a bool array's buffer), int64 grades
        self.y = np.ascontiguousarray(y > 0 if graded else y, dtype=np.bool_).view(np.uint8)
        sizes = ends - starts
        n_pos = count_positives(self.y, np.ascontiguousarray(starts, dtype=np.int64),
                                np.ascontiguousarray(ends, dtype=np.int64))
        inside = sizes <= _BATCH_MAX if mode in (MODE_QS, MODE_GRADED) else np.ones(sizes.size, dtype=bool)
        self.apart = np.flatnonzero(~inside)  # queries run one at a time after the loop
        mine = np.flatnonzero(inside)
        self.starts = np.ascontiguousarray(starts[mine], dtype=np.int64)
        self.ends = np.ascontiguousarray(ends[mine], dtype=np.int64)
        self.n_pos = n_pos[mine]
        self.walk = _use_walk(kind, self.n_pos, sizes[mine] - self.n_pos) & (mode == MODE_QS)
        self._walk = np.ascontiguousarray(self.walk, dtype=np.bool_).view(np.uint8)
        ndcg = graded or (mode == MODE_QS and kind == KIND_NDCG_LOG2)
        self.lt = inverse_log_table(int(sizes[mine].max()) + 2) if ndcg and mine.size else _NO_TABLE
        if sp.issparse(X):  # nothing is copied (a CSR matrix's indptr takes its indices' dtype)
            self._layout = csr_round, (X.data, X.indices, X.indptr.astype(X.indices.dtype, copy=False))
        else:  # a dense X that is not C-contiguous is read through a C-contiguous copy
            self._layout = dense_round, (np.ascontiguousarray(X),)
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
        normaliser = float(self.hinge.normaliser)
        mode, kind, k = self.form
        delta = np.empty(self.starts.size)
        n_chunks = self.chunk_cuts.size - 1
        # one chunk or none: no threads to wake (they may wait for a core)
        n_threads = 1 if n_chunks <= 1 else min(effective_n_threads(), n_chunks)
        run, X_arrays = self._layout
        G, sums, chunk_ticks = run(*X_arrays, np.ascontiguousarray(w_x), bias, self.fit_intercept, self.y,
                                   self.grades, self.starts, self.ends, self.n_pos, self._walk, mode, kind, k,
                                   self.lt, self.block_cuts, self.chunk_cuts, normaliser, delta, n_threads)
        if n_chunks == 1:
            g, (c_sum, sc) = G[0].copy(), sums[0]
        else:  # the chunks' sums in chunk order
            g, (c_sum, sc) = G.sum(axis=0), sums.sum(axis=0)
        c_sum, sc = float(c_sum), float(sc)
        oracle_ticks = int(chunk_ticks.sum())
        oracle_seconds = oracle_ticks * SECONDS_PER_TICK
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
