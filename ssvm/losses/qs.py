"""The quicksort-flavoured oracle (Mohapatra, Rolínek, Jawahar, Kolmogorov, Kumar; Alg. 1–2).

One kernel serves every QS-suitable loss (AP, NDCG, user losses): the loss only enters through its
discrete derivative ``loss_step(kind, table, ...)``.  The negatives are never sorted.

Algorithm 1: sort the positives only (O(P log P)).  Then Algorithm 2 (``_qs_recursion.opt_ranks``)
with constant-factor refinements that keep it a selection algorithm:

1. **Multi-pivot SELECT by the positives' scores** (pass 1, no data movement).  For a loss whose
   derivative is ≤ 0 (moving a negative down never raises the loss — AP, NDCG), a negative with score
   s never ranks below a positive scoring less than s: opt ≤ u(s) = 1 + #{positives scoring ≥ s}.
   One pass puts every negative into its block u(s) (search among the sorted positive scores through
   a uniform grid, exact comparisons), writes the coefficient of rank u(s), and records each block's
   size and top score.  Blocks are contiguous in the (−score, index) order, so the orders j of block
   u are known from the sizes.  The opt o of each block's first negative (found for all blocks by the
   divide and conquer of Algorithm 2 over the blocks, O(P log P) scanning) bounds the whole block's
   ranks to [o, r], r = min(u, o of the next non-empty block) (Observation 4: opt is monotone in the
   order).  Consecutive intervals share one rank at most, so every per-block scan of [o, r] below
   sums to O(P) — the accounting of Proposition 3; bounding by [o, u] alone made the intervals
   overlap and the cost O(P²) for P ~ N.  If o = u the block has collapsed and is done; if o = r < u
   it has collapsed too, but pass 2 rewrites its coefficients.  This generalises "partition off the
   negatives below the lowest positive".
2. **Cut** (pass 2).  In an open block, rank r is certain for every negative scoring below
   t = min_i (Σ_{k=i}^{r−1} sp_k + d_j(k)·PN/2) / (r − i) at the block's first order (f is linear in
   the score).  For a big block, where the orders grow quickly, a higher cut is taken from a sample of
   its scores.  Either cut is certified exactly afterwards from the true count above it (else the
   block falls back to Algorithm 2 on all its negatives, gathered for all failed blocks in one
   pass); the negatives below it are not touched again.
3. **Narrow blocks** (r − o ≤ 8): the rank boundaries are score thresholds θ_k (rank ≥ k + 1 iff
   s ≤ θ_k), computed at the block's first and last order.  A negative whose rank is the same at both
   orders and not within a rounding tolerance of a threshold is assigned by comparisons; the ones
   whose rank depends on the exact order keep their pair of ranks (a, b) and get their exact order
   from the certain negatives of rank ≤ a: a few are sorted and swept, many go to Algorithm 2 in
   groups of equal pairs.  Wide blocks send their negatives above the cut to Algorithm 2 with the
   interval [o, r].
4. A loss whose derivative can be positive skips steps 1–2: all negatives form one block with the
   interval [1, P + 1].

Output (Lemma 6, Observation 2): c(negative of rank r) = 2(P + 1 − r)/(PN), c(k-th positive) =
−2 #(negatives of rank ≤ k)/(PN), and Δ from the ± pattern (negatives per rank).
Time O(N log P + P log P), memory O(N + P).
"""

import numpy as np
from numba import njit

from ._qs_recursion import new_work, opt_ranks
from ._rank_kernels import best_rank, loss_step, sorted_positives

__all__ = ["qs_oracle"]

_GRID_PER_POSITIVE = 16
_MAX_CELLS = 1 << 20
_NARROW = 8
_BIG_BLOCK = 1 << 11
_CUT_SAMPLE = 512
_SWEEP_MAX = 32  # narrow blocks with at most this many order-dependent negatives sort and sweep them


@njit(cache=True)
def _grid(asc, n_cells):
    """Uniform grid over [asc[0], asc[-1]]: lb[g] = #{asc < start of cell g}."""
    lo = asc[0]
    width = (asc[-1] - lo) / n_cells
    scale = 0.0
    if width > 0.0 and np.isfinite(1.0 / width):
        scale = 1.0 / width
    lb = np.empty(n_cells + 1, dtype=np.int32)
    k = 0
    for g in range(n_cells + 1):
        t = lo + g * width
        while k < asc.size and asc[k] < t:
            k += 1
        lb[g] = k
    return lb, scale


