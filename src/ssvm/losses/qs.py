"""The quicksort-flavoured oracle (Mohapatra, Rolínek, Jawahar, Kolmogorov, Kumar; Alg. 1–2).

One kernel serves every QS-suitable loss (AP, NDCG, user losses): the loss only enters through its
discrete derivative ``loss_step(kind, table, ...)``.  The negatives are never sorted — except for
AP and NDCG with many positives (P ≥ N / 50), where one packed-key sort and a certified
monotone walk (:mod:`ssvm.losses._qs_walk`) beat the grid below, whose bins then outgrow the caches.

Algorithm 1 sorts the positives only (O(P log P)).  Algorithm 2 (``_qs_recursion.opt_ranks``)
then finds every negative's interleaving rank by recursive SELECT, using that the optimal rank
opt(s, j) of a negative with score s at order j (its place in the (−score, index) order) is
non-increasing in s and non-decreasing in j (Observation 4; condition C3).  This module runs the
first levels of that recursion as one *multi-pivot* SELECT with pivots on a fixed score grid, so
most negatives are settled in two streaming passes without any data movement:

1. **Histogram.** The grid has about min(max(N / 8, 32 P), 64 N) / 3 bins (at most 2^21) of width
   2^e (a power of two), so a negative's bin ``floor(s · 2^−e) − base`` is computed exactly and bin
   k holds exactly the scores in [E_k, E_k+1), E_k = (base + k) · 2^e; bin 0 also holds the scores
   below the grid (its lower edge is −∞; the grid starts at the minimum of a strided sample). One
   pass counts the negatives per bin; the counts give every bin's range of orders [j1, j2] (the
   bins above it come first). A negative scoring above every positive has rank 1 when the loss's
   derivative is ≤ 0 (AP, NDCG): moving it below any positive lowers the score term and never
   raises the loss. Those are counted apart and take the first orders.
2. **Corner ranks.**  Every negative of bin k has a rank in [opt(E_k+1, j1), opt(E_k, j2 + 1)].
   The corners, taken bin after bin from the top (a bin's second corner is the next one's first
   when they are adjacent), form a chain along which s never rises and j never falls, so their
   opts are monotone and found by the divide and conquer of Algorithm 2 over the chain
   (O(P log B) scanning; a stretch whose bracket has collapsed is filled at once).
3. **Assign.**  A second pass settles each negative of a collapsed bin (one rank: most of them)
   with one table look-up.  In a narrow bin (at most 8 possible ranks) the rank boundaries are
   score thresholds θ_r (rank ≥ r + 1 iff s ≤ θ_r) at the bin's first and last order; a negative
   with the same rank at both orders, not within a rounding margin of a threshold
   (:mod:`._numerics`), is settled by comparisons.  The rest is gathered per bin.
4. **Settle.**  The gathered negatives of a narrow bin have a pair of possible ranks (a, b) and get
   their exact order from the certain negatives of rank ≤ a (few: sorted and swept; many: Algorithm
   2 on groups of equal pairs); a wide bin runs Algorithm 2 on all its negatives with the interval
   of its corners.

The steps live in their own modules: the grid and the corner ranks in :mod:`._qs_grid`, the open
bins' thresholds and the assign pass in :mod:`._qs_bins`, the gathered negatives in
:mod:`._qs_settle`; this module holds the entry points.

Output (Lemma 6, Observation 2): c(negative of rank r) = 2(P + 1 − r)/(PN), c(k-th positive) =
−2 #(negatives of rank ≤ k)/(PN), and Δ from the ± pattern (negatives per rank).
Time O(N + P log P + P log B) for the passes plus Algorithm 2 on the gathered negatives
(O(N log P) expected at worst, its pivots being random); memory O(N + P).  :func:`qs_batch` runs
many queries in compiled loops, each query on the path :func:`qs_oracle` takes for it (the problem
layer's path for AP and NDCG); each loop is compiled when a batch first needs it.
"""

from collections import namedtuple

import numpy as np
from numba import njit

from ._packed_keys import batch_scratch, positive_keys, unpack
from ._qs_bins import NARROW, assign, classify
from ._qs_grid import corner_ranks, histogram, make_grid
from ._qs_settle import settle
from ._qs_walk import inverse_log_table, walk_batch, walk_oracle_core
from ._rank_kernels import Objective, Result, positive_coefficients, sorted_positives
from .rank_losses import KIND_AP, KIND_NDCG_LOG2, builtin_table, builtin_value

__all__ = ["qs_oracle", "qs_batch"]

