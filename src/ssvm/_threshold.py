"""Where the estimators of ranking losses put their threshold: :func:`accuracy_threshold`.

Ranking losses do not depend on a shift of all scores, so the estimators place ``intercept_`` at the
cut of best training accuracy (re-exported by :mod:`ssvm.metrics`; the dask fit uses :func:`_cut_value`).
"""

import numpy as np

__all__ = ["accuracy_threshold"]


def accuracy_threshold(scores, relevant):
    """Threshold t maximising the accuracy of ``scores > t`` as a predictor of ``relevant``.

    Candidate cuts lie halfway between consecutive distinct scores, or just below the smallest /
    above the largest score; among the cuts of maximal accuracy the middle one is taken (so the
    result is deterministic and not on the edge of the tie set). The estimators of ranking
    losses, which are invariant to shifting all scores, place their ``intercept_`` here.

    Parameters
    ----------
    scores : ndarray of shape (n,)
        Finite training scores.
    relevant : ndarray of bool of shape (n,)
        True labels.

    Returns
    -------
    t : float
        Finite; ``scores > t`` is exactly the chosen cut (rows tied in score fall on the same
        side). Usually strictly between two scores; it equals the lower one only when the two
        are adjacent floats.

    Examples
    --------
    >>> from ssvm.metrics import accuracy_threshold
    >>> round(accuracy_threshold([0.1, 0.4, 0.35, 0.8], [False, False, True, True]), 6)
    0.225
    """
    scores = np.asarray(scores, dtype=np.float64)
    order = np.argsort(scores, kind="stable")
    s = scores[order]
    r = np.asarray(relevant, dtype=bool)[order]
    n = s.shape[0]
    # cut i: rows s[:i] predicted negative, s[i:] positive
    correct = np.concatenate(([0], np.cumsum(~r))) + (
        np.count_nonzero(r) - np.concatenate(([0], np.cumsum(r)))
    )
    allowed = np.ones(n + 1, dtype=bool)
    allowed[1:n] = s[:-1] < s[1:]
    correct = np.where(allowed, correct, -1)
    best = np.flatnonzero(correct == correct.max())
    i = int(best[(best.shape[0] - 1) // 2])
    return _cut_value(n, s[0], s[-1], s[i - 1] if i > 0 else None, s[i] if i < n else None)


def _cut_value(n, first, last, lo, hi):
    """The threshold :func:`accuracy_threshold` places at a cut of ``n`` sorted scores.

    Parameters
    ----------
    n : int
    first, last : float
        The lowest and the highest score.
    lo, hi : float or None
        The scores on either side of the cut, ``lo < hi``: ``lo`` None below every score, ``hi``
        None above every score.

    Returns
    -------
    float
        Halfway between ``lo`` and ``hi`` (``lo`` when they are adjacent floats); below the
        lowest or above the highest score by ``(last − first) / n`` (at least ``max(1,
        |first| / 2)`` when that is 0 or not finite) at the ends.
    """
    spread = last - first
    step = spread / n if 0 < spread < np.inf else max(1.0, abs(first) / 2)
    if lo is None:
        t = first - step
        return float(t if t < first else np.nextafter(first, -np.inf))
    if hi is None:
        t = last + step
        return float(t if t > last else last)
    t = lo + (hi - lo) / 2
    return float(t if lo <= t < hi else lo)