@njit(cache=True)
def _count_below(asc, n, s, lb, scale, n_cells):
    """#{asc[:n] < s} exactly (asc[n] = +inf, s >= asc[0]); the grid only gives the start."""
    x = (s - asc[0]) * scale  # >= 0; compared as a float so a huge value cannot overflow int
    g = n_cells if x >= n_cells else int(x)
    r = lb[g]
    r += asc[r] < s
    if asc[r] >= s and (r == 0 or asc[r - 1] < s):
        return r
    lo = 0  # a dense cell or rounding: bisection keeps the worst case O(log P)
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
def _block_pass(scores, y, sp, inv, c, block, size, top):
    """Pass 1: block u(s) of every negative, block sizes and top scores; writes c of rank u(s)."""
    n_pos = sp.size
    last = n_pos + 1
    asc = np.empty(n_pos + 1, dtype=np.float64)
    asc[:n_pos] = sp[::-1]
    asc[n_pos] = np.inf
    n_cells = min(_GRID_PER_POSITIVE * n_pos + 1, _MAX_CELLS)
    lb, scale = _grid(asc[:n_pos], n_cells)
    lowest = asc[0]
    size_last = 0
    top_last = -np.inf
    for i in range(scores.size):
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


@njit(cache=True)
def _sample_cut(scores, y, block, u, size_u, j0, o, r, sp, inv, kind, table, n_pos):
    """A higher cut for a big block, where the first-order cut is too cautious (orders grow fast).

    A random sample of the block's scores, sorted, estimates the order of each sample score; the
    highest sample score whose (score, conservatively estimated order) already has rank r, lowered
    by two sample steps, is returned (−inf if none).  The caller certifies the cut exactly.
    """
    n = scores.size
    m = _CUT_SAMPLE
    sample = np.empty(m, dtype=np.float64)
    got = 0
    state = np.uint64(0x9E3779B97F4A7C15) ^ np.uint64(size_u)
    tries = 0
    while got < m and tries < 32 * m:
        state ^= state << np.uint64(13)
        state ^= state >> np.uint64(7)
        state ^= state << np.uint64(17)
        i = int(state % np.uint64(n))
        tries += 1
        if not y[i] and block[i] == u:
            sample[got] = scores[i]
            got += 1
    if got < 64:
        return -np.inf
    smp = np.sort(sample[:got])[::-1]
    lo = 0
    hi = got  # smallest q whose sample score at its (under-)estimated order has rank u
    while lo < hi:
        q = (lo + hi) >> 1
        j = j0 + 1 + int(0.7 * q * size_u / got)
        if best_rank(smp[q], j, o, r, sp, inv, kind, table, n_pos) == r:
            hi = q
        else:
            lo = q + 1
    q = lo + 2
    return smp[q] if q < got else -np.inf


@njit(cache=True)
def _first_opts(size, top, use_blocks, sp, inv, kind, table, offset):
    """opt of the first negative of every non-empty block (fills ``offset`` too).

    The first negatives are sorted by score already (block order), so their opts are found by the
    divide and conquer of Algorithm 2 over the blocks: O(P log P) scanning instead of O(P²).
    """
    n_pos = sp.size
    first = np.zeros(n_pos + 2, dtype=np.int64)
    ub = np.empty(n_pos + 1, dtype=np.int64)
    nb = 0
    j0 = 0
    for u in range(1, n_pos + 2):
        if size[u] > 0:
            offset[u] = j0
            j0 += size[u]
            ub[nb] = u
            nb += 1
    if not use_blocks:
        for t in range(nb):
            first[ub[t]] = 1
        return first
    stack = np.empty((64, 4), dtype=np.int64)
    stack[0, 0] = 0
    stack[0, 1] = nb
    stack[0, 2] = 1
    stack[0, 3] = n_pos + 1
    top_ = 1
    while top_ > 0:
        top_ -= 1
        lo = stack[top_, 0]
        hi = stack[top_, 1]
        ll = stack[top_, 2]
        rr = stack[top_, 3]
        if lo >= hi:
            continue
        mid = (lo + hi) >> 1
        u = ub[mid]
        o = best_rank(top[u], offset[u] + 1, ll, min(rr, u), sp, inv, kind, table, n_pos)
        first[u] = o
        stack[top_, 0] = lo
        stack[top_, 1] = mid
        stack[top_, 2] = ll
        stack[top_, 3] = o
        stack[top_ + 1, 0] = mid + 1
        stack[top_ + 1, 1] = hi
        stack[top_ + 1, 2] = o
        stack[top_ + 1, 3] = rr
        top_ += 2
    return first


