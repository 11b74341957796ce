"""QS's open bins (step 3 of :mod:`ssvm.losses.qs`): which bins are settled by their corners, the
rank thresholds of the narrow ones, and the pass that settles most negatives by a table look-up
or by comparisons with those thresholds and gathers the rest.

In a narrow bin (at most ``NARROW`` possible ranks) the rank boundaries are score thresholds θ_r
(rank ≥ r + 1 iff s ≤ θ_r) at the bin's first and last order; a negative with the same rank at both
orders, not within a rounding margin of a threshold (:mod:`._numerics`), is settled by comparisons.
"""

from collections import namedtuple

import numpy as np
from numba import njit

from ._numerics import EPS, HULL_MARGIN, THRESHOLD_MARGIN, TINY
from ._qs_grid import bin_of
from ._rank_kernels import loss_step

__all__ = ["NARROW", "OpenBins", "Gathered", "classify", "assign", "thresholds", "scan_row"]

NARROW = 8  # a bin with at most this many possible ranks is narrow: settled by thresholds

OpenBins = namedtuple("OpenBins", ["code", "o", "r", "j0", "start", "th_off", "h_off", "n_hist", "tol", "th_first",
                                   "th_last", "d_first", "d_last"])
OpenBins.__doc__ = """What :func:`classify` finds.  ``code[k]`` for every non-empty bin k: >= 0, the
coefficient of its one rank; −1 − q, the q-th open bin.  Per open bin q: its rank interval
[o[q], r[q]], first order minus one ``j0[q]``, first gather slot ``start[q]`` (``start[Q]`` = all
slots), for a narrow bin the offset ``th_off[q]`` of its r − o thresholds (−1: a wide bin), the
offset ``h_off[q]`` of its histogram of certain ranks (r − o + 1 entries; ``n_hist`` in all) and the
margin ``tol[q]`` of its thresholds.  Flat, per threshold: θ at the bin's first and last order and
the loss steps d at both."""

Gathered = namedtuple("Gathered", ["hist", "vals", "ids", "keys", "fill"])
Gathered.__doc__ = """What :func:`assign` leaves: the certain-rank histograms of the narrow bins, and the
gathered negatives (score, index, and for a narrow bin the key (a − o)·(NARROW + 1) + (b − o) of its
ranks (a, b) at the bin's first and last order) in slots start[q]..fill[q] − 1 of open bin q."""


@njit(cache=True)
def classify(hist, bins, n_bins, narrow, obj, counts):
    """The :class:`OpenBins` of the :class:`~ssvm.losses._qs_grid.Bins` ``bins``; counts the
    negatives of the settled (collapsed) bins into ``counts``.  ``narrow``: the largest number of
    ranks of a bin settled by thresholds (0: none)."""
    sp = obj.sp
    inv = obj.inv
    n_pos = obj.n_pos
    kind = obj.kind
    table = obj.table
    nb = bins.bins.size
    code = np.empty(n_bins, dtype=np.float64)
    n_open = 0
    n_th = 0
    for t in range(nb):
        o = bins.lo_rank[t]
        r = bins.hi_rank[t]
        k = bins.bins[t]
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
    scratch = (np.empty(NARROW + 1, dtype=np.float64), np.empty(NARROW + 1, dtype=np.int64))
    q = 0
    off = 0
    hoff = 0
    pos = 0
    for t in range(nb):
        o = bins.lo_rank[t]
        r = bins.hi_rank[t]
        if o == r:
            continue
        k = bins.bins[t]
        j0 = bins.j0[t]
        q_o[q] = o
        q_r[q] = r
        q_j0[q] = j0
        start[q] = pos
        pos += hist[k]
        h_off[q] = hoff
        if r - o <= narrow:
            th_off[q] = off
            hoff += r - o + 1
            for kk in range(o, r):  # the same values loss_step gives everywhere else
                d_first[off + kk - o] = loss_step(kind, table, n_pos, kk, j0 + 1)
                d_last[off + kk - o] = loss_step(kind, table, n_pos, kk, j0 + hist[k])
            w = r - o
            if w == 1:  # the usual case: one threshold, what thresholds() gives for w = 1, without the hull
                th_first[off] = sp[o - 1] + d_first[off] / inv
                th_last[off] = sp[o - 1] + d_last[off] / inv
                mag = max(abs(sp[o - 1]) + abs(d_first[off] / inv), abs(sp[o - 1]) + abs(d_last[off] / inv))
                tol[q] = THRESHOLD_MARGIN * EPS * (mag + TINY)
            else:
                tol[q] = max(thresholds(o, r, obj, d_first, th_first, off, scratch),
                             thresholds(o, r, obj, d_last, th_last, off, scratch))
            off += w
        q += 1
    start[n_open] = pos
    return OpenBins(code, q_o, q_r, q_j0, start, th_off, h_off, hoff, tol, th_first, th_last, d_first, d_last)


