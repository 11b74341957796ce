"""The graded NDCG oracle's kernel: one sort per query, one certified walk per grade level (QS's
sort-and-walk path, :mod:`.sort_walk`, on each binary level).

Graded NDCG decomposes exactly over relevance thresholds (docs/design.md §9, :mod:`ssvm.losses.graded`):
``1 − NDCG = Σ_t α_t (1 − NDCG_t)``, NDCG_t the binary NDCG of ``[r ≥ t]``.  Thresholds between two
consecutive distinct grades of a query split its rows alike, so they are taken together: for the
query's distinct grades v_0 < v_1 < ... < v_L the levels k = 1..L have the split ``[r ≥ v_k]`` and the
weight ``α_k = (g(v_k) − g(v_{k−1})) · IDCG_k / IDCG`` with ``IDCG = g(v_0) · IDCG_all + Σ_k (g(v_k) −
g(v_{k−1})) · IDCG_k`` (the graded ideal DCG written over the same thresholds; the thresholds t ≤ v_0
leave no row irrelevant, cost nothing and only count in IDCG).

Per query the rows' packed keys (:mod:`.sorting`) are sorted and repaired once, in exact (−score, index)
order; each level splits them in one pass into its positives and negatives, both still in that order,
and runs the certified walk (exact for any P and N; its result is bit for bit the grid's) on the
negatives ahead of those certified to rank last (:c:func:`sorted_bottom`), accumulating ``c += α_k c_k``
and ``delta += α_k δ_k``.  With one level (0/1 grades) α is exactly 1 and the answer is the binary
walk's, bit for bit.
"""

import numpy as np

from libc.math cimport pow
from libc.stdint cimport int64_t, uint64_t
from libcpp.algorithm cimport lower_bound, sort, unique

from ..._work_memory cimport thread_work
from .derivative cimport KIND_NDCG_LOG2, builtin_scale, loss_value, make_objective, ndcg_norm, objective_t
from .set_aside cimport sorted_bottom
from .sort_walk cimport walk_core
from .sorting cimport index_bits, low_mask, pack_all, repair, sort_score_keys, unpack

from .sorting import sort_large

__all__ = ["GAIN_CODES", "level_alphas", "graded_batch", "graded_large_query"]

#: gain name -> the code the compiled loops take
GAIN_CODES = {"exponential": 0, "linear": 1, "binary": 2}


cdef inline double gain_value(int code, int64_t v) noexcept nogil:
    """g(v): 2^v − 1 (code 0), v (1) or [v > 0] (2)."""
    if code == 0:
        return pow(2.0, <double>v) - 1.0
    if code == 1:
        return <double>v
    return 1.0 if v > 0 else 0.0


cdef int64_t grade_counts(const int64_t* r, int64_t n, graded_work_t* work) noexcept nogil:
    """The distinct grades of ``r`` (ascending) into ``work.levels`` and how many rows have each into
    ``work.n_at_least``; returns their number.  One counting pass when the grades are small (as they are: 0-4
    in LETOR sets), else a sort."""
    cdef int64_t top = r[0]
    cdef int64_t i, k, n_levels
    for i in range(1, n):
        if r[i] > top:
            top = r[i]
    if top > 2 * n + 64:
        work.levels.assign(r, r + n)
        sort(work.levels.begin(), work.levels.end())
        work.levels.erase(unique(work.levels.begin(), work.levels.end()), work.levels.end())
        n_levels = work.levels.size()
        work.n_at_least.assign(n_levels, 0)
        for i in range(n):
            k = lower_bound(work.levels.begin(), work.levels.end(), r[i]) - work.levels.begin()
            work.n_at_least[k] += 1
        return n_levels
    work.n_at_least.assign(top + 1, 0)
    for i in range(n):
        work.n_at_least[r[i]] += 1
    work.levels.resize(0)
    n_levels = 0
    for k in range(top + 1):
        if work.n_at_least[k]:
            work.levels.push_back(k)
            work.n_at_least[n_levels] = work.n_at_least[k]
            n_levels += 1
    return n_levels


