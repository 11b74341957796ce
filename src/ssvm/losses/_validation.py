"""Input validation shared by the public entry points of :mod:`ssvm.losses`.

Oracles returned by :func:`ssvm.losses.get_oracle` never validate (they are called in inner
loops); the public functions validate once, here.
"""

import numpy as np

from ssvm._queries import check_relevance

__all__ = ["validate_scores_labels", "validate_scores_grades", "check_grades", "check_query_target",
           "scores_and_labels"]

_MAX_EXPONENTIAL_GRADE = 60  # 2^r − 1 stays exact in float64 and far from overflowing


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
    s, lab = scores_and_labels(scores, y)
    if lab.size == 0:
        raise ValueError("y is empty")
    return s, check_query_target(np.ascontiguousarray(check_relevance(lab, lab.shape[0])))  # the one convention: y > 0


def check_query_target(target, graded=None):
    """``target`` itself if one query of it has something to rank: for binary relevance (bool) a
    positive and a negative, for grades two distinct ones; else a ValueError that says so (about
    grades when ``graded``, default: when ``target`` holds grades)."""
    if graded is None:
        graded = target.dtype != bool
    if graded:
        if target.size == 0 or target.min() == target.max():
            raise ValueError("y needs at least two distinct grades (with all grades equal every ranking "
                             "has the same loss)")
        return target
    if target.size == 0:
        raise ValueError("y is empty")
    n_pos = int(np.count_nonzero(target))
    if n_pos == 0:
        raise ValueError("y has no positive sample (need at least one positive and one negative)")
    if n_pos == target.shape[0]:
        raise ValueError("y has no negative sample (need at least one positive and one negative)")
    return target


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
        integers or not finite, or all equal (every ranking then has the same loss).
    """
    s, lab = scores_and_labels(scores, y)
    return s, check_query_target(check_grades(lab, gain=gain))


def scores_and_labels(scores, y):
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


def check_grades(y, n_samples=None, name="y", gain="exponential"):
    """Relevance grades as int64: non-negative integers (bool, integer-valued floats and the ±1 coding
    of binary labels accepted; −1 is grade 0 there).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
    n_samples : int, optional
        The expected length.
    name : str, default="y"
        The argument's name, for messages.
    gain : str, default="exponential"
        The gain the grades are for (exponential gains accept grades up to 60).

    Returns
    -------
    ndarray of int64, shape (n_samples,)

    Raises
    ------
    ValueError
        If ``y`` is not 1-D (of length ``n_samples``), not numeric, or holds NaN or infinite,
        negative or non-integer values (the message counts the rows and says what to pass).
    """
    y = np.asarray(y)
    if y.ndim != 1 or (n_samples is not None and y.shape[0] != n_samples):
        want = "" if n_samples is None else f" of length {n_samples}"
        raise ValueError(f"{name} must be 1-D{want}, one relevance grade per row; got shape {y.shape}")
    if y.dtype == bool:
        return y.astype(np.int64)
    if y.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold numeric relevance grades (0, 1, 2, ...); got dtype {y.dtype}")
    if y.size and np.all((y == -1) | (y == 1)):  # the ±1 coding of binary labels
        return (y == 1).astype(np.int64)
    if y.dtype.kind in "iu":
        bad = y < 0
        if np.any(bad):
            raise _grade_error(name, int(np.count_nonzero(bad)), y.size, "negative")
        grades = y.astype(np.int64)
    else:
        for what, bad in (("NaN or infinite", ~np.isfinite(y)), ("negative", y < 0), ("non-integer", y != np.floor(y))):
            if np.any(bad):
                raise _grade_error(name, int(np.count_nonzero(bad)), y.size, what)
        grades = y.astype(np.int64)
    if gain == "exponential" and grades.size and grades.max() > _MAX_EXPONENTIAL_GRADE:
        raise ValueError(f"{name} has grades up to {grades.max()}; exponential gains 2^r − 1 take grades "
                         f"up to {_MAX_EXPONENTIAL_GRADE}: rescale them or pass gain='linear'")
    return grades


def _grade_error(name, n_bad, n, what):
    return ValueError(f"{name} has {n_bad} of {n} rows with {what} relevance grades; graded NDCG and the "
                      "pairwise losses need non-negative integer grades (0 = irrelevant, 1, 2, ...): pass them as "
                      "integers (e.g. np.rint(y).astype(int) after checking), or gain='binary' to count y > 0 as "
                      "relevant")