_BATCH_MAX = 4096  # qs_batch runs queries up to this size in its compiled loops
_WALK_RATIO = 50  # AP and NDCG (log2) with P >= N / 50 take the sort-and-walk path

GridParams = namedtuple("GridParams", ["use_above", "narrow", "n_bins"])
GridParams.__doc__ = """How the grid path runs: settle negatives above every positive at rank 1
(``use_above``, for losses whose derivative is never positive), the largest bin settled by thresholds
(``narrow``; 0: every open bin by Algorithm 2) and about how many bins (``n_bins``; 0: the default)."""


_BATCH_GRID = GridParams(True, NARROW, 0)  # AP and NDCG: derivative never positive, default bins
_NO_TABLE = np.zeros(1)


@njit(cache=True)
def grid_core(scores, y, obj, pos_ids, params, c):
    """The grid path after Algorithm 1's sort (``obj.sp``, ``pos_ids``): fills ``c`` (every entry
    is written exactly once) and returns the ± pattern."""
    n_pos = obj.n_pos
    n_neg = scores.size - n_pos
    counts = np.zeros(n_pos + 1, dtype=np.int64)
    grid = make_grid(scores, obj.sp, params.use_above, params.n_bins)
    hist, n_above = histogram(scores, y, grid)
    counts[0] += n_above
    bins = corner_ranks(hist, n_above, grid, n_neg, obj)
    ob = classify(hist, bins, grid.n_bins, params.narrow, obj, counts)
    gathered = assign(scores, y, grid, ob, obj, c)
    settle(gathered, ob, obj, Result(c, counts))
    positive_coefficients(c, counts, pos_ids, n_pos, obj.inv)
    return counts


@njit(cache=True)
def _grid_entry(scores, y, sp, pos_ids, kind, table, use_above, narrow, n_bins, c):
    """:func:`grid_core` called from Python with flat arguments (numba types them faster than the
    named tuples, which are built here)."""
    n_pos = sp.size
    obj = Objective(sp, 2.0 / (n_pos * (scores.size - n_pos)), kind, table, n_pos)
    return grid_core(scores, y, obj, pos_ids, GridParams(use_above, narrow, n_bins), c)


@njit(cache=True)
def _grid_batch(scores, y, starts, ends, n_pos, kind, params, c_all, delta):
    """The grid path on the queries ``scores[starts[k]:ends[k]]`` (``n_pos[k]`` positives) in one
    compiled loop, for AP and NDCG (log2): a closed-form derivative that is never positive; Δ by
    :func:`builtin_value`.  The positives are sorted by their packed keys (:func:`sort_score_keys`)."""
    buf, table = batch_scratch(starts, ends)
    for k in range(starts.size):
        a = starts[k]
        b = ends[k]
        s = scores[a:b]
        pos, shift = positive_keys(s, y[a:b], n_pos[k], buf)
        sp, pos_ids = unpack(pos, s, shift)
        builtin_table(kind, n_pos[k], table)
        obj = Objective(sp, 2.0 / (n_pos[k] * (b - a - n_pos[k])), kind, table, n_pos[k])
        counts = grid_core(s, y[a:b], obj, pos_ids, params, c_all[a:b])
        delta[k] = builtin_value(kind, counts)


def _use_walk(kind, n_pos, n_neg):
    """Whether the certified walk (:mod:`._qs_walk`) beats the grid: AP or NDCG (log2) with at
    least N / 50 positives (the measured crossover, N = 3·10^3 .. 10^6, is near 1–2%).  Works on
    arrays of sizes too."""
    return (kind in (KIND_AP, KIND_NDCG_LOG2)) & (n_pos * _WALK_RATIO >= n_neg)


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
    c = np.empty(scores.size)  # numpy's allocator: huge pages for a large output, far fewer page faults
    return c, _qs_into(scores, y, loss, c)


def _qs_on_path(scores, y, loss, *, n_bins=None, narrow=True, walk=None):
    """:func:`qs_oracle` on a chosen path, for tests: ``n_bins`` about this many grid bins instead
    of N / 8 (1: plain Algorithm 2 on all negatives); ``narrow=False`` sends every open bin to
    Algorithm 2 (no thresholds); ``walk`` forces (True; AP and NDCG-log2 only) or forbids (False)
    the sort-and-walk path taken by default when P ≥ N / 50 (``n_bins`` or ``narrow`` imply the
    grid)."""
    c = np.empty(scores.size)
    return c, _qs_into(scores, y, loss, c, n_bins, narrow, walk)


