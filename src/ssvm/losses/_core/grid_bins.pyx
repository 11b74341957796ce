"""Step 3 of QS's grid path (:mod:`.grid`; the first levels of Algorithm 2 of Mohapatra et al.): which
bins are settled by their corners, the rank thresholds of the narrow ones, and the pass that settles
most negatives by a table look-up or by comparisons with those thresholds and gathers the rest.

In a narrow bin (at most ``NARROW`` possible ranks) the rank boundaries are score thresholds θ_r
(rank ≥ r + 1 iff s ≤ θ_r) at the bin's first and last order; a negative with the same rank at both
orders, not within a rounding margin of a threshold (``numerics.pxd``), is settled by
comparisons.  The thresholds come from the upper hull of the partial sums of the steps
(:func:`thresholds`); the exact scan (:func:`scan_row`) decides whatever lies within the margin.
"""

from libc.stdint cimport int16_t, int32_t, int64_t

from .derivative cimport loss_step, objective_t
from .grid cimport NARROW
from .numerics cimport EPS, HULL_MARGIN, THRESHOLD_MARGIN, TINY



cdef inline double max_py(double a, double b) noexcept nogil:
    """Python's max(a, b): ``a`` unless ``b`` is larger."""
    return b if b > a else a


cdef open_bins_t classify(const int32_t* hist, const bins_t* bins, int64_t n_bins, int64_t narrow,
                          const objective_t* obj, int64_t* counts, grid_work_t* work) noexcept nogil:
    """The open bins of the non-empty ``bins``; counts the negatives of the settled (collapsed) bins into
    ``counts``.  ``narrow``: the largest number of ranks of a bin settled by thresholds (0: none)."""
    cdef const double* sp = obj.sp
    cdef double inv = obj.inv
    cdef int64_t n_pos = obj.n_pos
    cdef int64_t nb = bins.nb
    work.code.resize(n_bins)
    cdef double* code = work.code.data()
    cdef int64_t n_open = 0
    cdef int64_t n_th = 0
    cdef int64_t t, o, r, k, j0, kk, w
    for t in range(nb):
        o = bins.lo_rank[t]
        r = bins.hi_rank[t]
        k = bins.bins[t]
        if o == r:
            code[k] = <double>(n_pos + 1 - o) * inv
            counts[o - 1] += hist[k]
        else:
            code[k] = <double>(-1 - n_open)
            n_open += 1
            if r - o <= narrow:
                n_th += r - o
    work.q_o.resize(n_open)
    work.q_r.resize(n_open)
    work.q_j0.resize(n_open)
    work.th_off.assign(n_open, -1)  # −1: a wide bin
    work.h_off.resize(n_open)
    work.start.resize(n_open + 1)
    work.th_first.resize(n_th)
    work.th_last.resize(n_th)
    work.d_first.resize(n_th)
    work.d_last.resize(n_th)
    work.tol.assign(n_open, 0.0)
    cdef double* th_first = work.th_first.data()
    cdef double* th_last = work.th_last.data()
    cdef double* d_first = work.d_first.data()
    cdef double* d_last = work.d_last.data()
    cdef double b_sc[NARROW + 1]
    cdef int64_t hull_sc[NARROW + 1]
    cdef int64_t q = 0
    cdef int64_t off = 0
    cdef int64_t hoff = 0
    cdef int64_t pos = 0
    cdef double mag
    for t in range(nb):
        o = bins.lo_rank[t]
        r = bins.hi_rank[t]
        if o == r:
            continue
        k = bins.bins[t]
        j0 = bins.j0[t]
        work.q_o[q] = o
        work.q_r[q] = r
        work.q_j0[q] = j0
        work.start[q] = pos
        pos += hist[k]
        work.h_off[q] = hoff
        if r - o <= narrow:
            work.th_off[q] = off
            hoff += r - o + 1
            for kk in range(o, r):  # the same values loss_step gives everywhere else
                d_first[off + kk - o] = loss_step(obj, kk, j0 + 1)
                d_last[off + kk - o] = loss_step(obj, kk, j0 + hist[k])
            w = r - o
            if w == 1:  # the usual case: one threshold, what thresholds() gives for w = 1, without the hull
                th_first[off] = sp[o - 1] + d_first[off] / inv
                th_last[off] = sp[o - 1] + d_last[off] / inv
                mag = max_py(abs(sp[o - 1]) + abs(d_first[off] / inv), abs(sp[o - 1]) + abs(d_last[off] / inv))
                work.tol[q] = THRESHOLD_MARGIN * EPS * (mag + TINY)
            else:
                work.tol[q] = max_py(thresholds(o, r, obj, d_first, th_first, off, b_sc, hull_sc),
                                     thresholds(o, r, obj, d_last, th_last, off, b_sc, hull_sc))
            off += w
        q += 1
    work.start[n_open] = pos
    cdef open_bins_t ob
    ob.code = code
    ob.n_open = n_open
    ob.o = work.q_o.data()
    ob.r = work.q_r.data()
    ob.j0 = work.q_j0.data()
    ob.start = work.start.data()
    ob.th_off = work.th_off.data()
    ob.h_off = work.h_off.data()
    ob.n_hist = hoff
    ob.tol = work.tol.data()
    ob.th_first = th_first
    ob.th_last = th_last
    ob.d_first = d_first
    ob.d_last = d_last
    return ob


