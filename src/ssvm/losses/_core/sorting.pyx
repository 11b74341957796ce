"""The sorting primitives of the QS family: packed keys and their sorts (Mohapatra et al.'s Algorithm 1
sorts the positives; the sort-and-walk path, graded NDCG, the ranking by score and the dask giant query
sort every sample).

Each score is packed with its index into a uint64 whose high bits are an order-preserving image of
−score and whose low ``shift`` bits are the index (:func:`pack_key`), so that one sort of the keys
orders the samples by (−score, index) — except keys whose high bits tie (scores equal or a few ulps
apart), which come by index and are put in exact order after (:func:`repair`).

The sorts:

* :func:`sort_keys`: distinct keys (each holds an index), so every correct sort gives numpy's order:
  an insertion sort up to 32 keys, else a least-significant-digit radix sort (8-bit digits; a digit
  that all keys share is skipped).
* :func:`sort_score_keys`, inside the compiled loops over small queries: one bucket pass by score,
  four buckets a key (:func:`bucket_keys`; a key's bucket, from the score its high bits pin
  (:func:`key_score`), never falls as the key rises, so the buckets are in key order), then one
  insertion sort (:func:`sort_buckets`; a bucket of more than 32 keys by :func:`sort_keys` first).
  Scores spread over a few binades (as trained scores are) fill the buckets evenly; a cluster far
  from the rest lands in one bucket.
* :func:`sort_large`, a large query's keys from Python: numpy's sort or :func:`radix_sort_high`.
  numpy sorts uint64 with x86-simd-sort, whose AVX-512 path stores through ``vpcompressq`` to memory
  — microcoded on AMD Zen 4, where that path runs several times slower than numpy's own AVX2 path
  (numpy/x86-simd-sort#6; AMD's Zen 4 optimisation guide, §2.11.2), and numpy picks it there all the
  same.  The radix sort does not depend on the CPU's vector extensions: on a CPU where numpy's sort
  is fast it loses, where numpy's is slow it wins.  So the first sort of at least ``RADIX_MIN`` keys
  in a process times both on its own keys (twice each, the faster kept) and every later large sort
  uses the faster; both give the same array, bit for bit, so the choice changes the time only.
  The radix sort orders by the bits from ``shift`` up, stably, 10 bits a pass (1,024 buckets,
  measured against 8, 11, 12, 13 and 16 bits at 2^15..10^7 keys): keys that tie there keep their
  order, which for keys written in index order is the full key order.

Cache: a per-thread key buffer and radix work array (:func:`kept_keys`), kept from call to call up to
``CACHE_MAX_ENTRIES`` entries (128 MiB); a larger query gets arrays of its own, not kept.
"""

import threading
import time

import numpy as np

from libc.math cimport INFINITY
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.string cimport memcpy
from libcpp.vector cimport vector

__all__ = ["CACHE_MAX_ENTRIES", "RADIX_MIN", "index_bits", "kept_keys", "sort_large", "sort_choice", "packed_keys",
           "sorted_keys", "packed_order", "sorted_positives", "sorted_negatives", "py_sort_keys",
           "py_sort_score_keys", "py_radix_sort_high", "py_repair", "py_unpack", "py_pack_all"]

# a key holds an index and, in repair_run's exact keys, as many bits of the score: 2 · index_bits(n) <= 64
_MAX_SAMPLES = 1 << 32
RADIX_MIN = 1 << 15  # fewer keys: numpy's sort (a radix pass over 1,024 buckets costs more there)
cdef enum:
    DIGIT = 10  # radix_sort_high: bits a pass
    BUCKETS = 1 << DIGIT
    BUCKETS_PER_KEY = 4  # bucket_keys
#: work arrays (:func:`kept_keys`) and the walk's 1/log2 table are kept for queries of up to this many
#: samples (2^24: 128 MiB each)
CACHE_MAX_ENTRIES = 1 << 24
_LOCAL = threading.local()
_CHOICE = {}  # "sort": "numpy" or "radix", once timed


