"""Mean reciprocal rank: the loss-augmented inference of Δ = 1 − 1/(rank of the first relevant row), exact,
by enumerating n₁, the number of negatives ranked above every positive (Chakrabarti et al. 2008 treat MRR;
this is the O(n log n) form of their enumeration, with ssvm's ranking joint feature, the QS paper's eq. 1).

With the positives s⁺_1 ≥ ... ≥ s⁺_P and the negatives s⁻_1 ≥ ... ≥ s⁻_N in (−score, index) order, Δ depends on
n₁ only: Δ = n₁ / (n₁ + 1).  For a given n₁ the best ranking puts the n₁ best-scored negatives above every
positive (an exchange argument: the gain of moving a negative to the top, below, is non-decreasing in its
score), the best-scored positive next, and every other negative where its score puts it among the other
positives (ties: the positive first, ssvm's rule of the negatives as low as possible).  So with
t_j = #{i ≥ 2 : s⁺_i ≥ s⁻_j} and S⁺(k) = Σ_{i ≤ k} s⁺_i, the objective of n₁ against n₁ = 0 is

    G(n₁) = n₁ / (n₁ + 1) + (2 / (P N)) Σ_{j ≤ n₁} ((1 + t_j) s⁻_j − S⁺(1 + t_j)),

one pointer gives every t_j, a prefix sum every G; the largest G wins, the smallest n₁ among equal ones
(compared without dividing, so that equal objectives compare equal when the score sums are exact).
The coefficients of Ψ(R) − Ψ(R*) (Lemma 6's form, ``c = Σ_j R_ij / (P N) − 1/P`` for a positive and
``−Σ_i R_ij / (P N) + 1/N`` for a negative) follow from n₁ and the counts: O(n log n) per query, the sort.
"""

import numpy as np

from libc.stdint cimport int64_t, uint64_t
from libcpp.vector cimport vector

from .sorting cimport index_bits, pack_all, repair, sort_keys, sort_score_keys, sort_work_t, unpack

__all__ = ["mrr_batch"]

cdef enum:
    BUCKET_SORT_MAX = 4096  # larger queries: the radix sort of sort_keys


ctypedef struct mrr_work_t:
    vector[uint64_t] keys
    vector[double] vals
    vector[int64_t] ids
    vector[double] sp
    vector[int64_t] pos_ids
    vector[double] sn
    vector[int64_t] neg_ids
    vector[int64_t] t
    vector[double] prefix
    sort_work_t sort


cdef double mrr_query(const double* s, const unsigned char* y, int64_t n, double* c, mrr_work_t* work) noexcept nogil:
    """Writes ``c`` (every entry) of one query with a positive and a negative, returns Δ."""
    cdef int64_t shift = index_bits(n)
    cdef int64_t k, i, j, n_pos = 0, n_neg = 0, n1, best, above
    cdef double g, best_run, run, norm
    if <int64_t>work.keys.size() < n:
        work.keys.resize(n)
        work.vals.resize(n)
        work.ids.resize(n)
        work.sp.resize(n)
        work.pos_ids.resize(n)
        work.sn.resize(n)
        work.neg_ids.resize(n)
        work.t.resize(n)
        work.prefix.resize(n + 1)
    pack_all(s, n, shift, work.keys.data())
    if n <= BUCKET_SORT_MAX:
        sort_score_keys(work.keys.data(), n, shift, &work.sort)
    else:
        sort_keys(work.keys.data(), n)
    repair(work.keys.data(), n, s, shift)
    unpack(work.keys.data(), n, s, shift, work.vals.data(), work.ids.data())
    for k in range(n):
        if y[work.ids[k]]:
            work.sp[n_pos] = work.vals[k]
            work.pos_ids[n_pos] = work.ids[k]
            n_pos += 1
        else:
            work.sn[n_neg] = work.vals[k]
            work.neg_ids[n_neg] = work.ids[k]
            n_neg += 1
    cdef double* sp = work.sp.data()
    cdef double* sn = work.sn.data()
    cdef double* prefix = work.prefix.data()
    cdef int64_t* t = work.t.data()
    prefix[0] = 0.0
    for i in range(n_pos):
        prefix[i + 1] = prefix[i] + sp[i]
    # t_j: the positives after the best one scoring at least s⁻_j (non-decreasing in j)
    k = 1
    for j in range(n_neg):
        while k < n_pos and sp[k] >= sn[j]:
            k += 1
        t[j] = k - 1
    norm = <double>(n_pos * n_neg)
    # G(n₁) > G(b) iff (n₁ − b) P N + (run(n₁) − run(b)) (n₁ + 1)(b + 1) > 0: no rounding of n₁ / (n₁ + 1),
    # so equal objectives compare equal whenever the score sums are exact (the smallest n₁ is kept)
    best = 0
    best_run = 0.0
    run = 0.0
    for j in range(n_neg):
        run += 2.0 * ((1.0 + <double>t[j]) * sn[j] - prefix[1 + t[j]])
        n1 = j + 1
        g = <double>(n1 - best) * norm + (run - best_run) * <double>(n1 + 1) * <double>(best + 1)
        if g > 0.0:
            best_run = run
            best = n1
    n1 = best
    # the negatives: R_ij = −1 for every positive above n₁, else +1 for the best positive and the t_j others
    for j in range(n_neg):
        if j < n1:
            c[work.neg_ids[j]] = <double>n_pos / norm + 1.0 / <double>n_neg
        else:
            c[work.neg_ids[j]] = <double>(-(2 + 2 * t[j] - n_pos)) / norm + 1.0 / <double>n_neg
    # the positives: −n₁ + (N − n₁) − 2 #{j ≥ n₁ : s⁻_j > s⁺_i} (none for the best positive)
    c[work.pos_ids[0]] = <double>(n_neg - 2 * n1) / norm - 1.0 / <double>n_pos
    above = 0
    for i in range(1, n_pos):
        while above < n_neg and sn[above] > sp[i]:
            above += 1
        k = above - n1 if above > n1 else 0
        c[work.pos_ids[i]] = <double>(n_neg - 2 * n1 - 2 * k) / norm - 1.0 / <double>n_pos
    return <double>n1 / <double>(n1 + 1)


def mrr_batch(const double[::1] scores, const unsigned char[::1] y, const int64_t[::1] starts,
              const int64_t[::1] ends, double[::1] c, double[::1] delta):
    """:c:func:`mrr_query` on the queries ``scores[starts[q]:ends[q]]`` (each with a positive and a negative; no
    validation: the caller's).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of uint8, shape (n,)
        Relevance (``y.view(np.uint8)`` of a bool array).
    starts, ends : ndarray of int64, shape (Q,)
    c : ndarray of float64, shape (n,)
        Written at the queries' rows.
    delta : ndarray of float64, shape (Q,)
        Written.
    """
    cdef mrr_work_t work
    cdef int64_t q, a
    cdef int64_t n_queries = starts.shape[0]
    with nogil:
        for q in range(n_queries):
            a = starts[q]
            delta[q] = mrr_query(&scores[a], &y[a], ends[q] - a, &c[a], &work)
