"""Algorithm 2 of Mohapatra et al. (``OptRanks``): recursive SELECT over a block of negatives.

Works on a private buffer of negative scores and their original indices, iteratively with an
explicit stack.  A block whose interval of possible interleaving ranks [ℓ⁺, r⁺] has collapsed to
one value is assigned at once, without touching it again; otherwise a pivot splits it by a
three-way SELECT ``> v | == v | < v`` (the negatives are never sorted), the opt of the first and
last negative equal to the pivot is found by scanning [ℓ⁺, r⁺] (largest argmax), and both sides
recurse with the narrowed intervals (Observation 4).  Ties among negatives are ordered by index
inside the ``== v`` block.  Correctness never depends on the pivot: small blocks take the median of
three random elements; large ones a pivot predicted, from a random sample, to make one side collapse
at once.  The random positions (a fixed-seed xorshift) give the expected running time of randomised
quickselect whatever the order of the input (sorted, reversed, organ-pipe, ...); the result does not
depend on them.
"""

from collections import namedtuple

import numpy as np
from numba import njit

from ._packed_keys import sort_keys
from ._rank_kernels import best_rank

__all__ = ["Work", "opt_ranks", "assign_block", "chain_opts", "new_work"]

_SAMPLE = 64
_SAMPLE_MIN = 1024
_MARGIN = 2
_SEED = 0x9E3779B97F4A7C15

Work = namedtuple("Work", ["stack", "sample", "state"])
Work.__doc__ = """Work buffers of :func:`opt_ranks`: its explicit stack (int64 (128, 4): O(log N) entries, the
smaller side of every split on top), the pivot sample (float64 (64,)) and the xorshift state (uint64 (1,))."""


@njit(cache=True)
def new_work():
    """:class:`Work` buffers of :func:`opt_ranks`, allocated once per oracle call and shared by all
    its blocks."""
    state = np.empty(1, dtype=np.uint64)
    state[0] = _SEED
    return Work(np.empty((128, 4), dtype=np.int64), np.empty(_SAMPLE, dtype=np.float64), state)


@njit(cache=True, inline="always")
def _rand_below(state, n):
    """A pseudo-random integer in [0, n) (xorshift64; ``state`` is a uint64 array of length 1)."""
    x = state[0]
    x ^= x << np.uint64(13)
    x ^= x >> np.uint64(7)
    x ^= x << np.uint64(17)
    state[0] = x
    return np.int64(x % np.uint64(n))


@njit(cache=True)
def assign_block(ids, lo, hi, r, obj, out):
    """Rank ``r`` for the negatives ``ids[lo:hi]``: their coefficient 2(P + 1 − r)/(PN) into
    ``out.c`` (a :class:`Result`) and their number into ``out.counts[r − 1]``."""
    coef = (obj.n_pos + 1 - r) * obj.inv
    c = out.c
    for t in range(lo, hi):
        c[ids[t]] = coef
    out.counts[r - 1] += hi - lo


@njit(cache=True)
def _median3(a, b, c):
    if a < b:
        if b < c:
            return b
        return c if a < c else a
    if a < c:
        return a
    return c if b < c else b


@njit(cache=True, inline="always")
def _random_median3(vals, lo, n, state):
    return _median3(vals[lo + _rand_below(state, n)], vals[lo + _rand_below(state, n)],
                    vals[lo + _rand_below(state, n)])


@njit(cache=True)
def _partition3(vals, ids, lo, hi, v):
    """Three-way SELECT of vals[lo:hi] (descending): > v, == v, < v; returns (a, b)."""
    lt = lo
    i = lo
    gt = hi - 1
    while i <= gt:
        x = vals[i]
        if x > v:
            vals[i] = vals[lt]
            vals[lt] = x
            t = ids[i]
            ids[i] = ids[lt]
            ids[lt] = t
            lt += 1
            i += 1
        elif x < v:
            vals[i] = vals[gt]
            vals[gt] = x
            t = ids[i]
            ids[i] = ids[gt]
            ids[gt] = t
            gt -= 1
        else:
            i += 1
    return lt, gt + 1


@njit(cache=True)
def chain_opts(s_pt, j_pt, left, right, obj, ranks):
    """opts of a chain of (score, order) points along which s never rises and j never falls, all
    known to lie in [left, right], for the :class:`Objective` ``obj``; written into ``ranks``.

    Their opts are non-decreasing, so the divide and conquer of Algorithm 2 finds them: each is
    searched only between the opts of the nearest computed points before and after it, and a
    stretch whose bracket has collapsed is filled at once.
    """
    stack = np.empty((64, 4), dtype=np.int64)
    top = _push(stack, np.int64(0), np.int64(0), s_pt.size, left, right)
    while top > 0:
        top -= 1
        lo = stack[top, 0]
        hi = stack[top, 1]
        ll = stack[top, 2]
        rr = stack[top, 3]
        if lo >= hi:
            continue
        if ll == rr:
            for t in range(lo, hi):
                ranks[t] = ll
            continue
        mid = (lo + hi) >> 1
        o = best_rank(s_pt[mid], j_pt[mid], ll, rr, obj)
        ranks[mid] = o
        top = _push(stack, top, lo, mid, ll, o)
        top = _push(stack, top, mid + 1, hi, o, rr)