cpdef int64_t index_bits(int64_t n) noexcept nogil:
    """Low bits of a key that hold a sample's index, for a query of ``n`` samples: (n − 1).bit_length(),
    at least 1 (and 1 for n = 0)."""
    cdef int64_t shift = 1
    while (n - 1) >> shift > 0:
        shift += 1
    return shift


cdef void insertion_sort(uint64_t* keys, int64_t n) noexcept nogil:
    cdef int64_t t, q
    cdef uint64_t k
    for t in range(1, n):
        k = keys[t]
        q = t - 1
        while q >= 0 and keys[q] > k:
            keys[q + 1] = keys[q]
            q -= 1
        keys[q + 1] = k


cdef void sort_keys(uint64_t* keys, int64_t n) noexcept nogil:
    """Sort ``n`` distinct uint64 keys (or non-negative int64 seen as such) in place: an insertion sort
    up to 32 keys, else a least-significant-digit radix sort (8-bit digits; a digit that all keys
    share is skipped), O(n)."""
    if n <= INSERTION_MAX:
        insertion_sort(keys, n)
        return
    cdef vector[uint64_t] other
    other.resize(n)
    cdef uint64_t* src = keys
    cdef uint64_t* dst = other.data()
    cdef uint64_t* tmp
    cdef int64_t count[257]
    cdef int64_t moved = 0
    cdef int64_t shift, i, d
    for shift in range(0, 64, 8):
        for d in range(257):
            count[d] = 0
        for i in range(n):
            count[<int64_t>((src[i] >> shift) & 255) + 1] += 1
        if count[<int64_t>((src[0] >> shift) & 255) + 1] == n:
            continue  # every key has this digit
        for d in range(256):
            count[d + 1] += count[d]
        for i in range(n):
            d = <int64_t>((src[i] >> shift) & 255)
            dst[count[d]] = src[i]
            count[d] += 1
        tmp = src
        src = dst
        dst = tmp
        moved += 1
    if moved % 2:
        memcpy(keys, src, n * sizeof(uint64_t))


cdef void radix_sort_high(uint64_t* keys, int64_t n, int64_t shift, uint64_t* work) noexcept nogil:
    """Sort ``keys`` in place by their bits from ``shift`` up, stably (``work``: at least ``n`` entries).

    Keys whose bits from ``shift`` up tie keep their order: when that order is ascending in the low
    ``shift`` bits (the packed keys' indices), the result is the keys' full ascending order."""
    cdef int64_t n_digits = (64 - shift + DIGIT - 1) // DIGIT
    cdef uint64_t mask = BUCKETS - 1
    cdef vector[int64_t] counts_v
    counts_v.assign(n_digits * BUCKETS, 0)
    cdef int64_t* counts = counts_v.data()
    cdef int64_t i, d, b, total, size
    cdef uint64_t k
    cdef int64_t sh
    for i in range(n):  # every digit's histogram in one pass
        k = keys[i] >> shift
        for d in range(n_digits):
            counts[d * BUCKETS + <int64_t>((k >> (DIGIT * d)) & mask)] += 1
    cdef uint64_t* src = keys
    cdef uint64_t* dst = work
    cdef uint64_t* tmp
    cdef bint moved = False
    cdef int64_t* cnt
    for d in range(n_digits):
        sh = shift + DIGIT * d
        cnt = counts + d * BUCKETS
        if n == 0 or cnt[<int64_t>((src[0] >> sh) & mask)] == n:
            continue  # every key has this digit: the pass would not move one
        total = 0
        for b in range(BUCKETS):
            size = cnt[b]
            cnt[b] = total
            total += size
        for i in range(n):
            k = src[i]
            b = <int64_t>((k >> sh) & mask)
            dst[cnt[b]] = k
            cnt[b] += 1
        tmp = src
        src = dst
        dst = tmp
        moved = not moved
    if moved:
        memcpy(keys, src, n * sizeof(uint64_t))


