"""Binary NDCG@k: exact loss-augmented inference with ssvm's ranking joint feature (the QS paper's eq. 1,
Ψ = 1/(PN) Σ_{i∈+, j∈−} R_ij (x_i − x_j)), Δ = 1 − Σ_{positives at positions p ≤ k} D(p) / Σ_{p ≤ min(k,P)} D(p),
D(p) = 1/log2(1 + p).

The truncated discount is not convex at k, so condition C3 of the QS paper fails and neither QS nor the walk
is exact here.  What still holds is Observation 1 (positives, and negatives, each in score order in some
optimal ranking: swapping two of one class changes only the score term), so an output is an interleaving,
given by m_i, the negatives above the i-th positive (non-decreasing).  The objective is a sum over the
positives, Σ_i T(i, m_i) − [i + m_i ≤ k] D(i + m_i)/IDCG, with T(i, m) = ((N − 2m) s⁺_i + 2 S⁻(m) − S⁻(N)) / (PN)
concave in m, maximised at u_i = #{j : s⁻_j > s⁺_i} (ties: the negative below).  Only the positives within
the top k carry loss; they are a prefix i ≤ p.  So:

* head: a DP over the states (p, m), p + m ≤ k, the p-th positive at position p + m: A(p, m) = T(p, m) −
  D(p + m)/IDCG + max_{m' ≤ m} A(p − 1, m') (prefix maxima), O(k²);
* tail: the positives after p lie below position k (m_{p+1} ≥ k − p) and after the head (m_i ≥ m): with
  M = max(m, k − p) the best is m_i = max(u_i, M) (concave terms, u_i non-decreasing), its value from prefix
  sums and one binary search, O(log P).

The maximum over (p, m) (and p = 0, every top-k position a negative) is the answer: O(n log n + k² log n)
per query.  Ties between states: the first found in the order p = 0, then p ascending and m ascending.
"""

import numpy as np

from libc.math cimport log2
from libc.stdint cimport int64_t, uint64_t
from libcpp.vector cimport vector

from .sorting cimport index_bits, pack_all, repair, sort_keys, sort_score_keys, sort_work_t, unpack

__all__ = ["ndcg_at_k_batch"]

cdef enum:
    BUCKET_SORT_MAX = 4096

cdef double NEG_INF = -1e308 * 10.0


ctypedef struct ndcgk_work_t:
    vector[uint64_t] keys
    vector[double] vals
    vector[int64_t] ids
    vector[int64_t] pos_ids
    vector[int64_t] neg_ids
    vector[double] sp
    vector[double] sn
    vector[double] sneg      # S⁻(m): prefix sums of the negatives' scores
    vector[double] spos      # prefix sums of the positives' scores
    vector[int64_t] u        # u_i (0-based i)
    vector[double] free_val  # prefix sums of T(i, u_i)
    vector[double] A         # A(p, m), (k + 1)² entries
    vector[double] B         # prefix maxima of A(p, ·)
    vector[int64_t] m_of     # the chosen m_i
    sort_work_t sort


cdef inline double t_value(double sp_i, int64_t m, const double* sneg, int64_t n_neg, double norm) noexcept nogil:
    return (<double>(n_neg - 2 * m) * sp_i + 2.0 * sneg[m] - sneg[n_neg]) / norm


cdef inline int64_t first_unconstrained(const int64_t* u, int64_t lo, int64_t hi, int64_t M) noexcept nogil:
    """The first i in [lo, hi) with u[i] ≥ M (u non-decreasing), hi if none."""
    cdef int64_t mid
    while lo < hi:
        mid = (lo + hi) // 2
        if u[mid] >= M:
            hi = mid
        else:
            lo = mid + 1
    return lo


cdef double tail_value(int64_t p, int64_t M, ndcgk_work_t* w, int64_t n_pos, int64_t n_neg,
                       double norm) noexcept nogil:
    """Σ_{i > p} T(i, max(u_i, M)) (positives p+1..P, 1-based; 0-based p..P−1)."""
    cdef int64_t f = first_unconstrained(w.u.data(), p, n_pos, M)
    cdef double clipped = (<double>(n_neg - 2 * M) * (w.spos[f] - w.spos[p])
                           + <double>(f - p) * (2.0 * w.sneg[M] - w.sneg[n_neg])) / norm
    return clipped + (w.free_val[n_pos] - w.free_val[f])


