"""The compiled loops of one query spread over the blocks of a dask array (:mod:`.dask_giant`).

The negatives are ordered by their keys ``(−score, row)`` (the oracles' tie rule: ties by index).

* :func:`count_at_or_before` (on a worker, per block): how many of the block's sorted keys come at
  or before each of some sorted query keys — one merge pass.
* :func:`ranks_at` (on the client): the best interleaving rank of some negatives at known positions
  j, each between known bounds. The best rank ``argmax_r f_j(r)`` of problem (5) never decreases
  along the negatives (Mohapatra et al., Observation 4), so the middle negative's rank bounds those
  of the two halves: divide and conquer, ``O((m + P) log m)`` steps for m negatives and P positives
  instead of ``O(m P)``; each rank by ``best_rank`` (``ssvm/losses/_core/derivative.pxd``), bit for bit the
  in-memory oracles'.
"""

import numpy as np

from libc.stdint cimport int64_t
from libcpp.vector cimport vector

from ..losses._core.derivative cimport KIND_NDCG_LOG2, best_rank, objective_t

__all__ = ["count_at_or_before", "ranks_at"]


def count_at_or_before(ms, rows, qm, qr):
    """How many of the sorted keys ``(ms, rows)`` come at or before each of the sorted keys ``(qm, qr)``.

    Parameters
    ----------
    ms, rows : ndarray of float64 and of int64, shape (n,)
        Keys ``(−score, row)``, ascending.
    qm, qr : ndarray of float64 and of int64, shape (m,)
        Query keys, ascending.

    Returns
    -------
    ndarray of int64, shape (m,)
    """
    cdef const double[::1] a_m = np.ascontiguousarray(ms, dtype=np.float64)
    cdef const int64_t[::1] a_r = np.ascontiguousarray(rows, dtype=np.int64)
    cdef const double[::1] q_m = np.ascontiguousarray(qm, dtype=np.float64)
    cdef const int64_t[::1] q_r = np.ascontiguousarray(qr, dtype=np.int64)
    out = np.empty(q_m.shape[0], dtype=np.int64)
    cdef int64_t[::1] counts = out
    cdef Py_ssize_t i = 0, t, n = a_m.shape[0]
    with nogil:
        for t in range(q_m.shape[0]):
            while i < n and (a_m[i] < q_m[t] or (a_m[i] == q_m[t] and a_r[i] <= q_r[t])):
                i += 1
            counts[t] = i
    return out


cdef struct Span:
    int64_t first, end, low, high  # negatives first:end, their ranks within low..high


def ranks_at(ms, j, lo, hi, sp, int kind, table, double inv):
    """Best interleaving rank (the largest argmax, as every oracle) of the negatives with ``−score``
    ``ms`` at positions ``j`` (ascending), each within its ranks ``lo..hi``.

    Parameters
    ----------
    ms : ndarray of float64, shape (m,)
    j, lo, hi : ndarray of int, shape (m,)
    sp : ndarray of float64, shape (P,)
        The positives' scores sorted by (−score, index).
    kind : int
    table : ndarray of float64
        The loss's ``(kind, table)``: AP or NDCG with the log2 discount.
    inv : float
        2 / (P N).

    Returns
    -------
    ndarray of int64, shape (m,)
    """
    cdef const double[::1] m_s = np.ascontiguousarray(ms, dtype=np.float64)
    cdef const int64_t[::1] pos = np.ascontiguousarray(j, dtype=np.int64)
    cdef const int64_t[::1] low_of = np.ascontiguousarray(lo, dtype=np.int64)
    cdef const int64_t[::1] high_of = np.ascontiguousarray(hi, dtype=np.int64)
    cdef const double[::1] s_p = np.ascontiguousarray(sp, dtype=np.float64)
    cdef const double[::1] t_b = np.ascontiguousarray(table, dtype=np.float64)
    out = np.empty(m_s.shape[0], dtype=np.int64)
    cdef int64_t[::1] r_of = out
    cdef objective_t obj  # the query's (its 2 / (P N) given: the blocks hold its negatives)
    obj.sp = &s_p[0]
    obj.inv = inv
    obj.kind = kind
    obj.table = &t_b[0]
    obj.n_pos = s_p.shape[0]
    obj.lt = NULL
    obj.lt_size = 0
    obj.scale = t_b[0] if kind == KIND_NDCG_LOG2 else 0.0
    cdef vector[Span] stack
    cdef Span top
    cdef int64_t mid, r
    with nogil:
        stack.push_back(Span(0, m_s.shape[0], 1, s_p.shape[0] + 1))
        while stack.size():
            top = stack.back()
            stack.pop_back()
            if top.first >= top.end:
                continue
            mid = (top.first + top.end) // 2
            r = best_rank(-m_s[mid], pos[mid], max(top.low, low_of[mid]), min(top.high, high_of[mid]), &obj)
            r_of[mid] = r
            stack.push_back(Span(top.first, mid, top.low, r))
            stack.push_back(Span(mid + 1, top.end, r, top.high))
    return out
