"""The accuracy-maximising threshold of a dask array's scores, without the scores on the client.

A ranking loss's ``intercept_`` is :func:`ssvm.metrics.accuracy_threshold` of the training scores
``s = X w``: over the cuts between distinct scores, the one of most correct predictions (the middle
of the best, if several). Cut after a score value ``u`` and the number correct is ``P + F(u)``,
``F(u)`` the negatives minus the positives scoring at most ``u``; the cut below every score is
``P + 0``. Each block sorts its scores on its worker, and the client finds the best cuts by a
branch and bound over score intervals, asking the blocks only about values:

1. every block sends its size, its negatives, its lowest and highest score and a few evenly
   spaced scores (*samples*): known values;
2. every block counts its rows and negatives at or below and strictly below each new known value;
   summed, they give ``F`` at every known value and, for each open interval between two known
   values, its rows and negatives. No cut inside an interval does better than ``F`` at its lower
   end plus its negatives: intervals whose bound is below the best known ``F`` are dropped;
3. the others are split by samples from inside them (step 2 again) until they hold at most
   ``budget`` rows in all; those rows (value and label) come to the client, which then knows ``F``
   at every cut that can be among the best, and takes the middle one;
4. the block with the next score above that cut names it.

Every pass brings ``O(budget)`` numbers per block to the client, whatever the block's size, and the
counts only their sum (added on a worker); only the rows of the intervals that can hold a best cut
ever reach the client (all of them only when most cuts tie for the best).
The threshold is :func:`~ssvm.metrics.accuracy_threshold`'s to the last bit: the same scores (the
same compiled product on every row) and the same cut arithmetic (:func:`ssvm.metrics._cut_value`).
"""

import numpy as np

from ._arrays import is_dask_array
from ._threshold import _cut_value
from .problem import matvec
from .problem._dask_cluster import block_pass, distributed_client
from .problem._giant_blocks import spaced_positions

__all__ = ["SortedScores", "dask_accuracy_threshold", "summed"]

_BUDGET = 4096  # at most: samples a pass and rows shipped at the end, over all blocks


class SortedScores:
    """A block's scores in ascending order with the count of negatives among the first i
    (kept on its worker while the threshold is found).

    Parameters
    ----------
    X_b : ndarray
    relevant_b : ndarray of bool
    w : ndarray of float64
    """

    def __init__(self, X_b, relevant_b, w):
        s = matvec(X_b, w)
        order = np.argsort(s, kind="stable")
        self.s = s[order]
        self.relevant = np.asarray(relevant_b, dtype=bool)[order]
        self.neg_before = np.concatenate(([0], np.cumsum(~self.relevant)))


def block_sort(X_b, relevant_b, w):
    """The block's :class:`SortedScores`."""
    return SortedScores(X_b, relevant_b, w)


def _inside(sorted_scores, lo, hi):
    """Positions ``[a, b)`` of the block's scores strictly inside each interval ``(lo, hi)``."""
    s = sorted_scores.s
    return np.searchsorted(s, lo, side="right"), np.searchsorted(s, hi, side="left")


def block_samples(sorted_scores, lo, hi, k):
    """Up to ``k`` evenly spaced scores of the block strictly inside each interval ``(lo, hi)``
    (all of them where there are at most ``k``), as one array."""
    a, b = _inside(sorted_scores, lo, hi)
    m = np.maximum(b - a, 0)
    return sorted_scores.s[spaced_positions(a, m, np.minimum(m, k), k)[1]]


def block_first(sorted_scores, k):
    """``(rows, lowest, highest, samples)``: the block's size, its extreme scores (None without
    rows) and :func:`block_samples` of all its scores."""
    s = sorted_scores.s
    ends = (float(s[0]), float(s[-1])) if s.shape[0] else (None, None)
    everything = np.array([-np.inf]), np.array([np.inf])
    return s.shape[0], *ends, block_samples(sorted_scores, *everything, k)


def block_counts(sorted_scores, values):
    """``(at or below, negatives at or below, below, negatives below)`` each sorted value: int64
    arrays, one entry a value."""
    s, neg = sorted_scores.s, sorted_scores.neg_before
    le, lt = np.searchsorted(s, values, side="right"), np.searchsorted(s, values, side="left")
    return le, neg[le], lt, neg[lt]


def summed(*parts):
    """The blocks' :func:`block_counts`, added up (on a worker: one array comes to the client)."""
    return np.sum([np.array(p) for p in parts], axis=0)


def block_rows(sorted_scores, lo, hi):
    """``(scores, relevant)`` of the block's rows strictly inside the intervals ``(lo, hi)``."""
    a, b = _inside(sorted_scores, lo, hi)
    rows = np.concatenate([np.arange(i, j) for i, j in zip(a, b)] + [np.zeros(0, dtype=np.int64)])
    return sorted_scores.s[rows], sorted_scores.relevant[rows]


def block_next(sorted_scores, u):
    """The block's lowest score above ``u``, or +inf."""
    s = sorted_scores.s
    i = np.searchsorted(s, u, side="right")
    return float(s[i]) if i < s.shape[0] else np.inf


