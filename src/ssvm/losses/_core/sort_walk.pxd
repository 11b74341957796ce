# QS's sort-and-walk path (AP and NDCG with many positives): one sort, then one certified monotone walk; see
# sort_walk.pyx.

from libc.stdint cimport int64_t, uint64_t
from libcpp.vector cimport vector

from .derivative cimport objective_t
from .query_setup cimport query_work_t


ctypedef struct run_t:
    # a run of uncertified negatives: positions first..end−1 of the sorted keys, their opts in [lo, hi]
    int64_t first
    int64_t end
    int64_t lo
    int64_t hi


cdef cppclass walk_work_t(query_work_t):
    # work memory of the walk path, reused from query to query (and query_work_t's)
    vector[run_t] runs
    vector[int64_t] ids
    vector[double] vals
    vector[int64_t] orders
    vector[int64_t] ranks


cdef void walk_core(const double* scores, const objective_t* obj, const int64_t* pos_ids, uint64_t* neg,
                    int64_t n_kept, int64_t n_neg, int64_t shift, double* c, int64_t* counts,
                    walk_work_t* work) noexcept nogil
cdef void walk_queries(const double* scores, const unsigned char* y, const int64_t* starts, const int64_t* ends,
                       const int64_t* n_pos, int64_t n_queries, int kind, const double* lt, int64_t lt_size,
                       double* c, double* delta, walk_work_t* work) noexcept nogil
