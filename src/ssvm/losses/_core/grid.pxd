# QS's score grid (the multi-pivot first levels of Algorithm 2 of Mohapatra et al.): its types, the inline bin
# of a score, and the path's entry points.  See grid.pyx (steps 1, 2 and the path), grid_bins.pyx (step 3) and
# grid_settle.pyx (step 4).

from libc.math cimport floor
from libc.stdint cimport int16_t, int32_t, int64_t, uint64_t
from libcpp.vector cimport vector

from .derivative cimport objective_t
from .opt_ranks cimport opt_work_t
from .query_setup cimport query_work_t
from .sorting cimport sort_work_t

cdef enum:
    NARROW = 8  # a bin with at most this many possible ranks is narrow: settled by thresholds


ctypedef struct grid_params_t:
    # how the grid path runs
    bint use_above    # a negative above every positive has rank 1 (the loss's derivative is never positive)
    int64_t narrow    # the largest bin settled by thresholds (0: every open bin by Algorithm 2)
    int64_t n_bins    # about how many bins (0: the default)


ctypedef struct grid_t:
    # the score grid: bins of width 2^e from the bin of its lowest edge (base) up to hi
    double inv_w      # 2^−e
    double width      # 2^e
    int64_t base
    double hi         # the highest score binned: the top positive (use_above) or the top score
    int64_t n_bins


ctypedef struct bins_t:
    # step 2: the non-empty bins from the top, their first order minus one and their rank intervals
    int64_t nb
    const int32_t* bins
    const int64_t* j0
    const int64_t* lo_rank
    const int64_t* hi_rank


ctypedef struct open_bins_t:
    # step 3 (classify): code[k] for every non-empty bin k: >= 0, the coefficient of its one rank; −1 − q, the
    # q-th open bin.  Per open bin q: its rank interval [o, r], first order minus one j0, first gather slot
    # start[q] (start[n_open] = all slots), for a narrow bin the offset th_off of its r − o thresholds (−1: a
    # wide bin), the offset h_off of its histogram of certain ranks (r − o + 1 entries; n_hist in all) and the
    # margin tol of its thresholds.  Flat, per threshold: θ at the bin's first and last order, the loss steps.
    const double* code
    int64_t n_open
    const int64_t* o
    const int64_t* r
    const int64_t* j0
    const int64_t* start
    const int64_t* th_off
    const int64_t* h_off
    int64_t n_hist
    const double* tol
    const double* th_first
    const double* th_last
    const double* d_first
    const double* d_last


ctypedef struct gathered_t:
    # what assign leaves: the narrow bins' histograms of certain ranks, and the gathered negatives (score,
    # index, and for a narrow bin the key (a − o)·(NARROW + 1) + (b − o) of its ranks (a, b) at the bin's
    # first and last order) in slots start[q]..fill[q] − 1 of open bin q
    const int64_t* hist
    double* vals
    int64_t* ids
    int16_t* keys
    const int64_t* fill


cdef cppclass grid_work_t(query_work_t):
    # work memory of the grid path, reused from query to query (and query_work_t's)
    vector[int32_t] sample_bin  # every sample's bin (bin_scores: −1 above the grid)
    vector[int32_t] hist
    vector[int32_t] bins
    vector[int64_t] j0
    vector[int64_t] lo_rank
    vector[int64_t] hi_rank
    vector[int64_t] first
    vector[int64_t] ranks
    vector[double] s_pt
    vector[int64_t] j_pt
    vector[double] code
    vector[int64_t] q_o
    vector[int64_t] q_r
    vector[int64_t] q_j0
    vector[int64_t] th_off
    vector[int64_t] h_off
    vector[int64_t] start
    vector[double] tol
    vector[double] th_first
    vector[double] th_last
    vector[double] d_first
    vector[double] d_last
    vector[int64_t] g_hist
    vector[double] vals
    vector[int64_t] ids
    vector[int16_t] keys
    vector[int64_t] fill
    vector[int64_t] key_s
    vector[double] tv
    vector[int64_t] ti
    vector[int64_t] cnt
    opt_work_t opt


cdef inline int64_t floor_scaled(double s, double inv_w) noexcept nogil:
    """floor(s · inv_w) for a power of two ``inv_w`` (exact: the product only shifts the exponent)."""
    cdef double x = floor(s * inv_w)
    if s < 0.0 and x >= 0.0:  # the product underflowed to −0; a negative number floors to ≤ −1
        x = -1.0
    return <int64_t>x


cdef extern from "losses/_core/grid_bin.h":  # from src/ssvm, on every kernel's include path
    void bin_scores "ssvm_grid_bins"(const double* scores, int64_t n, double inv_w, int64_t base, double hi,
                                     int32_t* bins) noexcept nogil


cdef void grid_core(const double* scores, const unsigned char* y, int64_t n, const objective_t* obj,
                    const int64_t* pos_ids, const grid_params_t* params, double* c, int64_t* counts,
                    grid_work_t* work) noexcept nogil
cdef void grid_queries(const double* scores, const unsigned char* y, const int64_t* starts, const int64_t* ends,
                       const int64_t* n_pos, int64_t n_queries, int kind, double* c, double* delta,
                       grid_work_t* work) noexcept nogil
