"""Losses that are not QS-suitable rankings: per-sample 0-1 and precision@k (Mensink et al.).

zero_one (binary SVM baseline): labels ŷ ∈ {±1}ⁿ, Ψ = 1/(2n) Σ ŷᵢ ψ(xᵢ), Δ = #mistakes / n.
The maximisation decomposes per sample: flip sample i iff 1 − yᵢ sᵢ > 0, so
c_i = −yᵢ/n there (0 elsewhere) and H = (1/n) Σ max(0, 1 − yᵢ sᵢ).

precision_at_k: the output is the set t of the top k samples; Ψ(t) = (1/k) Σ_{i∈t} ψ(xᵢ),
Δ(t) = #negatives in t / k.  Loss-augmented inference selects the k largest aᵢ = sᵢ + [i negative]
in O(n) (Mensink, Verbeek, Caetano 2011, section 4; ``np.partition``), ties by (positives
first, index).  The ground-truth feature Ψ(R*) is the average over all loss-minimising top-k sets
(weight min(1, k/P) on each positive, max(0, k − P)/N on each negative): it does not depend on w,
so H = Δ + s·c is convex, H ≥ Δ(top-k by score), and Σc = 0.
"""

import numpy as np

from ._classification_kernels import batch_loop

__all__ = ["zero_one_oracle", "zero_one_batch", "precision_at_k_oracle", "ground_truth_topk_weights",
           "topk_weights"]


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
    n = scores.size
    k = min(int(k), n)
    a = scores + np.where(y, 0.0, 1.0)
    v = np.partition(a, n - k)[n - k]  # k-th largest augmented score
    chosen = a > v
    m = k - int(np.count_nonzero(chosen))
    ties = np.flatnonzero(a == v)
    tie_order = np.concatenate([ties[y[ties]], ties[~y[ties]]])
    chosen[tie_order[:m]] = True
    c = (chosen.astype(np.float64) - ground_truth_topk_weights(y, k)) / k
    return c, float(np.count_nonzero(chosen & ~y)) / k
