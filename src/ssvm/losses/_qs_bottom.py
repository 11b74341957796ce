"""The negatives certified to rank below every positive (AP, NDCG), set aside before the walk's sort.

At a trained w most negatives score well below the positives, and the optimal ranking puts them
after the last positive (opt_j = P + 1, coefficient 0): the walk would sort them only to find that.
Here a bound finds most of them and takes them out of the negatives' keys, so the sort and the walk
see only the rest.

The certificate.  The walk's step for the j-th negative (score s) after k positives is
f_j(k+1) − f_j(k) = (sp[k−1] − s)·inv + d_j(k), with d_j(k) = −k / (P (k+j−1)(k+j)) for AP and
(lt[k+j+1] − lt[k+j]) / Σ D for NDCG (lt[m] = 1/log2(m), the walk's table); best_rank
(:func:`~._rank_kernels.best_rank`) returns P + 1 when every computed step is ≥ 0.  A computed
step never falls as s falls (every rounding is monotone) or as j rises: for AP (k+j−1)(k+j) rises
with j; for NDCG the computed difference lt[m+1] − lt[m] never falls as m rises, which a test checks
entry by entry up to ``LT_MONOTONE`` entries (a larger query sets nothing aside for NDCG).
So if, at a score θ and an order j0, every computed step k = 1..P is ≥ 0, every negative with
s ≤ θ and order ≥ j0 gets P + 1, bit for bit as best_rank gives it.

The cut.  One query (:func:`split_bottom`, before numpy's sort): the negatives below the lowest
positive are binned by score (``_BINS`` bins between it and the lowest negative; a bin is a
non-increasing function of the score).  Setting aside the bins from b on, θ is the largest score in
them and j0 − 1 the number of negatives above them; the certificate only gets easier as b grows, so
a bisection finds the first b for which it holds.  Many small queries (:func:`sort_above_bottom`,
inside the batch's loop): the same bisection over the bucket sort's own buckets, at no extra pass.
Negatives already sorted (:func:`sorted_bottom`: graded NDCG's per-level walks, which sort a query
once for all its levels): the bisection runs over their positions, and saves the walk, not a sort.

The set-aside is skipped when under 1/16 of the negatives lie below the lowest positive (it would
save less than its passes cost; for a large query, judged first on 64 keys spread over it), and in
the batch when the last 1/16 of the keys cannot be set aside.  The walk's result is the same with
the set-aside negatives or without them: the others' orders are unchanged, and the walk is exact on
any first part of the negatives whose full count N it is told (its ``inv`` = 2 / (P N)).
"""

from collections import namedtuple

import numpy as np
from numba import njit

from ._packed_keys import _INSERTION_MAX, bucket_keys, key_bucket, sort_buckets, sort_score_keys
from ._rank_kernels import loss_step
from .rank_losses import KIND_AP, KIND_NDCG_LOG2

__all__ = ["Bound", "LT_MONOTONE", "split_bottom", "sort_above_bottom", "sorted_bottom", "steps_hold",
           "set_aside_allowed", "walk_bound"]

#: the 1/log2 table's computed differences never fall up to here (a test checks every entry; the first
#: that falls is near 1.43·10^7, past which a computed difference is as small as its rounding error)
LT_MONOTONE = 1 << 23

_MIN_SHARE = 16  # set negatives aside only when at least 1/16 of them lie below the lowest positive
_BINS = 64  # score bins below the lowest positive, for the cut
_SAMPLE = 64  # split_bottom looks at this many keys before its passes


Bound = namedtuple("Bound", ["sp", "inv", "kind", "lt", "scale"])
Bound.__doc__ = """The walk's steps for the certificate: the positives' scores in decreasing order, 2/(PN),
the loss (``KIND_AP`` or ``KIND_NDCG_LOG2``), the 1/log2 table and NDCG's scale 1/Σ D (0 for AP)."""


@njit(cache=True)
def walk_bound(sp, n_neg, kind, table, lt):
    """The :class:`Bound` of a query with positives' scores ``sp`` (decreasing) and ``n_neg``
    negatives, for the loss ``kind`` with its kernel table (NDCG: [1 / Σ D]) and the 1/log2 table
    ``lt``: the one place the walk's 2/(PN) and scale are computed, so that the certificate and the
    walk step with the same numbers."""
    return Bound(sp, 2.0 / (sp.size * n_neg), kind, lt, table[0] if kind == KIND_NDCG_LOG2 else 0.0)


