"""The QS oracle (Mohapatra, Rolínek, Jawahar, Kolmogorov, Kumar; Algorithms 1–2): the entry points.

One kernel family serves every QS-suitable loss (AP, NDCG, user losses): the loss only enters through
its discrete derivative (``kernel_spec``; :mod:`ssvm.losses._core.derivative`).  Two exact paths, both
in the compiled core :mod:`ssvm.losses._core`, give the same ``c`` and Δ bit for bit:

* **The score grid** (``_core/grid.pyx``, ``grid_bins.pyx``, ``grid_settle.pyx``): Algorithm 1 sorts the
  positives only; Algorithm 2 (OptRanks, ``_core/opt_ranks.pyx``) finds every negative's interleaving rank
  by recursive SELECT, its first levels run as one multi-pivot SELECT on a fixed score grid so that
  most negatives are settled in two streaming passes without data movement.  The negatives are never
  sorted: O(N + P log P + P log B) passes.
* **Sort and walk** (``_core/sort_walk.pyx``, ``set_aside.pyx``): for AP and NDCG (log2), one packed-key
  sort of the negatives not certified to rank last, then one monotone walk down them with a
  certificate per negative (Observation 4).

``oracle="qs"`` takes the walk for AP and NDCG (log2) with many positives, P ≥ N / 50 (:func:`_use_walk`),
and the grid otherwise: with many positives the grid needs millions of bins and its cost becomes
cache misses rather than arithmetic, while the sort's cost is the same whatever P (the crossover,
measured at N = 3·10^3 .. 10^6, is near 1–2% positives).  Other QS losses always take the grid.

Output (Lemma 6, Observation 2): c(negative of rank r) = 2(P + 1 − r)/(PN), c(k-th positive) =
−2 #(negatives of rank ≤ k)/(PN), and Δ from the ± pattern (negatives per rank).  :func:`qs_batch` runs
many queries in compiled loops, each query on the path :func:`qs_oracle` takes for it (the problem
layer's path for AP and NDCG).
"""

import numpy as np

from ._core.derivative import count_positives, has_one_class_query, inverse_log_table
from ._core.grid import NARROW_BINS, grid_batch, grid_entry
from ._core.sort_walk import walk_batch, walk_oracle_core
from ._core.sorting import sorted_positives
from .rank_losses import KIND_AP, KIND_NDCG_LOG2

__all__ = ["qs_oracle", "qs_batch"]

_BATCH_MAX = 4096  # qs_batch runs queries up to this size in its compiled loops
_WALK_RATIO = 50  # AP and NDCG (log2) with P >= N / 50 take the sort-and-walk path
_NO_TABLE = np.zeros(1)


def _use_walk(kind, n_pos, n_neg):
    """Whether the certified walk (``_core/sort_walk.pyx``) beats the grid: AP or NDCG (log2) with at
    least N / 50 positives (the measured crossover, N = 3·10^3 .. 10^6, is near 1–2%).  Works on
    arrays of sizes too."""
    return (kind in (KIND_AP, KIND_NDCG_LOG2)) & (n_pos * _WALK_RATIO >= n_neg)


def check_two_classes(n_pos, sizes):
    """Refuse queries without a positive or a negative row as the kernels' 2 / (P N) would: by a
    ZeroDivisionError, which :meth:`Oracle.batch <ssvm.losses.Oracle.batch>` turns into a ValueError
    naming the query (the compiled kernels divide without checking).  ``n_pos`` and ``sizes``: ints, or
    arrays of int64 (a compiled loop: this runs on every oracle call)."""
    if isinstance(n_pos, np.ndarray):
        one_class = has_one_class_query(n_pos, np.ascontiguousarray(sizes, dtype=np.int64))
    else:
        one_class = n_pos == 0 or n_pos == sizes
    if one_class:
        raise ZeroDivisionError("a query has no positive or no negative row: 2 / (P N) is not defined")


def _labels(y):
    """``y`` as the uint8 view the kernels take (a bool array's buffer as it is)."""
    y = np.ascontiguousarray(y)
    return y.view(np.uint8) if y.dtype == np.bool_ else (y != 0).view(np.uint8)


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
    check_two_classes(n_pos, scores.size)
    kind, table = loss.kernel_spec(n_pos, n_neg)
    if kind != loss.kind:
        raise ValueError(f"{type(loss).__name__}.kernel_spec returns kind {kind} but the loss declares "
                         f"kind = {loss.kind}; set the class attribute kind to what kernel_spec returns")
    if walk is None:
        walk = n_bins is None and narrow and _use_walk(kind, n_pos, n_neg)
    if walk:
        return float(loss.value(walk_oracle_core(scores, y, n_pos, c, kind, table)))
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    sp, pos_ids = sorted_positives(scores, y)
    table = np.ascontiguousarray(table, dtype=np.float64)
    counts = grid_entry(scores, _labels(y), sp, pos_ids, kind, table if table.size else _NO_TABLE,
                        bool(loss.nonincreasing(n_pos, n_neg)), NARROW_BINS if narrow else 0,
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
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    labels = _labels(y)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    ends = np.ascontiguousarray(ends, dtype=np.int64)
    sizes = ends - starts
    covered = int(sizes.sum()) == scores.size  # the queries fill every row: no zeroing
    c = np.empty(scores.size) if covered else np.zeros(scores.size)
    delta = np.empty(starts.size)
    n_pos = count_positives(labels, starts, ends)
    check_two_classes(n_pos, sizes)
    small = sizes <= _BATCH_MAX
    walk = small & _use_walk(loss.kind, n_pos, sizes - n_pos)
    n_small = int(np.count_nonzero(small))
    n_walk = int(np.count_nonzero(walk))
    for path, n_path in ((walk, n_walk), (small & ~walk, n_small - n_walk)):
        if n_path == starts.size:  # the usual case: one path for all, no copies
            _batch_path(scores, labels, starts, ends, n_pos, loss.kind, path is walk, c, delta)
        elif n_path:
            delta_path = np.empty(n_path)
            _batch_path(scores, labels, starts[path], ends[path], n_pos[path], loss.kind, path is walk, c,
                        delta_path)
            delta[path] = delta_path
    if n_small < starts.size:
        for k in np.flatnonzero(~small):
            delta[k] = _qs_into(scores[starts[k]:ends[k]], y[starts[k]:ends[k]], loss, c[starts[k]:ends[k]])
    return c, delta


def _batch_path(scores, labels, starts, ends, n_pos, kind, walk, c, delta):
    """One compiled loop of :func:`qs_batch` over the given queries: the walk's or the grid's."""
    if walk:
        lt = inverse_log_table(int((ends - starts).max()) + 2) if kind == KIND_NDCG_LOG2 else _NO_TABLE
        walk_batch(scores, labels, starts, ends, n_pos, kind, lt, c, delta)
    else:
        grid_batch(scores, labels, starts, ends, n_pos, kind, c, delta)
