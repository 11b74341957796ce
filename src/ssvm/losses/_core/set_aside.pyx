"""The negatives certified to rank below every positive (AP, NDCG), set aside before the sort of QS's
sort-and-walk path (:mod:`.sort_walk`).

At a trained w most negatives score well below the positives, and the optimal ranking puts them after
the last positive (opt_j = P + 1, coefficient 0; Mohapatra et al.'s Observation 4 and Lemma 6): the
walk would sort them only to find that.  Here a bound finds most of them and takes them out of the
negatives' keys, so the sort and the walk see only the rest.

The certificate.  The walk's step for the j-th negative (score s) after k positives is
f_j(k+1) − f_j(k) = (sp[k−1] − s)·inv + d_j(k) (d_j: :c:func:`loss_step`, NDCG's from the walk's table
lt[m] = 1/log2(m)); :c:func:`best_rank` returns P + 1 when every computed step is ≥ 0.  A computed step
never falls as s falls (every rounding is monotone) or as j rises: for AP (k+j−1)(k+j) rises with j;
for NDCG the computed difference lt[m+1] − lt[m] never falls as m rises, which a test checks entry by
entry up to ``LT_MONOTONE`` entries (a larger query sets nothing aside for NDCG).  So if, at a score θ
and an order j0, every computed step k = 1..P is ≥ 0, every negative with s ≤ θ and order ≥ j0 gets
P + 1, bit for bit as best_rank gives it.

The cut.  One query (:func:`split_bottom`, before the large sort): the negatives below the lowest
positive are binned by score (``BINS`` bins between it and the lowest negative; a bin is a
non-increasing function of the score).  Setting aside the bins from b on, θ is the largest score in
them and j0 − 1 the number of negatives above them; the certificate only gets easier as b grows, so a
bisection finds the first b for which it holds.  Many small queries (:func:`sort_above_bottom`, inside
the batch's loop): the same bisection over the bucket sort's own buckets, at no extra pass.  Negatives
already sorted (:func:`sorted_bottom`: graded NDCG's per-level walks, which sort a query once for all
its levels): the bisection runs over their positions, and saves the walk, not a sort.

The set-aside is skipped when under 1/16 of the negatives lie below the lowest positive (it would save
less than its passes cost; for a large query, judged first on 64 keys spread over it), and in the batch
when the last 1/16 of the keys cannot be set aside.  The walk's result is the same with the set-aside
negatives or without them: the others' orders are unchanged, and the walk is exact on any first part of
the negatives whose full count N it is told (its ``inv`` = 2 / (P N)).
"""

from collections import namedtuple

import numpy as np

from libc.math cimport INFINITY
from libc.stdint cimport int32_t, int64_t, uint64_t

from .derivative cimport KIND_AP, KIND_NDCG_LOG2, loss_step, objective_t
from .sorting cimport (
    INSERTION_MAX,
    bucket_keys,
    buckets_t,
    key_bucket,
    low_mask,
    sort_buckets,
    sort_score_keys,
    sort_work_t,
)

__all__ = ["LT_MONOTONE", "Bound", "py_steps_hold", "py_split_bottom", "py_sort_above_bottom", "py_sorted_bottom"]

#: the 1/log2 table's computed differences never fall up to here (a test checks every entry; the first that
#: falls is near 1.43·10^7, past which a computed difference is as small as its rounding error)
LT_MONOTONE = 1 << 23
cdef int64_t LT_MONOTONE_C = 1 << 23

cdef enum:
    MIN_SHARE = 16  # set negatives aside only when at least 1/16 of them lie below the lowest positive
    BINS = 64  # score bins below the lowest positive, for the cut
    SAMPLE = 64  # split_bottom looks at this many keys before its passes


