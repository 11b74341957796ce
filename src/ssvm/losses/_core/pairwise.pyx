"""SVM^rank's objective: the pairwise (swapped-pairs) hinge of a query with graded relevance, and the
swapped pairs of the ranking by score (Joachims, "Training linear SVMs in linear time", KDD 2006, §4;
the 1-slack constraint of SVM^rank's ``svm_struct_api.c``).

The outputs are the labellings of a query's pairs: every pair (i, j) with grades r_i > r_j is in order or
swapped, independently of the others (with more than two grades a set of swapped pairs need not be a
ranking: SVM^rank's output space is the pair labellings, not the rankings).  With Ψ = ½ Σ_{r_i > r_j}
ȳ_ij (x_i − x_j), Δ = #swapped pairs and margin rescaling, the loss-augmented problem decomposes over the
pairs: a pair is swapped in the answer iff ``fl(s_i − s_j) < 1`` (exactly svm_rank's test; a pair with
``s_i − s_j == 1`` adds 0 either way and is kept in order, ssvm's rule of the fewest violations), so

    H = Σ_{r_i > r_j} max(0, 1 − (s_i − s_j)) = Δ + s·c,
    c_i = −#{violated pairs where i is the higher} + #{violated pairs where i is the lower}.

Per query in O(n log n): one sort by (−score, index) (:mod:`.sorting`'s packed keys), the grades
compressed to their levels, then two sweeps with a Fenwick tree over the levels.  Position k's
violated partners above it are a prefix ``[0, cut[k])`` of the sorted order, because ``fl(s_i − s_j) < 1``
is monotone in s_j for a fixed s_i and in s_i for a fixed s_j (rounding is monotone), so ``cut`` is
non-decreasing and one pointer finds it exactly — no tolerance.  The first sweep counts, for each
position, the lower levels in its prefix; the second, going up, counts the higher levels among the
positions whose prefix holds it.  ``augmented=False`` takes ``cut[k] = k``: the pairs swapped by the
ranking by (−score, index) (the output by score of the direct loss, and Δ of the ranking).
``normalise`` divides c and Δ by the number of pairs (SVM^perf's ROC area, svm_rank ``-l 2``).
"""

import numpy as np

from libc.stdint cimport int64_t, uint64_t
from libcpp.algorithm cimport lower_bound, sort, unique

from .sorting cimport index_bits, pack_all, repair, sort_keys, sort_score_keys, unpack

__all__ = ["pairs_batch"]

cdef enum:
    BUCKET_SORT_MAX = 4096  # larger queries: the radix sort of sort_keys


cdef inline void tree_add(int64_t* tree, int64_t m, int64_t level) noexcept nogil:
    cdef int64_t i = level + 1
    while i <= m:
        tree[i] += 1
        i += i & (-i)


cdef inline int64_t tree_below(const int64_t* tree, int64_t level) noexcept nogil:
    """How many inserted levels are < ``level``."""
    cdef int64_t i = level
    cdef int64_t total = 0
    while i > 0:
        total += tree[i]
        i -= i & (-i)
    return total