cdef buckets_t bucket_keys(uint64_t* keys, int64_t n, int64_t shift, sort_work_t* work) noexcept nogil:
    """The bucket pass of :func:`sort_score_keys`: moves more than ``INSERTION_MAX`` keys into buckets in
    key order, ``BUCKETS_PER_KEY`` buckets a key.  When the scores cannot be bucketed (one score, or a
    span past the floats) the keys are sorted and there is one bucket.

    A key's bucket ⌊(s_top − s)·m / (s_top − s_bottom)⌋ (m buckets) comes from the score its high bits pin
    (:func:`key_score`), every rounding monotone, so it never falls as the key rises: the buckets are in
    key order, and keys in different buckets have different high bits."""
    cdef uint64_t high = ~low_mask(shift)
    cdef uint64_t k_min = keys[0]
    cdef uint64_t k_max = keys[0]
    cdef int64_t i, b
    for i in range(1, n):
        if keys[i] < k_min:
            k_min = keys[i]
        if keys[i] > k_max:
            k_max = keys[i]
    cdef buckets_t out
    out.s_top = key_score(k_min, high)
    cdef double span = out.s_top - key_score(k_max, high)
    cdef int64_t m = BUCKETS_PER_KEY * n
    if not (0.0 < span and span < INFINITY) or not (<double>m / span < INFINITY):  # one score, or past the floats
        sort_keys(keys, n)
        work.ends.resize(1)
        work.ends[0] = <int32_t>n
        out.ends = work.ends.data()
        out.m = 1
        out.scale = 0.0
        out.largest = 0
        return out
    out.scale = <double>m / span
    work.bucket.resize(n)
    work.ends.assign(m + 1, 0)
    work.src.resize(n)
    cdef int32_t* bucket = work.bucket.data()
    cdef int32_t* ends = work.ends.data()
    cdef uint64_t* src = work.src.data()
    for i in range(n):
        b = key_bucket(keys[i], high, out.s_top, out.scale, m)
        bucket[i] = <int32_t>b
        ends[b + 1] += 1
    cdef int64_t largest = 0
    for b in range(m):
        if ends[b + 1] > largest:
            largest = ends[b + 1]
        ends[b + 1] += ends[b]
    memcpy(src, keys, n * sizeof(uint64_t))
    for i in range(n):  # after this, ends[b] is the end of bucket b
        b = bucket[i]
        keys[ends[b]] = src[i]
        ends[b] += 1
    out.ends = ends
    out.m = m
    out.largest = largest
    return out


cdef void sort_buckets(uint64_t* keys, int64_t n, const buckets_t* buckets) noexcept nogil:
    """Sort the first ``n`` keys after :func:`bucket_keys`, ``n`` at the end of a bucket: a bucket of more
    than ``INSERTION_MAX`` keys by :func:`sort_keys`, then one insertion sort (a key never moves past its
    bucket's start)."""
    cdef int64_t start = 0
    cdef int64_t b, end
    if buckets.largest > INSERTION_MAX:
        for b in range(buckets.m):
            end = buckets.ends[b]
            if end > n:
                break
            if end - start > INSERTION_MAX:
                sort_keys(keys + start, end - start)
            start = end
    insertion_sort(keys, n)


cdef void sort_score_keys(uint64_t* keys, int64_t n, int64_t shift, sort_work_t* work) noexcept nogil:
    """:func:`sort_keys` for packed score keys (``shift`` index bits): one bucket pass by score first,
    ``BUCKETS_PER_KEY`` buckets a key (:func:`bucket_keys`), then one insertion sort
    (:func:`sort_buckets`).  With four buckets a key few buckets hold two keys, so the insertion sort
    rarely moves one (and rarely mispredicts a compare)."""
    if n <= INSERTION_MAX:
        insertion_sort(keys, n)
        return
    cdef buckets_t buckets = bucket_keys(keys, n, shift, work)
    sort_buckets(keys, n, &buckets)


