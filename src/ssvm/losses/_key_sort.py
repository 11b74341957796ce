"""The sort of one large query's packed keys (:mod:`._packed_keys`): numpy's or a compiled radix sort.

numpy sorts uint64 with x86-simd-sort, whose AVX-512 path stores through ``vpcompressq`` to memory
— microcoded on AMD Zen 4, where that path runs several times slower than numpy's own AVX2 path
(numpy/x86-simd-sort#6; AMD's Zen 4 optimisation guide, §2.11.2), and numpy picks it there all the
same. A least-significant-digit radix sort does not depend on the CPU's vector extensions: on a
CPU where numpy's sort is fast it loses, where numpy's is slow it wins. So the first sort of at
least ``RADIX_MIN`` keys in a process times both on its own keys (twice each, the faster kept) and
every later large sort uses the faster; both give the same array, bit for bit, so the choice
changes the time only.

The radix sort orders by the bits from ``shift`` up (the image of the score), stably, 10 bits a
pass, skipping a pass whose digit every key shares. Keys that tie in those bits keep their order:
the packed keys are written in index order (their low bits), so that order is the full key order
and the result is ``np.sort``'s.
"""

import threading
import time

import numpy as np
from numba import njit

__all__ = ["CACHE_MAX_ENTRIES", "RADIX_MIN", "kept_keys", "radix_sort_high", "sort_large", "sort_choice"]

RADIX_MIN = 1 << 15  # fewer keys: numpy's sort (a radix pass over 1,024 buckets costs more there)
_DIGIT = 10  # bits a pass: 1,024 buckets (measured against 8, 11, 12, 13 and 16 at 2^15..10^7 keys)
_BUCKETS = 1 << _DIGIT
#: work arrays (:func:`kept_keys`) and the walk's 1/log2 table are kept for queries of up to this many
#: samples (2^24: 128 MiB each)
CACHE_MAX_ENTRIES = 1 << 24
_LOCAL = threading.local()
_CHOICE = {}  # "sort": "numpy" or "radix", once timed


@njit(cache=True)
def radix_sort_high(keys, shift, work):
    """Sort ``keys`` in place by their bits from ``shift`` up, stably (``work``: at least as many
    entries).

    Keys whose bits from ``shift`` up tie keep their order; when that order is ascending in the low
    ``shift`` bits (the packed keys' indices), the result is the keys' full ascending order."""
    n = keys.size
    n_digits = (64 - shift + _DIGIT - 1) // _DIGIT
    mask = np.uint64(_BUCKETS - 1)
    counts = np.zeros((n_digits, _BUCKETS), dtype=np.int64)
    for i in range(n):  # every digit's histogram in one pass
        k = keys[i] >> np.uint64(shift)
        for d in range(n_digits):
            counts[d, np.int64((k >> np.uint64(_DIGIT * d)) & mask)] += 1
    src, dst = keys, work[:n]
    moved = False
    for d in range(n_digits):
        sh = np.uint64(shift + _DIGIT * d)
        if n == 0 or counts[d, np.int64((src[0] >> sh) & mask)] == n:
            continue  # every key has this digit: the pass would not move one
        total = 0
        for b in range(_BUCKETS):
            size = counts[d, b]
            counts[d, b] = total
            total += size
        for i in range(n):
            k = src[i]
            b = np.int64((k >> sh) & mask)
            dst[counts[d, b]] = k
            counts[d, b] += 1
        src, dst = dst, src
        moved = not moved
    if moved:
        keys[:] = src


def kept_keys(name, n):
    """A uint64 work array of at least ``n`` entries, kept per thread under ``name`` from call to
    call: a training run asks for the same query again and again, and reusing the pages saves their
    faults (a few ms per call at N = 10^6).  Bounded: past ``CACHE_MAX_ENTRIES`` the call gets an
    array of its own and the kept one stays as it is."""
    buf = getattr(_LOCAL, name, None)
    if buf is not None and buf.size >= n:
        return buf
    if n > CACHE_MAX_ENTRIES:
        return np.empty(n, dtype=np.uint64)
    buf = np.empty(n, dtype=np.uint64)
    setattr(_LOCAL, name, buf)
    return buf


def _seconds(sort, keys):
    t0 = time.perf_counter()
    sort(keys)
    return time.perf_counter() - t0


def _choose(keys, shift):
    """Sort ``keys`` (in place) both ways, twice each, and keep the faster way for the process."""
    work = kept_keys("work", keys.size)
    radix_sort_high(keys[:2].copy(), shift, work)  # compiled (or loaded) before it is timed
    ways = {"numpy": lambda a: a.sort(), "radix": lambda a: radix_sort_high(a, shift, work)}
    times = {name: min(_seconds(sort, keys.copy()) for _ in range(2)) for name, sort in ways.items()}
    _CHOICE["sort"] = min(times, key=times.get)
    ways[_CHOICE["sort"]](keys)


def sort_large(keys, shift):
    """Sort packed ``keys`` (written in index order: ties in the high bits ascend in the low
    ``shift`` bits) in place, by numpy's sort or :func:`radix_sort_high`, whichever this process
    found faster (see the module's text); fewer than ``RADIX_MIN`` keys by numpy's."""
    if keys.size < RADIX_MIN:
        keys.sort()
    elif "sort" not in _CHOICE:
        _choose(keys, shift)
    elif _CHOICE["sort"] == "radix":
        radix_sort_high(keys, shift, kept_keys("work", keys.size))
    else:
        keys.sort()


def sort_choice():
    """``"numpy"`` or ``"radix"``: how this process sorts large key arrays, or None before its
    first large sort."""
    return _CHOICE.get("sort")
