"""The quicksort-flavoured oracle (Mohapatra, Rolínek, Jawahar, Kolmogorov, Kumar; Alg. 1–2).

One kernel serves every QS-suitable loss (AP, NDCG, user losses): the loss only enters through its
discrete derivative ``loss_step(kind, table, ...)``.  The negatives are never sorted — except for
AP and NDCG with many positives (P ≥ N / 50), where one packed-key sort and a certified
monotone walk (:mod:`ssvm.losses._qs_walk`) beat the grid below, whose bins then outgrow the caches.

Algorithm 1 sorts the positives only (O(P log P)).  Algorithm 2 (``_qs_recursion.opt_ranks``)
then finds every negative's interleaving rank by recursive SELECT, using that the optimal rank
opt(s, j) of a negative with score s at order j (its place in the (−score, index) order) is
non-increasing in s and non-decreasing in j (Observation 4; condition C3).  This module runs the
first levels of that recursion as one *multi-pivot* SELECT with pivots on a fixed score grid, so
most negatives are settled in two streaming passes without any data movement:

1. **Histogram.** The grid has about min(max(N / 8, 32 P), 64 N) / 3 bins (at most 2^21) of width
   2^e (a power of two), so a negative's bin ``floor(s · 2^−e) − base`` is computed exactly and bin
   k holds exactly the scores in [E_k, E_k+1), E_k = (base + k) · 2^e; bin 0 also holds the scores
   below the grid (its lower edge is −∞; the grid starts at the minimum of a strided sample). One
   pass counts the negatives per bin; the counts give every bin's range of orders [j1, j2] (the
   bins above it come first). A negative scoring above every positive has rank 1 when the loss's
   derivative is ≤ 0 (AP, NDCG): moving it below any positive lowers the score term and never
   raises the loss. Those are counted apart and take the first orders.
2. **Corner ranks.**  Every negative of bin k has a rank in [opt(E_k+1, j1), opt(E_k, j2 + 1)].
   The corners, taken bin after bin from the top (a bin's second corner is the next one's first
   when they are adjacent), form a chain along which s never rises and j never falls, so their
   opts are monotone and found by the divide and conquer of Algorithm 2 over the chain
   (O(P log B) scanning; a stretch whose bracket has collapsed is filled at once).
3. **Assign.**  A second pass settles each negative of a collapsed bin (one rank: most of them)
   with one table look-up.  In a narrow bin (at most 8 possible ranks) the rank boundaries are
   score thresholds θ_r (rank ≥ r + 1 iff s ≤ θ_r) at the bin's first and last order; a negative
   with the same rank at both orders, not within a rounding tolerance of a threshold, is settled by
   comparisons.  The rest is gathered per bin.
4. **Settle.**  The gathered negatives of a narrow bin have a pair of possible ranks (a, b) and get
   their exact order from the certain negatives of rank ≤ a (few: sorted and swept; many: Algorithm
   2 on groups of equal pairs); a wide bin runs Algorithm 2 on all its negatives with the interval
   of its corners.

Output (Lemma 6, Observation 2): c(negative of rank r) = 2(P + 1 − r)/(PN), c(k-th positive) =
−2 #(negatives of rank ≤ k)/(PN), and Δ from the ± pattern (negatives per rank).
Time O(N + P log P + P log B) for the passes plus Algorithm 2 on the gathered negatives
(O(N log P) expected at worst, its pivots being random); memory O(N + P).  :func:`qs_batch` runs
many queries in one compiled loop (the problem layer's path for AP and NDCG).
"""

import math

import numpy as np
from numba import njit

from ._qs_recursion import chain_opts, new_work, opt_ranks
from ._rank_kernels import best_rank, loss_step, positive_coefficients, sorted_positives
from ._qs_walk import walk_oracle_core
from .rank_losses import KIND_AP, KIND_NDCG_LOG2, APLoss, NDCGLoss, loss_value, ndcg_norm

__all__ = ["qs_oracle", "qs_batch", "batchable"]

_NEG_PER_BIN = 8
_BINS_PER_POS = 32
_LO_SAMPLE = 4096
_MAX_BINS = 1 << 22
_NARROW = 8
_BATCH_MAX = 4096  # qs_batch runs queries up to this size in its compiled loop
_WALK_RATIO = 50  # AP and NDCG (log2) with P >= N / 50 take the sort-and-walk path
_SWEEP_MAX = 32  # narrow bins with at most this many order-dependent negatives sort and sweep them


