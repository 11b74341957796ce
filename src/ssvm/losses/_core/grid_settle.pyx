"""Step 4 of QS's grid path (:mod:`.grid`): the exact ranks of the gathered negatives, by Algorithm 2 of
Mohapatra et al. (:c:func:`opt_ranks`) where a bin's negatives need it.

A wide bin runs Algorithm 2 on all its negatives with the interval of its corners.  The gathered
negatives of a narrow bin have a pair of possible ranks (a, b) and get their exact order from the
certain negatives of rank ≤ a: few of them are sorted and swept, many go to Algorithm 2 in groups of
equal pairs.
"""

from libc.stdint cimport int16_t, int64_t

from .derivative cimport best_rank, objective_t, result_t
from .grid cimport NARROW, gathered_t, grid_work_t, open_bins_t
from .opt_ranks cimport new_work, opt_ranks

cdef enum:
    SWEEP_MAX = 32  # narrow bins with at most this many order-dependent negatives sort and sweep them


cdef void settle(gathered_t* g, const open_bins_t* ob, const objective_t* obj, result_t* out,
                 grid_work_t* work) noexcept nogil:
    """Counts of the certain negatives of the narrow bins into ``out.counts``; exact ranks of the gathered
    ones (``g``, bins ``ob``) into ``out``."""
    new_work(&work.opt)
    cdef int64_t m_max = 0
    cdef int64_t q, o, r, b0, m, t
    for q in range(ob.n_open):
        if g.fill[q] - ob.start[q] > m_max:
            m_max = g.fill[q] - ob.start[q]
    work.key_s.resize(m_max)
    work.tv.resize(m_max)
    work.ti.resize(m_max)
    cdef int64_t hist_u[NARROW + 1]
    cdef int64_t* counts = out.counts
    for q in range(ob.n_open):
        o = ob.o[q]
        r = ob.r[q]
        b0 = ob.start[q]
        m = g.fill[q] - b0
        if ob.th_off[q] >= 0:
            for t in range(NARROW + 1):
                hist_u[t] = 0
            for t in range(r - o + 1):
                hist_u[t] = g.hist[ob.h_off[q] + t]
                counts[o + t - 1] += hist_u[t]
            if m > 0:
                resolve_uncertain(g, q, ob, hist_u, obj, out, work)
        elif m > 0:
            opt_ranks(g.vals, g.ids, b0, b0 + m, ob.j0[q] - b0, o, r, obj, out, &work.opt)


cdef void resolve_uncertain(gathered_t* g, int64_t q, const open_bins_t* ob, const int64_t* hist_u,
                            const objective_t* obj, result_t* out, grid_work_t* work) noexcept nogil:
    """Exact ranks of the gathered negatives of the narrow bin q, whose rank differs between the bin's first
    and last order.

    Each such negative x has a pair (a, b) = (its best rank at the first order, at the last one), stored in
    ``g.keys`` by pass 2, and a < b.  A certain negative z (one rank ρ at both orders) lies above x iff
    ρ ≤ a (opt is monotone in score at a fixed order, and a < b), so x's order is j0 + 1 + #{certain of rank
    ≤ a} + #{uncertain above x}.  Few of them (the usual case): sorted by (−score, index) and swept, each opt
    searched in [max(a, previous opt), b].  Many: negatives with the same pair are contiguous in that order
    and the groups are ordered lexicographically by pair, so every group is an independent block for
    Algorithm 2 with a known order offset and rank interval [a, b].  ``hist_u[t]``: the bin's certain
    negatives of rank o + t."""
    cdef double* vals = g.vals
    cdef int64_t* ids = g.ids
    cdef int16_t* keys = g.keys
    cdef int64_t b0 = ob.start[q]
    cdef int64_t m = g.fill[q] - b0
    cdef int64_t j0 = ob.j0[q]
    cdef int64_t o = ob.o[q]
    cdef int64_t w = NARROW + 1
    cdef int64_t below[NARROW + 2]  # below[a − o + 1] = #{certain of rank <= a}
    cdef int64_t t, p, i, k, a, b, j, r, prev, lo, hi, above
    cdef double v
    cdef int16_t kk
    below[0] = 0
    for t in range(w):
        below[t + 1] = below[t] + hist_u[t]
    if m <= SWEEP_MAX:
        for t in range(b0 + 1, b0 + m):  # insertion sort by (−score, index)
            v = vals[t]
            i = ids[t]
            kk = keys[t]
            p = t - 1
            while p >= b0 and (vals[p] < v or (vals[p] == v and ids[p] > i)):
                vals[p + 1] = vals[p]
                ids[p + 1] = ids[p]
                keys[p + 1] = keys[p]
                p -= 1
            vals[p + 1] = v
            ids[p + 1] = i
            keys[p + 1] = kk
        prev = o
        for t in range(m):
            k = keys[b0 + t]
            a = o + k // w
            b = o + k % w
            j = j0 + 1 + below[a - o + 1] + t
            r = best_rank(vals[b0 + t], j, a if a > prev else prev, b, obj)
            out.c[ids[b0 + t]] = <double>(obj.n_pos + 1 - r) * obj.inv
            out.counts[r - 1] += 1
            prev = r
        return
    cdef int64_t* key = work.key_s.data()
    cdef double* tv = work.tv.data()
    cdef int64_t* ti = work.ti.data()
    work.cnt.assign(2 * (w * w + 1), 0)
    cdef int64_t* cnt = work.cnt.data()
    cdef int64_t* put = cnt + (w * w + 1)
    for t in range(m):
        k = keys[b0 + t]
        key[t] = k
        cnt[k + 1] += 1
    for k in range(w * w):
        cnt[k + 1] += cnt[k]
    for k in range(w * w):
        put[k] = cnt[k]
    for t in range(m):
        k = key[t]
        tv[put[k]] = vals[b0 + t]
        ti[put[k]] = ids[b0 + t]
        put[k] += 1
    for t in range(m):
        vals[b0 + t] = tv[t]
        ids[b0 + t] = ti[t]
    for k in range(w * w):
        lo = cnt[k]
        hi = cnt[k + 1]
        if lo == hi:
            continue
        a = o + k // w
        b = o + k % w
        above = lo + below[a - o + 1]  # uncertain negatives of the groups before this one, certain of rank <= a
        opt_ranks(vals, ids, b0 + lo, b0 + hi, j0 + above - (b0 + lo), a, b, obj, out, &work.opt)
