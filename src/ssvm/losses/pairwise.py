"""SVM^rank's objective (``loss="pairwise"``) and SVM^perf's ROC area (``loss="roc_auc"``).

Within a query with relevance grades r, every pair (i, j) with r_i > r_j should be ordered with a margin:
the pairwise hinge of a query is ``H = Σ_{r_i > r_j} max(0, 1 − (s_i − s_j))``, the most violated
constraint of SVM^rank's 1-slack formulation (Joachims 2006), and its oracle answers Δ = the number of
pairs with ``fl(s_i − s_j) < 1`` and ``c`` with ``H = Δ + s·c`` in O(n log n) (``_core/pairwise.pyx``).
``"roc_auc"`` divides each query's H, c and Δ by its number of pairs (svm_rank ``-l 2``; SVM^perf's
``-l 10`` ROCArea divided by 100).  Both read the grades themselves (any two distinct grades make a
pair), boolean relevance being grades 0/1.

The task loss of a ranking is its number of swapped pairs (ties in score broken by index, ssvm's rule;
svm_rank counts a tie as swapped); the trained measure (``score``, :func:`ssvm.metrics.ranking_score`)
is the fraction of a query's pairs in order — its ROC area (AUC, or the C-index with grades) —
averaged over the queries with two distinct grades.

SVM^rank's C: ``svm_rank_learn -c c`` minimises ``½‖w‖² + (c / n) Σ_q ξ_q`` with n every query of the
file, ssvm ``½‖w‖² + (C / Q) Σ_q H_q`` with Q the queries that have a pair, so ``C = c · Q / n``
(:func:`svm_rank_C`; ``ssvm train --c-convention svm_rank``).
"""

import numpy as np

from ._core.pairwise import pairs_batch

__all__ = ["pairwise_oracle", "pairwise_batch", "pairs_by_score", "swapped_pairs", "pair_order_score",
           "svm_rank_C"]


def _grades(y):
    return np.ascontiguousarray(y, dtype=np.int64)


def _run(scores, y, starts, ends, augmented, normalise):
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    ends = np.ascontiguousarray(ends, dtype=np.int64)
    c = np.zeros(scores.shape[0])
    delta = np.empty(starts.shape[0])
    pairs_batch(scores, _grades(y), starts, ends, augmented, normalise, c, delta)
    return c, delta


def pairwise_batch(scores, y, starts, ends, normalise=False):
    """The pairwise oracle on stacked queries: exactly :func:`pairwise_oracle` on each.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of int64 or bool, shape (n,)
        Relevance grades (bool: 0/1).
    starts, ends : ndarray of int64, shape (Q,)
        Disjoint, non-empty row ranges of the queries.
    normalise : bool, default=False
        Divide each query's c and Δ by its number of pairs (``"roc_auc"``).

    Returns
    -------
    c : ndarray of float64, shape (n,)
        Each query's coefficients in its rows, zero elsewhere.
    delta : ndarray of float64, shape (Q,)
    """
    return _run(scores, y, starts, ends, True, normalise)


def pairwise_oracle(scores, y, normalise=False):
    """Loss-augmented inference of the pairwise hinge on one query (see the module).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of int64 or bool, shape (n,)
        Relevance grades (bool: 0/1).
    normalise : bool, default=False
        Divide c and Δ by the number of pairs (``"roc_auc"``).

    Returns
    -------
    c : ndarray of float64, shape (n,)
        ``H = delta + scores @ c``.
    delta : float
        The number (fraction, normalised) of pairs with ``fl(s_i − s_j) < 1``.

    Examples
    --------
    >>> import numpy as np
    >>> c, delta = pairwise_oracle(np.array([2.0, 1.5, 0.0]), np.array([2, 1, 0]))
    >>> c.tolist(), delta  # only the pair (0, 1) is within the margin
    ([-1.0, 1.0, 0.0], 1.0)
    """
    n = np.asarray(scores).shape[0]
    c, delta = _run(scores, y, np.zeros(1, np.int64), np.full(1, n, np.int64), True, normalise)
    return c, float(delta[0])


def pairs_by_score(scores, y, starts, ends, normalise=False):
    """Ψ(R_w) − Ψ(R*) and Δ(R*, R_w) of the ranking by (−score, index) over stacked queries: the pairs it
    swaps (the direct loss's output by score).

    Parameters
    ----------
    scores, y, starts, ends, normalise
        As in :func:`pairwise_batch`.

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : ndarray of float64, shape (Q,)
        Swapped pairs per query (their fraction, normalised).
    """
    return _run(scores, y, starts, ends, False, normalise)


def swapped_pairs(scores, y, normalise=False):
    """Δ of the ranking by score (ties by index): its swapped pairs (their fraction, normalised).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of int64 or bool, shape (n,)
    normalise : bool, default=False

    Returns
    -------
    float
    """
    n = np.asarray(scores).shape[0]
    return float(pairs_by_score(scores, y, np.zeros(1, np.int64), np.full(1, n, np.int64), normalise)[1][0])


def pair_order_score(scores, y):
    """The fraction of a query's pairs (r_i > r_j) that the ranking by score (ties by index) puts in order:
    its ROC area (C-index with grades); ``pairwise`` and ``roc_auc``'s trained measure.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of int64 or bool, shape (n,)
        Two distinct grades at least.

    Returns
    -------
    float
    """
    return 1.0 - swapped_pairs(scores, y, normalise=True)


def svm_rank_C(c, n_queries, n_pair_queries):
    """ssvm's ``C`` that trains the model of ``svm_rank_learn -c c`` (its objective times Q / n).

    Parameters
    ----------
    c : float
        svm_rank's ``-c``.
    n_queries : int
        Every query of the training file (svm_rank's n, ``sample.n``).
    n_pair_queries : int
        The queries with two distinct grades (ssvm's Q; ``RankSVM.n_queries_``).

    Returns
    -------
    float
        ``c · n_pair_queries / n_queries``.

    Raises
    ------
    ValueError
        On c ≤ 0, or counts that are not 1 ≤ n_pair_queries ≤ n_queries.

    Examples
    --------
    >>> svm_rank_C(20.0, n_queries=50, n_pair_queries=45)
    18.0
    """
    c = float(c)
    if not (np.isfinite(c) and c > 0):
        raise ValueError(f"svm_rank's c must be a finite number > 0, got {c!r}")
    if not (1 <= int(n_pair_queries) <= int(n_queries)):
        raise ValueError(f"need 1 <= n_pair_queries <= n_queries, got {n_pair_queries} and {n_queries}")
    return c * int(n_pair_queries) / int(n_queries)