def dask_accuracy_threshold(X, w, relevant, *, budget=None):
    """:func:`ssvm.metrics.accuracy_threshold` of ``X @ w`` for a dask ``X``, the scores left on
    the blocks (see the module's docstring).

    Parameters
    ----------
    X : dask.array.Array of shape (n, d)
        Row-chunked features (finite).
    w : ndarray of shape (d,)
    relevant : array-like or dask array of shape (n,)
        True labels (or grades: > 0 is relevant), as :func:`~ssvm.metrics.accuracy_threshold` takes
        them; a dask array stays on the blocks too.
    budget : int, optional
        Samples asked of the blocks per pass, and rows brought to the client at the end, in all.
        Default: ``n / 64`` (at least 64, at most 4096), so that a pass moves a small share of
        what the scores would.

    Returns
    -------
    float
        The threshold ``accuracy_threshold(matvec(X, w), relevant)`` returns.
    """
    if budget is None:
        budget = min(_BUDGET, max(64, X.shape[0] // 64))
    client = distributed_client()
    features = list(X.to_delayed().ravel())
    if is_dask_array(relevant):
        labels = list(relevant.rechunk((X.chunks[0],)).to_delayed().ravel())
    else:
        labels = np.split(np.asarray(relevant), np.cumsum(X.chunks[0])[:-1])
    if client is not None:  # the tasks are submitted on the blocks' futures
        features = client.compute(features)
        labels = client.compute(labels) if is_dask_array(relevant) else labels
    blocks = list(zip(features, labels))
    kept = [(b,) for b in block_pass(client, block_sort, blocks, (np.asarray(w, dtype=np.float64),), keep=True)]

    def pass_(task, *shared, add=False):
        if add:  # the blocks' results summed by one more task, where they are
            return block_pass(client, summed, [tuple(block_pass(client, task, kept, shared, keep=True))])[0]
        return block_pass(client, task, kept, shared)

    firsts = pass_(block_first, max(1, budget // len(kept)))
    n = sum(f[0] for f in firsts)
    first = min(f[1] for f in firsts if f[0])
    last = max(f[2] for f in firsts if f[0])
    samples = np.unique(np.concatenate([f[3] for f in firsts] + [np.array([first, last])]))
    values, F, active = _search(pass_, samples, budget, len(kept))
    u = _best_value(values, F, pass_(block_rows, values[active], values[active + 1]))
    if u == -np.inf:
        return _cut_value(n, first, last, None, first)
    if u == last:
        return _cut_value(n, first, last, u, None)
    return _cut_value(n, first, last, u, min(pass_(block_next, u)))


def _search(pass_, new, budget, n_blocks):
    """Known values (ascending), ``F`` at each, and the intervals between neighbours that can still
    hold a best cut (their numbers), split until those hold at most ``budget`` rows.

    ``pass_(task, *shared)`` runs ``task`` on every block's :class:`SortedScores` (``add=True``:
    and sums the results before they come back); ``new``: the first known values (samples, the
    lowest and the highest score)."""
    values = np.zeros(0)
    counts = np.zeros((4, 0), dtype=np.int64)  # at or below, negatives at or below, below, ... below
    while True:
        got = pass_(block_counts, new, add=True)
        values, where = np.unique(np.concatenate((values, new)), return_inverse=True)
        merged = np.zeros((4, values.shape[0]), dtype=np.int64)
        merged[:, where] = np.concatenate((counts, got), axis=1)
        counts = merged
        le, neg_le, lt, neg_lt = counts
        F = 2 * neg_le - le  # negatives minus positives at or below each value
        rows = lt[1:] - le[:-1]  # strictly inside each interval between neighbours
        bound = F[:-1] + neg_lt[1:] - neg_le[:-1]  # no cut inside does better
        active = np.flatnonzero((rows > 0) & (bound >= max(0, F.max())))
        if rows[active].sum() <= budget:
            return values, F, active
        k = max(1, budget // (active.shape[0] * n_blocks))
        new = np.unique(np.concatenate(pass_(block_samples, values[active], values[active + 1], k)))
        if not new.size:  # every active interval holds a row, so a sample: a pass that finds none is a bug
            raise RuntimeError("the threshold's search found no score inside an interval that counts rows")


def _best_value(values, F, shipped):
    """The score value after which the middle best cut lies (-inf: below every score), from ``F`` at
    the known values and the rows ``shipped`` (per block: scores, relevant) of the open intervals."""
    s_in = np.concatenate([p[0] for p in shipped])
    y_in = np.concatenate([p[1] for p in shipped])
    order = np.argsort(s_in, kind="stable")
    s_in, y_in = s_in[order], y_in[order]
    # F at each shipped row: F at its interval's lower end plus the interval's rows up to it
    start = np.searchsorted(values, s_in, side="right") - 1
    run = np.cumsum(np.where(y_in, -1, 1))
    base = np.searchsorted(s_in, values[start], side="right")  # the interval's first shipped row
    F_in = F[start] + run - np.concatenate(([0], run))[base]
    last_of_value = np.ones(s_in.shape[0], dtype=bool)
    last_of_value[:-1] = s_in[1:] != s_in[:-1]
    cuts = np.concatenate(([-np.inf], values, s_in[last_of_value]))
    correct = np.concatenate(([0], F, F_in[last_of_value]))  # the cut below every score: F = 0
    order = np.argsort(cuts, kind="stable")
    best = order[correct[order] == correct.max()]
    return float(cuts[best[(best.shape[0] - 1) // 2]])