cdef double thresholds(int64_t o, int64_t u, const objective_t* obj, const double* d, double* out, int64_t off,
                       double* b, int64_t* hull) noexcept nogil:
    """Scores θ_r (r = o..u−1) with opt ≥ r + 1 ⟺ s ≤ θ_r, for one order j (d_j(k) = d[off + k − o]).

    With B_t = Σ_{k=o}^{o+t−1} (sp_k + d_j(k)/inv), f(o + t) = inv·(B_t − t·s) + const: the best rank is the
    highest maximiser over lines of slope −t, i.e. a vertex of the upper hull of the points (t, B_t), and the
    threshold between two hull vertices is the slope of the hull edge (ties go to the larger rank).
    O(u − o).  Writes θ into out[off + r − o] (non-increasing); returns a margin well above the rounding
    error (scores that close to a θ are resolved by the exact scan).  ``b``, ``hull``: work buffers of at
    least u − o + 1 entries."""
    cdef const double* sp = obj.sp
    cdef double inv = obj.inv
    cdef int64_t w = u - o
    cdef int64_t t, h, x, p, q, kk, r
    cdef double term, slope
    b[0] = 0.0
    cdef double mag = 0.0
    for t in range(w):
        term = sp[o + t - 1] + d[off + t] / inv
        b[t + 1] = b[t] + term
        mag += abs(sp[o + t - 1]) + abs(d[off + t] / inv)
    h = 0
    for x in range(w + 1):
        while h >= 2:
            p = hull[h - 2]
            q = hull[h - 1]
            if (b[q] - b[p]) / <double>(q - p) <= (b[x] - b[q]) / <double>(x - q):
                h -= 1  # q is not above the chord: never the (highest) best rank
            else:
                break
        hull[h] = x
        h += 1
    for kk in range(1, h):
        p = hull[kk - 1]
        q = hull[kk]
        slope = (b[q] - b[p]) / <double>(q - p)
        for r in range(p, q):
            out[off + r] = slope
    for r in range(1, w):  # exact monotonicity despite rounding (changes below the margin)
        if out[off + r] > out[off + r - 1]:
            out[off + r] = out[off + r - 1]
    return HULL_MARGIN * EPS * <double>(w + 1) * (mag + TINY)


cdef inline int64_t scan_row(double s, int64_t lo, int64_t hi, int64_t o, const objective_t* obj, const double* d,
                             int64_t off) noexcept nogil:
    """:c:func:`best_rank` over ranks lo..hi with the loss steps d(k) = d[off + k − o] precomputed
    (bit-identical)."""
    cdef const double* sp = obj.sp
    cdef double inv = obj.inv
    cdef int64_t best = lo
    cdef double diff = 0.0
    cdef int64_t k
    for k in range(lo, hi):
        diff += (sp[k - 1] - s) * inv + d[off + k - o]
        if diff >= 0.0:
            best = k + 1
            diff = 0.0
    return best


cdef gathered_t assign(const double* scores, const unsigned char* y, int64_t n, const grid_t* grid,
                       const open_bins_t* ob, const objective_t* obj, double* c, grid_work_t* work) noexcept nogil:
    """Pass 2: the coefficients of the settled negatives into ``c``; the others gathered per open bin (every
    sample's bin from pass 1, ``work.sample_bin``)."""
    cdef int64_t n_pos = obj.n_pos
    cdef double inv = obj.inv
    cdef const int32_t* sample_bin = work.sample_bin.data()
    cdef const double* code = ob.code
    cdef int64_t last = n_pos + 1
    cdef int64_t n_open = ob.n_open
    cdef int64_t n_slots = ob.start[n_open]
    work.g_hist.assign(ob.n_hist, 0)  # certain ranks r − o per narrow bin, from h_off
    work.vals.resize(n_slots)
    work.ids.resize(n_slots)
    work.keys.resize(n_slots)  # narrow bins: (a − o)·(NARROW + 1) + (b − o)
    work.fill.resize(n_open)
    cdef int64_t* hist = work.g_hist.data()
    cdef double* vals = work.vals.data()
    cdef int64_t* ids = work.ids.data()
    cdef int16_t* keys = work.keys.data()
    cdef int64_t* fill = work.fill.data()
    cdef int64_t i, q, off, o, r, ra, rb, t
    cdef int32_t b
    cdef double s, cd, tl, ta, tb
    cdef bint near
    for q in range(n_open):
        fill[q] = ob.start[q]
    cdef double top_coef = <double>n_pos * inv
    for i in range(n):
        if y[i]:
            continue
        b = sample_bin[i]
        if b < 0:  # above every positive: rank 1
            c[i] = top_coef
            continue
        cd = code[b]
        if cd >= 0.0:
            c[i] = cd
            continue
        s = scores[i]
        q = -1 - <int64_t>cd
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
                    keys[t] = <int16_t>((ra - o) * (NARROW + 1) + (rb - o))
                    fill[q] = t + 1
                    continue
            c[i] = <double>(last - ra) * inv
            hist[ob.h_off[q] + ra - o] += 1
            continue
        t = fill[q]
        vals[t] = s
        ids[t] = i
        fill[q] = t + 1
    cdef gathered_t g
    g.hist = hist
    g.vals = vals
    g.ids = ids
    g.keys = keys
    g.fill = fill
    return g