@njit(cache=True)
def _grid(lo, hi, n_pos, n_neg, n_bins):
    """Bin width 2^e and the bin of ``lo``: between ``n_bins`` / 4 and ``n_bins`` / 2 bins over
    [lo, hi] (``n_bins`` <= 0: the default, min(max(N / 8, 32 P), 64 N) capped at 2^22).

    The width is a power of two no finer than 2^−50 of the scores' magnitude, so s · 2^−e is exact
    and its floor fits an int64; edges (base + k) · 2^e are exact doubles.
    """
    if n_bins <= 0:  # much finer than the positives: their thresholds make bins open
        n_bins = min(max(n_neg // _NEG_PER_BIN, _BINS_PER_POS * n_pos, 1), 64 * n_neg, _MAX_BINS)
    bits = 0  # n_bins.bit_length()
    while n_bins >> bits:
        bits += 1
    span = hi / 2 - lo / 2  # (hi − lo) / 2 without overflow
    e = math.frexp(span)[1] + 2 - bits
    mag = max(abs(lo), abs(hi))
    if mag > 0.0:
        e = max(e, math.frexp(mag)[1] - 50)
    e = min(max(e, -1000), 1000)
    inv_w = math.ldexp(1.0, -e)
    return inv_w, math.ldexp(1.0, e), _floor_scaled(lo, inv_w)


@njit(cache=True, inline="always")
def _floor_scaled(s, inv_w):
    """floor(s · inv_w) for a power of two ``inv_w`` (exact: the product only shifts the exponent)."""
    x = np.floor(s * inv_w)
    if s < 0.0 and x >= 0.0:  # the product underflowed to −0; a negative number floors to ≤ −1
        x = -1.0
    return np.int64(x)


@njit(cache=True, inline="always")
def _bin(s, inv_w, base):
    """The bin of a score ``s`` ≤ hi; bin 0 also holds everything below the grid."""
    return max(_floor_scaled(s, inv_w) - base, 0)


@njit(cache=True)
def _histogram(scores, y, hi, inv_w, base, n_bins):
    """Pass 1: negatives per bin, and the number scoring above ``hi``."""
    hist = np.zeros(n_bins, dtype=np.int32)
    n_above = 0
    for i in range(scores.size):
        if y[i]:
            continue
        s = scores[i]
        if s > hi:
            n_above += 1
        else:
            hist[_bin(s, inv_w, base)] += 1
    return hist, n_above


@njit(cache=True)
def _corner_ranks(hist, n_above, base, width, hi, n_neg, sp, inv, kind, table):
    """Non-empty bins from the top (``bins``), their first order minus one (``j0``) and the rank
    interval [lo_rank[t], hi_rank[t]] of the t-th of them.

    Bin t (scores in [E_k, E_k+1), orders j1..j2) has its ranks between the opts of its corners
    (E_k+1, j1) and (E_k, j2 + 1) (order N for the last bin); the second corner of a bin is the
    first of the next one when no empty bin lies between them.  Along the corners, taken from the
    top, s never rises and j never falls, so their opts are non-decreasing and found by the divide
    and conquer of Algorithm 2 over them: each is searched only between the opts of the nearest
    computed corners before and after it, and a stretch whose bracket has collapsed is filled at
    once.
    """
    n_pos = sp.size
    nb = 0
    for k in range(hist.size):
        nb += hist[k] > 0
    bins = np.empty(nb + 1, dtype=np.int32)
    t = 0
    for k in range(hist.size - 1, -1, -1):  # branch-free: the empty bins are sparse and unpredictable
        bins[t] = k
        t += hist[k] > 0
    bins = bins[:nb]
    j0 = np.empty(nb, dtype=np.int64)
    s_pt = np.empty(2 * nb, dtype=np.float64)
    j_pt = np.empty(2 * nb, dtype=np.int32)
    first = np.empty(nb, dtype=np.int32)  # bin t's corners are points first[t] and first[t] + 1
    n_pt = 0
    j = n_above
    prev = -1  # the last non-empty bin
    for t in range(nb):
        k = bins[t]
        j0[t] = j
        # adjacent bins share a corner: (E_k+1, j + 1) overwrites the equal point the previous bin ended with
        n_pt -= t > 0 and k + 1 == prev
        s_pt[n_pt] = min((base + k + 1) * width, hi)
        j_pt[n_pt] = j + 1
        first[t] = n_pt
        j += hist[k]
        s_pt[n_pt + 1] = (base + k) * width if k > 0 else -np.inf  # bin 0 also holds everything below lo
        j_pt[n_pt + 1] = min(j + 1, n_neg)
        n_pt += 2
        prev = k
    ranks = np.empty(n_pt, dtype=np.int32)
    chain_opts(s_pt[:n_pt], j_pt[:n_pt], 1, n_pos + 1, sp, inv, kind, table, n_pos, ranks)
    lo_rank = np.empty(nb, dtype=np.int64)
    hi_rank = np.empty(nb, dtype=np.int64)
    for t in range(nb):
        lo_rank[t] = ranks[first[t]]
        hi_rank[t] = ranks[first[t] + 1]
    return bins, j0, lo_rank, hi_rank


@njit(cache=True)
def _classify(hist, bins, j0, lo_rank, hi_rank, n_bins, narrow, sp, inv, kind, table, counts):
    """Code of every non-empty bin (>= 0: the coefficient of its one rank; −1 − q: the q-th open
    bin) and the open bins' tables: interval, orders, gather slots, and for narrow ones the
    thresholds at the first and last order (flat, r − o entries each, from ``th_off``) and the
    certain-rank histogram (r − o + 1 entries, from ``h_off``).  Collapsed bins are counted in
    ``counts``."""
    n_pos = sp.size
    nb = bins.size
    code = np.empty(n_bins, dtype=np.float64)
    n_open = 0
    n_th = 0
    for t in range(nb):
        o = lo_rank[t]
        r = hi_rank[t]
        k = bins[t]
        if o == r:
            code[k] = (n_pos + 1 - o) * inv
            counts[o - 1] += hist[k]
        else:
            code[k] = -1 - n_open
            n_open += 1
            if r - o <= narrow:
                n_th += r - o
    q_o = np.empty(n_open, dtype=np.int64)
    q_r = np.empty(n_open, dtype=np.int64)
    q_j0 = np.empty(n_open, dtype=np.int64)
    th_off = np.full(n_open, -1, dtype=np.int64)  # −1: a wide bin
    h_off = np.empty(n_open, dtype=np.int64)
    start = np.empty(n_open + 1, dtype=np.int64)
    th_first = np.empty(n_th, dtype=np.float64)
    th_last = np.empty(n_th, dtype=np.float64)
    d_first = np.empty(n_th, dtype=np.float64)
    d_last = np.empty(n_th, dtype=np.float64)
    tol = np.zeros(n_open, dtype=np.float64)
    b = np.empty(_NARROW + 1, dtype=np.float64)
    hull = np.empty(_NARROW + 1, dtype=np.int64)
    q = 0
    off = 0
    hoff = 0
    pos = 0
    for t in range(nb):
        o = lo_rank[t]
        r = hi_rank[t]
        if o == r:
            continue
        k = bins[t]
        q_o[q] = o
        q_r[q] = r
        q_j0[q] = j0[t]
        start[q] = pos
        pos += hist[k]
        h_off[q] = hoff
        if r - o <= narrow:
            th_off[q] = off
            hoff += r - o + 1
            for kk in range(o, r):  # the same values loss_step gives everywhere else
                d_first[off + kk - o] = loss_step(kind, table, n_pos, kk, j0[t] + 1)
                d_last[off + kk - o] = loss_step(kind, table, n_pos, kk, j0[t] + hist[k])
            w = r - o
            if w == 1:  # the usual case: one threshold, what _thresholds gives for w = 1, without the hull
                th_first[off] = sp[o - 1] + d_first[off] / inv
                th_last[off] = sp[o - 1] + d_last[off] / inv
                mag = max(abs(sp[o - 1]) + abs(d_first[off] / inv), abs(sp[o - 1]) + abs(d_last[off] / inv))
                tol[q] = 32.0 * 2.220446049250313e-16 * (mag + 1e-300)
            else:
                tol[q] = max(_thresholds(o, r, sp, inv, d_first, th_first, off, b, hull),
                             _thresholds(o, r, sp, inv, d_last, th_last, off, b, hull))
            off += w
        q += 1
    start[n_open] = pos
    return code, q_o, q_r, q_j0, th_off, h_off, hoff, start, th_first, th_last, d_first, d_last, tol


@njit(cache=True)
def _assign(scores, y, hi, inv_w, base, code, q_o, q_r, th_off, h_off, n_hist, start, th_first, th_last, d_first,
            d_last, tol, sp, inv, c):
    """Pass 2: coefficients of the settled negatives; the others are gathered per open bin."""
    n_pos = sp.size
    last = n_pos + 1
    n_open = q_o.size
    hist = np.zeros(n_hist, dtype=np.int64)  # certain ranks r − o per narrow bin, from h_off
    vals = np.empty(start[n_open], dtype=np.float64)
    ids = np.empty(start[n_open], dtype=np.int64)
    keys = np.empty(start[n_open], dtype=np.int16)  # narrow bins: (a − o)·(_NARROW + 1) + (b − o)
    fill = start[:n_open].copy()
    top_coef = n_pos * inv
    for i in range(scores.size):
        if y[i]:
            continue
        s = scores[i]
        if s > hi:
            c[i] = top_coef
            continue
        cd = code[_bin(s, inv_w, base)]
        if cd >= 0.0:
            c[i] = cd
            continue
        q = -1 - int(cd)
        off = th_off[q]
        if off >= 0:
            # rank = o + #{thresholds >= s} at the first and the last order of the bin (branch-free);
            # exact unless s is within tol of a threshold, then the exact scan decides
            o = q_o[q]
            r = q_r[q]
            ra = o
            rb = o
            near = False
            tl = tol[q]
            for t in range(off, off + (r - o)):
                ta = th_first[t]
                tb = th_last[t]
                ra += s <= ta
                rb += s <= tb
                near |= abs(s - ta) <= tl
                near |= abs(s - tb) <= tl
            if near or ra != rb:
                if near:
                    ra = _scan_row(s, o, r, o, sp, inv, d_first, off)
                    rb = ra if ra == r else _scan_row(s, ra, r, o, sp, inv, d_last, off)
                if ra != rb:  # the rank depends on the exact order: resolved in _settle
                    t = fill[q]
                    vals[t] = s
                    ids[t] = i
                    keys[t] = (ra - o) * (_NARROW + 1) + (rb - o)
                    fill[q] = t + 1
                    continue
            c[i] = (last - ra) * inv
            hist[h_off[q] + ra - o] += 1
            continue
        t = fill[q]
        vals[t] = s
        ids[t] = i
        fill[q] = t + 1
    return hist, vals, ids, keys, fill


@njit(cache=True)
def _settle(vals, ids, keys, q_o, q_r, q_j0, th_off, h_off, hist, start, fill, sp, kind, table, n_neg, c, counts):
    """Counts of the certain negatives of narrow bins; exact ranks of the gathered ones."""
    n_pos = sp.size
    work = new_work()
    m_max = 0
    for q in range(q_o.size):
        m_max = max(m_max, fill[q] - start[q])
    scratch = (np.empty(m_max, dtype=np.int64), np.empty(m_max, dtype=np.float64), np.empty(m_max, dtype=np.int64),
               np.empty(_NARROW + 2, dtype=np.int64))
    hist_u = np.zeros(_NARROW + 1, dtype=np.int64)
    for q in range(q_o.size):
        o = q_o[q]
        r = q_r[q]
        b0 = start[q]
        m = fill[q] - b0
        if th_off[q] >= 0:
            hist_u[:] = 0
            for t in range(r - o + 1):
                hist_u[t] = hist[h_off[q] + t]
                counts[o + t - 1] += hist_u[t]
            if m > 0:
                _resolve_uncertain(vals, ids, keys, b0, m, q_j0[q], o, hist_u, sp, kind, table, n_pos, n_neg, c,
                                   counts, work, scratch)
        elif m > 0:
            opt_ranks(vals, ids, b0, b0 + m, q_j0[q] - b0, o, r, sp, kind, table, n_pos, n_neg, c, counts, work)


@njit(cache=True)
def _qs_core(scores, y, sp, pos_ids, kind, table, hi, inv_w, width, base, n_bins, narrow, c):
    """Fills ``c`` (every entry is written exactly once) and returns the ± pattern."""
    n = scores.size
    n_pos = sp.size
    n_neg = n - n_pos
    inv = 2.0 / (n_pos * n_neg)
    counts = np.zeros(n_pos + 1, dtype=np.int64)
    hist, n_above = _histogram(scores, y, hi, inv_w, base, n_bins)
    counts[0] += n_above
    bins, j0, lo_rank, hi_rank = _corner_ranks(hist, n_above, base, width, hi, n_neg, sp, inv, kind, table)
    code, q_o, q_r, q_j0, th_off, h_off, n_hist, start, th_first, th_last, d_first, d_last, tol = _classify(
        hist, bins, j0, lo_rank, hi_rank, n_bins, narrow, sp, inv, kind, table, counts)
    hist_q, vals, ids, keys, fill = _assign(scores, y, hi, inv_w, base, code, q_o, q_r, th_off, h_off, n_hist, start,
                                            th_first, th_last, d_first, d_last, tol, sp, inv, c)
    _settle(vals, ids, keys, q_o, q_r, q_j0, th_off, h_off, hist_q, start, fill, sp, kind, table, n_neg, c, counts)
    positive_coefficients(c, counts, pos_ids, n_pos, inv)
    return counts


@njit(cache=True)
def _qs_prepared(scores, y, sp, pos_ids, kind, table, use_above, narrow, n_bins, c):
    """Everything after Algorithm 1's sort: the grid, then :func:`_qs_core`."""
    n_pos = sp.size
    # a negative above every positive has rank 1 when moving a negative down never raises the loss
    hi = sp[0] if use_above else scores.max()
    lo = min(scores[::max(scores.size // _LO_SAMPLE, 1)].min(), hi)  # scores below lo go to bin 0
    inv_w, width, base = _grid(lo, hi, n_pos, scores.size - n_pos, n_bins)
    return _qs_core(scores, y, sp, pos_ids, kind, table, hi, inv_w, width, base,
                    _floor_scaled(hi, inv_w) - base + 1, narrow, c)


@njit(cache=True)
def _qs_batch_kernel(scores, y, starts, ends, kind, c_all, delta):
    """QS on the queries ``scores[starts[k]:ends[k]]`` in one compiled loop, for AP and NDCG (a
    closed-form derivative that is never positive; Δ by :func:`loss_value`)."""
    table = np.zeros(1)
    for k in range(starts.size):
        a = starts[k]
        b = ends[k]
        s = scores[a:b]
        pos = np.flatnonzero(y[a:b])
        pos_ids = pos[np.argsort(-s[pos], kind="mergesort")]  # stable: (−score, index) order
        if kind == KIND_NDCG_LOG2:  # NDCGLoss.kernel_spec's table
            table[0] = 1.0 / ndcg_norm(pos.size, True)
        counts = _qs_prepared(s, y[a:b], s[pos_ids], pos_ids, kind, table, True, _NARROW, 0, c_all[a:b])
        delta[k] = loss_value(kind, counts, True)


@njit(cache=True)
def _scan_row(s, lo, hi, o, sp, inv, d, off):
    """:func:`best_rank` with the loss steps d(k) = d[off + k − o] precomputed (bit-identical)."""
    best = lo
    diff = 0.0
    for k in range(lo, hi):
        diff += (sp[k - 1] - s) * inv + d[off + k - o]
        if diff >= 0.0:
            best = k + 1
            diff = 0.0
    return best


@njit(cache=True)
def _thresholds(o, u, sp, inv, d, out, off, b, hull):
    """Scores θ_r (r = o..u−1) with opt ≥ r + 1 ⟺ s ≤ θ_r, for one order j (d_j(k) = d[off + k − o]).

    With B_t = Σ_{k=o}^{o+t−1} (sp_k + d_j(k)/inv), f(o + t) = inv·(B_t − t·s) + const: the best rank
    is the highest maximiser over lines of slope −t, i.e. a vertex of the upper hull of the points
    (t, B_t), and the threshold between two hull vertices is the slope of the hull edge (ties go to
    the larger rank).  O(u − o).  Writes θ into out[off + r − o] (non-increasing); returns a tolerance
    well above the rounding error (scores that close to a θ are resolved by the exact scan).
    ``b`` (float) and ``hull`` (int) are work buffers of length >= u − o + 1.
    """
    w = u - o
    b[0] = 0.0
    mag = 0.0
    for t in range(w):
        term = sp[o + t - 1] + d[off + t] / inv
        b[t + 1] = b[t] + term
        mag += abs(sp[o + t - 1]) + abs(d[off + t] / inv)
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
            out[off + r] = slope
    for r in range(1, w):  # exact monotonicity despite rounding (changes below the tolerance)
        if out[off + r] > out[off + r - 1]:
            out[off + r] = out[off + r - 1]
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
    key, tv, ti, below = scratch  # work buffers: three of length >= m, below of length w + 1
    # below[a - o + 1] = #{certain of rank <= a}
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


def _use_walk(kind, n_pos, n_neg):
    """Whether the certified walk (:mod:`._qs_walk`) beats the grid: AP or NDCG (log2) with at
    least N / 50 positives (the measured crossover, N = 3·10^3 .. 10^6, is near 1–2%)."""
    return kind in (KIND_AP, KIND_NDCG_LOG2) and n_pos * _WALK_RATIO >= n_neg


def qs_oracle(scores, y, loss, *, _n_bins=None, _narrow=True, _walk=None):
    """QS oracle (Algorithms 1–2) for any QS-suitable loss.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
    loss : QSLoss
    _n_bins : int, optional
        Private, for tests: about this many grid bins instead of N / 8 (1 = plain Algorithm 2 on
        all negatives).
    _narrow : bool, default=True
        Private, for tests: False sends every open bin to Algorithm 2 (no thresholds).
    _walk : bool, optional
        Private, for tests: force (True; AP and NDCG-log2 only) or forbid (False) the sort-and-walk
        path taken by default when P ≥ N / 50.  ``_n_bins`` or ``_narrow`` imply the grid.

    Returns
    -------
    c : ndarray of float64, shape (n,)
        Coefficients of Ψ(X, R̂) − Ψ(X, R*).
    delta : float
        Δ(R*, R̂).
    """
    c = np.empty(scores.size)  # numpy's allocator: huge pages for a large output, far fewer page faults
    return c, _qs_into(scores, y, loss, c, _n_bins, _narrow, _walk)


def _qs_into(scores, y, loss, c, n_bins=None, narrow=True, walk=None):
    """:func:`qs_oracle` writing ``c`` into the given array; returns Δ."""
    n_pos = int(np.count_nonzero(y))
    n_neg = scores.size - n_pos
    kind, table = loss.kernel_spec(n_pos, n_neg)
    if walk is None:
        walk = n_bins is None and narrow and _use_walk(kind, n_pos, n_neg)
    if walk:
        return float(loss.value(walk_oracle_core(scores, y, n_pos, c, kind, table)))
    sp, pos_ids = sorted_positives(scores, y)
    counts = _qs_prepared(scores, y, sp, pos_ids, kind, np.asarray(table, dtype=np.float64),
                          loss.nonincreasing(n_pos, n_neg), _NARROW if narrow else 0,
                          0 if n_bins is None else int(n_bins), c)
    return float(loss.value(counts))


def batchable(loss):
    """Whether :func:`qs_batch` serves ``loss`` in its compiled loop: the built-in AP and NDCG
    (log2 discount) losses, whose kernel table and Δ the loop computes as they do."""
    return type(loss) is APLoss or (type(loss) is NDCGLoss and loss.discount == "log2")


def qs_batch(scores, y, starts, ends, loss):
    """QS on many queries at once: exactly :func:`qs_oracle` on each, without its per-call cost.

    Queries of up to 4096 samples run in one compiled loop (Algorithm 1 included); larger ones,
    where the per-call cost does not matter, through :func:`qs_oracle`.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
        Stacked scores; rows outside the queries are ignored.
    y : ndarray of bool, shape (n,)
    starts, ends : ndarray of int64, shape (Q,)
        Query ``k`` is ``scores[starts[k]:ends[k]]``; ranges disjoint, each with a positive and a
        negative.
    loss : QSLoss
        A loss for which :func:`batchable` is True.

    Returns
    -------
    c : ndarray of float64, shape (n,)
        Each query's ``c`` in its rows, zero elsewhere.
    delta : ndarray of float64, shape (Q,)
        Δ per query.
    """
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    covered = int((ends - starts).sum()) == scores.size  # the queries fill every row: no zeroing
    c = np.empty(scores.size) if covered else np.zeros(scores.size)
    delta = np.empty(starts.size)
    small = ends - starts <= _BATCH_MAX
    delta_small = np.empty(int(small.sum()))
    _qs_batch_kernel(scores, y, starts[small], ends[small], loss.kernel_spec(1, 1)[0], c, delta_small)
    delta[small] = delta_small
    for k in np.flatnonzero(~small):
        delta[k] = _qs_into(scores[starts[k]:ends[k]], y[starts[k]:ends[k]], loss, c[starts[k]:ends[k]])
    return c, delta
