# One work struct per thread, kept from call to call, for the kernels' Python entries
# (_work_memory.h says why: no page faults for a large query's work vectors).
# ``cdef grid_work_t* work = thread_work[grid_work_t]()``.

cdef extern from "_work_memory.h" namespace "ssvm" nogil:
    W* thread_work[W]()
