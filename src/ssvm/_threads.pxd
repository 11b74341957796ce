# The OpenMP routines ssvm's kernels use, and no-op stand-ins when the build has no OpenMP (every
# kernel then runs on one thread): cimport them from here, never from openmp directly.

cdef extern from *:
    """
    #ifdef _OPENMP
        #include <omp.h>
        #define SSVM_OPENMP 1
    #else
        #define SSVM_OPENMP 0
        #define omp_get_max_threads() 1
        #define omp_get_thread_num() 0
        #define omp_set_num_threads(n) ((void)(n))
    #endif
    """
    bint SSVM_OPENMP
    int omp_get_max_threads() noexcept nogil
    int omp_get_thread_num() noexcept nogil
    void omp_set_num_threads(int) noexcept nogil

cpdef int effective_n_threads(n_threads=*) except -1