cdef inline bint set_aside_allowed(const objective_t* bound, int64_t n) noexcept nogil:
    """Whether the certificate holds for a query of ``n`` samples: AP always; NDCG while its loss part
    (lt[m + 1] − lt[m])·scale, computed, never falls as m rises — true of the kept 1/log2 table up to
    ``LT_MONOTONE`` entries (checked by a test), not proved beyond."""
    if bound.kind == KIND_AP:
        return True
    return bound.kind == KIND_NDCG_LOG2 and bound.lt != NULL and n + 2 <= min(bound.lt_size, LT_MONOTONE_C)


cdef bint steps_hold(const objective_t* bound, double theta, int64_t j0) noexcept nogil:
    """Whether every computed step k = 1..P at score ``theta`` and order ``j0`` is >= 0: then every
    negative with score <= ``theta`` and order >= ``j0`` ranks below every positive."""
    cdef const double* sp = bound.sp
    cdef int64_t k
    for k in range(bound.n_pos, 0, -1):  # a failing check usually fails at the last positive: first
        if not ((sp[k - 1] - theta) * bound.inv + loss_step(bound, k, j0) >= 0.0):
            return False
    return True


cdef inline void rank_last(const uint64_t* keys, int64_t n, int64_t shift, double* c) noexcept nogil:
    """Coefficient 0 in ``c`` for the negatives of ``keys``, set aside: they rank below every positive."""
    cdef uint64_t low = low_mask(shift)
    cdef int64_t t
    for t in range(n):
        c[<int64_t>(keys[t] & low)] = 0.0


cdef int64_t sorted_bottom(const uint64_t* neg, int64_t n, int64_t shift, const double* scores,
                           const objective_t* bound, double* c) noexcept nogil:
    """For negatives' keys already sorted in exact (−score, index) order: how many lead before the first one
    certified to rank below every positive (``n`` when none is), by a bisection over the positions — a
    negative at position m has order m + 1 and the largest score of those from m on; the keys from the cut
    on get coefficient 0 in ``c``."""
    if n == 0 or not set_aside_allowed(bound, n + bound.n_pos):
        return n
    cdef uint64_t low = low_mask(shift)
    cdef int64_t lo = 0
    cdef int64_t hi = n  # the first position from which the certificate holds is in [lo, hi] (hi: none)
    cdef int64_t mid
    while lo < hi:
        mid = (lo + hi) // 2
        if steps_hold(bound, scores[<int64_t>(neg[mid] & low)], mid + 1):
            hi = mid
        else:
            lo = mid + 1
    rank_last(neg + lo, n - lo, shift, c)
    return lo


cdef int64_t split_bottom(uint64_t* neg, int64_t n, int64_t shift, const double* scores, const objective_t* bound,
                          double* c) noexcept nogil:
    """Move the negatives' keys (unsorted) certified to rank below every positive (see the module) out of the
    front of ``neg`` and return how many keys are left at the front (``n`` when none was set aside).  When
    some are set aside, every negative's coefficient in ``c`` is written 0 (the walk overwrites the kept
    ones'); the positives' are not touched."""
    cdef int64_t n_pos = bound.n_pos
    if not set_aside_allowed(bound, n + n_pos):
        return n
    cdef uint64_t low = low_mask(shift)
    cdef double last = bound.sp[n_pos - 1]
    cdef int64_t step, seen, t, b
    cdef double v
    if n >= SAMPLE * MIN_SHARE:  # a look at every (n / 64)-th key first: too few below, no passes
        step = n // SAMPLE
        seen = 0
        t = 0
        while t < step * SAMPLE:
            seen += scores[<int64_t>(neg[t] & low)] < last
            t += step
        if seen * MIN_SHARE < SAMPLE // 2:
            return n
    cdef double lowest = INFINITY
    cdef int64_t n_below = 0
    for t in range(n):
        v = scores[<int64_t>(neg[t] & low)]
        if v < lowest:
            lowest = v
        n_below += v < last
    if n_below * MIN_SHARE < n:  # (else one negative at least lies below: lowest < last)
        return n
    cdef double scale = BINS / (last - lowest)
    if not (0.0 < scale and scale < INFINITY):  # a span past the floats, or too small for 64 bins (subnormal)
        return n
    cdef int64_t count[BINS]
    cdef double top[BINS]
    cdef int64_t above[BINS + 1]  # above[b]: negatives above bin b
    for b in range(BINS):
        count[b] = 0
        top[b] = -INFINITY
    for t in range(n):
        v = scores[<int64_t>(neg[t] & low)]
        if v < last:
            b = <int64_t>((last - v) * scale)  # never falls as v falls
            if b > BINS - 1:
                b = BINS - 1
            count[b] += 1
            if v > top[b]:
                top[b] = v
    above[0] = n - n_below
    for b in range(BINS):
        above[b + 1] = above[b] + count[b]
    for b in range(BINS - 2, -1, -1):  # top[b]: the largest score in bins b on (the last bin holds
        if top[b + 1] > top[b]:          # the lowest negative, so every top is a score)
            top[b] = top[b + 1]
    cdef int64_t lo = 0
    cdef int64_t hi = BINS  # the first bin from which the certificate holds is in [lo, hi] (hi: none)
    cdef int64_t mid
    while lo < hi:
        mid = (lo + hi) // 2
        if steps_hold(bound, top[mid], above[mid] + 1):
            hi = mid
        else:
            lo = mid + 1
    if lo == BINS:
        return n
    cdef double theta = top[lo]
    cdef int64_t kept = 0
    cdef uint64_t key
    cdef int64_t i
    for t in range(n):  # branch-free: which keys stay is unpredictable
        key = neg[t]
        i = <int64_t>(key & low)
        c[i] = 0.0
        neg[kept] = key
        kept += scores[i] > theta
    return kept


