"""The quicksort-flavoured oracle (Mohapatra, Rolínek, Jawahar, Kolmogorov, Kumar; Alg. 1–2).

One kernel serves every QS-suitable loss (AP, NDCG, user losses): the loss only enters through
its discrete derivative ``loss_step(kind, table, ...)``.

Algorithm 1: sort the positives only (O(P log P)).  Then ``OptRanks`` (Algorithm 2), with two
constant-factor refinements that keep it a selection algorithm (the negatives are never sorted):

1. **Multi-pivot SELECT by the positives' scores** (one pass, no data movement).  For a loss whose
   derivative is ≤ 0 (moving a negative down never raises the loss — AP, NDCG), a negative with
   score s never ranks below a positive scoring less than s, so opt ≤ u(s) = 1 + #{positives with
   score ≥ s}.  One pass puts every negative into its block u(s) (a search among the P sorted
   positive scores through a small uniform grid, exact comparisons) and records each block's size and
   largest score.  Blocks are contiguous in the (−score, index) order, so the first negative of
   block u has order j = 1 + #negatives in blocks < u.  Its opt is found by scanning the ranks
   [opt of the previous block's first negative, u]; if it equals u, the block's interval
   [opt_first, u] has collapsed and the whole block gets rank u without being touched again
   (Observation 4).  This generalises "partition off the negatives below the lowest positive": in
   the trained regime nearly every negative lands in the last block and is done in that pass.
2. **Algorithm 2 proper** on the blocks that did not collapse (gathered into a private buffer of
   values and indices): explicit stack, median-of-three pivot, three-way SELECT ``> v | == v | < v``;
   the opt of the first and last element equal to the pivot is found by scanning the block's
   interval (largest argmax), and both sides recurse with the narrowed intervals.  Ties among
   negatives are ordered by index inside the ``== v`` block.  A loss whose derivative can be
   positive skips step 1 and runs Algorithm 2 on all negatives with the interval [1, P + 1].

Output (Lemma 6, Observation 2): c(negative of rank r) = 2(P + 1 − r)/(PN), c(k-th positive) =
−2 #(negatives of rank ≤ k)/(PN), and Δ from the ± pattern (negatives per rank).
Time O(N log P + P log P), memory O(N + P).
"""

import numpy as np
from numba import njit

from ._rank_kernels import best_rank, loss_step, sorted_positives

__all__ = ["qs_oracle"]

_GRID_PER_POSITIVE = 4
_NARROW = 8
_SAMPLE = 64
_SAMPLE_MIN = 1024
_MARGIN = 2


@njit(cache=True)
def _assign(ids, lo, hi, r, c, counts, n_pos, inv):
    coef = (n_pos + 1 - r) * inv
    for t in range(lo, hi):
        c[ids[t]] = coef
    counts[r - 1] += hi - lo


@njit(cache=True)
def _median3(a, b, c):
    if a < b:
        if b < c:
            return b
        return c if a < c else a
    if a < c:
        return a
    return c if b < c else b


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
def _equal_block(ids, a, b, joff, v, left, right, sp, inv, kind, table, n_pos, c, counts):
    """Ranks of equal scores at buffer positions a..b-1 (orders j = joff+a+1 .. joff+b)."""
    if left == right:
        _assign(ids, a, b, left, c, counts, n_pos, inv)
        return
    ids[a:b].sort()  # equal scores: the (−score, index) order is the index order
    _assign(ids, a, a + 1, left, c, counts, n_pos, inv)
    _assign(ids, b - 1, b, right, c, counts, n_pos, inv)
    stack = np.empty((64, 4), dtype=np.int64)
    stack[0, 0] = a + 1
    stack[0, 1] = b - 1
    stack[0, 2] = left
    stack[0, 3] = right
    top = 1
    while top > 0:
        top -= 1
        lo = stack[top, 0]
        hi = stack[top, 1]
        ll = stack[top, 2]
        rr = stack[top, 3]
        if lo >= hi:
            continue
        if ll == rr:
            _assign(ids, lo, hi, ll, c, counts, n_pos, inv)
            continue
        m = (lo + hi) >> 1
        om = best_rank(v, joff + m + 1, ll, rr, sp, inv, kind, table, n_pos)
        _assign(ids, m, m + 1, om, c, counts, n_pos, inv)
        stack[top, 0] = lo
        stack[top, 1] = m
        stack[top, 2] = ll
        stack[top, 3] = om
        stack[top + 1, 0] = m + 1
        stack[top + 1, 1] = hi
        stack[top + 1, 2] = om
        stack[top + 1, 3] = rr
        top += 2


