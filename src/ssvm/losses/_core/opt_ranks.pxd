# Algorithm 2 of Mohapatra et al. (OptRanks) and the divide and conquer over monotone chains; see opt_ranks.pyx.

from libc.stdint cimport int64_t, uint64_t
from libcpp.vector cimport vector

from .derivative cimport objective_t, result_t

cdef enum:
    OPT_STACK = 128   # opt_ranks' explicit stack: O(log N) entries, the smaller side of every split on top
    OPT_SAMPLE = 64   # the pivot's random sample


cdef cppclass opt_work_t:
    # work memory of opt_ranks (one per oracle call, shared by all its blocks; reset by new_work)
    int64_t stack[OPT_STACK * 4]
    double sample[OPT_SAMPLE]
    uint64_t state            # the xorshift state of the random positions
    vector[int64_t] ranks     # a block of equal scores: its chain's opts, orders and score
    vector[int64_t] j_pt
    vector[double] s_pt


cdef void new_work(opt_work_t* work) noexcept nogil
cdef void assign_block(const int64_t* ids, int64_t lo, int64_t hi, int64_t r, const objective_t* obj,
                       result_t* out) noexcept nogil
cdef void chain_opts(const double* s_pt, const int64_t* j_pt, int64_t n, int64_t left, int64_t right,
                     const objective_t* obj, int64_t* ranks) noexcept nogil
cdef void opt_ranks(double* vals, int64_t* ids, int64_t lo0, int64_t hi0, int64_t joff, int64_t left, int64_t right,
                    const objective_t* obj, result_t* out, opt_work_t* work) noexcept nogil
