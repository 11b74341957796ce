"""The quicksort-flavoured oracle (Mohapatra, Rolínek, Jawahar, Kolmogorov, Kumar; Alg. 1–2).

One kernel serves every QS-suitable loss (AP, NDCG, user losses): the loss only enters through
its discrete derivative ``loss_step(kind, table, ...)``.

Algorithm 1: sort the positives only.  Algorithm 2 (``OptRanks``), iteratively with an explicit
stack, on a private copy of the negatives (values + original indices):

* a block of negatives whose possible interleaving ranks [ℓ⁺, r⁺] have collapsed to one value
  is assigned at once, without touching it again;
* otherwise a pivot (median of three) splits the block by a three-way SELECT into
  ``> v | == v | < v``; opt of the first and last element equal to the pivot is found by
  scanning [ℓ⁺, r⁺] (largest argmax), and the two sides recurse with the narrowed intervals
  (Observation 4).  Ties among negatives are ordered by index inside the ``== v`` block.

The negatives are never sorted; the output c follows from the ranks (Lemma 6, Observation 2).
"""

import numpy as np
from numba import njit

from ._rank_kernels import best_rank, split_query

__all__ = ["qs_oracle"]


@njit(cache=True)
def _assign(vals_ids, lo, hi, r, c, counts, n_pos, inv):
    coef = (n_pos + 1 - r) * inv
    for t in range(lo, hi):
        c[vals_ids[t]] = coef
    counts[r - 1] += hi - lo


@njit(cache=True)
def _median3(a, b, c):
    if a < b:
        if b < c:
            return b
        return c if a < c else a
    if a < c:
        return a
    return c if b < c else b


@njit(cache=True)
def _partition3(vals, ids, lo, hi, v):
    """Three-way partition of vals[lo:hi] (descending): > v, == v, < v; returns (a, b)."""
    lt = lo
    i = lo
    gt = hi - 1
    while i <= gt:
        x = vals[i]
        if x > v:
            vals[i] = vals[lt]
            vals[lt] = x
            t = ids[i]
            ids[i] = ids[lt]
            ids[lt] = t
            lt += 1
            i += 1
        elif x < v:
            vals[i] = vals[gt]
            vals[gt] = x
            t = ids[i]
            ids[i] = ids[gt]
            ids[gt] = t
            gt -= 1
        else:
            i += 1
    return lt, gt + 1


@njit(cache=True)
def _equal_block(ids, a, b, v, left, right, sp, inv, kind, table, n_pos, c, counts):
    """Ranks of a block of equal scores at positions a..b-1 (order j = a+1..b) given ends' opts."""
    if left == right:
        _assign(ids, a, b, left, c, counts, n_pos, inv)
        return
    ids[a:b].sort()  # equal scores: (−score, index) order is index order
    stack = np.empty((64, 4), dtype=np.int64)
    stack[0, 0] = a + 1
    stack[0, 1] = b - 1
    stack[0, 2] = left
    stack[0, 3] = right
    top = 1
    _assign(ids, a, a + 1, left, c, counts, n_pos, inv)
    _assign(ids, b - 1, b, right, c, counts, n_pos, inv)
    while top > 0:
        top -= 1
        lo = stack[top, 0]
        hi = stack[top, 1]
        ll = stack[top, 2]
        rr = stack[top, 3]
        if lo >= hi:
            continue
        if ll == rr:
            _assign(ids, lo, hi, ll, c, counts, n_pos, inv)
            continue
        m = (lo + hi) >> 1
        om = best_rank(v, m + 1, ll, rr, sp, inv, kind, table, n_pos)
        _assign(ids, m, m + 1, om, c, counts, n_pos, inv)
        stack[top, 0] = lo
        stack[top, 1] = m
        stack[top, 2] = ll
        stack[top, 3] = om
        stack[top + 1, 0] = m + 1
        stack[top + 1, 1] = hi
        stack[top + 1, 2] = om
        stack[top + 1, 3] = rr
        top += 2


@njit(cache=True)
def _opt_ranks(vals, ids, sp, kind, table, n_pos, n_neg, c, counts):
    """Algorithm 2 over the whole negative array with rank interval [1, P+1]."""
    inv = 2.0 / (n_pos * n_neg)
    stack = np.empty((128, 4), dtype=np.int64)
    stack[0, 0] = 0
    stack[0, 1] = n_neg
    stack[0, 2] = 1
    stack[0, 3] = n_pos + 1
    top = 1
    while top > 0:
        top -= 1
        lo = stack[top, 0]
        hi = stack[top, 1]
        ll = stack[top, 2]
        rr = stack[top, 3]
        if ll == rr:
            _assign(ids, lo, hi, ll, c, counts, n_pos, inv)
            continue
        v = _median3(vals[lo], vals[(lo + hi) >> 1], vals[hi - 1])
        a, b = _partition3(vals, ids, lo, hi, v)
        o_first = best_rank(v, a + 1, ll, rr, sp, inv, kind, table, n_pos)
        o_last = o_first if b - a == 1 else best_rank(v, b, o_first, rr, sp, inv, kind, table, n_pos)
        _equal_block(ids, a, b, v, o_first, o_last, sp, inv, kind, table, n_pos, c, counts)
        # push the larger side first so the stack stays O(log N)
        if a - lo > hi - b:
            if lo < a:
                stack[top, 0] = lo
                stack[top, 1] = a
                stack[top, 2] = ll
                stack[top, 3] = o_first
                top += 1
            if b < hi:
                stack[top, 0] = b
                stack[top, 1] = hi
                stack[top, 2] = o_last
                stack[top, 3] = rr
                top += 1
        else:
            if b < hi:
                stack[top, 0] = b
                stack[top, 1] = hi
                stack[top, 2] = o_last
                stack[top, 3] = rr
                top += 1
            if lo < a:
                stack[top, 0] = lo
                stack[top, 1] = a
                stack[top, 2] = ll
                stack[top, 3] = o_first
                top += 1


@njit(cache=True)
def _qs_core(scores, y, sp, pos_ids, kind, table):
    n = scores.size
    n_pos = sp.size
    n_neg = n - n_pos
    vals = np.empty(n_neg, dtype=np.float64)
    ids = np.empty(n_neg, dtype=np.int64)
    t = 0
    for i in range(n):
        if not y[i]:
            vals[t] = scores[i]
            ids[t] = i
            t += 1
    c = np.zeros(n, dtype=np.float64)
    counts = np.zeros(n_pos + 1, dtype=np.int64)
    _opt_ranks(vals, ids, sp, kind, table, n_pos, n_neg, c, counts)
    inv = 2.0 / (n_pos * n_neg)
    cum = 0
    for k in range(n_pos):
        cum += counts[k]
        c[pos_ids[k]] = -cum * inv
    return c, counts


def qs_oracle(scores, y, loss):
    """QS oracle (Algorithms 1–2) for any QS-suitable loss.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
    loss : QSLoss

    Returns
    -------
    c : ndarray of float64, shape (n,)
        Coefficients of Ψ(X, R̂) − Ψ(X, R*).
    delta : float
        Δ(R*, R̂).
    """
    sp, pos_ids, _ = split_query(scores, y)
    kind, table = loss.kernel_spec(sp.size, scores.size - sp.size)
    c, counts = _qs_core(scores, y, sp, pos_ids, kind, table)
    return c, float(loss.value(counts))
