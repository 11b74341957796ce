"""The fused training round's compiled loop (docs/design.md §11): per block of whole queries, ``s_b = X_b w``,
the block's oracles into ``c_b``, and ``g += X_bᵀ c_b`` while ``X_b`` is still in cache.

:mod:`._fused` cuts the queries into blocks and the blocks into chunks; :func:`dense_round` and
:func:`csr_round` run the chunks on OpenMP threads (``prange``, ``num_threads`` from
:func:`ssvm._threads.effective_n_threads`, read by the caller), each chunk in its own task with its own
float64 accumulator (a row of ``G``, its ``(Σ c, Σ s c)`` and its oracles' clock ticks) and its own work
memory (the oracles' work structs and the block's ``s`` and ``c``, allocated by the chunk): the caller
adds the chunks' rows in chunk order, so the numbers do not depend on the number of threads.

Per block:

1. **Scores** by the products' own row loops (``_round.pxd``: ``dense_scores_rows``, ``csr_scores_rows``),
   so every score is bit for bit the two-pass path's.
2. **Oracles**, query by query, from the compiled cores: QS (AP, NDCG) by the sort-and-walk path or the
   grid as :func:`~ssvm.losses.qs.qs_batch` picks (``walk_queries`` of ``losses/_core/sort_walk.pxd``,
   ``grid_queries`` of ``losses/_core/grid.pxd``), graded NDCG by ``graded_queries``
   (``losses/_core/graded.pxd``), 0-1 and precision@k by ``zero_one_query`` and ``precision_at_k_query``
   (``losses/_classification_kernels.pxd``). Their time is read from the monotonic clock
   (``_ticks.pxd``'s ``ticks_ns``) around each block's oracles.
3. **Accumulate** ``g += X_bᵀ (c_b / Q)`` and ``(Σ c / Q, Σ s c / Q)``, rows with ``c = 0`` skipped (a dense
   block's loop in every SIMD version of ``SSVM_CLONES``; the order of each sum is fixed, so every version
   gives the same bits).

Every loop runs without the GIL.
"""

import numpy as np

from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memset
from libcpp.vector cimport vector

from ..losses._classification_kernels cimport precision_at_k_query, zero_one_query
from ..losses._core.graded cimport graded_queries, graded_work_t
from ..losses._core.grid cimport grid_queries, grid_work_t
from ..losses._core.sort_walk cimport walk_queries, walk_work_t
from ._round cimport csr_scores_rows, dense_scores_rows, floating, index_t
from ._ticks cimport ticks_ns

__all__ = ["MODE_QS", "MODE_ZERO_ONE", "MODE_TOP_K", "MODE_GRADED", "dense_round", "csr_round"]

cdef enum:
    QS = 0
    ZERO_ONE = 1
    TOP_K = 2
    GRADED = 3

#: the oracle modes of :func:`dense_round` and :func:`csr_round`
MODE_QS, MODE_ZERO_ONE, MODE_TOP_K, MODE_GRADED = QS, ZERO_ONE, TOP_K, GRADED

cdef extern from "_simd.h":
    pass

cdef extern from *:
    """
    #include <cstdint>
    /* g += X_b^T (c / Q) over the n rows of a dense block (X its first row), with
       sums[0] += c_i / Q and sums[1] += s_i c_i / Q; rows with c_i = 0 skipped. Each g[j] and each sum
       is added row after row: the same bits in every version of SSVM_CLONES. */
    #define SSVM_FUSED_ACCUMULATE(T)                                                                    \\
    SSVM_CLONES static void ssvm_fused_accumulate(const T* X, std::int64_t d, const double* s,           \\
                                                  const double* c, std::int64_t n, double normaliser,    \\
                                                  double* __restrict__ g, double* sums) {               \\
        for (std::int64_t i = 0; i < n; ++i) {                                                          \\
            if (c[i] != 0.0) {                                                                          \\
                const double ci = c[i] / normaliser;                                                    \\
                sums[0] += ci;                                                                          \\
                sums[1] += s[i] * ci;                                                                   \\
                const T* x = X + i * d;                                                                 \\
                for (std::int64_t j = 0; j < d; ++j)                                                    \\
                    g[j] += static_cast<double>(x[j]) * ci;                                             \\
            }                                                                                           \\
        }                                                                                               \\
    }
    SSVM_FUSED_ACCUMULATE(float)
    SSVM_FUSED_ACCUMULATE(double)
    """
    void dense_accumulate "ssvm_fused_accumulate"(const float* X, int64_t d, const double* s, const double* c,
                                                  int64_t n, double normaliser, double* g, double* sums) noexcept nogil
    void dense_accumulate "ssvm_fused_accumulate"(const double* X, int64_t d, const double* s, const double* c,
                                                  int64_t n, double normaliser, double* g, double* sums) noexcept nogil


