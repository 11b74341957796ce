"""QS's score grid: the first levels of Algorithm 2 of Mohapatra et al. (OptRanks) as one multi-pivot
SELECT with pivots on a fixed score grid, so that most negatives are settled in two streaming passes
without any data movement (the path ``oracle="qs"`` takes with few positives, P < N / 50).

Algorithm 1 sorts the positives only (O(P log P)).  Then:

1. **Histogram** (here; every sample's bin in one vectorised loop, ``grid_bin.h``).  The grid has about min(max(N / 8, 32 P), 64 N) / 3 bins (at most 2^21) of
   width 2^e (a power of two), so a negative's bin ``floor(s · 2^−e) − base`` is computed exactly and
   bin k holds exactly the scores in [E_k, E_k+1), E_k = (base + k) · 2^e; bin 0 also holds the scores
   below the grid (its lower edge is −∞; the grid starts at the minimum of a strided sample).  One pass
   counts the negatives per bin; the counts give every bin's range of orders [j1, j2] (the bins above
   it come first).  A negative scoring above every positive has rank 1 when the loss's derivative is
   ≤ 0 (AP, NDCG): moving it below any positive lowers the score term and never raises the loss.
   Those are counted apart and take the first orders.
2. **Corner ranks** (here).  Every negative of bin k has a rank in [opt(E_k+1, j1), opt(E_k, j2 + 1)].
   The corners, taken bin after bin from the top (a bin's second corner is the next one's first when
   they are adjacent), form a chain along which s never rises and j never falls, so their opts are
   monotone and found by the divide and conquer of Algorithm 2 over the chain (:c:func:`chain_opts`,
   O(P log B) scanning; a stretch whose bracket has collapsed is filled at once).
3. **Assign** (:mod:`.grid_bins`).  A second pass settles each negative of a collapsed bin (one rank:
   most of them) with one table look-up.  In a narrow bin (at most 8 possible ranks) the rank
   boundaries are score thresholds θ_r (rank ≥ r + 1 iff s ≤ θ_r) at the bin's first and last order;
   a negative with the same rank at both orders, not within a rounding margin of a threshold
   (``numerics.pxd``), is settled by comparisons.  The rest is gathered per bin.
4. **Settle** (:mod:`.grid_settle`).  The gathered negatives of a narrow bin have a pair of possible
   ranks (a, b) and get their exact order from the certain negatives of rank ≤ a (few: sorted and
   swept; many: Algorithm 2 on groups of equal pairs); a wide bin runs Algorithm 2 on all its
   negatives with the interval of its corners.

Output (Lemma 6): c(negative of rank r) = 2(P + 1 − r)/(PN), c(k-th positive) = −2 #(negatives of
rank ≤ k)/(PN), and Δ from the ± pattern.  Time O(N + P log P + P log B) for the passes plus
Algorithm 2 on the gathered negatives (O(N log P) expected at worst, its pivots being random); memory
O(N + P).  :func:`grid_core` runs the steps on one query; :func:`grid_queries` many small ones (the
positives sorted by their packed keys), the block-level form the fused round calls.
"""

import numpy as np

from libc.math cimport INFINITY, frexp, ldexp
from libc.stdint cimport int32_t, int64_t, uint64_t

from ..._work_memory cimport thread_work
from .derivative cimport (
    KIND_NDCG_LOG2,
    loss_value,
    make_objective,
    objective_t,
    positive_coefficients,
    result_t,
)
from .grid_bins cimport assign, classify
from .grid_settle cimport settle
from .numerics cimport GRID_BITS, GRID_EXPONENT_LIMIT
from .opt_ranks cimport chain_opts
from .query_setup cimport setup_query

__all__ = ["NARROW", "grid_entry", "grid_batch"]

cdef enum:
    NEG_PER_BIN = 8
    BINS_PER_POS = 32
    LO_SAMPLE = 4096
    MAX_BINS = 1 << 22

NARROW_BINS = NARROW  # the largest narrow bin, for Python (qs.py)


