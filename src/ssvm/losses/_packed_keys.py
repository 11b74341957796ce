"""Packed sort keys of one query's scores (the sort of QS's walk path, :mod:`._qs_walk`).

Each score is packed with its index into a uint64 whose high bits are an order-preserving image of
−score and whose low bits are the index, so that one sort of the keys (for one
query :func:`._key_sort.sort_large`: numpy's sort or a radix sort; :func:`sort_score_keys` inside a
compiled loop) orders the samples by (−score, index) — except keys whose
high bits tie (scores equal or a few ulps apart), which come by index and are repaired after.

Cache: a per-thread key buffer, kept from call to call up to ``CACHE_MAX_ENTRIES`` entries
(128 MiB); a larger query gets a buffer of its own, not kept.
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from ._key_sort import CACHE_MAX_ENTRIES, kept_keys, sort_large

__all__ = ["CACHE_MAX_ENTRIES", "batch_scratch", "query_keys", "positive_keys", "packed_keys", "sorted_keys",
           "packed_order", "repair", "repair_run", "unpack", "index_bits", "sort_keys", "sort_score_keys",
           "bucket_keys", "key_bucket", "sort_buckets"]

# repair_run's exact keys hold an index and as many bits of the score: 2 · index_bits(n) <= 64
_MAX_SAMPLES = 1 << 32
_INSERTION_MAX = 32  # sort_keys sorts up to this many keys by insertion
_BUCKETS_PER_KEY = 4  # sort_score_keys' buckets


@njit(cache=True, inline="always")
def _image(u):
    """An order-preserving image of −score, from the score's bits ``u`` (−0.0 ties with +0.0)."""
    sign = np.uint64(1) << np.uint64(63)
    u = np.uint64(0) if u == sign else u
    return ~(u ^ ((np.uint64(0) - (u >> np.uint64(63))) | sign))


@njit(cache=True, inline="always")
def _key(u, high, i):
    """The key of sample ``i`` whose score has the bits ``u``: the image of −score in the bits
    ``high``, the index in the others."""
    return (_image(u) & high) | np.uint64(i)


@njit(cache=True)
def _pack(bits_of, y, shift, pos, neg):
    """Keys of the positives into ``pos`` and of the negatives into ``neg`` (each one longer than
    needed), with ``shift`` low bits for the index."""
    high = ~((np.uint64(1) << np.uint64(shift)) - np.uint64(1))
    n_p = 0
    n_n = 0
    for i in range(y.size):  # branch-free: the labels and the signs are unpredictable
        key = _key(bits_of[i], high, i)
        neg[n_n] = key
        pos[n_p] = key
        yi = y[i]
        n_p += yi
        n_n += 1 - yi


@njit(cache=True, inline="always")
def _insertion_sort(keys):
    for t in range(1, keys.size):
        k = keys[t]
        q = t - 1
        while q >= 0 and keys[q] > k:
            keys[q + 1] = keys[q]
            q -= 1
        keys[q + 1] = k


@njit(cache=True)
def sort_keys(keys):
    """Sort distinct uint64 keys (or non-negative int64 viewed as such) in place, inside compiled
    code: an insertion sort up to 32 keys, else a least-significant-digit radix sort (8-bit digits;
    a digit that all keys share is skipped), O(n).  The keys are distinct (each holds an index), so
    every correct sort gives numpy's order."""
    n = keys.size
    if n <= _INSERTION_MAX:
        _insertion_sort(keys)
        return
    src = keys
    dst = np.empty(n, dtype=np.uint64)
    count = np.empty(257, dtype=np.int64)
    moved = 0
    for shift in range(0, 64, 8):
        sh = np.uint64(shift)
        count[:] = 0
        for i in range(n):
            count[np.int64((src[i] >> sh) & np.uint64(255)) + 1] += 1
        if count[np.int64((src[0] >> sh) & np.uint64(255)) + 1] == n:
            continue  # every key has this digit
        for d in range(256):
            count[d + 1] += count[d]
        for i in range(n):
            d = np.int64((src[i] >> sh) & np.uint64(255))
            dst[count[d]] = src[i]
            count[d] += 1
        src, dst = dst, src
        moved += 1
    if moved % 2:
        for i in range(n):
            keys[i] = src[i]


@intrinsic
def _as_float(typingctx, bits):
    """The float64 whose bits are the uint64 ``bits`` (a register move: no memory)."""
    if bits != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.uint64), codegen


@njit(cache=True, inline="always")
def key_score(key, high):
    """The score at the upper end of the interval a key's high bits pin (the image inverted, its
    truncated bits set): a non-increasing function of the key."""
    sign = np.uint64(1) << np.uint64(63)
    t = ~(key & high)
    return _as_float(t ^ sign if t & sign else ~t)


