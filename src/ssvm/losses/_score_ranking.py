"""The output by score, R_w, and the loss-diminished 0-1 output: what the direct-loss gradient needs
besides the loss-augmented oracles (Song et al. 2016, eqs. 2–3).

Each function takes stacked queries ``scores[starts[k]:ends[k]]`` (ascending, disjoint ranges, each
with a positive and a negative; rows outside them are ignored and get c = 0) and returns
``(c, delta)`` in the oracle contract's form: ``c`` the coefficients of Ψ(output) − Ψ(R*) per row,
``delta`` the loss Δ(R*, output) per query.

* Rank losses (AP, NDCG): R_w sorts each query's positives and negatives by (−score, index)
  (O(n log n): a compiled loop over small queries, the large sort of the packed keys for large ones,
  ``_core.sorting.packed_order``); merging them gives each negative's interleaving rank (1 + the
  positives above it), and Lemma 6's coefficients and Δ come from the ranks as in every oracle
  (``_core/score_ranking.pyx``).
* 0-1: R_w labels a row positive iff its score is > 0 (as :func:`ssvm.losses.ranking_loss` does);
  the loss-diminished output (max F − εΔ) moves a row off its true label iff yᵢ sᵢ < −ε (yᵢ ∈ ±1).
"""

import numpy as np

from ._core.derivative import count_positives, py_write_coefficients
from ._core.score_ranking import flip_batch, merge_ranks, ranked_batch, ranking_terms
from ._core.sorting import packed_order
from .dp import ap_direct_loss_inference
from .qs import check_two_classes

__all__ = ["ranked_by_score", "labelled_by_score", "zero_one_diminished", "ap_diminished"]


_BATCH_MAX = 4096  # queries up to this size are sorted inside one compiled loop; larger ones by the large sort


def _labels(y):
    y = np.ascontiguousarray(y)
    return y.view(np.uint8) if y.dtype == np.bool_ else (y != 0).view(np.uint8)


def ranked_by_score(scores, y, starts, ends, loss):
    """``(c, delta)`` of R_w, the ranking of each query by (−score, index), for a QS loss.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
        Stacked scores.
    y : ndarray of bool, shape (n,)
    starts, ends : ndarray of int64, shape (Q,)
    loss : QSLoss
        A loss that declares ``compiled_batch`` (the built-in AP and NDCG) gets Δ from the closed
        form of its declared ``kind`` inside the compiled loop; any other from its own
        :meth:`~ssvm.losses.QSLoss.value`.

    Returns
    -------
    c : ndarray of float64, shape (n,)
        Coefficients of Ψ(R_w) − Ψ(R*) in each query's rows, zero elsewhere.
    delta : ndarray of float64, shape (Q,)
        Δ(R*, R_w) per query (1 − AP or 1 − NDCG of the ranking by score for the built-ins).
    """
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    ends = np.ascontiguousarray(ends, dtype=np.int64)
    c = np.zeros(scores.size)
    delta = np.empty(starts.size)
    check_two_classes(count_positives(_labels(y), starts, ends), ends - starts)
    if not loss.compiled_batch:
        for k in range(starts.size):
            a, b = starts[k], ends[k]
            sp, pos_ids, sn, neg_ids = packed_order(scores[a:b], y[a:b])
            ranks = merge_ranks(sp, pos_ids, sn, neg_ids)
            c[a:b], counts = py_write_coefficients(ranks, neg_ids, pos_ids, b - a, sp.size, sn.size)
            delta[k] = float(loss.value(counts))
        return c, delta
    kind = loss.kind
    small = ends - starts <= _BATCH_MAX
    delta_small = np.empty(int(small.sum()))
    ranked_batch(scores, _labels(y), starts[small], ends[small], kind, c, delta_small)
    delta[small] = delta_small
    for k in np.flatnonzero(~small):  # a large query's keys: numpy's or the radix sort (_core.sorting.sort_large)
        a, b = starts[k], ends[k]
        c[a:b], delta[k] = ranking_terms(*packed_order(scores[a:b], y[a:b]), b - a, kind, True)
    return c, delta


def ap_diminished(scores, y, starts, ends, epsilon):
    """``(c, delta)`` of the loss-diminished AP ranking ``argmax F − εΔ`` per query (Song et al.'s
    dynamic program, :func:`~ssvm.losses.ap_direct_loss_inference`).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
    starts, ends : ndarray of int64, shape (Q,)
    epsilon : float
        > 0.

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : ndarray of float64, shape (Q,)
    """
    c = np.zeros(scores.size)
    delta = np.empty(len(starts))
    for k, (a, b) in enumerate(zip(starts, ends)):
        c[a:b], delta[k] = ap_direct_loss_inference(scores[a:b], y[a:b], epsilon, -1)
    return c, delta


def labelled_by_score(scores, y, starts, ends):
    """``(c, delta)`` of R_w for 0-1: each row labelled positive iff its score is > 0.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
    starts, ends : ndarray of int64, shape (Q,)

    Returns
    -------
    c : ndarray of float64, shape (n,)
        (ŷᵢ − yᵢ) / (2 nᵢ) with labels in ±1 (nᵢ the row's query size), zero outside the queries.
    delta : ndarray of float64, shape (Q,)
        Error rate of the labelling per query.
    """
    c = np.zeros(scores.size)
    delta = np.empty(len(starts))
    flip_batch(np.ascontiguousarray(scores, dtype=np.float64), _labels(y), np.ascontiguousarray(starts, dtype=np.int64),
               np.ascontiguousarray(ends, dtype=np.int64), 0.0, c, delta)
    return c, delta


def zero_one_diminished(scores, y, starts, ends, epsilon):
    """``(c, delta)`` of the loss-diminished 0-1 output ``argmax F − εΔ``: a row leaves its true
    label iff that raises F by more than it costs, yᵢ sᵢ < −ε (ties keep the true label).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
    starts, ends : ndarray of int64, shape (Q,)
    epsilon : float
        > 0.

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : ndarray of float64, shape (Q,)
    """
    c = np.zeros(scores.size)
    delta = np.empty(len(starts))
    flip_batch(np.ascontiguousarray(scores, dtype=np.float64), _labels(y), np.ascontiguousarray(starts, dtype=np.int64),
               np.ascontiguousarray(ends, dtype=np.int64), -float(epsilon), c, delta)
    return c, delta
