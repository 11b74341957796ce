"""SVM^perf's contingency-table losses, F1 and the precision/recall break-even point: exact loss-augmented
inference over labellings (Joachims, "A support vector method for multivariate performance measures",
ICML 2005, Algorithm 2), with ssvm's labelling joint feature Ψ = 1/(2n) Σ ȳ_i x_i (the 0-1 loss's).

The outputs are labellings ȳ ∈ {±1}^n of a query; H = max_ȳ Δ(ȳ) + (1/(2n)) Σ (ȳ_i − y_i) s_i and
c_i = (ȳ_i − y_i)/(2n).  Δ depends on the contingency table only: a positives and b negatives labelled +1.
For fixed (a, b) the best labelling labels the a best-scored positives and the b best-scored negatives +1
(ties by index), so with S⁺(a) and S⁻(b) the sums of the a (b) best scores

    V(a, b) = Δ(a, b) + (S⁻(b) − (S⁺(P) − S⁺(a))) / n.

* F1 (``KIND_F1``): Δ = 1 − 2a / (P + a + b), 1 when a = 0 (F1 = 0, as svm_perf).  Joachims scans all
  (a, b): O(PN).  Here, for a fixed a, the step V(a, b + 1) − V(a, b) = 2a / ((P+a+b)(P+a+b+1)) + s⁻_{b+1} / n
  is non-increasing in b (both terms are; as computed in floating point too, since each operation is
  monotone), so V(a, ·) is concave and its largest b with a positive step is found by binary search:
  O(n log n + P log N).
* PRBEP (``KIND_PRBEP``): the labellings with as many +1 as positives (a + b = P), where precision =
  recall = a / P: Δ = b / P, O(n log n + P).

Ties in V: the larger a, then the smaller b (the fewest flips of y).  The sort is :mod:`.sorting`'s.
"""

import numpy as np

from libc.stdint cimport int64_t, uint64_t
from libcpp.vector cimport vector

from .sorting cimport index_bits, pack_all, repair, sort_keys, sort_score_keys, sort_work_t, unpack

__all__ = ["contingency_batch", "KIND_F1", "KIND_PRBEP"]

cdef enum:
    BUCKET_SORT_MAX = 4096
    C_F1 = 0
    C_PRBEP = 1

KIND_F1 = C_F1
KIND_PRBEP = C_PRBEP


ctypedef struct table_work_t:
    vector[uint64_t] keys
    vector[double] vals
    vector[int64_t] ids
    vector[int64_t] pos_ids
    vector[int64_t] neg_ids
    vector[double] sp
    vector[double] sn
    sort_work_t sort


cdef inline double f1_loss(int64_t n_pos, int64_t a, int64_t b) noexcept nogil:
    if a == 0:
        return 1.0
    return 1.0 - 2.0 * <double>a / <double>(n_pos + a + b)


cdef double table_query(const double* s, const unsigned char* y, int64_t n, int kind, double* c,
                        table_work_t* work) noexcept nogil:
    """Writes ``c`` (every entry) of one query with a positive and a negative, returns Δ."""
    cdef int64_t shift = index_bits(n)
    cdef int64_t k, a, b, lo, hi, mid, n_pos = 0, n_neg = 0, best_a, best_b
    cdef double value, best, step, m
    cdef double dn = <double>n
    if <int64_t>work.keys.size() < n:
        work.keys.resize(n)
        work.vals.resize(n)
        work.ids.resize(n)
        work.pos_ids.resize(n)
        work.neg_ids.resize(n)
        work.sp.resize(n + 1)
        work.sn.resize(n + 1)
    pack_all(s, n, shift, work.keys.data())
    if n <= BUCKET_SORT_MAX:
        sort_score_keys(work.keys.data(), n, shift, &work.sort)
    else:
        sort_keys(work.keys.data(), n)
    repair(work.keys.data(), n, s, shift)
    unpack(work.keys.data(), n, s, shift, work.vals.data(), work.ids.data())
    cdef double* sp = work.sp.data()  # prefix sums: sp[a] = S⁺(a), sn[b] = S⁻(b)
    cdef double* sn = work.sn.data()
    sp[0] = 0.0
    sn[0] = 0.0
    for k in range(n):
        if y[work.ids[k]]:
            work.pos_ids[n_pos] = work.ids[k]
            sp[n_pos + 1] = sp[n_pos] + work.vals[k]
            n_pos += 1
        else:
            work.neg_ids[n_neg] = work.ids[k]
            sn[n_neg + 1] = sn[n_neg] + work.vals[k]
            n_neg += 1
    best_a = n_pos
    best_b = 0
    best = 0.0  # V(P, 0) = 0: y itself
    if kind == C_PRBEP:
        for a in range(n_pos - 1, -1, -1):
            b = n_pos - a
            if b > n_neg:
                break
            value = <double>b / <double>n_pos + (sn[b] - (sp[n_pos] - sp[a])) / dn
            if value > best:
                best, best_a, best_b = value, a, b
    else:
        for a in range(n_pos, -1, -1):
            # the first b whose step V(a, b + 1) − V(a, b) is not positive (steps non-increasing in b)
            lo = 0
            hi = n_neg
            while lo < hi:
                mid = (lo + hi) // 2
                m = <double>(n_pos + a + mid)
                step = (2.0 * <double>a / (m * (m + 1.0)) if a > 0 else 0.0) + (sn[mid + 1] - sn[mid]) / dn
                if step > 0.0:
                    lo = mid + 1
                else:
                    hi = mid
            b = lo
            value = f1_loss(n_pos, a, b) + (sn[b] - (sp[n_pos] - sp[a])) / dn
            if value > best:
                best, best_a, best_b = value, a, b
    for k in range(n_pos):
        c[work.pos_ids[k]] = 0.0 if k < best_a else -1.0 / dn
    for k in range(n_neg):
        c[work.neg_ids[k]] = 1.0 / dn if k < best_b else 0.0
    if kind == C_PRBEP:
        return <double>best_b / <double>n_pos
    return f1_loss(n_pos, best_a, best_b)


def contingency_batch(const double[::1] scores, const unsigned char[::1] y, const int64_t[::1] starts,
                      const int64_t[::1] ends, int kind, double[::1] c, double[::1] delta):
    """:c:func:`table_query` on the queries ``scores[starts[q]:ends[q]]`` (each with a positive and a negative;
    no validation: the caller's).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of uint8, shape (n,)
        Relevance (``y.view(np.uint8)`` of a bool array).
    starts, ends : ndarray of int64, shape (Q,)
    kind : int
        ``KIND_F1`` or ``KIND_PRBEP``.
    c : ndarray of float64, shape (n,)
        Written at the queries' rows.
    delta : ndarray of float64, shape (Q,)
        Written.
    """
    cdef table_work_t work
    cdef int64_t q, a
    cdef int64_t n_queries = starts.shape[0]
    with nogil:
        for q in range(n_queries):
            a = starts[q]
            delta[q] = table_query(&scores[a], &y[a], ends[q] - a, kind, &c[a], &work)
