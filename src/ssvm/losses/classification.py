"""Losses that are not QS-suitable rankings: per-sample 0-1, precision@k (Mensink et al.) and recall@k.

zero_one (binary SVM baseline): labels ŷ ∈ {±1}ⁿ, Ψ = 1/(2n) Σ ŷᵢ ψ(xᵢ), Δ = #mistakes / n.
The maximisation decomposes per sample: flip sample i iff 1 − yᵢ sᵢ > 0, so
c_i = −yᵢ/n there (0 elsewhere) and H = (1/n) Σ max(0, 1 − yᵢ sᵢ).

precision_at_k: the output is the set t of the top k samples; Ψ(t) = (1/k) Σ_{i∈t} ψ(xᵢ),
Δ(t) = #negatives in t / k.  Loss-augmented inference selects the k largest aᵢ = sᵢ + [i negative]
in O(n) (Mensink, Verbeek, Caetano 2011, section 4; ``np.partition``), ties by (positives
first, index).  The ground-truth feature Ψ(R*) is the average over all loss-minimising top-k sets
(weight min(1, k/P) on each positive, max(0, k − P)/N on each negative): it does not depend on w,
so H = Δ + s·c is convex, H ≥ Δ(top-k by score), and Σc = 0.

recall_at_k: the same output set (k rows, k clipped to n) and the same ground truth; with a positives
in t, at most m = min(P, k) of which can be there, Δ_R(t) = 1 − a/m = (#negatives in t − max(0, k − P))/m
and Ψ(t) = (1/m) Σ_{i∈t} ψ(xᵢ).  Δ_R and Ψ are those of precision@k times k/m, less a constant, so the
argmax is precision@k's set (the same k largest aᵢ, the same ties) and H_R = (k/m) H_P − max(0, k − P)/m:
one kernel with a per-loss normaliser and offset (``_classification_kernels.topk_query``).  The upper
bound H_R ≥ Δ_R(top-k by score) follows from H_P's.  SVM^perf's Rec@k (labellings with a + b ≤ k, Δ =
1 − a/P) has no such bound when P > k: the true labelling (a = P) is not among its outputs.
"""

import numpy as np

from ._classification_kernels import batch_loop

__all__ = ["zero_one_oracle", "zero_one_batch", "precision_at_k_oracle", "recall_at_k_oracle", "recall_at_k_value",
           "ground_truth_topk_weights", "topk_weights"]


def zero_one_oracle(scores, y):
    """Per-sample 0-1 oracle.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)

    Returns
    -------
    c : ndarray of float64, shape (n,)
        ``−yᵢ/n`` (yᵢ ∈ ±1) where ``1 − yᵢ sᵢ > 0``, else 0.
    delta : float
        Fraction of such samples.
    """
    n = scores.size
    ypm = np.where(y, 1.0, -1.0)
    viol = 1.0 - ypm * scores > 0.0
    c = np.where(viol, -ypm / n, 0.0)
    return c, float(np.count_nonzero(viol)) / n


def zero_one_batch(scores, y, starts, ends):
    """:func:`zero_one_oracle` on many queries at once, in one compiled loop (the same arithmetic).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
        Stacked scores; rows outside the queries are ignored.
    y : ndarray of bool, shape (n,)
    starts, ends : ndarray of int, shape (Q,)
        Query ``k`` is ``scores[starts[k]:ends[k]]``; ranges disjoint.

    Returns
    -------
    c : ndarray of float64, shape (n,)
        Each query's ``c`` in its rows, zero elsewhere.
    delta : ndarray of float64, shape (Q,)
        Fraction of violated samples per query.
    """
    return batch_loop(scores, y, starts, ends, 0)


def ground_truth_topk_weights(y, k):
    """Weights t* of the ground-truth top-k feature (average of the loss-minimising sets).

    Parameters
    ----------
    y : ndarray of bool, shape (n,)
    k : int
        Already clipped to 1..n.

    Returns
    -------
    ndarray of float64, shape (n,)
        ``min(1, k/P)`` on positives, ``max(0, k − P)/N`` on negatives; sums to k.
    """
    n_pos = int(np.count_nonzero(y))
    return np.where(y, *topk_weights(n_pos, y.size - n_pos, k))


def topk_weights(n_pos, n_neg, k):
    """``(w_pos, w_neg)``: the weights of :func:`ground_truth_topk_weights` from the counts.

    Parameters
    ----------
    n_pos, n_neg : int
        Positives (at least one) and negatives of the query.
    k : int
        Already clipped to 1..n.

    Returns
    -------
    (float, float)
        ``min(1, k/P)`` and ``max(0, k − P)/N`` (0 without negatives).
    """
    return min(1.0, k / n_pos), (max(0, k - n_pos) / n_neg if n_neg else 0.0)


def _topk_oracle(scores, y, k, recall):
    """The top-k set oracle of precision@k or recall@k (see the module): ``(c, delta)``."""
    n = scores.size
    k = min(int(k), n)
    a = scores + np.where(y, 0.0, 1.0)
    v = np.partition(a, n - k)[n - k]  # k-th largest augmented score
    chosen = a > v
    m = k - int(np.count_nonzero(chosen))
    ties = np.flatnonzero(a == v)
    tie_order = np.concatenate([ties[y[ties]], ties[~y[ties]]])
    chosen[tie_order[:m]] = True
    norm, offset = k, 0
    if recall:
        n_pos = int(np.count_nonzero(y))
        norm, offset = min(n_pos, k), max(0, k - n_pos)
    c = (chosen.astype(np.float64) - ground_truth_topk_weights(y, k)) / norm
    return c, float(np.count_nonzero(chosen & ~y) - offset) / norm


def precision_at_k_oracle(scores, y, k=10):
    """precision@k oracle by O(n) selection.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
    k : int, default=10
        Clipped to n.

    Returns
    -------
    c : ndarray of float64, shape (n,)
        (t̂ − t*) / k for the selected set t̂.
    delta : float
        #negatives in t̂ / k.
    """
    return _topk_oracle(scores, y, k, False)


def recall_at_k_oracle(scores, y, k=10):
    """Recall-in-the-top-k oracle by O(n) selection: precision@k's set, its own normaliser (see the module).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
        With a positive.
    k : int, default=10
        Clipped to n.

    Returns
    -------
    c : ndarray of float64, shape (n,)
        (t̂ − t*) / min(P, k) for the selected set t̂.
    delta : float
        1 − (positives in t̂) / min(P, k).

    Examples
    --------
    >>> import numpy as np
    >>> s, y = np.array([2.0, 1.5, 1.0, 0.0]), np.array([True, False, True, True])
    >>> c, delta = recall_at_k_oracle(s, y, k=2)  # the negative joins the top 2: 1 of 2 positives there
    >>> delta, np.round(c, 4).tolist()  # c = (t̂ − t*) / 2, t* = 2/3 on each positive
    (0.5, [0.1667, 0.5, -0.3333, -0.3333])
    >>> round(float(delta + s @ c), 4)  # H
    1.25
    """
    return _topk_oracle(scores, y, k, True)


def recall_at_k_value(scores, y, k=10):
    """1 − the recall in the top k of the ranking by score (ties by index), at most min(P, k) positives counted.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
        With a positive.
    k : int, default=10
        Clipped to n.

    Returns
    -------
    float
        ``1 − a / min(P, k)``, a the positives among the k best-scored rows.
    """
    k = min(int(k), scores.size)
    found = int(np.count_nonzero(y[np.argsort(-np.asarray(scores), kind="stable")[:k]]))
    return 1.0 - found / min(int(np.count_nonzero(y)), k)
