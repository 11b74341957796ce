"""The block tasks of one query spread over the blocks of a dask array (run on the workers).

A round of :class:`~ssvm.problem.dask_giant.DaskGiantHinge` keeps one :class:`BlockRanking` per
block on its worker: the block's scores and its negatives in the oracles' order, ``(−score, row)``
ascending, with ``row`` the global row number (the tie rule of every oracle: ties by index). The
client only ever asks a block about *keys* ``(−score, row)``:

* :func:`block_summary`: its positives' scores and rows (``O(P_b)``), its number of negatives and
  its first and last negative key;
* :func:`block_samples`: up to ``k`` evenly spaced keys of its negatives inside each of some open
  key intervals (a bounded number, whatever the block's size);
* :func:`block_step`: how many of its negatives come at or before each of some keys (pivots), and
  samples of the gaps between them for the next pass;
* :func:`block_gradient`: with the final thresholds (the last key of each interleaving rank) and
  its positives' coefficients, its coefficients ``c_b``, ``X_bᵀ c_b`` and ``s_b · c_b``.

:func:`block_zero_one` is the whole per-row 0-1 oracle of a block, in one task.

Precision at k keeps one :class:`BlockTop` per block: its scores and its rows' keys in the
oracle's order of choice, ``(−augmented score, negative, row)`` ascending (the augmented score
``a = s + [negative]``; ties at the k-th value go to the positives first, then by index). The
query's k first keys are among the blocks' k first, so :func:`block_top_keys` sends ``O(k)``
numbers; :func:`block_top_gradient` gets the k-th key back and chooses every row at or before it.

At set-up, :func:`block_relevance` checks a block's labels where they are and :func:`relevant_count`
counts its positives: one number a block comes to the client, never the labels.
"""

import time

import numpy as np
from numba import njit

from .._queries import check_relevance
from ..losses._packed_keys import packed_order
from ._dask_tasks import non_finite_error
from .weight_space import LinearScores

__all__ = ["BlockRanking", "BlockTop", "block_step", "block_gradient", "block_ranking", "block_relevance",
           "block_samples", "block_summary", "block_top", "block_top_gradient", "block_top_keys", "block_zero_one",
           "count_at_or_before", "first_keys", "relevant_count", "spaced_positions"]


@njit(cache=True)
def count_at_or_before(ms, rows, qm, qr):
    """How many of the sorted keys ``(ms, rows)`` come at or before each of the sorted keys
    ``(qm, qr)`` (one merge pass)."""
    out = np.empty(qm.shape[0], dtype=np.int64)
    i = 0
    n = ms.shape[0]
    for t in range(qm.shape[0]):
        while i < n and (ms[i] < qm[t] or (ms[i] == qm[t] and rows[i] <= qr[t])):
            i += 1
        out[t] = i
    return out


class BlockRanking:
    """A block's scores and its negatives in the oracles' order (kept on the worker for a round).

    Attributes
    ----------
    s : ndarray of float64, shape (n_rows,)
    neg_ms, neg_rows : ndarray
        ``−score`` and global row of the block's negatives, ``(−score, row)`` ascending.
    neg_local : ndarray of int64
        Their local row numbers.
    pos_local : ndarray of int64
        Local rows of the positives (ascending).
    number, row0 : int
        The block's number and the global number of its first row.
    seconds : float
        Time of the product.
    """

    def __init__(self, s, relevant, block, seconds):
        self.s, self.seconds = s, seconds
        self.number, self.row0 = block
        _, _, neg_s, self.neg_local = packed_order(s, relevant)  # ties by row, as the oracles break them
        self.neg_ms = -neg_s
        self.neg_rows = self.neg_local + self.row0
        self.pos_local = np.flatnonzero(relevant)


def _scores(X_b, w, fit_intercept, block):
    """``X_b w`` (float64), or a ValueError naming the block and its first bad row."""
    with np.errstate(invalid="ignore", over="ignore"):  # non-finite scores are reported below
        s = LinearScores(X_b, fit_intercept).scores(w)
    if not np.all(np.isfinite(s)):
        raise non_finite_error(X_b, block[1], block, X_b.shape[0])
    return s


def block_ranking(X_b, relevant_b, block, w, fit_intercept):
    """The block's :class:`BlockRanking` at ``w``, or a ValueError naming the first bad row."""
    t0 = time.perf_counter()
    s = _scores(X_b, w, fit_intercept, block)
    return BlockRanking(s, np.asarray(relevant_b, dtype=bool), block, time.perf_counter() - t0)