@njit(cache=True)
def _equal_block(ids, a, b, joff, v, left, right, obj, out):
    """Ranks of equal scores at buffer positions a..b-1 (orders j = joff+a+1 .. joff+b), whose
    first and last have ranks ``left`` and ``right``."""
    if left == right:
        assign_block(ids, a, b, left, obj, out)
        return
    sort_keys(ids[a:b].view(np.uint64))  # equal scores: the (−score, index) order is the index order
    assign_block(ids, a, a + 1, left, obj, out)
    assign_block(ids, b - 1, b, right, obj, out)
    m = b - a - 2  # the inner ones: a chain of one score and consecutive orders
    ranks = np.empty(m, dtype=np.int64)
    s_pt = np.empty(m, dtype=np.float64)
    j_pt = np.empty(m, dtype=np.int64)
    for t in range(m):
        s_pt[t] = v
        j_pt[t] = joff + a + 2 + t
    chain_opts(s_pt, j_pt, left, right, obj, ranks)
    for t in range(m):
        assign_block(ids, a + 1 + t, a + 2 + t, ranks[t], obj, out)


@njit(cache=True)
def _push(stack, top, lo, hi, ll, rr):
    stack[top, 0] = lo
    stack[top, 1] = hi
    stack[top, 2] = ll
    stack[top, 3] = rr
    return top + 1


@njit(cache=True)
def _pivot(vals, lo, hi, joff, ll, rr, obj, work):
    """Pivot value for the block vals[lo:hi] with rank interval [ll, rr].

    Correctness never depends on it (the pivot's own opt is computed exactly).  Small blocks: median
    of three random elements.  Large blocks: a random sample predicts (with estimated orders) which
    pivot makes one side collapse at once — below it everything at rr, or above it everything at
    ll — and the pivot leaving the smaller remainder is taken; the median of three random elements
    if that remainder exceeds half.
    """
    sample = work.sample
    state = work.state
    n = hi - lo
    if n < _SAMPLE_MIN:
        return _random_median3(vals, lo, n, state)
    m = _SAMPLE
    for k in range(m):  # a random sample, in descending order (insertion: it is small)
        v = vals[lo + _rand_below(state, n)]
        t = k - 1
        while t >= 0 and sample[t] < v:
            sample[t + 1] = sample[t]
            t -= 1
        sample[t + 1] = v
    smp = sample
    # smallest q predicted at rr (predictions are monotone in q)
    a = 0
    b = m
    while a < b:
        q = (a + b) >> 1
        j = joff + lo + 1 + int((q + 0.5) * n / m)
        if best_rank(smp[q], j, ll, rr, obj) == rr:
            b = q
        else:
            a = q + 1
    q_right = a + _MARGIN  # pivot there: the part below it should collapse at rr
    # largest q predicted at ll
    a = -1
    b = m - 1
    while a < b:
        q = (a + b + 1) >> 1
        j = joff + lo + 1 + int((q + 0.5) * n / m)
        if best_rank(smp[q], j, ll, rr, obj) == ll:
            a = q
        else:
            b = q - 1
    q_left = a - _MARGIN  # pivot there: the part above it should collapse at ll
    rest_right = q_right if q_right < m else m  # sample share left to recurse on
    rest_left = m - q_left if q_left >= 0 else m
    if rest_right <= rest_left and 2 * rest_right <= m:
        return smp[q_right]
    if 2 * rest_left <= m:
        return smp[q_left]
    return _random_median3(vals, lo, n, state)


@njit(cache=True)
def opt_ranks(vals, ids, lo0, hi0, joff, left, right, obj, out, work):
    """Algorithm 2 on buffer positions lo0..hi0-1 of (``vals``, ``ids``) holding the negatives of
    orders j = joff + lo0 + 1 .. joff + hi0, whose ranks lie in [left, right]: their coefficients and
    counts into ``out`` (:class:`Result`) for the :class:`Objective` ``obj``; ``work`` from
    :func:`new_work`."""
    stack = work.stack
    top = _push(stack, np.int64(0), lo0, hi0, left, right)
    while top > 0:
        top -= 1
        lo = stack[top, 0]
        hi = stack[top, 1]
        ll = stack[top, 2]
        rr = stack[top, 3]
        if ll == rr:  # the interval collapsed: assign the block without touching it again
            assign_block(ids, lo, hi, ll, obj, out)
            continue
        v = _pivot(vals, lo, hi, joff, ll, rr, obj, work)
        a, b = _partition3(vals, ids, lo, hi, v)
        o_first = best_rank(v, joff + a + 1, ll, rr, obj)
        o_last = o_first
        if b - a > 1:
            o_last = best_rank(v, joff + b, o_first, rr, obj)
        _equal_block(ids, a, b, joff, v, o_first, o_last, obj, out)
        # the smaller side goes on top, so the stack stays O(log N)
        if a - lo > hi - b:
            if lo < a:
                top = _push(stack, top, lo, a, ll, o_first)
            if b < hi:
                top = _push(stack, top, b, hi, o_last, rr)
        else:
            if b < hi:
                top = _push(stack, top, b, hi, o_last, rr)
            if lo < a:
                top = _push(stack, top, lo, a, ll, o_first)
