"""Exact top-k inference with c-star pairwise terms (Mensink, Verbeek & Caetano 2011, §4): the
compiled loop of :func:`ssvm.label_ranking.star_inference` (see :mod:`.inference` for the problem).

For each of the 2^C in/out states of the core labels, visited in Gray-code order (one core label
flips per step: :func:`flip_core` updates the non-core labels' context-adjusted scores in O(L)),
the non-core labels do not interact, so the best set of size k takes the best ``k − #core in`` of
them by one selection (``std::nth_element``, O(L)); with the size free ("any size") it takes those
with a positive adjusted score. Ties: among equal non-core labels the lower index, among equal
core states the first in Gray-code order. With ``marginals`` the loop also keeps, for every label,
the best score with it in and with it out.
"""

from libc.math cimport INFINITY
from libc.stdint cimport int8_t, int64_t, uint8_t
from libcpp.vector cimport vector

__all__ = ["infer_batch"]

cdef extern from "<algorithm>" namespace "std" nogil:
    void nth_element[Iter](Iter first, Iter nth, Iter last)


cdef inline double fmax_first(double a, double b) noexcept nogil:
    """Python's ``max(a, b)``: ``a`` unless ``b`` is larger."""
    return b if b > a else a


cdef inline double fmin_first(double a, double b) noexcept nogil:
    """Python's ``min(a, b)``: ``a`` unless ``b`` is smaller."""
    return b if b < a else a


cdef struct Work:
    # one sample's work arrays (L labels, C core labels), reused from row to row
    uint8_t* is_core  # L
    int64_t* noncore  # L − C
    int64_t* free  # L − C
    double* adj  # L
    uint8_t* on  # C
    uint8_t* sel  # L
    double* buf  # L − C


cdef double flip_core(int64_t b, uint8_t* on, const double* a, const int64_t* core, int64_t C,
                      const double* Fc, int64_t L, double* adj, const int64_t* noncore, int64_t m_nc,
                      double base) noexcept nogil:
    """Flip core label ``b`` and return the new core part of the score; ``adj`` follows."""
    cdef double sign = -1.0 if on[b] else 1.0
    cdef double pair = 0.0
    cdef int64_t c, t
    for c in range(C):
        if c != b and on[c]:
            pair += Fc[b * L + core[c]]
    for t in range(m_nc):
        adj[noncore[t]] += sign * Fc[b * L + noncore[t]]
    on[b] = not on[b]
    return base + sign * (a[core[b]] + pair)