@njit(cache=True)
def set_aside_allowed(bound, n):
    """Whether the certificate holds for a query of ``n`` samples: AP always; NDCG while its loss
    part (lt[m + 1] − lt[m])·scale, computed, never falls as m rises — true of the kept 1/log2
    table up to ``LT_MONOTONE`` entries (checked by a test), not proved beyond."""
    return bound.kind == KIND_AP or (bound.kind == KIND_NDCG_LOG2 and n + 2 <= min(bound.lt.size, LT_MONOTONE))


@njit(cache=True)
def steps_hold(bound, theta, j0):
    """Whether every computed step k = 1..P at score ``theta`` and order ``j0`` is >= 0 (``bound``:
    :class:`Bound`): then every negative with score <= ``theta`` and order >= ``j0`` ranks below
    every positive."""
    sp = bound.sp
    n_pos = sp.size
    for k in range(n_pos, 0, -1):  # a failing check usually fails at the last positive: first
        if bound.kind == KIND_AP:
            d = loss_step(KIND_AP, bound.lt, n_pos, k, j0)
        else:
            d = (bound.lt[k + j0 + 1] - bound.lt[k + j0]) * bound.scale
        if not (sp[k - 1] - theta) * bound.inv + d >= 0.0:
            return False
    return True


@njit(cache=True)
def _rank_last(keys, shift, c):
    """Coefficient 0 in ``c`` for the negatives of ``keys``, set aside: they rank below every
    positive."""
    low = (np.uint64(1) << np.uint64(shift)) - np.uint64(1)
    for t in range(keys.size):
        c[np.int64(keys[t] & low)] = 0.0


@njit(cache=True)
def sorted_bottom(neg, shift, scores, bound, c):
    """For negatives' keys already sorted in exact (−score, index) order: how many lead before the
    first one certified to rank below every positive (``neg.size`` when none is), by a bisection
    over the positions — a negative at position m has order m + 1 and the largest score of those
    from m on; the keys from the cut on get coefficient 0 in ``c``.

    ``scores``: the query's scores; ``bound``: its steps (:class:`Bound`); ``shift``: the keys'
    index bits."""
    n = neg.size
    if n == 0 or not set_aside_allowed(bound, n + bound.sp.size):
        return n
    low = (np.uint64(1) << np.uint64(shift)) - np.uint64(1)
    lo, hi = 0, n  # the first position from which the certificate holds is in [lo, hi] (hi: none)
    while lo < hi:
        mid = (lo + hi) // 2
        if steps_hold(bound, scores[np.int64(neg[mid] & low)], mid + 1):
            hi = mid
        else:
            lo = mid + 1
    _rank_last(neg[lo:], shift, c)
    return lo


@njit(cache=True)
def split_bottom(neg, shift, scores, bound, c):
    """Move the negatives' keys (unsorted) certified to rank below every positive (see the module)
    out of the front of ``neg`` and return how many keys are left at the front (``neg.size`` when
    none was set aside).  When some are set aside, every negative's coefficient in ``c`` is written
    0 (the walk overwrites the kept ones'); the positives' are not touched.

    ``scores``: the query's scores; ``bound``: its steps (:class:`Bound`); ``shift``: the keys'
    index bits."""
    n = neg.size
    sp = bound.sp
    n_pos = sp.size
    if not set_aside_allowed(bound, n + n_pos):
        return n
    low = (np.uint64(1) << np.uint64(shift)) - np.uint64(1)
    last = sp[n_pos - 1]
    if n >= _SAMPLE * _MIN_SHARE:  # a look at every (n / 64)-th key first: too few below, no passes
        step = n // _SAMPLE
        seen = 0
        for t in range(0, step * _SAMPLE, step):
            seen += scores[np.int64(neg[t] & low)] < last
        if seen * _MIN_SHARE < _SAMPLE // 2:
            return n
    lowest = np.inf
    n_below = 0
    for t in range(n):
        v = scores[np.int64(neg[t] & low)]
        lowest = min(lowest, v)
        n_below += v < last
    if n_below * _MIN_SHARE < n:  # (else one negative at least lies below: lowest < last)
        return n
    scale = _BINS / (last - lowest)
    if not 0.0 < scale < np.inf:  # a span past the floats, or too small for 64 bins (subnormal)
        return n
    count = np.zeros(_BINS, dtype=np.int64)
    top = np.full(_BINS, -np.inf)
    for t in range(n):
        v = scores[np.int64(neg[t] & low)]
        if v < last:
            b = min(np.int64((last - v) * scale), _BINS - 1)  # never falls as v falls
            count[b] += 1
            top[b] = max(top[b], v)
    above = np.empty(_BINS + 1, dtype=np.int64)  # above[b]: negatives above bin b
    above[0] = n - n_below
    for b in range(_BINS):
        above[b + 1] = above[b] + count[b]
    for b in range(_BINS - 2, -1, -1):  # top[b]: the largest score in bins b on (the last bin holds
        top[b] = max(top[b], top[b + 1])  # the lowest negative, so every top is a score)
    lo, hi = 0, _BINS  # the first bin from which the certificate holds is in [lo, hi] (hi: none)
    while lo < hi:
        mid = (lo + hi) // 2
        if steps_hold(bound, top[mid], above[mid] + 1):
            hi = mid
        else:
            lo = mid + 1
    if lo == _BINS:
        return n
    theta = top[lo]
    kept = 0
    for t in range(n):  # branch-free: which keys stay is unpredictable
        key = neg[t]
        i = np.int64(key & low)
        c[i] = 0.0
        neg[kept] = key
        kept += scores[i] > theta
    return kept