@njit(cache=True)
def sort_score_keys(keys, shift):
    """:func:`sort_keys` for packed score keys (:func:`_key`, ``shift`` index bits): one bucket pass
    by score first, ``_BUCKETS_PER_KEY`` buckets a key (:func:`bucket_keys`), then one insertion
    sort (:func:`sort_buckets`).  With four buckets a key few buckets hold two keys, so the
    insertion sort rarely moves one (and rarely mispredicts a compare)."""
    if keys.size <= _INSERTION_MAX:
        _insertion_sort(keys)
        return
    buckets = bucket_keys(keys, shift)
    sort_buckets(keys, keys.size, buckets)


@njit(cache=True)
def bucket_keys(keys, shift):
    """The bucket pass of :func:`sort_score_keys`: moves more than ``_INSERTION_MAX`` keys into
    buckets in key order, ``_BUCKETS_PER_KEY`` buckets a key, and returns ``(ends, s_top, scale,
    largest)``: bucket b ends at ``ends[b]``, a key's bucket is :func:`key_bucket`, the largest
    holds ``largest`` keys.  When the scores cannot be bucketed (one score, or a span past the
    floats) the keys are sorted and there is one bucket.

    A key's bucket ⌊(s_top − s)·m / (s_top − s_bottom)⌋ (m buckets) comes from the score its high
    bits pin (:func:`key_score`), every rounding monotone, so it never falls as the key rises: the
    buckets are in key order, and keys in different buckets have different high bits.  Scores
    spread over a few binades (as trained scores are) fill the buckets evenly, where the radix sort
    needs a pass per byte that differs; a cluster far from the rest lands in one bucket, sorted by
    :func:`sort_keys`."""
    n = keys.size
    high = ~((np.uint64(1) << np.uint64(shift)) - np.uint64(1))
    k_min = keys[0]
    k_max = keys[0]
    for i in range(1, n):
        k_min = min(k_min, keys[i])
        k_max = max(k_max, keys[i])
    s_top = key_score(k_min, high)
    span = s_top - key_score(k_max, high)
    m = _BUCKETS_PER_KEY * n
    if not 0.0 < span < np.inf or not m / span < np.inf:  # one score, or a span past the floats
        sort_keys(keys)
        return np.full(1, n, dtype=np.int32), s_top, 0.0, 0
    scale = m / span
    bucket = np.empty(n, dtype=np.int32)
    ends = np.zeros(m + 1, dtype=np.int32)
    for i in range(n):
        b = key_bucket(keys[i], high, s_top, scale, m)
        bucket[i] = b
        ends[b + 1] += 1
    largest = 0
    for b in range(m):
        largest = max(largest, ends[b + 1])
        ends[b + 1] += ends[b]
    src = keys.copy()
    for i in range(n):  # after this, ends[b] is the end of bucket b
        b = bucket[i]
        keys[ends[b]] = src[i]
        ends[b] += 1
    return ends[:m], s_top, scale, largest


@njit(cache=True, inline="always")
def key_bucket(key, high, s_top, scale, m):
    """The bucket of a key in :func:`bucket_keys` (``m`` buckets)."""
    return min(np.int64((s_top - key_score(key, high)) * scale), m - 1)


@njit(cache=True)
def sort_buckets(keys, n, buckets):
    """Sort the first ``n`` keys after :func:`bucket_keys` (``buckets``, what it returned), ``n`` at
    the end of a bucket: a bucket of more than ``_INSERTION_MAX`` keys by :func:`sort_keys`, then one
    insertion sort (a key never moves past its bucket's start)."""
    ends, _, _, largest = buckets
    if largest > _INSERTION_MAX:
        start = 0
        for b in range(ends.size):
            if ends[b] > n:
                break
            if ends[b] - start > _INSERTION_MAX:
                sort_keys(keys[start:ends[b]])
            start = ends[b]
    _insertion_sort(keys[:n])


@njit(cache=True)
def repair_run(keys, a, scores, shift):
    """If a run of keys with the same high bits starts at ``a`` (sorted by index, as the sort left
    it), put it in exact (−score, index) order; returns the run's end."""
    n = keys.size
    sh = np.uint64(shift)
    low = (np.uint64(1) << sh) - np.uint64(1)
    b = a + 1
    while b < n and not (keys[b] ^ keys[a]) >> sh:
        b += 1
    if b - a > 1:
        ordered = True  # by (−score, index): the run is sorted by index already
        prev = scores[np.int64(keys[a] & low)]
        for q in range(a + 1, b):
            v = scores[np.int64(keys[q] & low)]
            ordered &= v <= prev
            prev = v
        if not ordered:
            # the images of the run's scores agree on the high bits: their low bits, above the index,
            # make exact keys (2 · shift <= 64 bits), sorted by the same sort as the keys themselves
            bits_of = scores.view(np.uint64)
            run = np.empty(b - a, dtype=np.uint64)
            for q in range(b - a):
                i = keys[a + q] & low
                run[q] = ((_image(bits_of[np.int64(i)]) & low) << sh) | i
            sort_keys(run)
            head = keys[a] & ~low
            for q in range(b - a):
                keys[a + q] = head | (run[q] & low)
    return b