@njit(cache=True)
def _open_blocks(scores, y, block, size, top, use_blocks, sp, inv, kind, table, counts):
    """Rank interval [o, r] of every block; collapsed blocks are counted, open ones get (o, r, offset, cut).

    o = opt of the block's first negative; r = min(u, opt of the next non-empty block's first negative)
    (that negative scores lower and comes later, so its opt bounds the block's from above).  The
    intervals of consecutive blocks share one rank at most, so every O(r − o) scan below sums to
    O(P) over the blocks (the accounting of Proposition 3).
    """
    n_pos = sp.size
    open_lo = np.zeros(n_pos + 2, dtype=np.int64)  # 0: collapsed at u, else the lowest possible rank o
    hi_rank = np.arange(n_pos + 2)  # the highest possible rank r <= u
    offset = np.zeros(n_pos + 2, dtype=np.int64)  # the block's orders are offset + 1 .. offset + size
    cut = np.full(n_pos + 2, -np.inf)  # negatives scoring below the cut surely have rank r
    first = _first_opts(size, top, use_blocks, sp, inv, kind, table, offset)
    n_open = 0
    nxt = n_pos + 2
    for u in range(n_pos + 1, 0, -1):
        if size[u] == 0:
            continue
        if nxt <= n_pos + 1 and first[nxt] < u:
            hi_rank[u] = first[nxt]
        nxt = u
    for u in range(1, n_pos + 2):
        if size[u] == 0:
            continue
        o = first[u]
        r = hi_rank[u]
        j0 = offset[u]
        if o == u:
            counts[u - 1] += size[u]
        else:
            open_lo[u] = o
            n_open += size[u]
            if o == r:  # collapsed below u: pass 2 rewrites the coefficients of pass 1
                cut[u] = np.inf
            elif use_blocks:
                cut[u] = _cut_value(j0 + 1, o, r, sp, inv, kind, table, n_pos)
                if size[u] >= _BIG_BLOCK and 16 * size[u] >= scores.size:  # cheap to sample
                    cut[u] = max(cut[u], _sample_cut(scores, y, block, u, size[u], j0, o, r, sp, inv, kind, table,
                                                     n_pos))
    return open_lo, hi_rank, offset, cut, n_open


@njit(cache=True)
def _narrow_tables(open_lo, hi_rank, offset, size, sp, inv, kind, table):
    """For narrow open blocks: d_j(k) and the rank thresholds at the block's first and last order.

    The tables have one row per narrow block (``slot[u]``, −1 for the other blocks), so their size
    is O(min(P, N)), not O(P).
    """
    n_pos = sp.size
    slot = np.full(n_pos + 2, -1, dtype=np.int64)
    n_narrow = 0
    for u in range(1, n_pos + 2):
        o = open_lo[u]
        if o > 0 and 0 < hi_rank[u] - o <= _NARROW:
            slot[u] = n_narrow
            n_narrow += 1
    d_first = np.zeros((n_narrow, _NARROW), dtype=np.float64)
    d_last = np.zeros((n_narrow, _NARROW), dtype=np.float64)
    th_first = np.full(n_narrow * _NARROW, -np.inf)
    th_last = np.full(n_narrow * _NARROW, -np.inf)
    tol = np.zeros(n_narrow, dtype=np.float64)
    b = np.empty(_NARROW + 1, dtype=np.float64)
    hull = np.empty(_NARROW + 1, dtype=np.int64)
    for u in range(1, n_pos + 2):
        q = slot[u]
        if q < 0:
            continue
        o = open_lo[u]
        r = hi_rank[u]
        for k in range(o, r):  # the same values loss_step gives everywhere else
            d_first[q, k - o] = loss_step(kind, table, n_pos, k, offset[u] + 1)
            d_last[q, k - o] = loss_step(kind, table, n_pos, k, offset[u] + size[u])
        row = slice(q * _NARROW, (q + 1) * _NARROW)
        tol[q] = max(_thresholds(o, r, sp, inv, d_first[q], th_first[row], b, hull),
                     _thresholds(o, r, sp, inv, d_last[q], th_last[row], b, hull))
    return slot, d_first, d_last, th_first, th_last, tol


