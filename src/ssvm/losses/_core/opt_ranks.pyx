"""Algorithm 2 of Mohapatra et al. (``OptRanks``): recursive SELECT over a block of negatives, and the
same divide and conquer over a chain of (score, order) points.

Both rest on Observation 4 (condition C3): the optimal rank opt(s, j) of a negative with score s at
order j (its place in the (−score, index) order) is non-increasing in s and non-decreasing in j.

:func:`opt_ranks` works on a buffer of negative scores and their indices, iteratively with an
explicit stack.  A block whose interval of possible interleaving ranks [ℓ⁺, r⁺] has collapsed to one
value is assigned at once, without touching it again; otherwise a pivot splits it by a three-way
SELECT ``> v | == v | < v`` (the negatives are never sorted), the opt of the first and last negative
equal to the pivot is found by scanning [ℓ⁺, r⁺] (largest argmax, :c:func:`best_rank`), and both
sides recurse with the narrowed intervals.  Ties among negatives are ordered by index inside the
``== v`` block.  Correctness never depends on the pivot: small blocks take the median of three random
elements; large ones a pivot predicted, from a random sample, to make one side collapse at once.  The
random positions (a fixed-seed xorshift) give the expected running time of randomised quickselect
whatever the order of the input (sorted, reversed, organ-pipe, ...); the result does not depend on them.

:func:`chain_opts` finds the opts of points along which s never rises and j never falls (so their
opts are non-decreasing): each is searched only between the opts of the nearest computed points
before and after it, and a stretch whose bracket has collapsed is filled at once.
"""

from libc.stdint cimport int64_t, uint64_t

from .derivative cimport best_rank, objective_t, result_t
from .sorting cimport sort_keys

cdef enum:
    SAMPLE_MIN = 1024  # blocks of fewer negatives take the median of three random ones
    MARGIN = 2

cdef uint64_t SEED = 0x9E3779B97F4A7C15


cdef void new_work(opt_work_t* work) noexcept nogil:
    """Reset ``work`` for an oracle call: the random positions start from the fixed seed."""
    work.state = SEED


cdef inline int64_t rand_below(opt_work_t* work, int64_t n) noexcept nogil:
    """A pseudo-random integer in [0, n) (xorshift64)."""
    cdef uint64_t x = work.state
    x ^= x << 13
    x ^= x >> 7
    x ^= x << 17
    work.state = x
    return <int64_t>(x % <uint64_t>n)


cdef void assign_block(const int64_t* ids, int64_t lo, int64_t hi, int64_t r, const objective_t* obj,
                       result_t* out) noexcept nogil:
    """Rank ``r`` for the negatives ``ids[lo:hi]``: their coefficient 2(P + 1 − r)/(PN) into ``out.c`` and
    their number into ``out.counts[r − 1]``."""
    cdef double coef = <double>(obj.n_pos + 1 - r) * obj.inv
    cdef int64_t t
    for t in range(lo, hi):
        out.c[ids[t]] = coef
    out.counts[r - 1] += hi - lo


cdef inline double median3(double a, double b, double c) noexcept nogil:
    if a < b:
        if b < c:
            return b
        return c if a < c else a
    if a < c:
        return a
    return c if b < c else b


cdef inline double random_median3(const double* vals, int64_t lo, int64_t n, opt_work_t* work) noexcept nogil:
    cdef double a = vals[lo + rand_below(work, n)]
    cdef double b = vals[lo + rand_below(work, n)]
    cdef double c = vals[lo + rand_below(work, n)]
    return median3(a, b, c)


cdef inline int64_t partition3(double* vals, int64_t* ids, int64_t lo, int64_t hi, double v,
                               int64_t* end) noexcept nogil:
    """Three-way SELECT of vals[lo:hi] (descending): > v, == v, < v; returns the first == v, the first < v
    into ``end``."""
    cdef int64_t lt = lo
    cdef int64_t i = lo
    cdef int64_t gt = hi - 1
    cdef double x
    cdef int64_t t
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
    end[0] = gt + 1
    return lt


cdef inline int64_t push(int64_t* stack, int64_t top, int64_t lo, int64_t hi, int64_t ll, int64_t rr) noexcept nogil:
    stack[4 * top] = lo
    stack[4 * top + 1] = hi
    stack[4 * top + 2] = ll
    stack[4 * top + 3] = rr
    return top + 1


cdef void chain_opts(const double* s_pt, const int64_t* j_pt, int64_t n, int64_t left, int64_t right,
                     const objective_t* obj, int64_t* ranks) noexcept nogil:
    """opts of a chain of ``n`` (score, order) points along which s never rises and j never falls, all
    known to lie in [left, right], for ``obj``; written into ``ranks``.

    Their opts are non-decreasing, so the divide and conquer of Algorithm 2 finds them: each is searched
    only between the opts of the nearest computed points before and after it, and a stretch whose
    bracket has collapsed is filled at once."""
    cdef int64_t stack[64 * 4]
    cdef int64_t top = push(stack, 0, 0, n, left, right)
    cdef int64_t lo, hi, ll, rr, mid, o, t
    while top > 0:
        top -= 1
        lo = stack[4 * top]
        hi = stack[4 * top + 1]
        ll = stack[4 * top + 2]
        rr = stack[4 * top + 3]
        if lo >= hi:
            continue
        if ll == rr:
            for t in range(lo, hi):
                ranks[t] = ll
            continue
        mid = (lo + hi) >> 1
        o = best_rank(s_pt[mid], j_pt[mid], ll, rr, obj)
        ranks[mid] = o
        top = push(stack, top, lo, mid, ll, o)
        top = push(stack, top, mid + 1, hi, o, rr)