@njit(cache=True)
def repair(keys, scores, shift):
    """Put sorted keys in exact (−score, index) order: keys whose high bits tie (scores equal or a
    few ulps apart) come sorted by index and are reordered by their scores (in place; rare)."""
    sh = np.uint64(shift)
    t = 1
    while t < keys.size:
        if (keys[t] ^ keys[t - 1]) >> sh:
            t += 1
        else:
            t = repair_run(keys, t - 1, scores, shift) + 1


@njit(cache=True)
def unpack(keys, scores, shift):
    """Scores and indices of sorted, repaired keys."""
    low = (np.uint64(1) << np.uint64(shift)) - np.uint64(1)
    ids = np.empty(keys.size, dtype=np.int64)
    vals = np.empty(keys.size, dtype=np.float64)
    for t in range(keys.size):
        i = np.int64(keys[t] & low)
        ids[t] = i
        vals[t] = scores[i]
    return vals, ids


@njit(cache=True)
def index_bits(n):
    """Low bits of a key that hold a sample's index, for a query of ``n`` samples."""
    shift = 1
    while (n - 1) >> shift > 0:  # (n − 1).bit_length(), at least 1 (and 1 for n = 0, not a loop forever)
        shift += 1
    return shift


@njit(cache=True)
def batch_scratch(starts, ends):
    """Work arrays of a compiled loop over the queries ``[starts[k], ends[k])``: a key buffer for
    the largest (n + 2 entries) and a loss table (one entry, see ``rank_losses.builtin_table``)."""
    n_max = 0
    for k in range(starts.size):
        n_max = max(n_max, ends[k] - starts[k])
    return np.empty(n_max + 2, dtype=np.uint64), np.zeros(1)


@njit(cache=True)
def query_keys(scores, y, n_pos, buf):
    """:func:`sorted_keys` of a small query inside a compiled loop (:func:`sort_score_keys`): the positives'
    keys sorted and repaired, the negatives' keys packed but not sorted, and the index bits; all
    views of ``buf`` (at least n + 2 entries)."""
    n = scores.size
    shift = index_bits(n)
    pos = buf[:n_pos + 1]
    neg = buf[n_pos + 1:n + 2]
    _pack(scores.view(np.uint64), y, shift, pos, neg)
    pos = pos[:-1]
    sort_score_keys(pos, shift)
    repair(pos, scores, shift)
    return pos, neg[:-1], shift


@njit(cache=True)
def positive_keys(scores, y, n_pos, buf):
    """The positives' keys of a small query, sorted and repaired (:func:`sort_score_keys`), and the index bits:
    the positives in (−score, index) order without the negatives' keys; ``buf`` has at least
    P + 1 entries."""
    n = scores.size
    shift = index_bits(n)
    high = ~((np.uint64(1) << np.uint64(shift)) - np.uint64(1))
    bits_of = scores.view(np.uint64)
    pos = buf[:n_pos + 1]
    t = 0
    for i in range(n):  # branch-free: the labels are unpredictable
        pos[t] = _key(bits_of[i], high, i)
        t += y[i]
    pos = pos[:n_pos]
    sort_score_keys(pos, shift)
    repair(pos, scores, shift)
    return pos, shift


def packed_keys(scores, y, n_pos):
    """Packed keys of the positives, in exact (−score, index) order, and of the negatives, not
    sorted, and the index bits (the positives sorted by :func:`._key_sort.sort_large`)."""
    if scores.size > _MAX_SAMPLES:
        raise ValueError(f"a query of {scores.size} samples is too large for the packed keys "
                         f"(at most {_MAX_SAMPLES}); use oracle='yue' or 'chakrabarti'")
    shift = index_bits(scores.size)
    buf = kept_keys("keys", scores.size + 2)
    pos = buf[:n_pos + 1]
    neg = buf[n_pos + 1:scores.size + 2]
    _pack(scores.view(np.uint64), y, shift, pos, neg)
    pos = pos[:-1]
    sort_large(pos, shift)
    repair(pos, scores, shift)
    return pos, neg[:-1], shift


def sorted_keys(scores, y, n_pos):
    """:func:`packed_keys` with the negatives sorted by key (runs of tied high bits still by index:
    the walk repairs them as it meets them)."""
    pos, neg, shift = packed_keys(scores, y, n_pos)
    sort_large(neg, shift)
    return pos, neg, shift


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
    pos, neg, shift = sorted_keys(scores, y, int(np.count_nonzero(y)))
    repair(neg, scores, shift)
    return (*unpack(pos, scores, shift), *unpack(neg, scores, shift))
