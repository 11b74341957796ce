# The problem layer's compiled loops (see _round.pyx): the row sums every product uses, declared
# here so that any kernel summing a row of X sums it in exactly the same order.

from libc.stdint cimport int32_t, int64_t

ctypedef fused floating:
    float
    double

ctypedef fused index_t:
    int32_t
    int64_t

cdef extern from "_simd.h":
    pass

cdef extern from *:
    """
    #include <cstdint>
    /* x . w of one dense row, in float64: 8 running sums (lane l takes the columns j = l mod 8 of
       the first d - d mod 8) added in a fixed tree, then the last d mod 8 columns in order. The
       order is written out here, not left to the compiler, and nothing is contracted
       (-ffp-contract=off), so the sum is the same on every CPU and in every clone below: the
       compiler only packs the 8 independent lanes into SIMD registers. */
    template <typename T>
    static inline double ssvm_row_dot(const T* x, const double* w, std::int64_t d) {
        double a[8] = {0.0};
        std::int64_t j = 0;
        for (; j + 8 <= d; j += 8)
            for (int l = 0; l < 8; ++l)
                a[l] += static_cast<double>(x[j + l]) * w[j + l];
        double r = ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
        for (; j < d; ++j)
            r += static_cast<double>(x[j]) * w[j];
        return r;
    }
    /* g += c x for one dense row (each g[j] one product and one sum: no order to choose). */
    template <typename T>
    static inline void ssvm_row_axpy(const T* x, double c, double* g, std::int64_t d) {
        for (std::int64_t j = 0; j < d; ++j)
            g[j] += static_cast<double>(x[j]) * c;
    }
    /* The row loops of the products, in every version of SSVM_CLONES (_simd.h). */
    #define SSVM_DENSE_ROWS(T)                                                                      \
    SSVM_CLONES static void ssvm_dense_scores_rows(const T* X, std::int64_t d, const double* w,      \
                                                   double* s, std::int64_t lo, std::int64_t hi) {    \
        for (std::int64_t i = lo; i < hi; ++i)                                                      \
            s[i] = ssvm_row_dot(X + i * d, w, d);                                                   \
    }                                                                                               \
    SSVM_CLONES static void ssvm_dense_transpose_rows(const T* X, std::int64_t d, const double* c,   \
                                                      double* g, std::int64_t lo, std::int64_t hi) { \
        for (std::int64_t i = lo; i < hi; ++i)                                                      \
            ssvm_row_axpy(X + i * d, c[i], g, d);                                                   \
    }
    SSVM_DENSE_ROWS(float)
    SSVM_DENSE_ROWS(double)
    """
    double row_dot "ssvm_row_dot"(const float* x, const double* w, int64_t d) noexcept nogil
    double row_dot "ssvm_row_dot"(const double* x, const double* w, int64_t d) noexcept nogil
    void row_axpy "ssvm_row_axpy"(const float* x, double c, double* g, int64_t d) noexcept nogil
    void row_axpy "ssvm_row_axpy"(const double* x, double c, double* g, int64_t d) noexcept nogil
    void dense_scores_rows "ssvm_dense_scores_rows"(const float* X, int64_t d, const double* w, double* s,
                                                    int64_t lo, int64_t hi) noexcept nogil
    void dense_scores_rows "ssvm_dense_scores_rows"(const double* X, int64_t d, const double* w, double* s,
                                                    int64_t lo, int64_t hi) noexcept nogil
    void dense_transpose_rows "ssvm_dense_transpose_rows"(const float* X, int64_t d, const double* c, double* g,
                                                          int64_t lo, int64_t hi) noexcept nogil
    void dense_transpose_rows "ssvm_dense_transpose_rows"(const double* X, int64_t d, const double* c, double* g,
                                                          int64_t lo, int64_t hi) noexcept nogil

cdef void csr_scores_rows(const floating[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
                          const double* w, double* s, int64_t lo, int64_t hi) noexcept nogil
cdef void csr_transpose_rows(const floating[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
                             const double* c, double* g, int64_t lo, int64_t hi) noexcept nogil