cdef double infer_one(const double* a, int64_t L, const int64_t* core, int64_t C, const double* Fc, int64_t k,
                      const int8_t* state, uint8_t* t_best, double* vin, double* vout, bint marginals,
                      Work* w) noexcept nogil:
    """Best label set of one sample; returns its score (-inf if no set satisfies the size and the
    fixed labels). ``state``: 0 free, 1 fixed in, -1 fixed out; ``k < 0``: any size."""
    cdef int64_t c, j, t, r, it, b, n_in, m, n_above, n_tied, n_free = 0, m_nc = 0
    cdef double base = 0.0, best = -INFINITY, total, theta, theta_in, theta_out, v, gain
    cdef bint ok, take
    cdef int8_t st
    for j in range(L):
        w.is_core[j] = 0
        w.sel[j] = 0
        w.adj[j] = a[j]
        t_best[j] = 0
    for c in range(C):
        w.is_core[core[c]] = 1
        w.on[c] = 0
    for j in range(L):
        if not w.is_core[j]:
            w.noncore[m_nc] = j
            m_nc += 1
            if state[j] == 0:
                w.free[n_free] = j
                n_free += 1
    if marginals:
        for j in range(L):
            vin[j] = -INFINITY
            vout[j] = -INFINITY
    for it in range(1 << C):
        if it > 0:
            b = 0
            while not (it >> b) & 1:
                b += 1
            base = flip_core(b, w.on, a, core, C, Fc, L, w.adj, w.noncore, m_nc, base)
        n_in = 0
        ok = True
        for c in range(C):
            st = state[core[c]]
            if (st == 1 and not w.on[c]) or (st == -1 and w.on[c]):
                ok = False
                break
            if w.on[c]:
                n_in += 1
        if not ok:
            continue
        total = base
        for t in range(m_nc):
            j = w.noncore[t]
            if state[j] == 1:
                total += w.adj[j]
                n_in += 1
        theta_in = INFINITY  # smallest selected free score
        theta_out = -INFINITY  # largest unselected free score
        if k >= 0:
            m = k - n_in
            if m < 0 or m > n_free:
                continue
            if m > 0:
                for r in range(n_free):
                    w.buf[r] = w.adj[w.free[r]]
                nth_element(w.buf, w.buf + (n_free - m), w.buf + n_free)
                theta = w.buf[n_free - m]  # the m-th largest
                n_above = 0
                for t in range(n_free):
                    if w.adj[w.free[t]] > theta:
                        n_above += 1
                n_tied = m - n_above
                for t in range(n_free):  # ascending label index: ties go to the lower index
                    j = w.free[t]
                    v = w.adj[j]
                    take = v > theta or (v == theta and n_tied > 0)
                    if v == theta and take:
                        n_tied -= 1
                    w.sel[j] = take
                    if take:
                        total += v
                        theta_in = fmin_first(theta_in, v)
                    else:
                        theta_out = fmax_first(theta_out, v)
            else:
                for t in range(n_free):
                    j = w.free[t]
                    w.sel[j] = False
                    theta_out = fmax_first(theta_out, w.adj[j])
        else:
            for t in range(n_free):
                j = w.free[t]
                w.sel[j] = w.adj[j] > 0.0
                if w.sel[j]:
                    total += w.adj[j]
        if total > best:
            best = total
            for c in range(C):
                t_best[core[c]] = 1 if w.on[c] else 0
            for t in range(m_nc):
                j = w.noncore[t]
                t_best[j] = 1 if (state[j] == 1 or (state[j] == 0 and w.sel[j])) else 0
        if not marginals:
            continue
        for c in range(C):
            if w.on[c]:
                vin[core[c]] = fmax_first(vin[core[c]], total)
            else:
                vout[core[c]] = fmax_first(vout[core[c]], total)
        for t in range(m_nc):
            j = w.noncore[t]
            if state[j] == 1:
                vin[j] = fmax_first(vin[j], total)
            elif state[j] == -1:
                vout[j] = fmax_first(vout[j], total)
            elif k < 0:
                gain = fmax_first(w.adj[j], 0.0)
                vin[j] = fmax_first(vin[j], total - gain + w.adj[j])
                vout[j] = fmax_first(vout[j], total - gain)
            elif w.sel[j]:
                vin[j] = fmax_first(vin[j], total)
                if theta_out > -INFINITY:
                    vout[j] = fmax_first(vout[j], total - w.adj[j] + theta_out)
            else:
                vout[j] = fmax_first(vout[j], total)
                if theta_in < INFINITY:
                    vin[j] = fmax_first(vin[j], total - theta_in + w.adj[j])
    return best


def infer_batch(const double[:, ::1] A, const int64_t[::1] core, const double[:, ::1] Fc, const int64_t[::1] ks,
                const int8_t[:, ::1] states, uint8_t[:, ::1] T, double[::1] values, double[:, ::1] VIN,
                double[:, ::1] VOUT, bint marginals):
    """:func:`infer_one` for every row of ``A`` (``ks``, ``states`` per row), into ``T``, ``values``
    and, with ``marginals``, ``VIN`` and ``VOUT`` (else of width 0, untouched). Inputs as
    :func:`ssvm.label_ranking.star_inference` validates them; ``T`` zeros of shape (n, L)."""
    cdef int64_t n = A.shape[0], L = A.shape[1], C = core.shape[0], q
    cdef vector[uint8_t] is_core = vector[uint8_t](L), on = vector[uint8_t](C + 1), sel = vector[uint8_t](L)
    cdef vector[int64_t] noncore = vector[int64_t](L), free = vector[int64_t](L)
    cdef vector[double] adj = vector[double](L), buf = vector[double](L)
    cdef Work w
    w.is_core, w.noncore, w.free, w.adj = is_core.data(), noncore.data(), free.data(), adj.data()
    w.on, w.sel, w.buf = on.data(), sel.data(), buf.data()
    cdef const int64_t* core_p = &core[0] if C else NULL
    cdef const double* Fc_p = &Fc[0, 0] if C else NULL
    with nogil:
        for q in range(n):
            values[q] = infer_one(&A[q, 0], L, core_p, C, Fc_p, ks[q], &states[q, 0], &T[q, 0],
                                  &VIN[q, 0] if marginals else NULL, &VOUT[q, 0] if marginals else NULL,
                                  marginals, &w)