@njit(cache=True)
def _qs_core(scores, y, sp, pos_ids, kind, table, use_blocks, force_fallback):
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
        _block_pass(scores, y, sp, inv, c, block, size, top)
    else:  # one block holding every negative, ranks [1, P + 1]
        for i in range(n):
            if not y[i]:
                block[i] = last
                size[last] += 1
    open_lo, hi_rank, offset, cut, n_open = _open_blocks(scores, y, block, size, top, use_blocks, sp, inv, kind,
                                                         table, counts)
    if n_open == 0:
        return _finish(c, counts, pos_ids, n_pos, inv)
    slot, d_first, d_last, th_first, th_last, tol = _narrow_tables(open_lo, hi_rank, offset, size, sp, inv, kind,
                                                                   table)
    hist, n_ge, vals, ids, keys, start, fill = _pass2(scores, y, block, size, open_lo, hi_rank, cut, n_open, slot,
                                                      d_first, d_last, th_first, th_last, tol, sp, inv, c)
    failed = _certify(open_lo, hi_rank, offset, size, cut, n_ge, force_fallback, sp, inv, kind, table)
    _gather_failed(scores, y, block, failed, start, fill, vals, ids)
    _settle(vals, ids, keys, open_lo, hi_rank, offset, size, n_ge, slot, hist, failed, start, fill, sp, kind,
            table, n_neg, c, counts)
    return _finish(c, counts, pos_ids, n_pos, inv)


@njit(cache=True)
def _pass2(scores, y, block, size, open_lo, hi_rank, cut, n_open, slot, d_first, d_last, th_first, th_last, tol,
           sp, inv, c):
    """Pass 2 over the open blocks' negatives.

    Below the cut a negative has rank r (certified afterwards); of the others, narrow blocks assign
    the certain ones by thresholds (counted in ``hist``); the rest is gathered, grouped by block,
    into (vals, ids) for Algorithm 2.
    """
    n = scores.size
    n_pos = sp.size
    last = n_pos + 1
    hist = np.zeros((tol.size, _NARROW + 1), dtype=np.int64)  # certain ranks r − o per narrow block
    n_ge = np.zeros(n_pos + 2, dtype=np.int64)
    vals = np.empty(n_open, dtype=np.float64)
    ids = np.empty(n_open, dtype=np.int64)
    keys = np.empty(n_open, dtype=np.int16)  # narrow blocks: (a − o)·(_NARROW + 1) + (b − o), see _resolve_uncertain
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
        r = hi_rank[u]
        if s < cut[u]:  # rank r (certified below); pass 1 wrote the coefficient of rank u
            if r != u:
                c[i] = (last - r) * inv
            continue
        n_ge[u] += 1
        q = slot[u]
        if q >= 0:
            # rank = o + #{thresholds >= s} at the first and the last order of the block (branch-free);
            # exact unless s is within tol of a threshold, then the exact scan decides
            ra = o
            rb = o
            near = False
            tl = tol[q]
            base = q * _NARROW
            for t in range(base, base + (r - o)):  # entries past r − o are −inf
                ta = th_first[t]
                tb = th_last[t]
                ra += s <= ta
                rb += s <= tb
                near |= abs(s - ta) <= tl
                near |= abs(s - tb) <= tl
            if near or ra != rb:
                if near:
                    ra = _scan_row(s, o, r, o, sp, inv, d_first[q])
                    rb = ra if ra == r else _scan_row(s, ra, r, o, sp, inv, d_last[q])
                if ra != rb:  # the rank depends on the exact order: resolved below
                    t = fill[u]
                    vals[t] = s
                    ids[t] = i
                    keys[t] = (ra - o) * (_NARROW + 1) + (rb - o)
                    fill[u] = t + 1
                    continue
            c[i] = (last - ra) * inv
            hist[q, ra - o] += 1
            continue
        t = fill[u]
        vals[t] = s
        ids[t] = i
        fill[u] = t + 1
    return hist, n_ge, vals, ids, keys, start, fill