cdef double ndcgk_query(const double* s, const unsigned char* y, int64_t n, int64_t k, double* c,
                        ndcgk_work_t* w) noexcept nogil:
    """Writes ``c`` (every entry) of one query with a positive and a negative, returns Δ."""
    cdef int64_t shift = index_bits(n)
    cdef int64_t i, j, p, m, q, n_pos = 0, n_neg = 0, K, best_p, best_m, M, above
    cdef double norm, idcg, value, best, head
    if <int64_t>w.keys.size() < n:
        w.keys.resize(n)
        w.vals.resize(n)
        w.ids.resize(n)
        w.pos_ids.resize(n)
        w.neg_ids.resize(n)
        w.sp.resize(n)
        w.sn.resize(n)
        w.sneg.resize(n + 1)
        w.spos.resize(n + 1)
        w.u.resize(n)
        w.free_val.resize(n + 1)
        w.m_of.resize(n)
    pack_all(s, n, shift, w.keys.data())
    if n <= BUCKET_SORT_MAX:
        sort_score_keys(w.keys.data(), n, shift, &w.sort)
    else:
        sort_keys(w.keys.data(), n)
    repair(w.keys.data(), n, s, shift)
    unpack(w.keys.data(), n, s, shift, w.vals.data(), w.ids.data())
    w.sneg[0] = 0.0
    w.spos[0] = 0.0
    for q in range(n):
        if y[w.ids[q]]:
            w.pos_ids[n_pos] = w.ids[q]
            w.sp[n_pos] = w.vals[q]
            w.spos[n_pos + 1] = w.spos[n_pos] + w.vals[q]
            n_pos += 1
        else:
            w.neg_ids[n_neg] = w.ids[q]
            w.sn[n_neg] = w.vals[q]
            w.sneg[n_neg + 1] = w.sneg[n_neg] + w.vals[q]
            n_neg += 1
    norm = <double>(n_pos * n_neg)
    K = k if k < n else n
    idcg = 0.0
    for i in range(1, (K if K < n_pos else n_pos) + 1):
        idcg += 1.0 / log2(1.0 + <double>i)
    # u_i and the prefix sums of T(i, u_i)
    j = 0
    w.free_val[0] = 0.0
    for i in range(n_pos):
        while j < n_neg and w.sn[j] > w.sp[i]:
            j += 1
        w.u[i] = j
        w.free_val[i + 1] = w.free_val[i] + t_value(w.sp[i], j, w.sneg.data(), n_neg, norm)
    # p = 0: every top-K position a negative (feasible when N ≥ K, or no positive has to be in the top K)
    best = NEG_INF
    best_p = 0
    best_m = 0
    if n_neg >= K:
        best = tail_value(0, K, w, n_pos, n_neg, norm)
    # the head DP: A[p][m] for 1 ≤ p ≤ min(P, K), 0 ≤ m ≤ K − p
    w.A.assign((K + 1) * (K + 1), NEG_INF)
    w.B.assign((K + 1) * (K + 1), NEG_INF)
    cdef double* A = w.A.data()
    cdef double* B = w.B.data()
    cdef double prev
    for p in range(1, (K if K < n_pos else n_pos) + 1):
        for m in range(0, K - p + 1):
            if m > n_neg:
                break
            if p == 1:
                prev = 0.0
            else:
                prev = B[(p - 1) * (K + 1) + (m if m <= K - p + 1 else K - p + 1)]
            if prev == NEG_INF:
                A[p * (K + 1) + m] = NEG_INF
            else:
                A[p * (K + 1) + m] = prev + t_value(w.sp[p - 1], m, w.sneg.data(), n_neg, norm) \
                    - (1.0 / log2(1.0 + <double>(p + m))) / idcg
            B[p * (K + 1) + m] = A[p * (K + 1) + m] if m == 0 or A[p * (K + 1) + m] > B[p * (K + 1) + m - 1] \
                else B[p * (K + 1) + m - 1]
            if A[p * (K + 1) + m] == NEG_INF:
                continue
            M = m if m > K - p else K - p
            if p < n_pos and M > n_neg:
                continue  # the next positive cannot lie below position K
            head = A[p * (K + 1) + m]
            value = head + (tail_value(p, M, w, n_pos, n_neg, norm) if p < n_pos else 0.0)
            if value > best:
                best, best_p, best_m = value, p, m
    # recover m_1..m_P: the head backwards through the prefix maxima, the tail clipped
    if best_p < n_pos:
        M = best_m if best_m > K - best_p else K - best_p
        if best_p == 0:
            M = K
        for i in range(best_p, n_pos):
            w.m_of[i] = w.u[i] if w.u[i] > M else M
    m = best_m
    for p in range(best_p, 0, -1):
        w.m_of[p - 1] = m
        if p > 1:  # the m' ≤ m where B[p − 1][m] was reached (the first maximiser)
            q = m if m <= K - p + 1 else K - p + 1
            while q > 0 and B[(p - 1) * (K + 1) + q - 1] == B[(p - 1) * (K + 1) + q]:
                q -= 1
            m = q
    # Δ and c (the brute's formulas: Σ_j R_ij = N − 2 m_i; Σ_i R_ij = 2 #{i : m_i < j} − P)
    value = 0.0
    for i in range(n_pos):
        if i + 1 + w.m_of[i] <= K:
            value += 1.0 / log2(2.0 + <double>(i + w.m_of[i]))
        c[w.pos_ids[i]] = <double>(n_neg - 2 * w.m_of[i]) / norm - 1.0 / <double>n_pos
    above = 0
    for j in range(n_neg):
        while above < n_pos and w.m_of[above] <= j:
            above += 1
        c[w.neg_ids[j]] = -<double>(2 * above - n_pos) / norm + 1.0 / <double>n_neg
    return 1.0 - value / idcg


def ndcg_at_k_batch(const double[::1] scores, const unsigned char[::1] y, const int64_t[::1] starts,
                    const int64_t[::1] ends, int64_t k, double[::1] c, double[::1] delta):
    """:c:func:`ndcgk_query` on the queries ``scores[starts[q]:ends[q]]`` (each with a positive and a negative; no
    validation: the caller's).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of uint8, shape (n,)
    starts, ends : ndarray of int64, shape (Q,)
    k : int
        The cut-off (≥ 1).
    c : ndarray of float64, shape (n,)
        Written at the queries' rows.
    delta : ndarray of float64, shape (Q,)
        Written.
    """
    cdef ndcgk_work_t work
    cdef int64_t q, a
    cdef int64_t n_queries = starts.shape[0]
    with nogil:
        for q in range(n_queries):
            a = starts[q]
            delta[q] = ndcgk_query(&scores[a], &y[a], ends[q] - a, k, &c[a], &work)
