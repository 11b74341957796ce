"""Song, Schwing, Zemel, Urtasun (ICML 2016): the O(PN) dynamic program for AP, both directions.

Solves  max_R  w·Ψ(X, R) + σ ε Δ_AP(R*, R)  with σ = +1 (loss-augmented, the structured-hinge
oracle) or σ = −1 (loss-*diminished*, needed for the negative direct-loss update), over
interleavings of the positives and negatives, each sorted by (−score, index) (Observation 1 of
Yue et al. holds in both directions).  h(i, j) is the best value of a prefix with i positives and
j negatives; placing the i-th positive after j negatives adds (N − 2j) s⁺ᵢ / (PN) − σε i / (P(i+j)),
placing the j-th negative after i positives adds (P − 2i) s⁻ⱼ / (PN).  Ties prefer "negative
last" while backtracking, i.e. negatives as low as possible (the same rule as every oracle).

Time O(PN), memory O(PN / 8) bytes for the packed decision bits (the compiled loop: :mod:`._song_dp`).
"""

import numpy as np

from ._core.derivative import py_write_coefficients as write_coefficients
from ._core.sorting import sorted_negatives, sorted_positives
from ._song_dp import dp_ranks
from ._validation import validate_scores_labels
from .qs import check_two_classes
from .rank_losses import APLoss

__all__ = ["dp_oracle", "ap_direct_loss_inference"]


def _dp(scores, y, sigma_eps):
    sp, pos_ids = sorted_positives(scores, y)
    sn, neg_sorted = sorted_negatives(scores, y)
    check_two_classes(sp.size, scores.size)  # as QS: a ZeroDivisionError that Oracle.batch names
    ranks, _ = dp_ranks(sp, sn, float(sigma_eps))
    c, counts = write_coefficients(ranks, neg_sorted, pos_ids, scores.size, sp.size, sn.size)
    return c, float(APLoss().value(counts))


def dp_oracle(scores, y, loss=None):
    """DP oracle for the AP loss-augmented problem (direction +1, ε = 1).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
    loss : APLoss, optional
        Accepted for a uniform oracle signature; only AP is supported.

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : float
    """
    return _dp(scores, y, 1.0)


def ap_direct_loss_inference(scores, y, epsilon=1.0, direction=1):
    """Loss-augmented (direction=+1) or loss-diminished (direction=−1) inference for AP.

    Solves ``max_R w·Ψ(X, R) + direction · epsilon · Δ_AP(R*, R)`` exactly with the dynamic
    program of Song et al. (2016), as needed for direct-loss-minimisation updates
    (``∇ ≈ ±(Ψ(y_direct) − Ψ(y_w)) / ε``).

    Parameters
    ----------
    scores : array-like of shape (n,)
        Scores w·ψ(x) of the query's samples.
    y : array-like of shape (n,)
        Relevance: bool, or numbers of which those > 0 are relevant.
    epsilon : float, default=1.0
        Weight ε ≥ 0 of the loss.
    direction : {1, -1}, default=1
        +1 adds the loss (the structured-hinge oracle when ε = 1), −1 subtracts it.

    Returns
    -------
    c : ndarray of float64, shape (n,)
        Coefficients of Ψ(X, R̂) − Ψ(X, R*), so that ``X.T @ c`` is the feature difference.
    delta : float
        Δ_AP(R*, R̂) of the returned ranking R̂.

    Raises
    ------
    ValueError
        On invalid scores/labels, ``direction`` not in {1, −1} or a negative / non-finite ε.
    """
    if direction not in (1, -1):
        raise ValueError(f"direction must be +1 or -1, got {direction!r}")
    eps = float(epsilon)
    if not np.isfinite(eps) or eps < 0:
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    s, yb = validate_scores_labels(scores, y)
    return _dp(s, yb, direction * eps)