def block_summary(ranking, k):
    """``(positive scores, positive rows, number of negatives, first key, last key, seconds,
    samples)``: the keys are ``(−score, row)`` pairs (None without negatives), the samples
    :func:`block_samples` of all the block's negatives."""
    r = ranking
    n_neg = r.neg_ms.shape[0]
    ends = ((r.neg_ms[0], r.neg_rows[0]), (r.neg_ms[-1], r.neg_rows[-1])) if n_neg else (None, None)
    everything = (np.array([-np.inf]), np.array([-1])), (np.array([np.inf]), np.array([2**62]))
    return (r.s[r.pos_local], r.pos_local + r.row0, n_neg, *ends, r.seconds,
            block_samples(ranking, *everything, k))


def _sorted_counts(ranking, qm, qr):
    return count_at_or_before(ranking.neg_ms, ranking.neg_rows, qm, qr)


def block_samples(ranking, lo, hi, k, share=(1, 0)):
    """Up to ``k`` evenly spaced negative keys of the block strictly inside each key interval.

    Parameters
    ----------
    ranking : BlockRanking
    lo, hi : (ndarray of float64, ndarray of int64)
        The intervals' end keys ``(−score, row)``, ascending and disjoint.
    k : int
    share : (int, int)
        ``(stride, phase)``: the block samples only the intervals ``i`` with
        ``(i + block number + phase) % stride == 0`` (the blocks share out the intervals when
        there are more than the budget allows; the phase turns from pass to pass).

    Returns
    -------
    (interval, ms, rows) : ndarrays
        Each sample's interval number and key: all the block's keys inside an interval that
        holds at most ``k`` of them, else ``k`` splitting them into runs of at most
        ``ceil(m / (k + 1))``.
    """
    a = _sorted_counts(ranking, *lo)
    b = _sorted_counts(ranking, hi[0], hi[1] - 1)  # strictly before hi: rows are integers
    m = np.maximum(b - a, 0)
    stride, phase = share
    mine = (np.arange(m.shape[0]) + ranking.number + phase) % stride == 0
    interval, pos = spaced_positions(a, m, np.minimum(m, k) * mine, k)
    return interval, ranking.neg_ms[pos], ranking.neg_rows[pos]


