# The per-query 0-1, precision@k and recall@k oracles (see _classification_kernels.pyx), for compiled loops
# that solve one query at a time (the fused training round).

from libc.stdint cimport int64_t

cdef double zero_one_query(const double* s, const unsigned char* y, int64_t n, double* c) noexcept nogil
cdef double precision_at_k_query(const double* s, const unsigned char* y, int64_t n, int64_t k, double* c,
                                 double* work) noexcept nogil
cdef double topk_query(const double* s, const unsigned char* y, int64_t n, int64_t k, int recall, double* c,
                       double* work) noexcept nogil
