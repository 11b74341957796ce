# A clock for compiled code (see _ticks.pyx): the monotonic clock in nanoseconds, read without the GIL.

from libc.stdint cimport int64_t

cdef extern from *:
    """
    #include <chrono>
    #include <cstdint>
    static inline std::int64_t ssvm_ticks_ns() {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::steady_clock::now().time_since_epoch()).count();
    }
    """
    int64_t ticks_ns "ssvm_ticks_ns"() noexcept nogil