def spaced_positions(a, m, take, k):
    """``take[i]`` evenly spaced positions among the ``m[i]`` from ``a[i]`` on, for each run ``i``
    (``take[i] ≤ k``; a run of at most ``k`` gives all its positions, a longer one ``k`` that split it
    into stretches of at most ``ceil(m / (k + 1))``): ``(run number, position)`` of each, in order."""
    interval = np.repeat(np.arange(m.shape[0]), take)
    nth = np.arange(interval.shape[0]) - np.repeat(np.cumsum(take) - take, take)
    pos = a[interval] + np.where(m[interval] <= k, nth, ((nth + 1) * m[interval]) // (k + 1))
    return interval, pos


def block_step(ranking, pivots, gap_lo, gap_hi, k, share):
    """One selection pass: how many of the block's negatives come at or before each sorted key
    of ``pivots``, and :func:`block_samples` of the gaps ``(gap_lo, gap_hi)`` (the intervals the
    pivots cut), so that the next pass has its pivots at once."""
    return _sorted_counts(ranking, *pivots), block_samples(ranking, gap_lo, gap_hi, k, share)


def block_gradient(X_b, ranking, c_pos, thresholds, rank, n_pos, inv, fit_intercept):
    """The block's coefficients from the thresholds; ``(X_bᵀ c_b, s_b · c_b, seconds)``.

    Parameters
    ----------
    X_b : ndarray
    ranking : BlockRanking
    c_pos : ndarray of float64
        The coefficients of the block's positives, in row order.
    thresholds : (ndarray of float64, ndarray of int64)
        The last negative key of each interleaving rank in use, ascending; the last one is the
        last negative of the query.
    rank : ndarray of int64
        Their ranks (``1 + positives above``), ascending.
    n_pos : int
        P, the query's positives.
    inv : float
        ``2 / (P N)``: a negative of rank r gets ``(P + 1 − r) · inv`` (Lemma 6).
    fit_intercept : bool
    """
    t0 = time.perf_counter()
    cut = _sorted_counts(ranking, *thresholds)
    neg_rank = np.repeat(rank, np.diff(cut, prepend=0))
    c = np.zeros(ranking.s.shape[0])
    c[ranking.neg_local] = (n_pos + 1 - neg_rank) * inv
    c[ranking.pos_local] = c_pos
    g = LinearScores(X_b, fit_intercept).transpose(c)
    return g, float(ranking.s @ c), time.perf_counter() - t0


def block_zero_one(X_b, relevant_b, block, w, fit_intercept, n):
    """The per-row 0-1 oracle of one block: ``(X_bᵀ c_b, s_b · c_b, violations, seconds)``.

    ``c_i = −y_i / n`` (``y_i = ±1``) where ``1 − y_i s_i > 0``, as
    :func:`ssvm.losses.classification.zero_one_oracle` on the whole query.
    """
    t0 = time.perf_counter()
    s = _scores(X_b, w, fit_intercept, block)
    ypm = np.where(np.asarray(relevant_b, dtype=bool), 1.0, -1.0)
    viol = 1.0 - ypm * s > 0.0
    c = np.where(viol, -ypm / n, 0.0)
    g = LinearScores(X_b, fit_intercept).transpose(c)
    return g, float(s @ c), int(np.count_nonzero(viol)), time.perf_counter() - t0


def first_keys(ma, negative, k):
    """Indices of the ``k`` smallest keys ``(ma, negative, index)``, in key order (all when fewer).

    A partition finds the k-th smallest ``ma``; only the keys at or below it are sorted.
    """
    if ma.shape[0] > k:
        cand = np.flatnonzero(ma <= np.partition(ma, k - 1)[k - 1])
    else:
        cand = np.arange(ma.shape[0])
    return cand[np.lexsort((cand, negative[cand], ma[cand]))[:k]]


class BlockTop:
    """A block's scores and its keys in precision@k's order (kept on the worker for a round).

    Attributes
    ----------
    s : ndarray of float64, shape (n_rows,)
    relevant : ndarray of bool, shape (n_rows,)
    ma : ndarray of float64, shape (n_rows,)
        ``−(s + [negative])``, the first part of each row's key (its global row the last).
    row0 : int
        The global number of the block's first row.
    first : ndarray of int64
        Local rows of the block's ``k`` first keys, in key order.
    seconds : float
        Time of the product.
    """

    def __init__(self, s, relevant, block, k, seconds):
        self.s, self.relevant, self.seconds = s, relevant, seconds
        self.ma = -(s + np.where(relevant, 0.0, 1.0))  # as the oracle augments, then negated
        self.row0 = block[1]
        self.first = first_keys(self.ma, ~relevant, k)  # local rows order as the global ones do


def block_top(X_b, relevant_b, block, w, fit_intercept, k):
    """The block's :class:`BlockTop` at ``w``, or a ValueError naming the first bad row."""
    t0 = time.perf_counter()
    s = _scores(X_b, w, fit_intercept, block)
    return BlockTop(s, np.asarray(relevant_b, dtype=bool), block, k, time.perf_counter() - t0)


def block_top_keys(top):
    """``(ma, negative, rows, seconds)`` of the block's ``k`` first keys, in key order."""
    f = top.first
    return top.ma[f], ~top.relevant[f], f + top.row0, top.seconds


def block_top_gradient(X_b, top, last, w_pos, w_neg, k, fit_intercept):
    """The block's precision@k coefficients; ``(X_bᵀ c_b, s_b · c_b, seconds)``.

    Parameters
    ----------
    X_b : ndarray
    top : BlockTop
    last : (float, bool, int)
        The query's k-th key ``(ma, negative, row)``: a row is chosen iff its key is at or before it.
    w_pos, w_neg : float
        The ground-truth weights (:func:`~ssvm.losses.classification.topk_weights`).
    k : int
        Already clipped to the query's size.
    fit_intercept : bool
    """
    t0 = time.perf_counter()
    m, neg, row = last
    negative = ~top.relevant
    local = np.arange(top.s.shape[0])
    chosen = (top.ma < m) | ((top.ma == m) & ((negative < neg) | ((negative == neg) & (local <= row - top.row0))))
    c = (chosen.astype(np.float64) - np.where(top.relevant, w_pos, w_neg)) / k  # as the oracle
    g = LinearScores(X_b, fit_intercept).transpose(c)
    return g, float(top.s @ c), time.perf_counter() - t0


def block_relevance(y_b):
    """A block's labels as binary relevance (:func:`~ssvm._queries.check_relevance`: bool, or
    numbers of which ``y > 0`` are relevant), or its ValueError. Runs on a worker."""
    return check_relevance(y_b, np.shape(y_b)[0])


def relevant_count(relevant_b):
    """The positives of a block's relevance: all that comes to the client of its labels."""
    return int(np.count_nonzero(relevant_b))
