"""Baselines that sort every score: Yue et al. 2007 / Chakrabarti et al. 2008, and SEARCH.

* ``yue`` (AP, SVM^map) and ``chakrabarti`` (NDCG, SVM^ndcg with the convex discount) are the
  same algorithm with a different loss: sort positives and negatives, then give each negative
  the best interleaving rank over all P + 1 options — O(PN + N log N).  Its correctness rests
  on Observation 4 (monotone opt_j), which needs condition (C3); see Remark 1 of the QS paper
  for the discount of Chakrabarti et al. that breaks it.
* ``search`` (AP only, Algorithm 3 of Mohapatra et al.): f_j is unimodal (concave) on ranks
  1..min(P, j)+1, so opt_j is found there by binary search, followed by a linear scan over
  the remaining ranks when j < P — O(N log N + N log P + P²).

The sorting and Lemma 6's coefficients are shared with the other oracles; the per-negative rank
searches are compiled (:mod:`._sorted_scan`).
"""

import numpy as np

from ._core.derivative import py_write_coefficients as write_coefficients
from ._core.sorting import sorted_negatives, sorted_positives
from ._sorted_scan import scan_ranks, search_ranks
from .qs import check_two_classes
from .rank_losses import KIND_AP

__all__ = ["sorted_scan_oracle", "search_oracle"]


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
    check_two_classes(n_pos, scores.size)  # as QS: a ZeroDivisionError that Oracle.batch names
    kind, table = loss.kernel_spec(n_pos, n_neg)
    table = np.ascontiguousarray(table, dtype=np.float64)
    if not search:
        ranks = scan_ranks(sn, sp, int(kind), table, n_pos, n_neg)
    elif kind == KIND_AP:
        ranks = search_ranks(sn, sp, n_pos, n_neg, table)
    else:
        raise ValueError("the 'search' oracle exists for the AP loss only")
    c, counts = write_coefficients(ranks, neg_sorted, pos_ids, scores.size, n_pos, n_neg)
    return c, float(loss.value(counts))