cdef int64_t alphas(const int64_t* r, int64_t n, int code, graded_work_t* work) noexcept nogil:
    """The distinct grades v_0 < ... < v_L of one query's grades ``r`` (``work.levels``) and the weight α_k of
    each level's split ``[r ≥ v_k]`` (``work.alpha``; α_0 = 0: that split leaves no row irrelevant); returns
    L + 1.

    α_k = (g(v_k) − g(v_{k−1})) · IDCG_k / IDCG, IDCG_k the binary ideal DCG of ``[r ≥ v_k]`` and IDCG =
    g(v_0) · IDCG_0 + Σ_k (g(v_k) − g(v_{k−1})) · IDCG_k, the graded ideal DCG summed over the same
    thresholds (so that one level gives α = 1 exactly)."""
    cdef int64_t n_levels = grade_counts(r, n, work)
    cdef int64_t k
    cdef int64_t* n_at_least = work.n_at_least.data()
    cdef const int64_t* levels = work.levels.data()
    for k in range(n_levels - 2, -1, -1):  # rows with grade >= levels[k]
        n_at_least[k] += n_at_least[k + 1]
    work.weight.resize(n_levels)  # g(v_0), then g(v_k) − g(v_{k−1}); the ideal DCGs go in alpha first
    work.alpha.resize(n_levels)
    cdef double* weight = work.weight.data()
    cdef double* alpha = work.alpha.data()
    weight[0] = gain_value(code, levels[0])
    for k in range(1, n_levels):
        weight[k] = gain_value(code, levels[k]) - gain_value(code, levels[k - 1])
    cdef double idcg = 0.0
    for k in range(n_levels):
        alpha[k] = ndcg_norm(n_at_least[k], True)  # IDCG of [r >= v_k]
        if weight[k] != 0.0:
            idcg += weight[k] * alpha[k]
    alpha[0] = 0.0
    for k in range(1, n_levels):
        alpha[k] = weight[k] * alpha[k] / idcg if weight[k] != 0.0 else 0.0
    return n_levels


cdef double graded_query(const double* s, const int64_t* r, int64_t n, uint64_t* keys, int64_t shift, int code,
                         const double* lt, int64_t lt_size, double* c, graded_work_t* work) noexcept nogil:
    """``(c, delta)`` of one query whose keys are sorted and repaired: writes ``c`` (every entry), returns
    delta; ``keys`` is overwritten.

    The rows are renumbered in key order first (row t: the t-th in (−score, index) order, its key's index
    bits set to t, which keeps the keys sorted and ties in index order): every split, walk and sum then
    reads and writes in sequence, and ``c`` is scattered back to the rows once."""
    cdef int64_t n_levels = alphas(r, n, code, work)
    cdef uint64_t low = low_mask(shift)
    work.rows.resize(n)
    work.s_sorted.resize(n)
    work.r_sorted.resize(n)
    work.c_sorted.assign(n, 0.0)
    work.pos.resize(n)
    work.neg.resize(n)
    work.c_t.resize(n)
    cdef int64_t* rows = work.rows.data()
    cdef double* s_sorted = work.s_sorted.data()
    cdef int64_t* r_sorted = work.r_sorted.data()
    cdef double* c_sorted = work.c_sorted.data()
    cdef uint64_t* pos = work.pos.data()
    cdef uint64_t* neg = work.neg.data()
    cdef double* c_t = work.c_t.data()
    cdef int64_t t, i, k, v, n_pos, n_neg, above, kept
    cdef uint64_t key
    cdef double a
    cdef double table[1]
    cdef objective_t obj
    for t in range(n):
        i = <int64_t>(keys[t] & low)
        rows[t] = i
        s_sorted[t] = s[i]
        r_sorted[t] = r[i]
        keys[t] = (keys[t] & ~low) | <uint64_t>t
    cdef double delta = 0.0
    for k in range(1, n_levels):
        a = work.alpha[k]
        if a == 0.0:
            continue  # binary gains above grade 1: the split adds nothing
        v = work.levels[k]
        n_pos = 0
        n_neg = 0
        for t in range(n):  # branch-free: the grades are unpredictable
            key = keys[t]
            above = r_sorted[t] >= v
            pos[n_pos] = key
            neg[n_neg] = key
            n_pos += above
            n_neg += 1 - above
        if <int64_t>work.sp.size() < n_pos + 1:
            work.sp.resize(n_pos + 1)
            work.pos_ids.resize(n_pos + 1)
            work.counts.resize(n_pos + 1)
        unpack(pos, n_pos, s_sorted, shift, work.sp.data(), work.pos_ids.data())
        table[0] = builtin_scale(KIND_NDCG_LOG2, n_pos)
        obj = make_objective(work.sp.data(), n_pos, n_neg, KIND_NDCG_LOG2, table, lt, lt_size)
        kept = sorted_bottom(neg, n_neg, shift, s_sorted, &obj, c_t)  # the rest rank last: not walked
        walk_core(s_sorted, &obj, work.pos_ids.data(), neg, kept, n_neg, shift, c_t, work.counts.data(), &work.walk)
        delta += a * loss_value(KIND_NDCG_LOG2, work.counts.data(), n_pos, True)
        for t in range(n):
            c_sorted[t] += a * c_t[t]
    for t in range(n):
        c[rows[t]] = c_sorted[t]
    return delta