@njit(cache=True)
def _certify(open_lo, hi_rank, offset, size, cut, n_ge, force_fallback, sp, inv, kind, table):
    """Blocks whose cut fails its exact certification.

    The first negative below a cut has order offset + n_ge + 1 and a score < cut, so its opt is
    >= that of (cut, that order) (the argument of Observation 4); rank r there certifies the cut.
    """
    n_pos = sp.size
    failed = np.zeros(n_pos + 2, dtype=np.bool_)
    for u in range(1, n_pos + 2):
        o = open_lo[u]
        if o > 0 and n_ge[u] < size[u]:
            r = hi_rank[u]
            if force_fallback or best_rank(cut[u], offset[u] + n_ge[u] + 1, o, r, sp, inv, kind, table, n_pos) != r:
                failed[u] = True
    return failed


@njit(cache=True)
def _gather_failed(scores, y, block, failed, start, fill, vals, ids):
    """Rare fallback: gather all the negatives of the failed blocks (one pass) for Algorithm 2."""
    if not failed.any():
        return
    for u in range(failed.size):
        if failed[u]:
            fill[u] = start[u]
    for i in range(scores.size):
        if not y[i] and failed[block[i]]:
            u = block[i]
            vals[fill[u]] = scores[i]
            ids[fill[u]] = i
            fill[u] += 1


@njit(cache=True)
def _settle(vals, ids, keys, open_lo, hi_rank, offset, size, n_ge, slot, hist, failed, start, fill, sp, kind, table,
            n_neg, c, counts):
    """Counts of the certain negatives; Algorithm 2 on the gathered ones of every open block."""
    n_pos = sp.size
    last = n_pos + 1
    work = new_work()
    m_max = 0
    for u in range(1, last + 1):
        m_max = max(m_max, fill[u] - start[u])
    scratch = (np.empty(m_max, dtype=np.int64), np.empty(m_max, dtype=np.float64), np.empty(m_max, dtype=np.int64))
    for u in range(1, last + 1):
        o = open_lo[u]
        if o == 0:
            continue
        r = hi_rank[u]
        b0 = start[u]
        m = fill[u] - b0
        if not failed[u]:
            counts[r - 1] += size[u] - n_ge[u]
            q = slot[u]
            if q >= 0:
                for t in range(r - o + 1):
                    counts[o + t - 1] += hist[q, t]
                if m > 0:
                    _resolve_uncertain(vals, ids, keys, b0, m, offset[u], o, hist[q], sp, kind, table, n_pos,
                                       n_neg, c, counts, work, scratch)
                continue
        if m > 0:
            opt_ranks(vals, ids, b0, b0 + m, offset[u] - b0, o, r, sp, kind, table, n_pos, n_neg, c, counts, work)


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
def _thresholds(o, u, sp, inv, drow, out, b, hull):
    """Scores θ_r (r = o..u−1) with opt ≥ r + 1 ⟺ s ≤ θ_r, for one order j (d_j(k) = drow[k − o]).

    With B_t = Σ_{k=o}^{o+t−1} (sp_k + d_j(k)/inv), f(o + t) = inv·(B_t − t·s) + const: the best rank
    is the highest maximiser over lines of slope −t, i.e. a vertex of the upper hull of the points
    (t, B_t), and the threshold between two hull vertices is the slope of the hull edge (ties go to
    the larger rank).  O(u − o).  Writes θ into out[r − o] (non-increasing); returns a tolerance
    well above the rounding error (scores that close to a θ are resolved by the exact scan).
    ``b`` (float) and ``hull`` (int) are work buffers of length >= u − o + 1.
    """
    w = u - o
    b[0] = 0.0
    mag = 0.0
    for t in range(w):
        term = sp[o + t - 1] + drow[t] / inv
        b[t + 1] = b[t] + term
        mag += abs(sp[o + t - 1]) + abs(drow[t] / inv)
    h = 0
    for x in range(w + 1):
        while h >= 2:
            p = hull[h - 2]
            q = hull[h - 1]
            if (b[q] - b[p]) / (q - p) <= (b[x] - b[q]) / (x - q):
                h -= 1  # q is not above the chord: never the (highest) best rank
            else:
                break
        hull[h] = x
        h += 1
    for k in range(1, h):
        p = hull[k - 1]
        q = hull[k]
        slope = (b[q] - b[p]) / (q - p)
        for r in range(p, q):
            out[r] = slope
    for r in range(1, w):  # exact monotonicity despite rounding (changes below the tolerance)
        if out[r] > out[r - 1]:
            out[r] = out[r - 1]
    return 16.0 * 2.220446049250313e-16 * (w + 1) * (mag + 1e-300)