cdef void equal_block(int64_t* ids, int64_t a, int64_t b, int64_t joff, double v, int64_t left, int64_t right,
                      const objective_t* obj, result_t* out, opt_work_t* work) noexcept nogil:
    """Ranks of equal scores at buffer positions a..b-1 (orders j = joff+a+1 .. joff+b), whose first and
    last have ranks ``left`` and ``right``."""
    if left == right:
        assign_block(ids, a, b, left, obj, out)
        return
    sort_keys(<uint64_t*>(ids + a), b - a)  # equal scores: the (−score, index) order is the index order
    assign_block(ids, a, a + 1, left, obj, out)
    assign_block(ids, b - 1, b, right, obj, out)
    cdef int64_t m = b - a - 2  # the inner ones: a chain of one score and consecutive orders
    cdef int64_t t
    work.ranks.resize(m)
    work.s_pt.resize(m)
    work.j_pt.resize(m)
    for t in range(m):
        work.s_pt[t] = v
        work.j_pt[t] = joff + a + 2 + t
    chain_opts(work.s_pt.data(), work.j_pt.data(), m, left, right, obj, work.ranks.data())
    for t in range(m):
        assign_block(ids, a + 1 + t, a + 2 + t, work.ranks[t], obj, out)


cdef double pivot(const double* vals, int64_t lo, int64_t hi, int64_t joff, int64_t ll, int64_t rr,
                  const objective_t* obj, opt_work_t* work) noexcept nogil:
    """Pivot value for the block vals[lo:hi] with rank interval [ll, rr].

    Correctness never depends on it (the pivot's own opt is computed exactly).  Small blocks: median of
    three random elements.  Large blocks: a random sample predicts (with estimated orders) which pivot
    makes one side collapse at once — below it everything at rr, or above it everything at ll — and the
    pivot leaving the smaller remainder is taken; the median of three random elements if that remainder
    exceeds half."""
    cdef int64_t n = hi - lo
    if n < SAMPLE_MIN:
        return random_median3(vals, lo, n, work)
    cdef int64_t m = OPT_SAMPLE
    cdef double* smp = work.sample
    cdef int64_t k, t, a, b, q, j
    cdef double v
    for k in range(m):  # a random sample, in descending order (insertion: it is small)
        v = vals[lo + rand_below(work, n)]
        t = k - 1
        while t >= 0 and smp[t] < v:
            smp[t + 1] = smp[t]
            t -= 1
        smp[t + 1] = v
    # smallest q predicted at rr (predictions are monotone in q)
    a = 0
    b = m
    while a < b:
        q = (a + b) >> 1
        j = joff + lo + 1 + <int64_t>((q + 0.5) * <double>n / <double>m)
        if best_rank(smp[q], j, ll, rr, obj) == rr:
            b = q
        else:
            a = q + 1
    cdef int64_t q_right = a + MARGIN  # pivot there: the part below it should collapse at rr
    # largest q predicted at ll
    a = -1
    b = m - 1
    while a < b:
        q = (a + b + 1) >> 1
        j = joff + lo + 1 + <int64_t>((q + 0.5) * <double>n / <double>m)
        if best_rank(smp[q], j, ll, rr, obj) == ll:
            a = q
        else:
            b = q - 1
    cdef int64_t q_left = a - MARGIN  # pivot there: the part above it should collapse at ll
    cdef int64_t rest_right = q_right if q_right < m else m  # sample share left to recurse on
    cdef int64_t rest_left = m - q_left if q_left >= 0 else m
    if rest_right <= rest_left and 2 * rest_right <= m:
        return smp[q_right]
    if 2 * rest_left <= m:
        return smp[q_left]
    return random_median3(vals, lo, n, work)


cdef void opt_ranks(double* vals, int64_t* ids, int64_t lo0, int64_t hi0, int64_t joff, int64_t left, int64_t right,
                    const objective_t* obj, result_t* out, opt_work_t* work) noexcept nogil:
    """Algorithm 2 on buffer positions lo0..hi0-1 of (``vals``, ``ids``) holding the negatives of orders
    j = joff + lo0 + 1 .. joff + hi0, whose ranks lie in [left, right]: their coefficients and counts into
    ``out`` for ``obj``; ``work`` reset by :func:`new_work` once per oracle call."""
    cdef int64_t* stack = work.stack
    cdef int64_t top = push(stack, 0, lo0, hi0, left, right)
    cdef int64_t lo, hi, ll, rr, a, b, o_first, o_last
    cdef double v
    while top > 0:
        top -= 1
        lo = stack[4 * top]
        hi = stack[4 * top + 1]
        ll = stack[4 * top + 2]
        rr = stack[4 * top + 3]
        if ll == rr:  # the interval collapsed: assign the block without touching it again
            assign_block(ids, lo, hi, ll, obj, out)
            continue
        v = pivot(vals, lo, hi, joff, ll, rr, obj, work)
        a = partition3(vals, ids, lo, hi, v, &b)
        o_first = best_rank(v, joff + a + 1, ll, rr, obj)
        o_last = o_first
        if b - a > 1:
            o_last = best_rank(v, joff + b, o_first, rr, obj)
        equal_block(ids, a, b, joff, v, o_first, o_last, obj, out, work)
        # the smaller side goes on top, so the stack stays O(log N)
        if a - lo > hi - b:
            if lo < a:
                top = push(stack, top, lo, a, ll, o_first)
            if b < hi:
                top = push(stack, top, b, hi, o_last, rr)
        else:
            if b < hi:
                top = push(stack, top, b, hi, o_last, rr)
            if lo < a:
                top = push(stack, top, lo, a, ll, o_first)
