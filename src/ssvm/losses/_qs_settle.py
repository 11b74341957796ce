"""QS's last step (step 4 of :mod:`ssvm.losses.qs`): the exact ranks of the gathered negatives.

A wide bin runs Algorithm 2 on all its negatives with the interval of its corners.  The gathered
negatives of a narrow bin have a pair of possible ranks (a, b) and get their exact order from the
certain negatives of rank ≤ a: few of them are sorted and swept, many go to Algorithm 2 in groups of
equal pairs.
"""

import numpy as np
from numba import njit

from ._qs_bins import NARROW
from ._qs_recursion import new_work, opt_ranks
from ._rank_kernels import best_rank

__all__ = ["settle"]

_SWEEP_MAX = 32  # narrow bins with at most this many order-dependent negatives sort and sweep them


@njit(cache=True)
def settle(g, ob, obj, out):
    """Counts of the certain negatives of the narrow bins into ``out.counts``; exact ranks of the
    gathered ones (:class:`~ssvm.losses._qs_bins.Gathered` ``g``, bins ``ob``) into ``out``."""
    work = new_work()
    m_max = 0
    for q in range(ob.o.size):
        m_max = max(m_max, g.fill[q] - ob.start[q])
    scratch = (np.empty(m_max, dtype=np.int64), np.empty(m_max, dtype=np.float64), np.empty(m_max, dtype=np.int64),
               np.empty(NARROW + 2, dtype=np.int64))
    hist_u = np.zeros(NARROW + 1, dtype=np.int64)
    counts = out.counts
    for q in range(ob.o.size):
        o = ob.o[q]
        r = ob.r[q]
        b0 = ob.start[q]
        m = g.fill[q] - b0
        if ob.th_off[q] >= 0:
            hist_u[:] = 0
            for t in range(r - o + 1):
                hist_u[t] = g.hist[ob.h_off[q] + t]
                counts[o + t - 1] += hist_u[t]
            if m > 0:
                _resolve_uncertain(g, q, ob, hist_u, obj, out, work, scratch)
        elif m > 0:
            opt_ranks(g.vals, g.ids, b0, b0 + m, ob.j0[q] - b0, o, r, obj, out, work)


@njit(cache=True)
def _resolve_uncertain(g, q, ob, hist_u, obj, out, work, scratch):
    """Exact ranks of the gathered negatives of the narrow bin q, whose rank differs between the
    bin's first and last order.

    Each such negative x has a pair (a, b) = (its best rank at the first order, at the last one),
    stored in ``g.keys`` by pass 2, and a < b.  A certain negative z (one rank ρ at both orders)
    lies above x iff ρ ≤ a (opt is monotone in score at a fixed order, and a < b), so x's order is
    j0 + 1 + #{certain of rank ≤ a} + #{uncertain above x}.  Few of them (the usual case): sorted
    by (−score, index) and swept, each opt searched in [max(a, previous opt), b].  Many: negatives
    with the same pair are contiguous in that order and the groups are ordered lexicographically by
    pair, so every group is an independent block for Algorithm 2 with a known order offset and rank
    interval [a, b].  ``hist_u[t]``: the bin's certain negatives of rank o + t.
    """
    vals = g.vals
    ids = g.ids
    keys = g.keys
    b0 = ob.start[q]
    m = g.fill[q] - b0
    j0 = ob.j0[q]
    o = ob.o[q]
    w = NARROW + 1
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
            p = t - 1
            while p >= b0 and (vals[p] < v or (vals[p] == v and ids[p] > i)):
                vals[p + 1] = vals[p]
                ids[p + 1] = ids[p]
                keys[p + 1] = keys[p]
                p -= 1
            vals[p + 1] = v
            ids[p + 1] = i
            keys[p + 1] = k
        n_pos = obj.n_pos
        inv = obj.inv
        c = out.c
        counts = out.counts
        prev = o
        for t in range(m):
            k = keys[b0 + t]
            a = o + k // w
            b = o + k % w
            j = j0 + 1 + below[a - o + 1] + t
            r = best_rank(vals[b0 + t], j, max(a, prev), b, obj)
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
        opt_ranks(vals, ids, b0 + lo, b0 + hi, j0 + above - (b0 + lo), a, b, obj, out, work)
