"""Baselines that sort every score: Yue et al. 2007 / Chakrabarti et al. 2008, and SEARCH.

* ``yue`` (AP, SVM^map) and ``chakrabarti`` (NDCG, SVM^ndcg with the convex discount) are the
  same algorithm with a different loss: sort positives and negatives, then give each negative
  the best interleaving rank over all P + 1 options — O(PN + N log N).  Its correctness rests
  on Observation 4 (monotone opt_j), which needs condition (C3); see Remark 1 of the QS paper
  for the discount of Chakrabarti et al. that breaks it.
* ``search`` (AP only, Algorithm 3 of Mohapatra et al.): f_j is unimodal (concave) on ranks
  1..min(P, j)+1, so opt_j is found there by binary search, followed by a linear scan over
  the remaining ranks when j < P — O(N log N + N log P + P²).
"""

import numpy as np
from numba import njit

from ._rank_kernels import (
    Objective,
    best_rank,
    loss_step,
    sorted_negatives,
    sorted_positives,
    sum_table,
    write_coefficients,
)
from .rank_losses import KIND_AP, KIND_NDCG_LOG2, KIND_SUM_TABLE

__all__ = ["sorted_scan_oracle", "search_oracle"]


@njit(cache=True)
def _scan_all(sn, sp, kind, table, n_pos, n_neg):
    inv = 2.0 / (n_pos * n_neg)
    if kind == KIND_NDCG_LOG2:  # the discount table of SVM^ndcg, bit-identical to the closed form
        table = sum_table(kind, table, n_pos, n_neg)
        kind = KIND_SUM_TABLE
    obj = Objective(sp, inv, kind, table, n_pos)
    ranks = np.empty(n_neg, dtype=np.int64)
    for t in range(n_neg):
        ranks[t] = best_rank(sn[t], t + 1, 1, n_pos + 1, obj)
    return ranks


@njit(cache=True)
def _search_all(sn, sp, n_pos, n_neg, table):
    inv = 2.0 / (n_pos * n_neg)
    obj = Objective(sp, inv, KIND_AP, table, n_pos)
    ranks = np.empty(n_neg, dtype=np.int64)
    for t in range(n_neg):
        j = t + 1
        s = sn[t]
        q = min(n_pos, j)
        # steps k = 1..q have non-increasing f_j(k+1) − f_j(k): count those ≥ 0 by bisection
        lo = 0
        hi = q
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            d = (sp[mid - 1] - s) * inv + loss_step(KIND_AP, table, n_pos, mid, j)
            if d >= 0.0:
                lo = mid
            else:
                hi = mid - 1
        i1 = lo + 1
        if q < n_pos:
            i1 = best_rank(s, j, i1, n_pos + 1, obj)
        ranks[t] = i1
    return ranks


def sorted_scan_oracle(scores, y, loss):
    """Yue / Chakrabarti oracle: sort everything, best rank per negative by a full scan.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
    loss : QSLoss
        The loss (AP for "yue", NDCG for "chakrabarti").

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : float
    """
    return _sort_all_oracle(scores, y, loss, search=False)


def search_oracle(scores, y, loss):
    """SEARCH oracle for AP (Algorithm 3): sort everything, binary search per negative.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
    loss : APLoss

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : float
    """
    return _sort_all_oracle(scores, y, loss, search=True)


def _sort_all_oracle(scores, y, loss, search):
    """Sort positives and negatives, find every negative's rank (scan or binary search), write c."""
    sp, pos_ids = sorted_positives(scores, y)
    sn, neg_sorted = sorted_negatives(scores, y)
    n_pos, n_neg = sp.size, sn.size
    kind, table = loss.kernel_spec(n_pos, n_neg)
    if not search:
        ranks = _scan_all(sn, sp, kind, table, n_pos, n_neg)
    elif kind == KIND_AP:
        ranks = _search_all(sn, sp, n_pos, n_neg, table)
    else:
        raise ValueError("the 'search' oracle exists for the AP loss only")
    c, counts = write_coefficients(ranks, neg_sorted, pos_ids, scores.size, n_pos, n_neg)
    return c, float(loss.value(counts))
