"""A clock for compiled code: the monotonic clock, in nanoseconds, read inside nogil loops.

The fused round (:mod:`._fused`) times its oracles inside its compiled loop: it cimports
:c:func:`ticks_ns` from ``_ticks.pxd`` (C++'s ``std::chrono::steady_clock``: on Linux
``clock_gettime(CLOCK_MONOTONIC)`` through the vDSO, tens of nanoseconds, no system call), sums the
differences of two readings around each block's oracles, and converts the sum to seconds with
:data:`SECONDS_PER_TICK`. The clock is the one ``time.perf_counter`` and ``time.monotonic_ns`` read
on Linux: no calibration, on every CPU.

It counts wall time while a thread holds the core or waits for it: on a busy machine a descheduled
thread's wait is counted too, as ``time.perf_counter`` would count it.
"""

__all__ = ["SECONDS_PER_TICK", "ticks"]

#: seconds per tick of :func:`ticks` (and of ``ticks_ns`` in compiled code)
SECONDS_PER_TICK = 1e-9


def ticks():
    """The monotonic clock now, in nanoseconds (the reading compiled code takes without the GIL).

    Returns
    -------
    int
        Nanoseconds since an arbitrary origin; the difference of two readings, times
        :data:`SECONDS_PER_TICK`, is seconds.
    """
    return ticks_ns()