cdef inline int64_t bucket_start(const uint64_t* keys, uint64_t high, const buckets_t* buckets, int64_t p,
                                 int64_t* end) noexcept nogil:
    """Start (returned) and end (into ``end``) of the bucket of the key at position ``p``."""
    cdef int64_t b = key_bucket(keys[p], high, buckets.s_top, buckets.scale, buckets.m)
    end[0] = buckets.ends[b]
    return buckets.ends[b - 1] if b else 0


cdef bint cut_holds(const uint64_t* keys, uint64_t high, const buckets_t* buckets, int64_t p, const double* scores,
                    const objective_t* bound) noexcept nogil:
    """Whether the keys from the start of position ``p``'s bucket on all rank below every positive: their
    largest score is the largest in that bucket (later buckets hold smaller ones)."""
    cdef int64_t end
    cdef int64_t start = bucket_start(keys, high, buckets, p, &end)
    cdef uint64_t low = ~high
    cdef double theta = -INFINITY
    cdef double v
    cdef int64_t t
    for t in range(start, end):
        v = scores[<int64_t>(keys[t] & low)]
        if v > theta:
            theta = v
    return steps_hold(bound, theta, start + 1)


cdef int64_t bucket_cut(const uint64_t* keys, int64_t n, int64_t shift, const buckets_t* buckets,
                        const double* scores, const objective_t* bound) noexcept nogil:
    """The first bucket start p from which the keys rank below every positive, or ``n``: a bisection over
    positions, each tried at the start of its key's bucket (certificate: the largest score in the bucket,
    order p + 1); no cut when the last 1/16 of the keys fail."""
    if buckets.m == 1:
        return n
    cdef uint64_t high = ~low_mask(shift)
    cdef int64_t lo = 0
    cdef int64_t hi = n - n // MIN_SHARE  # positions; the cut, if any, is at or before hi's bucket
    cdef int64_t mid, end
    if not cut_holds(keys, high, buckets, hi, scores, bound):
        return n
    while lo < hi:
        mid = (lo + hi) // 2
        if cut_holds(keys, high, buckets, mid, scores, bound):
            hi = mid
        else:
            lo = mid + 1
    return bucket_start(keys, high, buckets, lo, &end)