@njit(cache=True)
def _push(stack, top, lo, hi, ll, rr):
    stack[top, 0] = lo
    stack[top, 1] = hi
    stack[top, 2] = ll
    stack[top, 3] = rr
    return top + 1


@njit(cache=True)
def _pivot(vals, lo, hi, joff, ll, rr, sp, inv, kind, table, n_pos, sample):
    """Pivot value for the block vals[lo:hi] with rank interval [ll, rr].

    Correctness never depends on it (the pivot's own opt is computed exactly).  Small blocks: median
    of three.  Large blocks: a strided sample predicts (with estimated orders) which pivot makes
    one side collapse at once — below it everything at rr, or above it everything at ll — and the
    pivot leaving the smaller remainder is taken; the median of three if that remainder exceeds half.
    """
    n = hi - lo
    if n < _SAMPLE_MIN:
        return _median3(vals[lo], vals[(lo + hi) >> 1], vals[hi - 1])
    m = _SAMPLE
    for k in range(m):
        sample[k] = vals[lo + (k * n) // m]
    sample.sort()
    smp = sample[::-1]  # descending
    # smallest q predicted at rr (predictions are monotone in q)
    a = 0
    b = m
    while a < b:
        q = (a + b) >> 1
        j = joff + lo + 1 + int((q + 0.5) * n / m)
        if best_rank(smp[q], j, ll, rr, sp, inv, kind, table, n_pos) == rr:
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
        if best_rank(smp[q], j, ll, rr, sp, inv, kind, table, n_pos) == ll:
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
    return _median3(vals[lo], vals[(lo + hi) >> 1], vals[hi - 1])


@njit(cache=True)
def _opt_ranks(vals, ids, lo0, hi0, joff, left, right, sp, kind, table, n_pos, n_neg, c, counts):
    """Algorithm 2 on buffer positions lo0..hi0-1 holding the negatives of orders
    j = joff + lo0 + 1 .. joff + hi0, whose ranks lie in [left, right]."""
    inv = 2.0 / (n_pos * n_neg)
    stack = np.empty((128, 4), dtype=np.int64)
    sample = np.empty(_SAMPLE, dtype=np.float64)
    top = _push(stack, 0, lo0, hi0, left, right)
    while top > 0:
        top -= 1
        lo = stack[top, 0]
        hi = stack[top, 1]
        ll = stack[top, 2]
        rr = stack[top, 3]
        if ll == rr:  # the interval collapsed: assign the block without touching it again
            _assign(ids, lo, hi, ll, c, counts, n_pos, inv)
            continue
        v = _pivot(vals, lo, hi, joff, ll, rr, sp, inv, kind, table, n_pos, sample)
        a, b = _partition3(vals, ids, lo, hi, v)
        o_first = best_rank(v, joff + a + 1, ll, rr, sp, inv, kind, table, n_pos)
        o_last = o_first
        if b - a > 1:
            o_last = best_rank(v, joff + b, o_first, rr, sp, inv, kind, table, n_pos)
        _equal_block(ids, a, b, joff, v, o_first, o_last, sp, inv, kind, table, n_pos, c, counts)
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


@njit(cache=True)
def _grid(asc, n_cells):
    """Uniform grid over [asc[0], asc[-1]]: lb[g] = #{asc < start of cell g}."""
    lo = asc[0]
    width = (asc[-1] - lo) / n_cells
    scale = 0.0
    if width > 0.0 and np.isfinite(1.0 / width):
        scale = 1.0 / width
    lb = np.empty(n_cells + 1, dtype=np.int64)
    k = 0
    for g in range(n_cells + 1):
        t = lo + g * width
        while k < asc.size and asc[k] < t:
            k += 1
        lb[g] = k
    return lb, scale


@njit(cache=True)
def _count_below(asc, n, s, lb, scale, n_cells):
    """#{asc[:n] < s} exactly (asc[n] = +inf); the grid gives a first guess that is verified."""
    x = (s - asc[0]) * scale  # >= 0; compared as a float so a huge value cannot overflow int
    g = n_cells if x >= n_cells else int(x)
    r = lb[g]
    r += asc[r] < s
    if (r == 0 or asc[r - 1] < s) and asc[r] >= s:
        return r
    lo = 0  # the guess was off (dense cell or rounding): plain binary search
    hi = n
    while lo < hi:
        mid = (lo + hi) >> 1
        if asc[mid] < s:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def _cut_value(j, o, u, sp, inv, kind, table, n_pos):
    """Largest score t such that a negative of order ≥ j scoring below t surely has rank u.

    f(u) − f(i) = Σ_{k=i}^{u−1} ((sp_k − s)·inv + d_j(k)) ≥ 0 for all i in [o, u) is linear in s:
    s ≤ T_i = (Σ sp_k + Σ d_j(k) / inv) / (u − i).  t = min_i T_i, lowered by a hair for rounding;
    the caller certifies the cut exactly anyway (C3 makes larger orders only safer).
    """
    ssum = 0.0
    lsum = 0.0
    t = np.inf
    for i in range(u - 1, o - 1, -1):
        ssum += sp[i - 1]
        lsum += loss_step(kind, table, n_pos, i, j)
        ti = (ssum + lsum / inv) / (u - i)
        if ti < t:
            t = ti
    return t - 1e-12 * (abs(t) + abs(sp[0]) + abs(sp[-1]))


@njit(cache=True)
def _qs_core(scores, y, sp, pos_ids, kind, table, use_blocks):
    n = scores.size
    n_pos = sp.size
    n_neg = n - n_pos
    inv = 2.0 / (n_pos * n_neg)
    c = np.zeros(n, dtype=np.float64)
    counts = np.zeros(n_pos + 1, dtype=np.int64)
    last = n_pos + 1
    block = np.empty(n, dtype=np.int32)
    size = np.zeros(n_pos + 2, dtype=np.int64)
    top = np.full(n_pos + 2, -np.inf)
    if use_blocks:
        asc = np.empty(n_pos + 1, dtype=np.float64)
        asc[:n_pos] = sp[::-1]
        asc[n_pos] = np.inf
        n_cells = _GRID_PER_POSITIVE * n_pos + 1
        lb, scale = _grid(asc[:n_pos], n_cells)
        lowest = asc[0]
        size_last = 0
        top_last = -np.inf
        # pass 1: block u(s) of every negative; optimistically write the collapsed coefficient
        for i in range(n):
            if y[i]:
                continue
            s = scores[i]
            if s < lowest:  # below every positive: block P + 1, coefficient 0
                block[i] = last
                size_last += 1
                if s > top_last:
                    top_last = s
            else:
                u = 1 + n_pos - _count_below(asc, n_pos, s, lb, scale, n_cells)
                block[i] = u
                size[u] += 1
                if s > top[u]:
                    top[u] = s
                c[i] = (last - u) * inv
        size[last] += size_last
        if top_last > top[last]:
            top[last] = top_last
    else:  # one block holding every negative, ranks [1, P + 1]
        for i in range(n):
            if not y[i]:
                block[i] = last
                size[last] += 1
    # opt of each block's first negative; a block with opt_first == u has collapsed
    open_lo = np.zeros(n_pos + 2, dtype=np.int64)  # 0: collapsed, else opt of its first negative
    offset = np.zeros(n_pos + 2, dtype=np.int64)  # orders j of the block start after offset
    cut = np.full(n_pos + 2, -np.inf)  # only negatives scoring >= cut are gathered
    n_open = 0
    j0 = 0
    low = 1
    for u in range(1, last + 1):
        if size[u] == 0:
            continue
        o = 1 if not use_blocks else best_rank(top[u], j0 + 1, low, u, sp, inv, kind, table, n_pos)
        low = o
        offset[u] = j0
        if o == u:
            counts[u - 1] += size[u]
        else:
            open_lo[u] = o
            n_open += size[u]
            if use_blocks:
                cut[u] = _cut_value(j0 + 1, o, u, sp, inv, kind, table, n_pos)
        j0 += size[u]
    if n_open == 0:
        return _finish(c, counts, pos_ids, n_pos, inv)
    # pass 2 over the open blocks' negatives scoring >= cut.  In a narrow block ([o, u] of width
    # <= _NARROW) a negative whose best rank is the same for the block's first and last order
    # (opt is monotone in j) is assigned at once; only the others are gathered.
    jlast = offset + size
    # d_j(k) for k in [o, u) at the block's first and last order (the same values loss_step gives)
    d_first = np.zeros((n_pos + 2, _NARROW), dtype=np.float64)
    d_last = np.zeros((n_pos + 2, _NARROW), dtype=np.float64)
    for u in range(1, last + 1):
        o = open_lo[u]
        if o > 0 and u - o <= _NARROW:
            for k in range(o, u):
                d_first[u, k - o] = loss_step(kind, table, n_pos, k, offset[u] + 1)
                d_last[u, k - o] = loss_step(kind, table, n_pos, k, jlast[u])
    hist = np.zeros((n_pos + 2, _NARROW + 1), dtype=np.int64)  # certain ranks r − o per block
    n_ge = np.zeros(n_pos + 2, dtype=np.int64)
    vals = np.empty(n_open, dtype=np.float64)
    ids = np.empty(n_open, dtype=np.int64)
    start = np.zeros(n_pos + 2, dtype=np.int64)
    fill = np.zeros(n_pos + 2, dtype=np.int64)
    pos = 0
    for u in range(1, last + 1):
        if open_lo[u] > 0:
            start[u] = pos
            fill[u] = pos
            pos += size[u]
    for i in range(n):
        if y[i]:
            continue
        u = block[i]
        o = open_lo[u]
        if o == 0:
            continue
        s = scores[i]
        if s < cut[u]:
            continue
        n_ge[u] += 1
        if u - o <= _NARROW:
            ra = _scan_row(s, o, u, o, sp, inv, d_first[u])
            rb = ra if ra == u else _scan_row(s, ra, u, o, sp, inv, d_last[u])
            if ra == rb:
                c[i] = (last - ra) * inv
                counts[ra - 1] += 1
                hist[u, ra - o] += 1
                continue
        t = fill[u]
        vals[t] = s
        ids[t] = i
        fill[u] = t + 1
    for u in range(1, last + 1):
        o = open_lo[u]
        if o == 0:
            continue
        b0 = start[u]
        m = fill[u] - b0
        narrow = u - o <= _NARROW
        m = fill[u] - b0
        # certify the cut: the first negative below it has order offset + n_ge + 1 and a score
        # < cut, so its opt is >= that of (cut, that order) (the argument of Observation 4)
        ok = n_ge[u] == size[u] or best_rank(cut[u], offset[u] + n_ge[u] + 1, o, u, sp, inv, kind, table,
                                             n_pos) == u
        if ok:
            counts[u - 1] += size[u] - n_ge[u]  # they keep the coefficient written in pass 1
        if ok:
            if m == 0:
                continue
            if narrow:
                _resolve_uncertain(vals, ids, b0, m, offset[u], size[u], o, u, hist[u], sp, kind, table,
                                   n_pos, n_neg, c, counts)
            else:
                _opt_ranks(vals, ids, b0, b0 + m, offset[u] - b0, o, u, sp, kind, table, n_pos, n_neg, c, counts)
            continue
        # rare fallback (the cut was not certified): undo the certain assignments and run
        # Algorithm 2 on all the block's negatives
        if narrow:
            for r in range(_NARROW + 1):
                counts[o + r - 1] -= hist[u, r]
        m = 0
        for i in range(n):
            if not y[i] and block[i] == u:
                vals[b0 + m] = scores[i]
                ids[b0 + m] = i
                m += 1
        _opt_ranks(vals, ids, b0, b0 + m, offset[u] - b0, o, u, sp, kind, table, n_pos, n_neg, c, counts)
    return _finish(c, counts, pos_ids, n_pos, inv)


@njit(cache=True)
def _scan_row(s, lo, hi, o, sp, inv, drow):
    """:func:`best_rank` with the loss steps d(k) = drow[k − o] precomputed (bit-identical)."""
    best = lo
    diff = 0.0
    for k in range(lo, hi):
        diff += (sp[k - 1] - s) * inv + drow[k - o]
        if diff >= 0.0:
            best = k + 1
            diff = 0.0
    return best


@njit(cache=True)
def _resolve_uncertain(vals, ids, b0, m, j0, size_u, o, u, hist_u, sp, kind, table, n_pos, n_neg, c, counts):
    """Algorithm 2 on the gathered negatives of a narrow block whose rank differs between the
    block's first and last order.

    Each such negative has a pair (a, b) = (its best rank at the first order, at the last one).
    Negatives with the same pair are contiguous in the (−score, index) order, the groups are
    ordered lexicographically by pair, and exactly the certain negatives of rank ≤ a lie above a
    group (opt is monotone in score and in order).  So every group is an independent block with
    the known order offset and rank interval [a, b].
    """
    inv = 2.0 / (n_pos * n_neg)
    w = _NARROW + 1
    key = np.empty(m, dtype=np.int64)
    cnt = np.zeros(w * w + 1, dtype=np.int64)
    for t in range(m):
        s = vals[b0 + t]
        ra = best_rank(s, j0 + 1, o, u, sp, inv, kind, table, n_pos)
        rb = best_rank(s, j0 + size_u, ra, u, sp, inv, kind, table, n_pos)
        k = (ra - o) * w + (rb - o)
        key[t] = k
        cnt[k + 1] += 1
    for k in range(w * w):
        cnt[k + 1] += cnt[k]
    tv = np.empty(m, dtype=np.float64)
    ti = np.empty(m, dtype=np.int64)
    put = cnt[:w * w].copy()
    for t in range(m):
        k = key[t]
        tv[put[k]] = vals[b0 + t]
        ti[put[k]] = ids[b0 + t]
        put[k] += 1
    vals[b0:b0 + m] = tv
    ids[b0:b0 + m] = ti
    for k in range(w * w):
        lo = cnt[k]
        hi = cnt[k + 1]
        if lo == hi:
            continue
        a = o + k // w
        b = o + k % w
        above = lo  # uncertain negatives of the groups before this one
        for r in range(o, a + 1):
            above += hist_u[r - o]
        _opt_ranks(vals, ids, b0 + lo, b0 + hi, j0 + above - (b0 + lo), a, b, sp, kind, table, n_pos, n_neg,
                   c, counts)


@njit(cache=True)
def _finish(c, counts, pos_ids, n_pos, inv):
    cum = 0
    for k in range(n_pos):
        cum += counts[k]
        c[pos_ids[k]] = -cum * inv
    return c, counts


def qs_oracle(scores, y, loss):
    """QS oracle (Algorithms 1–2) for any QS-suitable loss.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
    loss : QSLoss

    Returns
    -------
    c : ndarray of float64, shape (n,)
        Coefficients of Ψ(X, R̂) − Ψ(X, R*).
    delta : float
        Δ(R*, R̂).
    """
    sp, pos_ids = sorted_positives(scores, y)
    n_pos = sp.size
    n_neg = scores.size - n_pos
    kind, table = loss.kernel_spec(n_pos, n_neg)
    use_blocks = loss.nonincreasing(n_pos, n_neg)
    c, counts = _qs_core(scores, y, sp, pos_ids, kind, np.asarray(table, dtype=np.float64), use_blocks)
    return c, float(loss.value(counts))