cdef int64_t repair_run(uint64_t* keys, int64_t n, int64_t a, const double* scores, int64_t shift) noexcept nogil:
    """If a run of keys with the same high bits starts at ``a`` (sorted by index, as the sort left it),
    put it in exact (−score, index) order; returns the run's end."""
    cdef uint64_t low = low_mask(shift)
    cdef int64_t b = a + 1
    cdef int64_t q
    cdef bint ordered
    cdef double prev, v
    cdef uint64_t i, head
    cdef vector[uint64_t] run
    while b < n and not ((keys[b] ^ keys[a]) >> shift):
        b += 1
    if b - a > 1:
        ordered = True  # by (−score, index): the run is sorted by index already
        prev = scores[<int64_t>(keys[a] & low)]
        for q in range(a + 1, b):
            v = scores[<int64_t>(keys[q] & low)]
            ordered &= v <= prev
            prev = v
        if not ordered:
            # the images of the run's scores agree on the high bits: their low bits, above the index,
            # make exact keys (2 · shift <= 64 bits), sorted by the same sort as the keys themselves
            run.resize(b - a)
            for q in range(b - a):
                i = keys[a + q] & low
                run[q] = ((score_image(score_bits(scores[<int64_t>i])) & low) << shift) | i
            sort_keys(run.data(), b - a)
            head = keys[a] & ~low
            for q in range(b - a):
                keys[a + q] = head | (run[q] & low)
    return b


cdef void repair(uint64_t* keys, int64_t n, const double* scores, int64_t shift) noexcept nogil:
    """Put sorted keys in exact (−score, index) order: keys whose high bits tie (scores equal or a few
    ulps apart) come sorted by index and are reordered by their scores (in place; rare)."""
    cdef int64_t t = 1
    while t < n:
        if (keys[t] ^ keys[t - 1]) >> shift:
            t += 1
        else:
            t = repair_run(keys, n, t - 1, scores, shift) + 1


cdef void unpack(const uint64_t* keys, int64_t n, const double* scores, int64_t shift, double* vals,
                 int64_t* ids) noexcept nogil:
    """Scores and indices of sorted, repaired keys."""
    cdef uint64_t low = low_mask(shift)
    cdef int64_t t, i
    for t in range(n):
        i = <int64_t>(keys[t] & low)
        ids[t] = i
        vals[t] = scores[i]


cdef void pack_all(const double* scores, int64_t n, int64_t shift, uint64_t* keys) noexcept nogil:
    """The packed key of every sample of one query into ``keys`` (unsorted)."""
    cdef uint64_t high = ~low_mask(shift)
    cdef int64_t i
    for i in range(n):
        keys[i] = pack_key(score_bits(scores[i]), high, i)


cdef void pack(const double* scores, const unsigned char* y, int64_t n, int64_t shift, uint64_t* pos,
               uint64_t* neg) noexcept nogil:
    """Keys of the positives into ``pos`` and of the negatives into ``neg`` (each one longer than
    needed), with ``shift`` low bits for the index."""
    cdef uint64_t high = ~low_mask(shift)
    cdef int64_t n_p = 0
    cdef int64_t n_n = 0
    cdef int64_t i, yi
    cdef uint64_t key
    for i in range(n):  # branch-free: the labels and the signs are unpredictable
        key = pack_key(score_bits(scores[i]), high, i)
        neg[n_n] = key
        pos[n_p] = key
        yi = y[i]
        n_p += yi
        n_n += 1 - yi


cdef int64_t positive_keys(const double* scores, const unsigned char* y, int64_t n, int64_t n_pos, uint64_t* buf,
                           sort_work_t* work) noexcept nogil:
    """The positives' keys of a small query, sorted and repaired (:func:`sort_score_keys`), into
    ``buf[:n_pos]`` (``buf``: at least P + 1 entries); returns the index bits."""
    cdef int64_t shift = index_bits(n)
    cdef uint64_t high = ~low_mask(shift)
    cdef int64_t t = 0
    cdef int64_t i
    for i in range(n):  # branch-free: the labels are unpredictable
        buf[t] = pack_key(score_bits(scores[i]), high, i)
        t += y[i]
    sort_score_keys(buf, n_pos, shift, work)
    repair(buf, n_pos, scores, shift)
    return shift


cdef int64_t query_keys(const double* scores, const unsigned char* y, int64_t n, int64_t n_pos, uint64_t* buf,
                        sort_work_t* work) noexcept nogil:
    """The keys of a small query inside a compiled loop: the positives' sorted and repaired
    (:func:`sort_score_keys`) in ``buf[:n_pos]``, the negatives' packed but not sorted in
    ``buf[n_pos + 1:n + 1]`` (``buf``: at least n + 2 entries); returns the index bits."""
    cdef int64_t shift = index_bits(n)
    pack(scores, y, n, shift, buf, buf + n_pos + 1)
    sort_score_keys(buf, n_pos, shift, work)
    repair(buf, n_pos, scores, shift)
    return shift