cdef double pairs_query(const double* s, const int64_t* g, int64_t n, bint augmented, bint normalise, double* c,
                        pairs_work_t* work) noexcept nogil:
    """Writes ``c`` (every entry) of one query and returns Δ (see the module)."""
    cdef int64_t shift = index_bits(n)
    cdef int64_t k, p, q, m, hi, lo, count, n_levels
    cdef int64_t swapped = 0
    cdef double pairs
    if <int64_t>work.keys.size() < n:
        work.keys.resize(n)
        work.vals.resize(n)
        work.ids.resize(n)
        work.level.resize(n)
        work.cut.resize(n)
    cdef uint64_t* keys = work.keys.data()
    cdef double* vals = work.vals.data()
    cdef int64_t* ids = work.ids.data()
    cdef int64_t* level = work.level.data()
    cdef int64_t* cut = work.cut.data()
    pack_all(s, n, shift, keys)
    if n <= BUCKET_SORT_MAX:
        sort_score_keys(keys, n, shift, &work.sort)
    else:
        sort_keys(keys, n)
    repair(keys, n, s, shift)
    unpack(keys, n, s, shift, vals, ids)
    # the grades' levels 0..n_levels-1, in sorted order
    work.distinct.assign(g, g + n)
    sort(work.distinct.begin(), work.distinct.end())
    work.distinct.erase(unique(work.distinct.begin(), work.distinct.end()), work.distinct.end())
    n_levels = <int64_t>work.distinct.size()
    for k in range(n):
        level[k] = lower_bound(work.distinct.begin(), work.distinct.end(), g[ids[k]]) - work.distinct.begin()
        c[ids[k]] = 0.0
    work.tree.assign(n_levels + 1, 0)
    cdef int64_t* tree = work.tree.data()
    # sweep down: the lower levels among each position's violated partners above it
    p = 0
    for k in range(n):
        if augmented:
            while p < n and vals[k] - vals[p] < 1.0:
                tree_add(tree, n_levels, level[p])
                p += 1
            lo = tree_below(tree, level[k])
        else:
            lo = tree_below(tree, level[k])
            tree_add(tree, n_levels, level[k])
            p = k + 1
        cut[k] = p if augmented else k
        c[ids[k]] -= <double>lo
        swapped += lo
    # sweep up: the higher levels among the positions whose violated partners include position m
    work.tree.assign(n_levels + 1, 0)
    tree = work.tree.data()
    q = n
    for m in range(n - 1, -1, -1):
        while q > 0 and cut[q - 1] > m:
            q -= 1
            tree_add(tree, n_levels, level[q])
        hi = (n - q) - tree_below(tree, level[m] + 1)
        c[ids[m]] += <double>hi
    if not normalise:
        return <double>swapped
    # pairs = (n² − Σ_level n_level²) / 2
    pairs = 0.0
    count = 1
    work.distinct.assign(g, g + n)
    sort(work.distinct.begin(), work.distinct.end())
    cdef double same = 0.0
    for k in range(1, n + 1):
        if k < n and work.distinct[k] == work.distinct[k - 1]:
            count += 1
        else:
            same += <double>count * <double>count
            count = 1
    pairs = (<double>n * <double>n - same) / 2.0
    if pairs == 0.0:
        return 0.0
    for k in range(n):
        c[k] /= pairs
    return <double>swapped / pairs


cdef void pairs_queries(const double* scores, const int64_t* grades, const int64_t* starts, const int64_t* ends,
                        int64_t n_queries, bint augmented, bint normalise, double* c, double* delta,
                        pairs_work_t* work) noexcept nogil:
    """:func:`pairs_query` on the queries ``scores[starts[q]:ends[q]]``; ``c`` and ``delta`` are written at the
    queries' rows and positions; ``work`` may be shared by calls in one thread."""
    cdef int64_t q, a
    for q in range(n_queries):
        a = starts[q]
        delta[q] = pairs_query(scores + a, grades + a, ends[q] - a, augmented, normalise, c + a, work)


def pairs_batch(const double[::1] scores, const int64_t[::1] grades, const int64_t[::1] starts,
                const int64_t[::1] ends, bint augmented, bint normalise, double[::1] c, double[::1] delta):
    """:c:func:`pairs_queries` from Python (no validation: the caller's).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    grades : ndarray of int64, shape (n,)
    starts, ends : ndarray of int64, shape (Q,)
        Disjoint, non-empty row ranges of the queries.
    augmented : bool
        True: the loss-augmented answer (pairs with ``fl(s_i − s_j) < 1``); False: the pairs swapped by
        the ranking by (−score, index).
    normalise : bool
        Divide c and Δ by each query's number of pairs (ROC area).
    c : ndarray of float64, shape (n,)
        Written at the queries' rows.
    delta : ndarray of float64, shape (Q,)
        Written.
    """
    cdef pairs_work_t work
    cdef int64_t n_queries = starts.shape[0]
    if n_queries == 0:
        return
    with nogil:
        pairs_queries(&scores[0], &grades[0], &starts[0], &ends[0], n_queries, augmented, normalise, &c[0],
                      &delta[0], &work)
