"""A clock for compiled code: the CPU's cycle counter, read inside numba's nopython loops.

numba's nopython code has no clock (``time.perf_counter`` is a Python call). The fused round
(:mod:`._fused`) times its oracles inside its compiled loop with :func:`ticks`, an ``@intrinsic``
that emits LLVM's ``llvm.readcyclecounter`` (``rdtsc`` on x86-64: one instruction, tens of cycles),
and converts the sum of the ticks to seconds with :func:`seconds_per_tick`, calibrated against
``time.perf_counter``.

Limits, all documented where the times are reported:

- The counter must tick at a constant rate, whatever the clock speed of the core, and agree
  between cores (the "invariant TSC" of every x86-64 CPU of the last fifteen years; a virtual
  machine may emulate it less well). Only x86-64 is trusted: on other CPUs LLVM's lowering may
  read a counter the operating system forbids (AArch64's ``PMCCNTR_EL0`` traps in user space), so
  :func:`ticks` reads nothing there (always 0) and the times it would give are 0.
- The calibration takes the span from the process's first call of :func:`seconds_per_tick` (which
  waits ``_FIRST_SPAN`` seconds once) to the latest call: the longer the process runs, the closer
  the factor; a few parts per thousand from the start.
- ``rdtsc`` does not wait for earlier instructions to finish: a reading may be off by the tens of
  nanoseconds the CPU runs ahead, nothing next to a block's oracles (microseconds and more).
- Ticks count wall time while a thread holds the core or waits for it: on a busy machine a
  descheduled thread's wait is counted too, as ``time.perf_counter`` would count it.
"""

import platform
import threading
import time

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["seconds_per_tick", "ticks"]

COUNTER_WORKS = platform.machine().lower() in ("x86_64", "amd64")
_FIRST_SPAN = 0.002  # seconds waited by the first calibration
_anchor = None  # (perf_counter, ticks) at the first calibration
_first = threading.Lock()  # dask may run block tasks in threads: one first calibration


@intrinsic
def _read_counter(typingctx):
    """The cycle counter (``llvm.readcyclecounter``) as an int64; 0 where it is not trusted."""

    def codegen(context, builder, signature, args):
        if not COUNTER_WORKS:
            return ir.Constant(ir.IntType(64), 0)
        read = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(64), []),
                                              "llvm.readcyclecounter")
        return builder.call(read, [])

    return types.int64(), codegen


@njit(cache=True, nogil=True)
def ticks():
    """The CPU's cycle counter now (int64; 0 on a CPU where it is not trusted, see the module).

    Returns
    -------
    int
        Ticks since an arbitrary origin; differences of two readings, times
        :func:`seconds_per_tick`, are seconds.
    """
    return _read_counter()


def seconds_per_tick():
    """Seconds per tick of :func:`ticks`, measured against ``time.perf_counter``.

    The first call waits ``_FIRST_SPAN`` seconds (thread-safe); every call measures from the first call's
    readings to its own, so the factor gets closer as the process runs.

    Returns
    -------
    float
        Seconds per tick; 0.0 when the counter does not advance (not trusted on this CPU).
    """
    global _anchor
    with _first:
        if _anchor is None:
            ticks()  # compiled or loaded first: not between the two readings of the anchor
            _anchor = (time.perf_counter(), ticks())
            time.sleep(_FIRST_SPAN)
    t0, c0 = _anchor
    t1, c1 = time.perf_counter(), ticks()
    return (t1 - t0) / (c1 - c0) if c1 > c0 else 0.0
