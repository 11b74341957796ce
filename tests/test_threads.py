"""The OpenMP thread count of the kernels (ssvm._threads): threadpoolctl's limit, OMP_NUM_THREADS
and the per-thread limit of a dask block task."""

import os
import subprocess
import sys
import threading

import pytest
from joblib import cpu_count
from threadpoolctl import threadpool_limits

from ssvm._threads import effective_n_threads, limited_threads, openmp_enabled

needs_openmp = pytest.mark.skipif(not openmp_enabled(), reason="built without OpenMP: always one thread")


@needs_openmp
def test_default_is_the_physical_cores(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert 1 <= effective_n_threads() <= cpu_count(only_physical_cores=True)
    assert effective_n_threads(-1) == effective_n_threads()
    assert effective_n_threads(3) == 3
    assert effective_n_threads(-1000) == 1


def test_zero_threads_is_an_error():
    with pytest.raises(ValueError, match="n_threads = 0"):
        effective_n_threads(0)
    with pytest.raises(ValueError, match="at least 1"):
        limited_threads(0)


@needs_openmp
def test_threadpool_limits_is_obeyed_and_undone():
    before = effective_n_threads()
    with threadpool_limits(1, user_api="openmp"):
        assert effective_n_threads() == 1
    assert effective_n_threads() == before


@needs_openmp
def test_the_environment_is_obeyed_above_the_cores():
    code = "from ssvm._threads import effective_n_threads; print(effective_n_threads())"
    for value in ("1", "7"):
        out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "OMP_NUM_THREADS": value},
                             capture_output=True, text=True, check=True)
        assert out.stdout.split()[-1] == value


@needs_openmp
def test_a_threads_limit_is_its_own():
    """A limit set in one thread (a dask worker thread's block task) leaves the others' alone."""
    before = effective_n_threads()
    inside, entered, leave = [], threading.Event(), threading.Event()

    def task():
        with limited_threads(1):
            inside.append(effective_n_threads())
            entered.set()
            leave.wait(60)
        inside.append(effective_n_threads())

    worker = threading.Thread(target=task)
    worker.start()
    assert entered.wait(60)
    assert effective_n_threads() == before  # this thread's limit while the other holds its own
    leave.set()
    worker.join()
    assert inside == [1, before]
