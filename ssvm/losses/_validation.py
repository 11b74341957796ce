"""Input validation shared by the public entry points of :mod:`ssvm.losses`.

Oracles returned by :func:`ssvm.losses.get_oracle` never validate (they are called in inner
loops); the public functions validate once, here.
"""

import numpy as np

from .graded import check_grades

__all__ = ["validate_scores_labels", "validate_scores_grades"]


def validate_scores_labels(scores, y):
    """Check one query's scores and binary labels and convert them to the oracle dtypes.

    Parameters
    ----------
    scores : array-like of shape (n,)
        Finite real scores.
    y : array-like of shape (n,)
        Binary relevance: bool, {0, 1} or {-1, 1}. ``True`` / ``1`` marks a positive.

    Returns
    -------
    scores : ndarray of float64, shape (n,)
        Contiguous copy-free view when possible.
    y : ndarray of bool, shape (n,)
        ``True`` for positives.

    Raises
    ------
    ValueError
        If the arrays are not 1-D, differ in length, contain NaN/inf scores, labels outside a
        binary coding, or the query has no positive or no negative.
    """
    s, lab = _scores_and_labels(scores, y)
    yb = _binary_labels(lab)
    n_pos = int(np.count_nonzero(yb))
    if n_pos == 0:
        raise ValueError("y has no positive sample (need at least one positive and one negative)")
    if n_pos == yb.shape[0]:
        raise ValueError("y has no negative sample (need at least one positive and one negative)")
    return s, yb


def validate_scores_grades(scores, y, gain):
    """Check one query's scores and graded relevance for graded NDCG and convert them.

    Parameters
    ----------
    scores : array-like of shape (n,)
        Finite real scores.
    y : array-like of shape (n,)
        Non-negative integer grades (bool and integer-valued floats accepted).
    gain : str
        The gain (:data:`ssvm.losses.graded.GAINS`).

    Returns
    -------
    scores : ndarray of float64, shape (n,)
    y : ndarray of int64, shape (n,)

    Raises
    ------
    ValueError
        As :func:`validate_scores_labels` for the scores; for grades that are negative, not
        integers or not finite, or all equal (every ranking then has the same NDCG).
    """
    s, lab = _scores_and_labels(scores, y)
    grades = check_grades(lab, gain=gain)
    if grades.size == 0 or grades.min() == grades.max():
        raise ValueError("y needs at least two distinct grades (with all grades equal every ranking "
                         "has the same NDCG)")
    return s, grades


def _scores_and_labels(scores, y):
    """1-D scores (finite, contiguous float64) and labels of the same length."""
    s = np.asarray(scores)
    lab = np.asarray(y)
    if s.ndim != 1:
        raise ValueError(f"scores must be 1-D, got shape {s.shape}")
    if lab.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {lab.shape}")
    if s.shape[0] != lab.shape[0]:
        raise ValueError(f"length mismatch: {s.shape[0]} scores but {lab.shape[0]} labels")
    if s.dtype == bool or not (np.issubdtype(s.dtype, np.floating) or np.issubdtype(s.dtype, np.integer)):
        raise ValueError(f"scores must be real numbers, got dtype {s.dtype}")
    s = np.ascontiguousarray(s, dtype=np.float64)
    if not np.all(np.isfinite(s)):
        raise ValueError("scores contain NaN or inf")
    return s, lab


def _binary_labels(lab):
    """Labels as positives (``True``), checked in O(n) by comparisons (no sort, no hashing)."""
    if lab.dtype == bool:
        return np.ascontiguousarray(lab)
    if not (np.issubdtype(lab.dtype, np.integer) or np.issubdtype(lab.dtype, np.floating)):
        raise ValueError(f"labels must be bool or numeric, got dtype {lab.dtype}")
    if lab.size == 0:
        raise ValueError("y is empty")
    positive = lab == 1
    if np.all(positive | (lab == 0)) or np.all(positive | (lab == -1)):
        return positive
    bad = lab[~(positive | (lab == 0) | (lab == -1))]
    if bad.size == 0:
        raise ValueError("labels mix 0 and -1 as the negative class: use one binary coding, {0, 1} or {-1, 1}")
    raise ValueError(f"labels must be binary (bool, {{0, 1}} or {{-1, 1}}), got values such as {bad[:5].tolist()}")
