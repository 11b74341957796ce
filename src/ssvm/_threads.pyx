"""How many OpenMP threads a kernel of ssvm runs on (scikit-learn's ``_openmp_effective_n_threads``).

Every parallel kernel (``prange``) takes an explicit ``num_threads`` from :func:`effective_n_threads`,
read by its Python wrapper at each call, so the count follows, in the calling thread:

* ``threadpoolctl.threadpool_limits(n, user_api="openmp")`` (it calls ``omp_set_num_threads``, which
  OpenMP keeps per thread: a limit set in one thread, say a dask worker thread, leaves the others'
  alone);
* the ``OMP_NUM_THREADS`` environment variable (then taken as it is, even above the core count);
* otherwise the physical cores the process may use (``joblib.cpu_count``: cgroup quotas of a
  container count), never more than OpenMP's own maximum.

A build without OpenMP runs every kernel on one thread.
"""

import os

from joblib import cpu_count

__all__ = ["effective_n_threads", "openmp_enabled", "limited_threads"]

_CPU_COUNT = []  # the cores, counted once (the process does not gain or lose cores)


def openmp_enabled():
    """Whether the kernels were built with OpenMP (else they all run on one thread).

    Returns
    -------
    bool
    """
    return bool(SSVM_OPENMP)


cpdef int effective_n_threads(n_threads=None) except -1:
    """The number of OpenMP threads a kernel called now from this thread should use.

    Parameters
    ----------
    n_threads : int, optional
        None: the limit in force (see the module); a positive count: that many; a negative one:
        that many fewer than the limit plus one (-1: the limit), at least 1.

    Returns
    -------
    int
        At least 1; 1 when the kernels were built without OpenMP.

    Raises
    ------
    ValueError
        For ``n_threads = 0``.
    """
    if n_threads is not None and n_threads == 0:
        raise ValueError("n_threads = 0 is invalid: give a positive count, a negative one (-1: all), or None")
    if not SSVM_OPENMP:
        return 1
    cdef int limit = omp_get_max_threads()
    if not os.environ.get("OMP_NUM_THREADS"):
        if not _CPU_COUNT:
            _CPU_COUNT.append(cpu_count(only_physical_cores=True))
        limit = min(limit, _CPU_COUNT[0])
    if n_threads is None:
        return max(1, limit)
    if n_threads < 0:
        return max(1, limit + n_threads + 1)
    return n_threads


class limited_threads:
    """Context manager: OpenMP kernels called from this thread use at most ``n`` threads inside it.

    What ``threadpool_limits(n, user_api="openmp")`` does to ssvm's kernels, without scanning the
    process's libraries (a few microseconds: a dask block task takes one around each call). The
    setting is OpenMP's per-thread one: other threads keep theirs; the previous one comes back at
    the exit.

    Parameters
    ----------
    n : int
        At least 1.
    """

    def __init__(self, n):
        if n < 1:
            raise ValueError(f"the thread limit must be at least 1, got {n!r}")
        self.n = int(n)
        self._before = None

    def __enter__(self):
        self._before = omp_get_max_threads()
        omp_set_num_threads(self.n)
        return self

    def __exit__(self, *exc):
        omp_set_num_threads(self._before)
        return False
