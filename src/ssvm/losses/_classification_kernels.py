"""Compiled per-query forms of the 0-1 and precision@k oracles (:mod:`.classification`).

Each ``*_into`` kernel solves one query, writes its ``c`` into the given array and returns Δ, with
exactly the arithmetic of the numpy oracle it mirrors (tests compare them bit for bit): the fused
training round (:mod:`ssvm.problem._fused`) calls them inside its compiled loop, and
:func:`precision_at_k_batch` runs them over many stacked queries at once (one call, not one per
query).
"""

import numpy as np
from numba import njit

__all__ = ["zero_one_into", "precision_at_k_into", "precision_at_k_batch", "batch_loop"]


@njit(cache=True, nogil=True)
def zero_one_into(scores, y, c):
    """:func:`~ssvm.losses.classification.zero_one_oracle` of one query into ``c``; returns Δ."""
    n = scores.size
    n_viol = 0
    for i in range(n):
        ypm = 1.0 if y[i] else -1.0
        if 1.0 - ypm * scores[i] > 0.0:
            c[i] = -ypm / n
            n_viol += 1
        else:
            c[i] = 0.0
    return n_viol / n


@njit(cache=True, nogil=True)
def precision_at_k_into(scores, y, k, c):
    """:func:`~ssvm.losses.classification.precision_at_k_oracle` of one query into ``c``; returns Δ.

    The k largest augmented scores ``a = s + [negative]``, ties at the k-th value broken by
    (positives first, index), as the numpy oracle does.
    """
    n = scores.size
    k = min(k, n)
    a = np.empty(n)
    n_pos = 0
    for i in range(n):
        a[i] = scores[i] + (0.0 if y[i] else 1.0)
        n_pos += y[i]
    v = np.partition(a, n - k)[n - k]  # the k-th largest augmented score
    m = k
    for i in range(n):
        if a[i] > v:
            m -= 1
    n_neg = n - n_pos
    w_pos = min(1.0, k / n_pos)
    w_neg = max(0, k - n_pos) / n_neg if n_neg else 0.0
    n_chosen_neg = 0
    for positive in (True, False):  # the ties: positives first, then negatives, by index
        for i in range(n):
            if a[i] == v and y[i] == positive:
                a[i] = np.inf if m > 0 else -np.inf  # chosen or not, decided once
                m -= 1
    for i in range(n):
        chosen = a[i] > v
        if chosen and not y[i]:
            n_chosen_neg += 1
        c[i] = ((1.0 if chosen else 0.0) - (w_pos if y[i] else w_neg)) / k
    return n_chosen_neg / k


@njit(cache=True, nogil=True)
def _loop(scores, y, starts, ends, k, c, delta):
    """0-1 (``k = 0``) or precision@k on every query ``scores[starts[q]:ends[q]]``."""
    for q in range(starts.size):
        a, b = starts[q], ends[q]
        if k:
            delta[q] = precision_at_k_into(scores[a:b], y[a:b], k, c[a:b])
        else:
            delta[q] = zero_one_into(scores[a:b], y[a:b], c[a:b])


def batch_loop(scores, y, starts, ends, k):
    """``(c, delta)`` of 0-1 (``k = 0``) or precision@k (``k >= 1``) over stacked queries."""
    c = np.zeros(scores.shape[0])
    delta = np.empty(len(starts))
    _loop(np.ascontiguousarray(scores, dtype=np.float64), np.ascontiguousarray(y, dtype=np.bool_),
          np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64), int(k), c, delta)
    return c, delta


def precision_at_k_batch(scores, y, starts, ends, k=10):
    """:func:`~ssvm.losses.classification.precision_at_k_oracle` on many stacked queries in one
    compiled loop.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
        Stacked scores; rows outside the queries are ignored.
    y : ndarray of bool, shape (n,)
    starts, ends : ndarray of int, shape (Q,)
        Query ``q`` is ``scores[starts[q]:ends[q]]``; ranges disjoint, each with a positive and a
        negative.
    k : int, default=10
        Clipped to each query's size.

    Returns
    -------
    c : ndarray of float64, shape (n,)
        Each query's ``c`` in its rows, zero elsewhere.
    delta : ndarray of float64, shape (Q,)
    """
    return batch_loop(scores, y, starts, ends, k)