def _qs_into(scores, y, loss, c, n_bins=None, narrow=True, walk=None):
    """:func:`qs_oracle` writing ``c`` into the given array; returns Δ."""
    n_pos = int(np.count_nonzero(y))
    n_neg = scores.size - n_pos
    kind, table = loss.kernel_spec(n_pos, n_neg)
    if kind != loss.kind:
        raise ValueError(f"{type(loss).__name__}.kernel_spec returns kind {kind} but the loss declares "
                         f"kind = {loss.kind}; set the class attribute kind to what kernel_spec returns")
    if walk is None:
        walk = n_bins is None and narrow and _use_walk(kind, n_pos, n_neg)
    if walk:
        return float(loss.value(walk_oracle_core(scores, y, n_pos, c, kind, table)))
    sp, pos_ids = sorted_positives(scores, y)
    counts = _grid_entry(scores, y, sp, pos_ids, kind, np.asarray(table, dtype=np.float64),
                         bool(loss.nonincreasing(n_pos, n_neg)), NARROW if narrow else 0,
                         0 if n_bins is None else int(n_bins), c)
    return float(loss.value(counts))


def qs_batch(scores, y, starts, ends, loss):
    """QS on many queries at once: exactly :func:`qs_oracle` on each, without its per-call cost.

    Queries of up to 4096 samples run in compiled loops, each on the path :func:`qs_oracle` takes
    for it (the walk with P ≥ N / 50, else the grid); larger ones, where the per-call cost does not
    matter, through :func:`qs_oracle`.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
        Stacked scores; rows outside the queries are ignored.
    y : ndarray of bool, shape (n,)
    starts, ends : ndarray of int64, shape (Q,)
        Query ``k`` is ``scores[starts[k]:ends[k]]``; ranges disjoint, each with a positive and a
        negative.
    loss : QSLoss
        A loss that declares ``compiled_batch`` (the built-in AP and NDCG with the log2 discount).

    Returns
    -------
    c : ndarray of float64, shape (n,)
        Each query's ``c`` in its rows, zero elsewhere.
    delta : ndarray of float64, shape (Q,)
        Δ per query.

    Raises
    ------
    ValueError
        If ``loss`` does not declare ``compiled_batch``.
    """
    if not loss.compiled_batch:
        raise ValueError(f"qs_batch's compiled loops do not serve {loss!r} (it does not declare compiled_batch); "
                         "call qs_oracle per query, or get_oracle(loss).batch, which does")
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    sizes = ends - starts
    covered = int(sizes.sum()) == scores.size  # the queries fill every row: no zeroing
    c = np.empty(scores.size) if covered else np.zeros(scores.size)
    delta = np.empty(starts.size)
    n_pos = _count_positives(y, starts, ends)
    small = sizes <= _BATCH_MAX
    walk = small & _use_walk(loss.kind, n_pos, sizes - n_pos)
    n_small = int(np.count_nonzero(small))
    n_walk = int(np.count_nonzero(walk))
    for path, n_path in ((walk, n_walk), (small & ~walk, n_small - n_walk)):  # loops compiled on first need
        if n_path == starts.size:  # the usual case: one path for all, no copies
            _batch_path(scores, y, starts, ends, n_pos, loss.kind, path is walk, c, delta)
        elif n_path:
            delta_path = np.empty(n_path)
            _batch_path(scores, y, starts[path], ends[path], n_pos[path], loss.kind, path is walk, c, delta_path)
            delta[path] = delta_path
    if n_small < starts.size:
        for k in np.flatnonzero(~small):
            delta[k] = _qs_into(scores[starts[k]:ends[k]], y[starts[k]:ends[k]], loss, c[starts[k]:ends[k]])
    return c, delta


@njit(cache=True)
def _count_positives(y, starts, ends):
    """The number of positives of every query ``y[starts[k]:ends[k]]``."""
    n_pos = np.zeros(starts.size, dtype=np.int64)
    for k in range(starts.size):
        for i in range(starts[k], ends[k]):
            n_pos[k] += y[i]
    return n_pos


def _batch_path(scores, y, starts, ends, n_pos, kind, walk, c, delta):
    """One compiled loop of :func:`qs_batch` over the given queries: the walk's or the grid's."""
    if walk:
        lt = inverse_log_table(int((ends - starts).max()) + 2) if kind == KIND_NDCG_LOG2 else _NO_TABLE
        walk_batch(scores, y, starts, ends, n_pos, kind, lt, c, delta)
    else:
        _grid_batch(scores, y, starts, ends, n_pos, kind, _BATCH_GRID, c, delta)