# ---- from Python: a large query's keys, and the steps the tests call ----

def kept_keys(name, n):
    """A uint64 work array of at least ``n`` entries, kept per thread under ``name`` from call to call:
    a training run asks for the same query again and again, and reusing the pages saves their faults
    (a few ms per call at N = 10^6).  Bounded: past ``CACHE_MAX_ENTRIES`` the call gets an array of its
    own and the kept one stays as it is.

    Returns
    -------
    ndarray of uint64
    """
    buf = getattr(_LOCAL, name, None)
    if buf is not None and buf.size >= n:
        return buf
    if n > CACHE_MAX_ENTRIES:
        return np.empty(n, dtype=np.uint64)
    buf = np.empty(n, dtype=np.uint64)
    setattr(_LOCAL, name, buf)
    return buf


def py_radix_sort_high(uint64_t[::1] keys, int64_t shift, uint64_t[::1] work):
    """:c:func:`radix_sort_high` from Python: sort ``keys`` in place by their bits from ``shift`` up,
    stably (``work``: at least as many entries)."""
    cdef int64_t n = keys.shape[0]
    if n:
        with nogil:
            radix_sort_high(&keys[0], n, shift, &work[0])


def _seconds(sort, keys):
    t0 = time.perf_counter()
    sort(keys)
    return time.perf_counter() - t0


def _choose(keys, shift):
    """Sort ``keys`` (in place) both ways, twice each, and keep the faster way for the process."""
    work = kept_keys("work", keys.size)
    ways = {"numpy": lambda a: a.sort(), "radix": lambda a: py_radix_sort_high(a, shift, work)}
    times = {name: min(_seconds(sort, keys.copy()) for _ in range(2)) for name, sort in ways.items()}
    _CHOICE["sort"] = min(times, key=times.get)
    ways[_CHOICE["sort"]](keys)


def sort_large(keys, shift):
    """Sort packed ``keys`` (written in index order: ties in the high bits ascend in the low ``shift``
    bits) in place, by numpy's sort or :func:`radix_sort_high`, whichever this process found faster (see
    the module's text); fewer than ``RADIX_MIN`` keys by numpy's."""
    if keys.size < RADIX_MIN:
        keys.sort()
    elif "sort" not in _CHOICE:
        _choose(keys, shift)
    elif _CHOICE["sort"] == "radix":
        py_radix_sort_high(keys, shift, kept_keys("work", keys.size))
    else:
        keys.sort()


def sort_choice():
    """``"numpy"`` or ``"radix"``: how this process sorts large key arrays, or None before its first large
    sort.

    Returns
    -------
    str or None
    """
    return _CHOICE.get("sort")


def packed_keys(scores, y, int64_t n_pos):
    """Packed keys of the positives, in exact (−score, index) order, and of the negatives, not sorted, and
    the index bits (the positives sorted by :func:`sort_large`): views of the thread's kept buffer.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool (or uint8), shape (n,)
    n_pos : int
        ``count_nonzero(y)``.

    Returns
    -------
    pos : ndarray of uint64, shape (P,)
    neg : ndarray of uint64, shape (N,)
    shift : int
    """
    cdef const double[::1] s = np.ascontiguousarray(scores, dtype=np.float64)
    cdef const unsigned char[::1] labels = _labels(y)
    cdef int64_t n = s.shape[0]
    if n > _MAX_SAMPLES:
        raise ValueError(f"a query of {n} samples is too large for the packed keys "
                         f"(at most {_MAX_SAMPLES}); use oracle='yue' or 'chakrabarti'")
    cdef int64_t shift = index_bits(n)
    buf = kept_keys("keys", n + 2)
    cdef uint64_t[::1] b = buf
    with nogil:
        pack(&s[0], &labels[0], n, shift, &b[0], &b[n_pos + 1])
    pos = buf[:n_pos]
    sort_large(pos, shift)
    with nogil:
        repair(&b[0], n_pos, &s[0], shift)
    return pos, buf[n_pos + 1:n + 1], shift


