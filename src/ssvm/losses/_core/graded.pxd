# The graded NDCG oracle's kernel: one sort per query, one certified walk per grade level; see graded.pyx.

from libc.stdint cimport int64_t, uint64_t
from libcpp.vector cimport vector

from .sort_walk cimport walk_work_t


cdef cppclass graded_work_t:
    # work memory of the graded kernel, reused from query to query
    vector[uint64_t] keys
    vector[uint64_t] pos
    vector[uint64_t] neg
    vector[double] c_t
    vector[int64_t] rows
    vector[double] s_sorted
    vector[int64_t] r_sorted
    vector[double] c_sorted
    vector[int64_t] levels
    vector[int64_t] n_at_least
    vector[double] weight
    vector[double] alpha
    vector[double] sp
    vector[int64_t] pos_ids
    vector[int64_t] counts
    walk_work_t walk


cdef double graded_query(const double* s, const int64_t* r, int64_t n, uint64_t* keys, int64_t shift, int code,
                         const double* lt, int64_t lt_size, double* c, graded_work_t* work) noexcept nogil
cdef void graded_queries(const double* scores, const int64_t* grades, const int64_t* starts, const int64_t* ends,
                         int64_t n_queries, int code, const double* lt, int64_t lt_size, double* c, double* delta,
                         graded_work_t* work) noexcept nogil
