# The negatives certified to rank below every positive, set aside before the sort-and-walk path's sort; see
# set_aside.pyx.

from libc.stdint cimport int64_t, uint64_t

from .derivative cimport objective_t
from .sorting cimport sort_work_t

cdef bint steps_hold(const objective_t* bound, double theta, int64_t j0) noexcept nogil
cdef int64_t sorted_bottom(const uint64_t* neg, int64_t n, int64_t shift, const double* scores,
                           const objective_t* bound, double* c) noexcept nogil
cdef int64_t split_bottom(uint64_t* neg, int64_t n, int64_t shift, const double* scores, const objective_t* bound,
                          double* c) noexcept nogil
cdef int64_t sort_above_bottom(uint64_t* neg, int64_t n, int64_t shift, const double* scores,
                               const objective_t* bound, double* c, sort_work_t* work) noexcept nogil
