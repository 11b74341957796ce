"""SVM^perf's contingency-table losses: ``loss="f1"`` (1 − F1) and ``loss="prbep"`` (1 − the precision/recall
break-even point), exact (``_core/contingency.pyx``; Joachims, ICML 2005).

The outputs are labellings ȳ ∈ {±1}^n of a query with the 0-1 loss's joint feature Ψ = 1/(2n) Σ ȳ_i x_i:
``H = max_ȳ Δ(ȳ) + (1/(2n)) Σ (ȳ_i − y_i) s_i``, ``c = (ȳ − y)/(2n)``.  SVM^perf scales its labels by
0.5·100/n and its Δ by 100, so ``svm_perf_learn -c c`` with these losses is ``C = 100 c`` here (and its
``--b 1`` bias feature is ssvm's learnt intercept; see the docs).

* ``"f1"``: Δ = 1 − 2a/(2a + b + c) for a true positives, b false positives and c false negatives (1 when
  a = 0, as svm_perf).  Not invariant to a shift of the scores: the estimators learn an intercept, and the
  measure is the F1 of the labelling ``score > 0``.  O(n log n + P log N) per query.
* ``"prbep"``: the labellings with as many +1 as positives, where precision = recall = a/P: Δ = 1 − a/P.
  Shift-invariant; the measure is the precision of the P best-scored rows (R-precision, ties by index).
  O(n log n).
"""

import numpy as np

from ._core.contingency import KIND_F1, KIND_PRBEP, contingency_batch
from ._core.derivative import count_positives
from .qs import check_two_classes

__all__ = ["f1_oracle", "f1_batch", "prbep_oracle", "prbep_batch", "f1_value", "prbep_value", "f1_by_score",
           "prbep_by_score"]


def _run(scores, y, starts, ends, kind):
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    ends = np.ascontiguousarray(ends, dtype=np.int64)
    yb = np.ascontiguousarray(y, dtype=bool)
    check_two_classes(count_positives(yb.view(np.uint8), starts, ends), ends - starts)
    c = np.zeros(scores.size)
    delta = np.empty(starts.size)
    contingency_batch(scores, yb.view(np.uint8), starts, ends, kind, c, delta)
    return c, delta


def _one(scores, y, kind):
    n = np.asarray(scores).shape[0]
    c, delta = _run(scores, y, np.zeros(1, np.int64), np.full(1, n, np.int64), kind)
    return c, float(delta[0])


def f1_batch(scores, y, starts, ends):
    """The F1 oracle on stacked queries: exactly :func:`f1_oracle` on each.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
    starts, ends : ndarray of int64, shape (Q,)
        Disjoint row ranges, each with a positive and a negative.

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : ndarray of float64, shape (Q,)
    """
    return _run(scores, y, starts, ends, KIND_F1)


def f1_oracle(scores, y):
    """Loss-augmented inference of 1 − F1 over the labellings of one query (see the module).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)

    Returns
    -------
    c : ndarray of float64, shape (n,)
        ``(ȳ − y) / (2n)`` of the maximising labelling: ``H = delta + scores @ c``.
    delta : float

    Examples
    --------
    >>> import numpy as np
    >>> c, delta = f1_oracle(np.array([1.0, -1.0, 0.1]), np.array([True, False, False]))
    >>> delta, np.round(c, 4).tolist()  # both flipped: F1 = 0, for a score term of (0.1 − 1) / 3
    (1.0, [-0.3333, 0.0, 0.3333])
    """
    return _one(scores, y, KIND_F1)


def prbep_batch(scores, y, starts, ends):
    """The PRBEP oracle on stacked queries: exactly :func:`prbep_oracle` on each.

    Parameters
    ----------
    scores, y, starts, ends
        As in :func:`f1_batch`.

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : ndarray of float64, shape (Q,)
    """
    return _run(scores, y, starts, ends, KIND_PRBEP)


def prbep_oracle(scores, y):
    """Loss-augmented inference of 1 − PRBEP over the labellings with P labels +1 (see the module).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : float
    """
    return _one(scores, y, KIND_PRBEP)


def f1_value(scores, y):
    """1 − F1 of the labelling ``scores > 0`` (F1 = 0 without a true positive).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)

    Returns
    -------
    float
    """
    predicted = np.asarray(scores) > 0
    a = int(np.count_nonzero(predicted & y))
    wrong = int(np.count_nonzero(predicted != y))
    return 1.0 if a == 0 else 1.0 - 2.0 * a / (2 * a + wrong)


def prbep_value(scores, y):
    """1 − the precision of the P best-scored rows (ties by index), P the number of positives.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)

    Returns
    -------
    float
    """
    n_pos = int(np.count_nonzero(y))
    top = np.argsort(-np.asarray(scores), kind="stable")[:n_pos]
    return 1.0 - np.count_nonzero(y[top]) / n_pos


def f1_by_score(scores, y, starts, ends):
    """``(c, delta)`` of the output by score for F1 (the direct-loss gradient's R_w): each row labelled
    +1 iff its score is > 0, as :func:`f1_value` scores it.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
    starts, ends : ndarray of int64, shape (Q,)
        Disjoint row ranges (rows outside them get c = 0).

    Returns
    -------
    c : ndarray of float64, shape (n,)
        ``(ŷ − y) / (2 nᵢ)`` with labels in ±1 (nᵢ the row's query size).
    delta : ndarray of float64, shape (Q,)
        1 − F1 of the labelling per query.
    """
    return _labelled_by_score(scores, y, starts, ends, lambda s, t: s > 0, f1_value)


def prbep_by_score(scores, y, starts, ends):
    """``(c, delta)`` of the output by score for PRBEP: the P best-scored rows (ties by index) labelled +1,
    as :func:`prbep_value` scores it (parameters and returns as :func:`f1_by_score`)."""
    return _labelled_by_score(scores, y, starts, ends, _best_p, prbep_value)


def _best_p(scores, y):
    labels = np.zeros(scores.shape[0], dtype=bool)
    labels[np.argsort(-scores, kind="stable")[:np.count_nonzero(y)]] = True
    return labels


def _labelled_by_score(scores, y, starts, ends, predict, value):
    """``(c, delta)`` of the labelling ``predict(scores, y)`` of each query, Δ from ``value``."""
    scores = np.asarray(scores, dtype=np.float64)
    c = np.zeros(scores.shape[0])
    delta = np.empty(len(starts))
    for k, (a, b) in enumerate(zip(starts, ends)):
        s, t = scores[a:b], np.asarray(y[a:b], dtype=bool)
        c[a:b] = (predict(s, t).astype(np.float64) - t) / (b - a)  # (ŷ − y) / (2n) in ±1 labels
        delta[k] = value(s, t)
    return c, delta
