# Step 3 of QS's grid path: the open bins, their thresholds, and the assign pass; see grid_bins.pyx.

from libc.stdint cimport int32_t, int64_t

from .derivative cimport objective_t
from .grid cimport bins_t, gathered_t, grid_t, grid_work_t, open_bins_t

cdef open_bins_t classify(const int32_t* hist, const bins_t* bins, int64_t n_bins, int64_t narrow,
                          const objective_t* obj, int64_t* counts, grid_work_t* work) noexcept nogil
cdef gathered_t assign(const double* scores, const unsigned char* y, int64_t n, const grid_t* grid,
                       const open_bins_t* ob, const objective_t* obj, double* c, grid_work_t* work) noexcept nogil
