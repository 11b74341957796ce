# f_j of problem (5) of Mohapatra et al. (the QS paper), in compiled form, for the kernels outside the
# QS family: the sorting baselines (_sorted_scan.pyx) and the dask giant query (problem/_giant_query.pyx).
# The same arithmetic, in the same order, as ssvm.losses._rank_kernels (loss_step, best_rank, sum_table):
# bit for bit the QS oracle's ranks. (Interim home while the QS family is ported, issue #34: one of
# the two goes at the merge.)

from libc.math cimport log2
from libc.stdint cimport int64_t

# the loss kinds of ssvm.losses.rank_losses (a test checks that the values agree)
cdef enum:
    KIND_AP = 0
    KIND_NDCG_LOG2 = 1
    KIND_SUM_TABLE = 2


cdef struct Objective:
    const double* sp  # the positives' scores sorted by (−score, index)
    double inv  # 2 / (P N)
    int kind  # the loss's derivative: KIND_AP, KIND_NDCG_LOG2 (table[0] = 1 / Σ D) or KIND_SUM_TABLE
    const double* table
    int64_t n_pos


cdef inline double loss_step(int kind, const double* table, int64_t n_pos, int64_t i, int64_t j) noexcept nogil:
    """d_j(i) = δ_j(i+1) − δ_j(i) for the loss described by (kind, table)."""
    cdef double a
    if kind == KIND_AP:
        a = <double>(i + j)
        return -i / (n_pos * (a - 1.0) * a)
    if kind == KIND_NDCG_LOG2:
        a = <double>(i + j)
        return (1.0 / log2(1.0 + a) - 1.0 / log2(a)) * table[0]  # best_rank carries the same terms
    return table[i + j]


cdef inline void sum_table(int kind, const double* table, int64_t n_pos, int64_t n_neg, double* t) noexcept nogil:
    """``t[i + j]`` = d_j(i) (length P + N + 1) for a loss whose derivative depends on i + j only,
    by :func:`loss_step` itself: table look-ups are bit for bit the closed form."""
    cdef int64_t m
    t[0] = 0.0
    if n_pos + n_neg >= 1:
        t[1] = 0.0
    for m in range(2, n_pos + n_neg + 1):
        t[m] = loss_step(kind, table, n_pos, 1, m - 1)


cdef inline int64_t best_rank(double s, int64_t j, int64_t lo, int64_t hi, const Objective* obj) noexcept nogil:
    """Largest argmax over ranks ``lo..hi`` of f_j for a negative with score ``s`` at order j.

    The running difference to the best value so far is accumulated (reset to 0 at every new best),
    so a comparison never loses the small loss terms against a large running total.
    """
    cdef int64_t best = lo, k
    cdef double diff = 0.0, scale, prev, cur
    if obj.kind == KIND_NDCG_LOG2:  # carry 1/log2(m) from step to step: one log per step, same bits
        scale = obj.table[0]
        prev = 1.0 / log2(<double>(lo + j))
        for k in range(lo, hi):
            cur = 1.0 / log2(1.0 + <double>(k + j))
            diff += (obj.sp[k - 1] - s) * obj.inv + (cur - prev) * scale
            prev = cur
            if diff >= 0.0:
                best = k + 1
                diff = 0.0
        return best
    for k in range(lo, hi):
        diff += (obj.sp[k - 1] - s) * obj.inv + loss_step(obj.kind, obj.table, obj.n_pos, k, j)
        if diff >= 0.0:
            best = k + 1
            diff = 0.0
    return best