cdef void graded_queries(const double* scores, const int64_t* grades, const int64_t* starts, const int64_t* ends,
                         int64_t n_queries, int code, const double* lt, int64_t lt_size, double* c, double* delta,
                         graded_work_t* work) noexcept nogil:
    """:func:`graded_query` on the queries ``scores[starts[q]:ends[q]]`` (two distinct grades each), each sorted
    by :c:func:`sort_score_keys` inside this loop; ``lt`` (``lt_size`` entries) is the 1/log2 table for the
    largest query.  ``c`` and ``delta`` are written at the queries' rows and positions; ``work`` may be
    shared by calls in one thread."""
    cdef int64_t q, a, n, shift
    for q in range(n_queries):
        a = starts[q]
        n = ends[q] - a
        shift = index_bits(n)
        if <int64_t>work.keys.size() < n:
            work.keys.resize(n)
        pack_all(scores + a, n, shift, work.keys.data())
        sort_score_keys(work.keys.data(), n, shift, &work.walk.sort)
        repair(work.keys.data(), n, scores + a, shift)
        delta[q] = graded_query(scores + a, grades + a, n, work.keys.data(), shift, code, lt, lt_size, c + a, work)


# ---- from Python ----

def level_alphas(const int64_t[::1] r, int code):
    """The distinct grades v_0 < ... < v_L of one query's grades ``r`` and the weight α_k of each level's
    split ``[r ≥ v_k]`` (:c:func:`alphas`).

    Returns
    -------
    levels : ndarray of int64, shape (L + 1,)
    alpha : ndarray of float64, shape (L + 1,)
    """
    cdef graded_work_t work
    cdef int64_t n_levels
    with nogil:
        n_levels = alphas(&r[0], r.shape[0], code, &work)
    levels = np.array([work.levels[k] for k in range(n_levels)], dtype=np.int64)
    alpha = np.array([work.alpha[k] for k in range(n_levels)], dtype=np.float64)
    return levels, alpha


def graded_batch(const double[::1] scores, const int64_t[::1] grades, const int64_t[::1] starts,
                 const int64_t[::1] ends, int code, const double[::1] lt, double[::1] c, double[::1] delta):
    """:c:func:`graded_queries` from Python: the queries' ``c`` into their rows, Δ into ``delta``.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    grades : ndarray of int64, shape (n,)
    starts, ends : ndarray of int64, shape (Q,)
    code : int
        The gain's code (:data:`GAIN_CODES`).
    lt : ndarray of float64
        The 1/log2 table (:func:`~.derivative.inverse_log_table`) for the largest query.
    c : ndarray of float64, shape (n,)
    delta : ndarray of float64, shape (Q,)
    """
    cdef graded_work_t* work = thread_work[graded_work_t]()  # kept from call to call: _work_memory.h
    if starts.shape[0]:
        with nogil:
            graded_queries(&scores[0], &grades[0], &starts[0], &ends[0], starts.shape[0], code, &lt[0], lt.shape[0],
                           &c[0], &delta[0], work)


def graded_large_query(scores, grades, int code, lt, c):
    """:c:func:`graded_query` on one large query, its keys sorted by :func:`~.sorting.sort_large`: fills ``c``
    and returns Δ.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    grades : ndarray of int64, shape (n,)
    code : int
    lt : ndarray of float64
        The 1/log2 table for at least n + 2 entries.
    c : ndarray of float64, shape (n,)

    Returns
    -------
    float
    """
    cdef const double[::1] s = np.ascontiguousarray(scores, dtype=np.float64)
    cdef const int64_t[::1] r = np.ascontiguousarray(grades, dtype=np.int64)
    cdef const double[::1] ltv = lt
    cdef double[::1] cv = c
    cdef int64_t n = s.shape[0]
    cdef int64_t shift = index_bits(n)
    keys = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] kv = keys
    with nogil:
        pack_all(&s[0], n, shift, &kv[0])
    sort_large(keys, shift)
    cdef graded_work_t* work = thread_work[graded_work_t]()  # kept from call to call: _work_memory.h
    cdef double delta
    with nogil:
        repair(&kv[0], n, &s[0], shift)
        delta = graded_query(&s[0], &r[0], n, &kv[0], shift, code, &ltv[0], ltv.shape[0], &cv[0], work)
    return delta