@njit(cache=True)
def thresholds(o, u, obj, d, out, off, scratch):
    """Scores θ_r (r = o..u−1) with opt ≥ r + 1 ⟺ s ≤ θ_r, for one order j (d_j(k) = d[off + k − o]).

    With B_t = Σ_{k=o}^{o+t−1} (sp_k + d_j(k)/inv), f(o + t) = inv·(B_t − t·s) + const: the best rank
    is the highest maximiser over lines of slope −t, i.e. a vertex of the upper hull of the points
    (t, B_t), and the threshold between two hull vertices is the slope of the hull edge (ties go to
    the larger rank).  O(u − o).  Writes θ into out[off + r − o] (non-increasing); returns a margin
    well above the rounding error (scores that close to a θ are resolved by the exact scan).
    ``scratch`` = (float, int) work buffers of length >= u − o + 1.
    """
    sp = obj.sp
    inv = obj.inv
    b, hull = scratch
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
    for r in range(1, w):  # exact monotonicity despite rounding (changes below the margin)
        if out[off + r] > out[off + r - 1]:
            out[off + r] = out[off + r - 1]
    return HULL_MARGIN * EPS * (w + 1) * (mag + TINY)


@njit(cache=True)
def scan_row(s, lo, hi, o, obj, d, off):
    """:func:`best_rank` over ranks lo..hi with the loss steps d(k) = d[off + k − o] precomputed
    (bit-identical)."""
    sp = obj.sp
    inv = obj.inv
    best = lo
    diff = 0.0
    for k in range(lo, hi):
        diff += (sp[k - 1] - s) * inv + d[off + k - o]
        if diff >= 0.0:
            best = k + 1
            diff = 0.0
    return best


@njit(cache=True)
def assign(scores, y, grid, ob, obj, c):
    """Pass 2: the coefficients of the settled negatives into ``c``; the others gathered per open
    bin (:class:`Gathered`)."""
    n_pos = obj.n_pos
    inv = obj.inv
    hi = grid.hi
    code = ob.code
    last = n_pos + 1
    n_open = ob.o.size
    hist = np.zeros(ob.n_hist, dtype=np.int64)  # certain ranks r − o per narrow bin, from h_off
    vals = np.empty(ob.start[n_open], dtype=np.float64)
    ids = np.empty(ob.start[n_open], dtype=np.int64)
    keys = np.empty(ob.start[n_open], dtype=np.int16)  # narrow bins: (a − o)·(NARROW + 1) + (b − o)
    fill = ob.start[:n_open].copy()
    top_coef = n_pos * inv
    for i in range(scores.size):
        if y[i]:
            continue
        s = scores[i]
        if s > hi:
            c[i] = top_coef
            continue
        cd = code[bin_of(s, grid)]
        if cd >= 0.0:
            c[i] = cd
            continue
        q = -1 - int(cd)
        off = ob.th_off[q]
        if off >= 0:
            # rank = o + #{thresholds >= s} at the first and the last order of the bin (branch-free);
            # exact unless s is within tol of a threshold, then the exact scan decides
            o = ob.o[q]
            r = ob.r[q]
            ra = o
            rb = o
            near = False
            tl = ob.tol[q]
            for t in range(off, off + (r - o)):
                ta = ob.th_first[t]
                tb = ob.th_last[t]
                ra += s <= ta
                rb += s <= tb
                near |= abs(s - ta) <= tl
                near |= abs(s - tb) <= tl
            if near or ra != rb:
                if near:
                    ra = scan_row(s, o, r, o, obj, ob.d_first, off)
                    rb = ra if ra == r else scan_row(s, ra, r, o, obj, ob.d_last, off)
                if ra != rb:  # the rank depends on the exact order: resolved by the settle step
                    t = fill[q]
                    vals[t] = s
                    ids[t] = i
                    keys[t] = (ra - o) * (NARROW + 1) + (rb - o)
                    fill[q] = t + 1
                    continue
            c[i] = (last - ra) * inv
            hist[ob.h_off[q] + ra - o] += 1
            continue
        t = fill[q]
        vals[t] = s
        ids[t] = i
        fill[q] = t + 1
    return Gathered(hist, vals, ids, keys, fill)