cdef inline double min_py(double a, double b) noexcept nogil:
    """Python's min(a, b): ``a`` unless ``b`` is smaller (the sign of a zero as numpy and Python keep it)."""
    return b if b < a else a


cdef grid_t make_grid(const double* scores, int64_t n, const objective_t* obj, const grid_params_t* params) noexcept nogil:
    """The grid of one query: up to ``hi`` = the top positive (``use_above``: a negative above every positive
    has rank 1, settled apart) or the top score, down to the minimum of a strided sample (scores below go to
    bin 0); about ``params.n_bins`` bins (<= 0: the default).

    The bins: between n_bins / 4 and n_bins / 2 over [lo, hi] (the default n_bins: min(max(N / 8, 32 P), 64 N)
    capped at 2^22).  The width is a power of two no finer than 2^−GRID_BITS of the scores' magnitude, so
    s · 2^−e is exact and its floor fits an int64; edges (base + k) · 2^e are exact doubles."""
    cdef int64_t n_pos = obj.n_pos
    cdef int64_t n_neg = n - n_pos
    cdef double hi
    cdef int64_t i
    if params.use_above:
        hi = obj.sp[0]
    else:
        hi = scores[0]
        for i in range(1, n):
            if scores[i] > hi:
                hi = scores[i]
    cdef int64_t stride = n // LO_SAMPLE if n // LO_SAMPLE > 1 else 1
    cdef double lo = scores[0]
    i = stride
    while i < n:
        if scores[i] < lo:
            lo = scores[i]
        i += stride
    lo = min_py(lo, hi)  # scores below lo go to bin 0
    cdef int64_t n_bins = params.n_bins
    if n_bins <= 0:  # much finer than the positives: their thresholds make bins open
        n_bins = max(n_neg // NEG_PER_BIN, BINS_PER_POS * n_pos, 1)
        n_bins = min(n_bins, 64 * n_neg, MAX_BINS)
    cdef int64_t bits = 0  # n_bins.bit_length()
    while n_bins >> bits:
        bits += 1
    cdef double span = hi / 2 - lo / 2  # (hi − lo) / 2 without overflow
    cdef int ex
    frexp(span, &ex)
    cdef int64_t e = ex + 2 - bits
    cdef double mag = abs(hi) if abs(hi) > abs(lo) else abs(lo)
    if mag > 0.0:
        frexp(mag, &ex)
        if ex - GRID_BITS > e:
            e = ex - GRID_BITS
    e = min(max(e, -GRID_EXPONENT_LIMIT), GRID_EXPONENT_LIMIT)
    cdef grid_t grid
    grid.inv_w = ldexp(1.0, <int>(-e))
    grid.width = ldexp(1.0, <int>e)
    grid.base = floor_scaled(lo, grid.inv_w)
    grid.hi = hi
    grid.n_bins = floor_scaled(hi, grid.inv_w) - grid.base + 1
    return grid


cdef int64_t histogram(const int32_t* sample_bin, const unsigned char* y, int64_t n, int32_t* hist) noexcept nogil:
    """Pass 1: negatives per bin into ``hist`` (zeroed), from every sample's bin (:c:func:`bin_scores`);
    returns the number scoring above the grid (bin −1)."""
    cdef int64_t n_above = 0
    cdef int64_t i
    cdef int32_t b
    for i in range(n):
        if y[i]:
            continue
        b = sample_bin[i]
        if b < 0:
            n_above += 1
        else:
            hist[b] += 1
    return n_above


cdef bins_t corner_ranks(const int32_t* hist, int64_t n_above, const grid_t* grid, int64_t n_neg,
                         const objective_t* obj, grid_work_t* work) noexcept nogil:
    """Every non-empty bin's interval of ranks.

    Bin t (scores in [E_k, E_k+1), orders j1..j2) has its ranks between the opts of its corners (E_k+1, j1)
    and (E_k, j2 + 1) (order N for the last bin); the second corner of a bin is the first of the next one
    when no empty bin lies between them.  Along the corners, taken from the top, s never rises and j never
    falls, so their opts are non-decreasing and found by the divide and conquer of Algorithm 2 over them
    (:c:func:`chain_opts`)."""
    cdef double base = <double>grid.base
    cdef double width = grid.width
    cdef double hi = grid.hi
    cdef int64_t n_bins = grid.n_bins
    cdef int64_t nb = 0
    cdef int64_t k, t
    for k in range(n_bins):
        nb += hist[k] > 0
    work.bins.resize(nb + 1)
    cdef int32_t* bins = work.bins.data()
    t = 0
    for k in range(n_bins - 1, -1, -1):  # branch-free: the empty bins are sparse and unpredictable
        bins[t] = <int32_t>k
        t += hist[k] > 0
    work.j0.resize(nb)
    work.s_pt.resize(2 * nb)
    work.j_pt.resize(2 * nb)
    work.first.resize(nb)  # bin t's corners are points first[t] and first[t] + 1
    cdef int64_t* j0 = work.j0.data()
    cdef double* s_pt = work.s_pt.data()
    cdef int64_t* j_pt = work.j_pt.data()
    cdef int64_t* first = work.first.data()
    cdef int64_t n_pt = 0
    cdef int64_t j = n_above
    cdef int64_t prev = -1  # the last non-empty bin
    for t in range(nb):
        k = bins[t]
        j0[t] = j
        # adjacent bins share a corner: (E_k+1, j + 1) overwrites the equal point the previous bin ended with
        n_pt -= t > 0 and k + 1 == prev
        s_pt[n_pt] = min_py(<double>(grid.base + k + 1) * width, hi)
        j_pt[n_pt] = j + 1
        first[t] = n_pt
        j += hist[k]
        s_pt[n_pt + 1] = <double>(grid.base + k) * width if k > 0 else -INFINITY  # bin 0 holds all below lo
        j_pt[n_pt + 1] = j + 1 if j + 1 < n_neg else n_neg
        n_pt += 2
        prev = k
    work.ranks.resize(n_pt)
    cdef int64_t* ranks = work.ranks.data()
    chain_opts(s_pt, j_pt, n_pt, 1, obj.n_pos + 1, obj, ranks)
    work.lo_rank.resize(nb)
    work.hi_rank.resize(nb)
    for t in range(nb):
        work.lo_rank[t] = ranks[first[t]]
        work.hi_rank[t] = ranks[first[t] + 1]
    cdef bins_t out
    out.nb = nb
    out.bins = bins
    out.j0 = j0
    out.lo_rank = work.lo_rank.data()
    out.hi_rank = work.hi_rank.data()
    return out


cdef void grid_core(const double* scores, const unsigned char* y, int64_t n, const objective_t* obj,
                    const int64_t* pos_ids, const grid_params_t* params, double* c, int64_t* counts,
                    grid_work_t* work) noexcept nogil:
    """The grid path after Algorithm 1's sort (``obj.sp``, ``pos_ids``): fills ``c`` (every entry is written
    exactly once) and the ± pattern ``counts`` (P + 1 entries)."""
    cdef int64_t n_pos = obj.n_pos
    cdef int64_t t
    for t in range(n_pos + 1):
        counts[t] = 0
    cdef grid_t grid = make_grid(scores, n, obj, params)
    work.sample_bin.resize(n)
    bin_scores(scores, n, grid.inv_w, grid.base, grid.hi, work.sample_bin.data())
    work.hist.assign(grid.n_bins, 0)
    cdef int64_t n_above = histogram(work.sample_bin.data(), y, n, work.hist.data())
    counts[0] += n_above
    cdef bins_t bins = corner_ranks(work.hist.data(), n_above, &grid, n - n_pos, obj, work)
    cdef open_bins_t ob = classify(work.hist.data(), &bins, grid.n_bins, params.narrow, obj, counts, work)
    cdef gathered_t gathered = assign(scores, y, n, &grid, &ob, obj, c, work)
    cdef result_t out
    out.c = c
    out.counts = counts
    settle(&gathered, &ob, obj, &out, work)
    positive_coefficients(c, counts, pos_ids, n_pos, obj.inv)


cdef void grid_queries(const double* scores, const unsigned char* y, const int64_t* starts, const int64_t* ends,
                       const int64_t* n_pos, int64_t n_queries, int kind, double* c, double* delta,
                       grid_work_t* work) noexcept nogil:
    """The grid path on the queries ``scores[starts[q]:ends[q]]`` (``n_pos[q]`` positives, a positive and a
    negative each) for the built-in AP or NDCG (log2): a closed-form derivative that is never positive, the
    default bins, Δ by :c:func:`loss_value`.  The positives are sorted by their packed keys
    (:c:func:`sort_score_keys`).  ``c`` and ``delta`` are written at the queries' rows and positions;
    ``work`` may be shared by calls in one thread."""
    cdef grid_params_t params
    params.use_above = True
    params.narrow = NARROW
    params.n_bins = 0
    cdef int64_t q, a, n, p, shift
    cdef double table[1]
    cdef objective_t obj
    for q in range(n_queries):
        a = starts[q]
        n = ends[q] - a
        p = n_pos[q]
        obj = setup_query(scores + a, y + a, n, p, kind, False, NULL, 0, table, &shift, work)
        grid_core(scores + a, y + a, n, &obj, work.pos_ids.data(), &params, c + a, work.counts.data(), work)
        delta[q] = loss_value(kind, work.counts.data(), p, True)


# ---- from Python ----

def grid_entry(const double[::1] scores, const unsigned char[::1] y, const double[::1] sp,
               const int64_t[::1] pos_ids, int kind, const double[::1] table, bint use_above, int64_t narrow,
               int64_t n_bins, double[::1] c):
    """:c:func:`grid_core` on one query whose positives are sorted (``sp``, ``pos_ids``: Algorithm 1): fills
    ``c`` and returns the ± pattern.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of uint8 (bool viewed as such), shape (n,)
    sp : ndarray of float64, shape (P,)
    pos_ids : ndarray of int64, shape (P,)
    kind : int
    table : ndarray of float64
        The loss's kernel table (at least one entry).
    use_above : bool
        The loss's derivative is never positive (:meth:`QSLoss.nonincreasing`).
    narrow : int
        The largest bin settled by thresholds (0: none).
    n_bins : int
        About this many bins (0: the default).
    c : ndarray of float64, shape (n,)
        Output.

    Returns
    -------
    counts : ndarray of int64, shape (P + 1,)
    """
    cdef int64_t n = scores.shape[0]
    cdef int64_t p = sp.shape[0]
    counts = np.empty(p + 1, dtype=np.int64)
    cdef int64_t[::1] cv = counts
    cdef grid_params_t params
    params.use_above = use_above
    params.narrow = narrow
    params.n_bins = n_bins
    cdef objective_t obj
    cdef grid_work_t* work = thread_work[grid_work_t]()  # kept from call to call: _work_memory.h
    with nogil:
        obj = make_objective(&sp[0], p, n - p, kind, &table[0], NULL, 0)
        grid_core(&scores[0], &y[0], n, &obj, &pos_ids[0], &params, &c[0], &cv[0], work)
    return counts


def grid_batch(const double[::1] scores, const unsigned char[::1] y, const int64_t[::1] starts,
               const int64_t[::1] ends, const int64_t[::1] n_pos, int kind, double[::1] c, double[::1] delta):
    """:c:func:`grid_queries` from Python (``qs_batch``'s grid loop): the queries' ``c`` into their rows,
    Δ into ``delta``.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of uint8 (bool viewed as such), shape (n,)
    starts, ends, n_pos : ndarray of int64, shape (Q,)
    kind : int
        ``KIND_AP`` or ``KIND_NDCG_LOG2``.
    c : ndarray of float64, shape (n,)
    delta : ndarray of float64, shape (Q,)
    """
    cdef grid_work_t* work = thread_work[grid_work_t]()  # kept from call to call: _work_memory.h
    if starts.shape[0]:
        with nogil:
            grid_queries(&scores[0], &y[0], &starts[0], &ends[0], &n_pos[0], starts.shape[0], kind, &c[0],
                         &delta[0], work)
