# SVM^rank's pairwise hinge and the swapped pairs of the ranking by score; see pairwise.pyx.

from libc.stdint cimport int64_t, uint64_t
from libcpp.vector cimport vector

from .sorting cimport sort_work_t


ctypedef struct pairs_work_t:
    # work memory of pairs_query, reused from query to query
    vector[uint64_t] keys
    vector[double] vals
    vector[int64_t] ids
    vector[int64_t] level
    vector[int64_t] cut
    vector[int64_t] tree
    vector[int64_t] distinct
    sort_work_t sort


cdef double pairs_query(const double* s, const int64_t* g, int64_t n, bint augmented, bint normalise, double* c,
                        pairs_work_t* work) noexcept nogil
cdef void pairs_queries(const double* scores, const int64_t* grades, const int64_t* starts, const int64_t* ends,
                        int64_t n_queries, bint augmented, bint normalise, double* c, double* delta,
                        pairs_work_t* work) noexcept nogil
