# Step 4 of QS's grid path: the exact ranks of the gathered negatives; see grid_settle.pyx.

from .derivative cimport objective_t, result_t
from .grid cimport gathered_t, grid_work_t, open_bins_t

cdef void settle(gathered_t* g, const open_bins_t* ob, const objective_t* obj, result_t* out,
                 grid_work_t* work) noexcept nogil
