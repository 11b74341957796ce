"""The per-negative rank searches of the baselines that sort every score (:mod:`.greedy`).

* :func:`scan_ranks` — Yue et al. 2007 (SVM^map, AP) and Chakrabarti et al. 2008 (SVM^ndcg): each
  negative, in (−score, index) order, gets the best interleaving rank over all P + 1 options
  (``best_rank`` of ``_core/derivative.pxd``), O(PN). For NDCG with the log2 discount the derivative is
  read from its table on ``i + j`` (built by ``fill_sum_table``: bit for bit the closed form), as
  SVM^ndcg does.
* :func:`search_ranks` — SEARCH (Algorithm 3 of Mohapatra et al., AP only): f_j is unimodal on ranks
  1..min(P, j)+1, so opt_j is found there by bisection on the sign of its step, then by a linear
  scan over the remaining ranks when j < P — O(N log P + P²).
"""

import numpy as np

from libc.stdint cimport int64_t
from libcpp.vector cimport vector

cdef extern from "_branches.h" nogil:
    void keep_branch "SSVM_KEEP_BRANCH" ()

from ._core.derivative cimport (
    KIND_AP,
    KIND_NDCG_LOG2,
    KIND_SUM_TABLE,
    ap_step,
    best_rank,
    fill_sum_table,
    make_objective,
    objective_t,
)

__all__ = ["scan_ranks", "search_ranks"]


def scan_ranks(const double[::1] sn, const double[::1] sp, int kind, const double[::1] table, int64_t n_pos,
               int64_t n_neg):
    """Every negative's best rank by a full scan (Yue / Chakrabarti).

    Parameters
    ----------
    sn, sp : ndarray of float64
        Negatives' and positives' scores, each sorted by (−score, index).
    kind : int
    table : ndarray of float64
        The loss's ``(kind, table)`` (:meth:`~ssvm.losses.QSLoss.kernel_spec`).
    n_pos, n_neg : int

    Returns
    -------
    ndarray of int64, shape (n_neg,)
        Interleaving ranks (1..P+1), the largest argmax on ties.
    """
    out = np.empty(n_neg, dtype=np.int64)
    cdef int64_t[::1] ranks = out
    cdef vector[double] t
    cdef objective_t obj = make_objective(&sp[0], n_pos, n_neg, kind, &table[0], NULL, 0)
    cdef int64_t k
    with nogil:
        if kind == KIND_NDCG_LOG2:  # the discount table of SVM^ndcg, bit-identical to the closed form
            t.resize(n_pos + n_neg + 1)
            fill_sum_table(&obj, n_pos + n_neg, t.data())
            obj.table = t.data()
            obj.kind = KIND_SUM_TABLE
        for k in range(n_neg):
            ranks[k] = best_rank(sn[k], k + 1, 1, n_pos + 1, &obj)
    return out


def search_ranks(const double[::1] sn, const double[::1] sp, int64_t n_pos, int64_t n_neg, const double[::1] table):
    """Every negative's best rank by SEARCH (AP): bisection over ranks 1..min(P, j)+1, then a scan.

    Parameters
    ----------
    sn, sp : ndarray of float64
        Negatives' and positives' scores, each sorted by (−score, index).
    n_pos, n_neg : int
    table : ndarray of float64
        AP's table (unused by its closed form; at least one entry).

    Returns
    -------
    ndarray of int64, shape (n_neg,)
    """
    out = np.empty(n_neg, dtype=np.int64)
    cdef int64_t[::1] ranks = out
    cdef objective_t obj = make_objective(&sp[0], n_pos, n_neg, KIND_AP, &table[0], NULL, 0)
    cdef int64_t t, j, q, lo, hi, mid, i1
    cdef double s, d
    with nogil:
        for t in range(n_neg):
            j = t + 1
            s = sn[t]
            q = min(n_pos, j)
            # steps k = 1..q have non-increasing f_j(k+1) − f_j(k): count those ≥ 0 by bisection
            lo = 0
            hi = q
            while lo < hi:
                mid = (lo + hi + 1) >> 1
                d = (sp[mid - 1] - s) * obj.inv + ap_step(n_pos, mid, j)
                if d >= 0.0:
                    keep_branch()  # a predicted jump, not conditional moves: _branches.h says why
                    lo = mid
                else:
                    hi = mid - 1
            i1 = lo + 1
            if q < n_pos:
                i1 = best_rank(s, j, i1, n_pos + 1, &obj)
            ranks[t] = i1
    return out