@njit(cache=True)
def sort_above_bottom(neg, shift, scores, bound, c):
    """:func:`~._packed_keys.sort_score_keys` of the negatives' keys, setting aside those certified
    to rank below every positive: they end up after the returned count, unsorted, with ``c`` 0; the
    keys before it are sorted.  The cut comes from the sort's own buckets, at no extra pass: a
    bucket start p (a key's bucket never falls as the key rises) sets aside the keys from p on,
    whose scores are at most the largest in p's bucket, at orders > p.

    ``scores``: the query's scores; ``bound``: its steps (:class:`Bound`)."""
    n = neg.size
    if n <= _INSERTION_MAX or not set_aside_allowed(bound, n + bound.sp.size):
        sort_score_keys(neg, shift)
        return n
    buckets = bucket_keys(neg, shift)
    kept = _bucket_cut(neg, shift, buckets, scores, bound)
    _rank_last(neg[kept:], shift, c)
    sort_buckets(neg, kept, buckets)
    return kept


@njit(cache=True)
def _bucket_cut(keys, shift, buckets, scores, bound):
    """The first bucket start p from which the keys rank below every positive, or ``keys.size``:
    a bisection over positions, each tried at the start of its key's bucket (certificate: the
    largest score in the bucket, order p + 1); no cut when the last 1/16 of the keys fail."""
    ends, s_top, scale, _ = buckets
    n = keys.size
    m = ends.size
    if m == 1:
        return n
    high = ~((np.uint64(1) << np.uint64(shift)) - np.uint64(1))
    lo, hi = 0, n - n // _MIN_SHARE  # positions; the cut, if any, is at or before hi's bucket
    if not _cut_holds(keys, high, ends, s_top, scale, hi, scores, bound):
        return n
    while lo < hi:
        mid = (lo + hi) // 2
        if _cut_holds(keys, high, ends, s_top, scale, mid, scores, bound):
            hi = mid
        else:
            lo = mid + 1
    return _bucket_of(keys, high, ends, s_top, scale, lo)[0]


@njit(cache=True, inline="always")
def _bucket_of(keys, high, ends, s_top, scale, p):
    """Start and end of the bucket of the key at position ``p``."""
    b = key_bucket(keys[p], high, s_top, scale, ends.size)
    return ends[b - 1] if b else 0, ends[b]


@njit(cache=True)
def _cut_holds(keys, high, ends, s_top, scale, p, scores, bound):
    """Whether the keys from the start of position ``p``'s bucket on all rank below every positive:
    their largest score is the largest in that bucket (later buckets hold smaller ones)."""
    start, end = _bucket_of(keys, high, ends, s_top, scale, p)
    low = ~high
    theta = -np.inf
    for t in range(start, end):
        theta = max(theta, scores[np.int64(keys[t] & low)])
    return steps_hold(bound, theta, start + 1)
