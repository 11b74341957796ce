"""The max-pooled oracle of the latent AP-SVM: a negative *bag* enters the ranking as its best row.

For the latent AP-SVM (``ssvm.LatentRankSVM``, ``negatives="best"``) every negative image is a bag of
windows whose score is the best window's, ``max_h w·φ(x, h)``. The hinge is non-decreasing in a
negative's score, so the max can be taken inside the loss-augmented inference: pool each bag to its
best row, run the ranking oracle on the pooled scores, and put each bag's coefficient on its
arg-max row. Then ``delta + scores @ c`` is the hinge of the pooled ranking and ``X.T @ c`` a
subgradient of it, exactly as the oracle contract asks.
"""

import numpy as np

from ._pooling import segment_argmax
from .oracle import Oracle, as_oracle

__all__ = ["segment_argmax", "max_pooled_oracle", "pooled_oracle"]


def max_pooled_oracle(scores, y, *, base, neg_offsets):
    """``(c, delta)`` of the ranking in which each negative bag is pooled to its best row.

    Rows ``[0, neg_offsets[-1])`` are the rows of the negative bags, bag k owning rows
    ``neg_offsets[k]:neg_offsets[k+1]``; every later row is a sample of its own. The pooled scores
    (one per bag, then the remaining rows) go to ``base``; each bag's coefficient is placed on its
    arg-max row (ties: the first).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
        False on the bags' rows.
    base : callable
        Oracle ``base(scores, y) -> (c, delta)`` of the pooled ranking.
    neg_offsets : ndarray of int64, shape (n_bags + 1,)

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : float
    """
    n_neg_rows = neg_offsets[-1]
    best = segment_argmax(scores, neg_offsets)
    pooled_scores = np.concatenate((scores[best], scores[n_neg_rows:]))
    pooled_y = np.concatenate((np.zeros(best.shape[0], dtype=bool), y[n_neg_rows:]))
    pooled_c, delta = base(pooled_scores, pooled_y)
    pooled_c = np.asarray(pooled_c, dtype=np.float64)
    c = np.zeros(scores.shape[0], dtype=np.float64)
    c[best] = pooled_c[: best.shape[0]]
    c[n_neg_rows:] = pooled_c[best.shape[0]:]
    return c, delta


def pooled_oracle(base, neg_offsets):
    """The :class:`Oracle` of :func:`max_pooled_oracle` around ``base`` (picklable).

    Parameters
    ----------
    base : Oracle or callable
        Oracle of the pooled ranking (:func:`ssvm.losses.get_oracle`).
    neg_offsets : array-like of int, shape (n_bags + 1,)

    Returns
    -------
    Oracle
    """
    base = as_oracle(base)
    neg_offsets = np.ascontiguousarray(neg_offsets, dtype=np.int64)
    return Oracle(max_pooled_oracle, params={"base": base, "neg_offsets": neg_offsets},
                  name=f"max-pooled {base.name}")