def sorted_keys(scores, y, n_pos):
    """:func:`packed_keys` with the negatives sorted by key (runs of tied high bits still by index: the
    walk repairs them as it meets them).

    Returns
    -------
    pos, neg : ndarray of uint64
    shift : int
    """
    pos, neg, shift = packed_keys(scores, y, n_pos)
    sort_large(neg, shift)
    return pos, neg, shift


def _labels(y):
    y = np.ascontiguousarray(y)
    return y.view(np.uint8) if y.dtype == np.bool_ else (y != 0).view(np.uint8)


def py_repair(uint64_t[::1] keys, const double[::1] scores, int64_t shift):
    """:c:func:`repair` from Python: put sorted ``keys`` in exact (−score, index) order, in place."""
    with nogil:
        repair(&keys[0] if keys.shape[0] else NULL, keys.shape[0], &scores[0] if scores.shape[0] else NULL, shift)


def py_unpack(const uint64_t[::1] keys, const double[::1] scores, int64_t shift):
    """:c:func:`unpack` from Python: the scores and indices of sorted, repaired ``keys``.

    Returns
    -------
    vals : ndarray of float64
    ids : ndarray of int64
    """
    cdef int64_t n = keys.shape[0]
    vals = np.empty(n)
    ids = np.empty(n, dtype=np.int64)
    cdef double[::1] v = vals
    cdef int64_t[::1] i = ids
    if n:
        with nogil:
            unpack(&keys[0], n, &scores[0], shift, &v[0], &i[0])
    return vals, ids


def py_pack_all(const double[::1] scores, int64_t shift, uint64_t[::1] keys):
    """:c:func:`pack_all` from Python: the packed key of every sample into ``keys``."""
    if scores.shape[0]:
        with nogil:
            pack_all(&scores[0], scores.shape[0], shift, &keys[0])


def py_sort_keys(uint64_t[::1] keys):
    """:c:func:`sort_keys` from Python: sort distinct keys in place."""
    if keys.shape[0]:
        with nogil:
            sort_keys(&keys[0], keys.shape[0])


def py_sort_score_keys(uint64_t[::1] keys, int64_t shift):
    """:c:func:`sort_score_keys` from Python: sort packed score keys in place."""
    cdef sort_work_t work
    if keys.shape[0]:
        with nogil:
            sort_score_keys(&keys[0], keys.shape[0], shift, &work)


def packed_order(scores, y):
    """Positives and negatives, each in (−score, index) order, by one packed-key sort.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
        Finite scores.
    y : ndarray of bool, shape (n,)

    Returns
    -------
    sp, pos_ids, sn, neg_ids : ndarray
        Sorted scores and original indices of the positives, then of the negatives.
    """
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    pos, neg, shift = sorted_keys(scores, y, int(np.count_nonzero(y)))
    py_repair(neg, scores, shift)
    return (*py_unpack(pos, scores, shift), *py_unpack(neg, scores, shift))


def sorted_positives(scores, y):
    """Positives sorted by (−score, index) (Algorithm 1, line 1).

    Returns
    -------
    sp : ndarray of float64, shape (P,)
        Sorted positive scores.
    pos_ids : ndarray of int64, shape (P,)
        Original indices of ``sp``.
    """
    pos = np.flatnonzero(y)
    key = -scores[pos]
    order = np.argsort(key)  # the fast unstable sort; its order is the stable one unless scores tie
    ordered = key[order]
    if np.any(ordered[1:] == ordered[:-1]):
        order = np.argsort(key, kind="stable")
    pos_ids = pos[order]
    return np.ascontiguousarray(scores[pos_ids]), pos_ids


def sorted_negatives(scores, y):
    """Negatives in (−score, index) order: (scores, original indices).

    Returns
    -------
    sn : ndarray of float64, shape (N,)
    neg_ids : ndarray of int64, shape (N,)
    """
    neg_ids = np.flatnonzero(~y)
    order = np.argsort(-scores[neg_ids], kind="stable")
    ids = neg_ids[order]
    return np.ascontiguousarray(scores[ids]), ids
