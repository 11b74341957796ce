"""Input validation shared by the public entry points of :mod:`ssvm.losses`.

Oracles returned by :func:`ssvm.losses.get_oracle` never validate (they are called in inner
loops); the public functions validate once, here.
"""

import numpy as np

from ssvm._queries import check_relevance

__all__ = ["validate_scores_labels"]


def validate_scores_labels(scores, y):
    """Check one query's scores and binary labels and convert them to the oracle dtypes.

    Parameters
    ----------
    scores : array-like of shape (n,)
        Finite real scores.
    y : array-like of shape (n,)
        Relevance: bool, or numbers of which those > 0 are relevant (0/1, ±1 or grades), the one
        convention of :func:`ssvm._queries.check_relevance`.

    Returns
    -------
    scores : ndarray of float64, shape (n,)
        Contiguous copy-free view when possible.
    y : ndarray of bool, shape (n,)
        ``True`` for positives.

    Raises
    ------
    ValueError
        If the arrays are not 1-D, differ in length, contain NaN/inf scores or labels, labels that
        are not numbers, or the query has no positive or no negative.
    """
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
    if lab.size == 0:
        raise ValueError("y is empty")
    yb = np.ascontiguousarray(check_relevance(lab, lab.shape[0]))
    n_pos = int(np.count_nonzero(yb))
    if n_pos == 0:
        raise ValueError("y has no positive sample (need at least one positive and one negative)")
    if n_pos == yb.shape[0]:
        raise ValueError("y has no negative sample (need at least one positive and one negative)")
    return s, yb
