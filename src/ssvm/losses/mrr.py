"""Mean reciprocal rank (``loss="mrr"``): Δ = 1 − 1/(rank of the first relevant row), binary relevance.

Its loss-augmented inference is exact in O(n log n) per query (``_core/mrr.pyx``): Δ depends only on n₁,
the negatives ranked above every positive, so the oracle enumerates n₁ with prefix sums.  MRR is also a
QS-suitable loss in the sense of Mohapatra et al.: with the j-th negative (in score order) at interleaving
rank r, Δ = Σ_j δ_j(r_j) with δ_j(r) = [r = 1] / (j (j + 1)) (the sum telescopes to n₁ / (n₁ + 1)), whose
discrete derivative d_j(1) = −1/(j (j + 1)) rises with j and d_j(i ≥ 2) = 0 (conditions C2 and C3 hold);
:class:`MRRLoss` gives that value from a ± pattern, for the exhaustive oracle and the ranking by score.
"""

import numpy as np

from ._core.derivative import count_positives
from ._core.mrr import mrr_batch as _mrr_batch
from .qs import check_two_classes
from .rank_losses import QSLoss

__all__ = ["MRRLoss", "mrr_oracle", "mrr_batch"]


class MRRLoss(QSLoss):
    """Δ = 1 − 1/(rank of the first positive) = n₁ / (n₁ + 1), n₁ the negatives above every positive.

    Its value from a ± pattern (:meth:`value`) serves the exhaustive oracle and the ranking by score;
    loss-augmented inference is :func:`mrr_oracle`.
    """

    name = "mrr"

    def value(self, counts):
        """See :meth:`QSLoss.value`: ``counts[..., 0] / (counts[..., 0] + 1)``."""
        first = np.asarray(counts)[..., 0].astype(np.float64)
        return first / (first + 1.0)

    def delta_terms(self, n_neg):
        """δ_j(1) = 1 / (j (j + 1)) for j = 1..n_neg (δ_j(r ≥ 2) = 0): Δ = Σ_{j ≤ n₁} δ_j(1).

        Parameters
        ----------
        n_neg : int

        Returns
        -------
        ndarray of float64, shape (n_neg,)
        """
        j = np.arange(1, n_neg + 1, dtype=np.float64)
        return 1.0 / (j * (j + 1.0))


def mrr_batch(scores, y, starts, ends):
    """The MRR oracle on stacked queries: exactly :func:`mrr_oracle` on each.

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
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    ends = np.ascontiguousarray(ends, dtype=np.int64)
    yb = np.ascontiguousarray(y, dtype=bool)
    check_two_classes(count_positives(yb.view(np.uint8), starts, ends), ends - starts)
    c = np.zeros(scores.size)
    delta = np.empty(starts.size)
    _mrr_batch(scores, yb.view(np.uint8), starts, ends, c, delta)
    return c, delta


def mrr_oracle(scores, y):
    """Loss-augmented inference of 1 − MRR on one query (see the module).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
        A positive and a negative at least.

    Returns
    -------
    c : ndarray of float64, shape (n,)
        ``H = delta + scores @ c``.
    delta : float
        n₁ / (n₁ + 1) of the maximising ranking.

    Examples
    --------
    >>> import numpy as np
    >>> c, delta = mrr_oracle(np.array([0.1, 0.0, -2.0]), np.array([True, False, False]))
    >>> delta  # the close negative goes first: Δ = 1/2 gains more than the scores lose
    0.5
    """
    n = np.asarray(scores).shape[0]
    c, delta = mrr_batch(scores, y, np.zeros(1, np.int64), np.full(1, n, np.int64))
    return c, float(delta[0])