ctypedef struct round_t:
    # what every chunk of a round reads (and delta, which each writes at its own queries)
    const double* w
    int64_t d
    double bias
    bint use_bias
    const unsigned char* y       # labels as uint8 (QS, 0-1, precision@k)
    const int64_t* grades        # graded NDCG's grades (else unused)
    const int64_t* starts        # the queries of the loop, rows starts[q]:ends[q]
    const int64_t* ends
    const int64_t* n_pos
    const unsigned char* walk    # QS: the query takes the sort-and-walk path (else the grid)
    int mode
    int kind                     # QS: the loss's kind; graded: the gain's code
    int64_t k                    # precision@k's k
    const double* lt             # 1/log2(m) (NDCG, graded), or a 1-entry table
    int64_t lt_size
    const int64_t* block_cuts    # block b is the queries block_cuts[b]:block_cuts[b+1]
    const int64_t* chunk_cuts    # chunk t is the blocks chunk_cuts[t]:chunk_cuts[t+1]
    double normaliser
    double* delta


cdef cppclass chunk_work_t:
    # one chunk's work memory: the block's scores and c, and the oracles' work structs
    vector[double] s
    vector[double] c
    vector[double] top_k
    walk_work_t walk
    grid_work_t grid
    graded_work_t graded


cdef int64_t block_oracles(const round_t* r, int64_t q0, int64_t q1, int64_t lo, const double* s, double* c,
                           chunk_work_t* work) noexcept nogil:
    """The oracles of the queries ``q0:q1`` on the block's scores ``s`` (row ``lo`` first) into ``c`` (zero
    on rows between queries) and ``r.delta``; returns the clock ticks they took."""
    cdef int64_t q, a, n, first = 0
    cdef int64_t t0 = ticks_ns()
    for q in range(q0, q1):
        a = r.starts[q] - lo
        n = r.ends[q] - r.starts[q]
        if r.mode == ZERO_ONE:
            r.delta[q] = zero_one_query(s + a, r.y + r.starts[q], n, c + a)
        elif r.mode == TOP_K:
            if <int64_t>work.top_k.size() < n:
                work.top_k.resize(n)
            r.delta[q] = precision_at_k_query(s + a, r.y + r.starts[q], n, r.k, c + a, work.top_k.data())
        elif r.mode == GRADED:
            graded_queries(s + a, r.grades + r.starts[q], &first, &n, 1, r.kind, r.lt, r.lt_size, c + a,
                           &r.delta[q], &work.graded)
        elif r.walk[q]:
            walk_queries(s + a, r.y + r.starts[q], &first, &n, &r.n_pos[q], 1, r.kind, r.lt, r.lt_size, c + a,
                         &r.delta[q], &work.walk)
        else:
            grid_queries(s + a, r.y + r.starts[q], &first, &n, &r.n_pos[q], 1, r.kind, c + a, &r.delta[q],
                         &work.grid)
    return ticks_ns() - t0


cdef inline void block_buffers(const round_t* r, int64_t n, chunk_work_t* work) noexcept nogil:
    """The block's ``s`` and ``c`` of ``n`` rows, ``c`` zero (rows between queries keep it)."""
    if <int64_t>work.s.size() < n:
        work.s.resize(n)
        work.c.resize(n)
    memset(work.c.data(), 0, n * sizeof(double))


cdef inline void add_bias(const round_t* r, double* s, int64_t n) noexcept nogil:
    cdef int64_t i
    if r.use_bias:
        for i in range(n):
            s[i] += r.bias


cdef void dense_chunk(const floating[:, ::1] X, const round_t* r, int64_t t, double* g, double* sums,
                      int64_t* ticks) noexcept nogil:
    """The blocks of chunk ``t`` of a dense ``X``, one after the other (see the module)."""
    cdef chunk_work_t work
    cdef int64_t blk, q0, q1, lo, hi
    cdef const floating* X_lo
    for blk in range(r.chunk_cuts[t], r.chunk_cuts[t + 1]):
        q0 = r.block_cuts[blk]
        q1 = r.block_cuts[blk + 1]
        lo = r.starts[q0]
        hi = r.ends[q1 - 1]
        block_buffers(r, hi - lo, &work)
        X_lo = &X[0, 0] + lo * r.d
        dense_scores_rows(X_lo, r.d, r.w, work.s.data(), 0, hi - lo)
        add_bias(r, work.s.data(), hi - lo)
        ticks[0] += block_oracles(r, q0, q1, lo, work.s.data(), work.c.data(), &work)
        dense_accumulate(X_lo, r.d, work.s.data(), work.c.data(), hi - lo, r.normaliser, g, sums)


