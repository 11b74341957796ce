# The discrete derivative of every built-in QS loss, written once (Mohapatra et al., §4.1 and Lemma 6);
# see derivative.pyx for the text.  The small functions are inline here, so that every kernel that
# cimports them compiles its own copy into its loops.

from libc.math cimport log2
from libc.stdint cimport int64_t

cdef enum:
    KIND_AP = 0         # closed form −i / (P (i+j−1)(i+j))
    KIND_NDCG_LOG2 = 1  # closed form (D(i+j+1) − D(i+j)) · scale, D(m) = 1/log2(m), scale = 1/Σ_{k≤P} 1/log2(1+k)
    KIND_SUM_TABLE = 2  # table[i + j]

ctypedef struct objective_t:
    # f_j of problem (5) for one query
    const double* sp    # the positives' scores in (−score, index) order
    double inv          # 2 / (P N)
    int kind            # the loss's derivative: KIND_AP, KIND_NDCG_LOG2 or KIND_SUM_TABLE
    const double* table  # its kernel table (QSLoss.kernel_spec): [scale] for NDCG, table[i + j] for a sum table
    int64_t n_pos       # P
    const double* lt    # NDCG: 1/log2(m) for every m the query reaches (inverse_log_table), or NULL: computed
    int64_t lt_size     # its entries (0 without)
    double scale        # NDCG: table[0]; 0 otherwise

ctypedef struct result_t:
    # what an oracle kernel writes
    double* c           # Lemma 6's coefficients, by index in the query
    int64_t* counts     # negatives per interleaving rank r = 1..P+1 at counts[r − 1]: the ± pattern


cdef inline double inverse_log2(double m) noexcept nogil:
    """1/log2(m): the discount D(m − 1) = 1/log2(1 + (m − 1)) of NDCG (log2), as every kernel computes it."""
    return 1.0 / log2(m)


cdef inline double ap_step(int64_t n_pos, int64_t i, int64_t j) noexcept nogil:
    """AP's d_j(i) = −i / (P (i+j−1)(i+j))."""
    cdef double a = <double>(i + j)
    return <double>(-i) / (<double>n_pos * (a - 1.0) * a)


cdef inline double ndcg_step(double d_next, double d_here, double scale) noexcept nogil:
    """NDCG's d_j(i) = (D(i+j) − D(i+j−1)) · scale from D(i+j) = ``d_next`` = 1/log2(i+j+1) and
    D(i+j−1) = ``d_here`` = 1/log2(i+j)."""
    return (d_next - d_here) * scale


cdef inline double loss_step(const objective_t* obj, int64_t i, int64_t j) noexcept nogil:
    """d_j(i) = δ_j(i+1) − δ_j(i) of the loss of ``obj``: the one definition every kernel uses."""
    cdef int64_t m = i + j
    if obj.kind == KIND_AP:
        return ap_step(obj.n_pos, i, j)
    if obj.kind == KIND_NDCG_LOG2:
        if obj.lt != NULL:
            return ndcg_step(obj.lt[m + 1], obj.lt[m], obj.scale)
        return ndcg_step(inverse_log2(<double>(m + 1)), inverse_log2(<double>m), obj.scale)
    return obj.table[m]


cdef inline int64_t best_rank(double s, int64_t j, int64_t lo, int64_t hi, const objective_t* obj) noexcept nogil:
    """Largest argmax over ranks ``lo..hi`` of f_j for a negative with score ``s`` at order j.

    The running difference to the best value so far is accumulated (reset to 0 at every new best), so a
    comparison never loses the small loss terms against a large running total.  NDCG without a table
    carries 1/log2 from step to step (one logarithm a step, the same bits as :func:`loss_step`)."""
    cdef int64_t best = lo
    cdef int64_t k
    cdef double diff = 0.0
    cdef double prev, cur
    if obj.kind == KIND_NDCG_LOG2 and obj.lt == NULL:
        prev = inverse_log2(<double>(lo + j))
        for k in range(lo, hi):
            cur = inverse_log2(1.0 + <double>(k + j))
            diff += (obj.sp[k - 1] - s) * obj.inv + ndcg_step(cur, prev, obj.scale)
            prev = cur
            if diff >= 0.0:
                best = k + 1
                diff = 0.0
        return best
    for k in range(lo, hi):
        diff += (obj.sp[k - 1] - s) * obj.inv + loss_step(obj, k, j)
        if diff >= 0.0:
            best = k + 1
            diff = 0.0
    return best


cdef inline void fill_sum_table(const objective_t* obj, int64_t n_total, double* t) noexcept nogil:
    """``t[i + j]`` = d_j(i) for m = i + j = 0..``n_total`` (P + N) of a loss whose derivative depends on i + j
    only, by :func:`loss_step` itself (look-ups are bit for bit the closed form); ``t[0] = t[1] = 0``."""
    cdef int64_t m
    t[0] = 0.0
    if n_total >= 1:
        t[1] = 0.0
    for m in range(2, n_total + 1):
        t[m] = loss_step(obj, 1, m - 1)


cdef inline double discount(double i, bint log2_form) noexcept nogil:
    """NDCG's discount D(i): 1/log2(1 + i) (``log2_form``), else Chakrabarti et al.'s (1 up to 2, then 1/log2(i))."""
    if log2_form:
        return 1.0 / log2(1.0 + i)
    return 1.0 if i <= 2 else 1.0 / log2(i)


cdef objective_t make_objective(const double* sp, int64_t n_pos, int64_t n_neg, int kind, const double* table,
                                const double* lt, int64_t lt_size) noexcept nogil
cdef void positive_coefficients(double* c, const int64_t* counts, const int64_t* pos_ids, int64_t n_pos,
                                double inv) noexcept nogil
cdef void write_coefficients(const int64_t* neg_rank, const int64_t* neg_ids, const int64_t* pos_ids, int64_t n_pos,
                             int64_t n_neg, double* c, int64_t* counts) noexcept nogil
cpdef double ndcg_norm(int64_t n_pos, bint log2_form) noexcept nogil
cdef double loss_value(int kind, const int64_t* counts, int64_t n_pos, bint log2_form) noexcept nogil
cdef double builtin_scale(int kind, int64_t n_pos) noexcept nogil