@njit(cache=True)
def _resolve_uncertain(vals, ids, keys, b0, m, j0, o, hist_u, sp, kind, table, n_pos, n_neg, c, counts, work,
                       scratch):
    """Exact ranks of the gathered negatives of a narrow block whose rank differs between the
    block's first and last order.

    Each such negative x has a pair (a, b) = (its best rank at the first order, at the last one),
    stored in ``keys`` by pass 2, and a < b.  A certain negative z (one rank ρ at both orders) lies
    above x iff ρ ≤ a (opt is monotone in score at a fixed order, and a < b), so x's order is
    j0 + 1 + #{certain of rank ≤ a} + #{uncertain above x}.  Few of them (the usual case): sorted
    by (−score, index) and swept, each opt searched in [max(a, previous opt), b].  Many: negatives
    with the same pair are contiguous in that order and the groups are ordered lexicographically by
    pair, so every group is an independent block for Algorithm 2 with a known order offset and rank
    interval [a, b].
    """
    inv = 2.0 / (n_pos * n_neg)
    w = _NARROW + 1
    below = np.empty(w + 1, dtype=np.int64)  # below[a - o + 1] = #{certain of rank <= a}
    below[0] = 0
    for t in range(w):
        below[t + 1] = below[t] + hist_u[t]
    if m <= _SWEEP_MAX:
        for t in range(b0 + 1, b0 + m):  # insertion sort by (−score, index)
            v = vals[t]
            i = ids[t]
            k = keys[t]
            q = t - 1
            while q >= b0 and (vals[q] < v or (vals[q] == v and ids[q] > i)):
                vals[q + 1] = vals[q]
                ids[q + 1] = ids[q]
                keys[q + 1] = keys[q]
                q -= 1
            vals[q + 1] = v
            ids[q + 1] = i
            keys[q + 1] = k
        prev = o
        for t in range(m):
            k = keys[b0 + t]
            a = o + k // w
            b = o + k % w
            j = j0 + 1 + below[a - o + 1] + t
            r = best_rank(vals[b0 + t], j, max(a, prev), b, sp, inv, kind, table, n_pos)
            c[ids[b0 + t]] = (n_pos + 1 - r) * inv
            counts[r - 1] += 1
            prev = r
        return
    key, tv, ti = scratch  # work buffers of length >= m
    cnt = np.zeros(w * w + 1, dtype=np.int64)
    for t in range(m):
        k = keys[b0 + t]
        key[t] = k
        cnt[k + 1] += 1
    for k in range(w * w):
        cnt[k + 1] += cnt[k]
    put = cnt[:w * w].copy()
    for t in range(m):
        k = key[t]
        tv[put[k]] = vals[b0 + t]
        ti[put[k]] = ids[b0 + t]
        put[k] += 1
    vals[b0:b0 + m] = tv[:m]
    ids[b0:b0 + m] = ti[:m]
    for k in range(w * w):
        lo = cnt[k]
        hi = cnt[k + 1]
        if lo == hi:
            continue
        a = o + k // w
        b = o + k % w
        above = lo + below[a - o + 1]  # uncertain negatives of the groups before this one, certain of rank <= a
        opt_ranks(vals, ids, b0 + lo, b0 + hi, j0 + above - (b0 + lo), a, b, sp, kind, table, n_pos, n_neg,
                  c, counts, work)


@njit(cache=True)
def _finish(c, counts, pos_ids, n_pos, inv):
    cum = 0
    for k in range(n_pos):
        cum += counts[k]
        c[pos_ids[k]] = -cum * inv
    return c, counts


def qs_oracle(scores, y, loss, *, _force_fallback=False):
    """QS oracle (Algorithms 1–2) for any QS-suitable loss.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
    loss : QSLoss
    _force_fallback : bool, default=False
        Private, for tests: treat every cut as failing its certification, so every block with a
        cut takes the Algorithm-2 fallback on all its negatives (same result, slower).

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
    c, counts = _qs_core(scores, y, sp, pos_ids, kind, np.asarray(table, dtype=np.float64), use_blocks,
                         bool(_force_fallback))
    return c, float(loss.value(counts))