cdef void csr_chunk(const floating[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
                    const round_t* r, int64_t t, double* g, double* sums, int64_t* ticks) noexcept nogil:
    """The blocks of chunk ``t`` of a CSR ``X``, one after the other (see the module)."""
    cdef chunk_work_t work
    cdef int64_t blk, q0, q1, lo, hi, i, p
    cdef double ci
    cdef double* s
    cdef double* c
    for blk in range(r.chunk_cuts[t], r.chunk_cuts[t + 1]):
        q0 = r.block_cuts[blk]
        q1 = r.block_cuts[blk + 1]
        lo = r.starts[q0]
        hi = r.ends[q1 - 1]
        block_buffers(r, hi - lo, &work)
        s = work.s.data()
        c = work.c.data()
        csr_scores_rows(data, indices, indptr[lo:hi + 1], r.w, s, 0, hi - lo)
        add_bias(r, s, hi - lo)
        ticks[0] += block_oracles(r, q0, q1, lo, s, c, &work)
        for i in range(hi - lo):
            if c[i] != 0.0:
                ci = c[i] / r.normaliser
                sums[0] += ci
                sums[1] += s[i] * ci
                for p in range(indptr[lo + i], indptr[lo + i + 1]):
                    g[indices[p]] += <double>data[p] * ci


cdef round_t make_round(const double[::1] w, double bias, bint use_bias, const unsigned char[::1] y,
                        const int64_t[::1] grades, const int64_t[::1] starts, const int64_t[::1] ends,
                        const int64_t[::1] n_pos, const unsigned char[::1] walk, int mode, int kind, int64_t k,
                        const double[::1] lt, const int64_t[::1] block_cuts, const int64_t[::1] chunk_cuts,
                        double normaliser, double[::1] delta):
    cdef round_t r
    r.w = &w[0] if w.shape[0] else NULL
    r.d = w.shape[0]
    r.bias = bias
    r.use_bias = use_bias
    r.y = &y[0] if y.shape[0] else NULL
    r.grades = &grades[0] if grades.shape[0] else NULL
    r.starts = &starts[0] if starts.shape[0] else NULL
    r.ends = &ends[0] if ends.shape[0] else NULL
    r.n_pos = &n_pos[0] if n_pos.shape[0] else NULL
    r.walk = &walk[0] if walk.shape[0] else NULL
    r.mode = mode
    r.kind = kind
    r.k = k
    r.lt = &lt[0]
    r.lt_size = lt.shape[0]
    r.block_cuts = &block_cuts[0]
    r.chunk_cuts = &chunk_cuts[0]
    r.normaliser = normaliser
    r.delta = &delta[0] if delta.shape[0] else NULL
    return r


cdef tuple round_outputs(Py_ssize_t n_chunks, int64_t d):
    """The outputs of a round of ``n_chunks`` chunks, zero: each chunk's ``G`` (at least one column, so that
    ``&G[t, 0]`` exists; the caller returns the first ``d``), ``sums`` and ``ticks``."""
    return np.zeros((n_chunks, max(d, 1))), np.zeros((n_chunks, 2)), np.zeros(n_chunks, dtype=np.int64)


def dense_round(const floating[:, ::1] X, const double[::1] w, double bias, bint use_bias,
                const unsigned char[::1] y, const int64_t[::1] grades, const int64_t[::1] starts,
                const int64_t[::1] ends, const int64_t[::1] n_pos, const unsigned char[::1] walk, int mode,
                int kind, int64_t k, const double[::1] lt, const int64_t[::1] block_cuts,
                const int64_t[::1] chunk_cuts, double normaliser, double[::1] delta, int n_threads):
    """The chunks of a round of a dense C-contiguous ``X`` (float32 or float64) on ``n_threads`` threads.

    Parameters
    ----------
    X : ndarray of float32 or float64, shape (n, d), C-contiguous
    w : ndarray of float64, shape (d,)
    bias : float
        Added to every score when ``use_bias``.
    use_bias : bool
    y : ndarray of uint8, shape (n,)
        Labels (bool's buffer); unused by graded NDCG.
    grades : ndarray of int64, shape (n,) for graded NDCG (else any)
    starts, ends : ndarray of int64, shape (Q,)
        The loop's queries, rows ``starts[q]:ends[q]``, ascending.
    n_pos : ndarray of int64, shape (Q,)
        Positives per query (QS).
    walk : ndarray of uint8, shape (Q,)
        QS: 1 where the query takes the sort-and-walk path, 0 the grid.
    mode : int
        ``MODE_QS``, ``MODE_ZERO_ONE``, ``MODE_TOP_K`` or ``MODE_GRADED``.
    kind : int
        QS: the loss's kind (AP or NDCG log2); graded: the gain's code.
    k : int
        precision@k's k.
    lt : ndarray of float64
        1/log2(m) for every m the queries reach plus 2 (NDCG, graded), else one entry.
    block_cuts : ndarray of int64
        Query cuts of the blocks.
    chunk_cuts : ndarray of int64
        Block cuts of the chunks (two or more entries).
    normaliser : float
        ``Q`` of the mean hinge: ``c`` is divided by it.
    delta : ndarray of float64, shape (Q,)
        Written: every query's Δ.
    n_threads : int
        OpenMP threads (1: the calling thread only).

    Returns
    -------
    G : ndarray of float64, shape (n_chunks, d)
        Each chunk's ``X_bᵀ c / Q``.
    sums : ndarray of float64, shape (n_chunks, 2)
        Each chunk's ``(Σ c / Q, Σ s c / Q)``.
    ticks : ndarray of int64, shape (n_chunks,)
        Each chunk's oracles' time, in ticks of ``ssvm.problem._ticks``.
    """
    cdef Py_ssize_t n_chunks = chunk_cuts.shape[0] - 1
    cdef round_t r = make_round(w, bias, use_bias, y, grades, starts, ends, n_pos, walk, mode, kind, k, lt,
                                block_cuts, chunk_cuts, normaliser, delta)
    G_out, sums_out, ticks_out = round_outputs(n_chunks, r.d)
    cdef double[:, ::1] G = G_out
    cdef double[:, ::1] sums = sums_out
    cdef int64_t[::1] ticks = ticks_out
    cdef Py_ssize_t t
    with nogil:
        if n_chunks == 1 or n_threads <= 1:
            for t in range(n_chunks):
                dense_chunk(X, &r, t, &G[t, 0], &sums[t, 0], &ticks[t])
        else:
            for t in prange(n_chunks, num_threads=n_threads, schedule="dynamic"):
                dense_chunk(X, &r, t, &G[t, 0], &sums[t, 0], &ticks[t])
    return G_out[:, :r.d], sums_out, ticks_out


def csr_round(const floating[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
              const double[::1] w, double bias, bint use_bias, const unsigned char[::1] y,
              const int64_t[::1] grades, const int64_t[::1] starts, const int64_t[::1] ends,
              const int64_t[::1] n_pos, const unsigned char[::1] walk, int mode, int kind, int64_t k,
              const double[::1] lt, const int64_t[::1] block_cuts, const int64_t[::1] chunk_cuts,
              double normaliser, double[::1] delta, int n_threads):
    """:func:`dense_round` of a CSR ``X`` given by its arrays (``indptr`` of the indices' type).

    Returns
    -------
    G : ndarray of float64, shape (n_chunks, d)
    sums : ndarray of float64, shape (n_chunks, 2)
    ticks : ndarray of int64, shape (n_chunks,)
    """
    cdef Py_ssize_t n_chunks = chunk_cuts.shape[0] - 1
    cdef round_t r = make_round(w, bias, use_bias, y, grades, starts, ends, n_pos, walk, mode, kind, k, lt,
                                block_cuts, chunk_cuts, normaliser, delta)
    G_out, sums_out, ticks_out = round_outputs(n_chunks, r.d)
    cdef double[:, ::1] G = G_out
    cdef double[:, ::1] sums = sums_out
    cdef int64_t[::1] ticks = ticks_out
    cdef Py_ssize_t t
    with nogil:
        if n_chunks == 1 or n_threads <= 1:
            for t in range(n_chunks):
                csr_chunk(data, indices, indptr, &r, t, &G[t, 0], &sums[t, 0], &ticks[t])
        else:
            for t in prange(n_chunks, num_threads=n_threads, schedule="dynamic"):
                csr_chunk(data, indices, indptr, &r, t, &G[t, 0], &sums[t, 0], &ticks[t])
    return G_out[:, :r.d], sums_out, ticks_out