cdef int64_t sort_above_bottom(uint64_t* neg, int64_t n, int64_t shift, const double* scores,
                               const objective_t* bound, double* c, sort_work_t* work) noexcept nogil:
    """:c:func:`sort_score_keys` of the negatives' keys, setting aside those certified to rank below every
    positive: they end up after the returned count, unsorted, with ``c`` 0; the keys before it are sorted.
    The cut comes from the sort's own buckets, at no extra pass: a bucket start p (a key's bucket never
    falls as the key rises) sets aside the keys from p on, whose scores are at most the largest in p's
    bucket, at orders > p."""
    if n <= INSERTION_MAX or not set_aside_allowed(bound, n + bound.n_pos):
        sort_score_keys(neg, n, shift, work)
        return n
    cdef buckets_t buckets = bucket_keys(neg, n, shift, work)
    cdef int64_t kept = bucket_cut(neg, n, shift, &buckets, scores, bound)
    rank_last(neg + kept, n - kept, shift, c)
    sort_buckets(neg, kept, &buckets)
    return kept


# ---- from Python, for the tests ----

Bound = namedtuple("Bound", ["sp", "inv", "kind", "lt", "scale"])
Bound.__doc__ = """The walk's steps for the certificate, from Python (an ``objective_t``): the positives' scores in
decreasing order, 2/(PN), the loss (``KIND_AP`` or ``KIND_NDCG_LOG2``), the 1/log2 table and NDCG's scale 1/Σ D
(0 for AP)."""


cdef objective_t _bound_of(bound, const double[::1] sp, const double[::1] lt):
    cdef objective_t o
    o.sp = &sp[0]
    o.inv = float(bound.inv)
    o.kind = int(bound.kind)
    o.table = NULL
    o.n_pos = sp.shape[0]
    o.lt = &lt[0] if o.kind == KIND_NDCG_LOG2 else NULL
    o.lt_size = lt.shape[0] if o.kind == KIND_NDCG_LOG2 else 0
    o.scale = float(bound.scale)
    return o


def _arrays(bound):
    sp = np.ascontiguousarray(bound.sp, dtype=np.float64)
    lt = np.ascontiguousarray(bound.lt, dtype=np.float64)
    return sp, lt if lt.size else np.zeros(1)


def py_steps_hold(bound, double theta, int64_t j0):
    """:c:func:`steps_hold` from Python (``bound``: a :class:`Bound`).

    Returns
    -------
    bool
    """
    sp, lt = _arrays(bound)
    cdef objective_t o = _bound_of(bound, sp, lt)
    return bool(steps_hold(&o, theta, j0))


def py_sorted_bottom(const uint64_t[::1] neg, int64_t shift, const double[::1] scores, bound, double[::1] c):
    """:c:func:`sorted_bottom` from Python: how many sorted negatives' keys lead before the cut.

    Returns
    -------
    int
    """
    sp, lt = _arrays(bound)
    cdef objective_t o = _bound_of(bound, sp, lt)
    return sorted_bottom(&neg[0] if neg.shape[0] else NULL, neg.shape[0], shift, &scores[0], &o, &c[0])


def py_split_bottom(uint64_t[::1] neg, int64_t shift, const double[::1] scores, bound, double[::1] c):
    """:c:func:`split_bottom` from Python: the negatives' keys kept at the front of ``neg``.

    Returns
    -------
    int
    """
    sp, lt = _arrays(bound)
    cdef objective_t o = _bound_of(bound, sp, lt)
    return split_bottom(&neg[0] if neg.shape[0] else NULL, neg.shape[0], shift, &scores[0], &o, &c[0])


def py_sort_above_bottom(uint64_t[::1] neg, int64_t shift, const double[::1] scores, bound, double[::1] c):
    """:c:func:`sort_above_bottom` from Python: the negatives' keys kept (sorted) at the front of ``neg``.

    Returns
    -------
    int
    """
    sp, lt = _arrays(bound)
    cdef objective_t o = _bound_of(bound, sp, lt)
    cdef sort_work_t work
    return sort_above_bottom(&neg[0] if neg.shape[0] else NULL, neg.shape[0], shift, &scores[0], &o, &c[0], &work)
