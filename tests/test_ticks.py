"""The clock of compiled loops (ssvm.problem._ticks): it measures what ``time.perf_counter``
measures, and never runs backwards (checked for agreement, never for speed)."""

import threading
import time

import pytest

from ssvm.problem._ticks import SECONDS_PER_TICK, ticks


def test_ticks_measure_what_perf_counter_measures():
    """The same interval by both clocks: a sleep (the clock runs while the thread waits)."""
    for wait in (0.01, 0.05):
        t0, c0 = time.perf_counter(), ticks()
        time.sleep(wait)
        c1, t1 = ticks(), time.perf_counter()
        assert (c1 - c0) * SECONDS_PER_TICK / (t1 - t0) == pytest.approx(1.0, rel=0.02)


def test_ticks_never_decrease_in_any_thread():
    readings = []

    def read():
        readings.append([ticks() for _ in range(20000)])

    threads = [threading.Thread(target=read) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for seq in readings:
        assert all(b >= a for a, b in zip(seq, seq[1:]))
