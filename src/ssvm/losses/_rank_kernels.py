"""Small numba kernels shared by every rank-loss oracle (AP, NDCG, user QS losses).

Notation (Mohapatra et al., section 4): P positives sorted by (−score, index) into ``sp``;
the j-th negative in (−score, index) order (j = 1..N) gets an interleaving rank r ∈ 1..P+1
(= 1 + number of positives above it).  The objective of problem (5) splits over negatives
(Observation 3) into f_j(r), whose discrete derivative is

    f_j(i+1) − f_j(i) = 2 (sp[i] − s_j) / (P N) + d_j(i),     d_j(i) = δ_j(i+1) − δ_j(i).

Tie rule (paper footnote 1 and opt_j): among equally good ranks the largest one is taken, so
every exact oracle returns the same ranking.

The kernels pass f_j around as one :class:`Objective` and write their output into one
:class:`Result` (numba named tuples: grouped arguments, no run-time cost).
"""

from collections import namedtuple
from math import log2

import numpy as np
from numba import njit

from .rank_losses import KIND_AP, KIND_NDCG_LOG2

__all__ = ["Objective", "Result", "loss_step", "sum_table", "best_rank", "write_coefficients",
           "positive_coefficients", "sorted_positives", "sorted_negatives"]

Objective = namedtuple("Objective", ["sp", "inv", "kind", "table", "n_pos"])
Objective.__doc__ = """f_j of problem (5) for one query: ``sp`` (float64, the positives' scores sorted by
(−score, index)), ``inv`` = 2 / (P N), the loss's derivative ``(kind, table)`` (see
:meth:`ssvm.losses.QSLoss.kernel_spec`) and ``n_pos`` = P."""

Result = namedtuple("Result", ["c", "counts"])
Result.__doc__ = """What an oracle kernel writes: ``c`` (float64 (n,), Lemma 6's coefficients, by original
index) and ``counts`` (int64 (P + 1,), negatives per interleaving rank: the ± pattern that gives Δ)."""


@njit(cache=True, inline="always")
def loss_step(kind, table, n_pos, i, j):
    """d_j(i) = δ_j(i+1) − δ_j(i) for the loss described by (kind, table)."""
    if kind == KIND_AP:
        a = float(i + j)
        return -i / (n_pos * (a - 1.0) * a)
    if kind == KIND_NDCG_LOG2:
        m = float(i + j)
        return (1.0 / log2(1.0 + m) - 1.0 / log2(m)) * table[0]  # best_rank carries the same terms
    return table[i + j]


@njit(cache=True)
def sum_table(kind, table, n_pos, n_neg):
    """Table t[i + j] of d_j(i) for a loss whose derivative depends on i + j only.

    Built with :func:`loss_step` itself, so table look-ups are bit-identical to the closed form.
    """
    t = np.zeros(n_pos + n_neg + 1, dtype=np.float64)
    for m in range(2, n_pos + n_neg + 1):
        t[m] = loss_step(kind, table, n_pos, 1, m - 1)
    return t


@njit(cache=True, inline="always")
def best_rank(s, j, lo, hi, obj):
    """Largest argmax over ranks ``lo..hi`` of f_j (``obj``, an :class:`Objective`) for a negative
    with score ``s`` at order j.

    The running difference to the best value so far is accumulated (reset to 0 at every new
    best), so a comparison never loses the small loss terms against a large running total.
    """
    sp, inv, kind, table, n_pos = obj
    best = lo
    diff = 0.0
    if kind == KIND_NDCG_LOG2:  # carry 1/log2(m) from step to step: one log per step, same bits
        scale = table[0]
        prev = 1.0 / log2(float(lo + j))
        for k in range(lo, hi):
            cur = 1.0 / log2(1.0 + float(k + j))
            diff += (sp[k - 1] - s) * inv + (cur - prev) * scale
            prev = cur
            if diff >= 0.0:
                best = k + 1
                diff = 0.0
        return best
    for k in range(lo, hi):
        diff += (sp[k - 1] - s) * inv + loss_step(kind, table, n_pos, k, j)
        if diff >= 0.0:
            best = k + 1
            diff = 0.0
    return best


@njit(cache=True)
def write_coefficients(neg_rank, neg_ids, pos_ids_sorted, n, n_pos, n_neg):
    """c of Lemma 6 from the negatives' interleaving ranks; returns (c, counts).

    c(negative of rank r) = 2 (P + 1 − r) / (P N);  c(k-th positive) = −2 (#negatives of rank ≤ k) / (P N).
    ``counts[r - 1]`` = number of negatives with rank r (the ± pattern).
    """
    inv = 2.0 / (n_pos * n_neg)
    c = np.zeros(n, dtype=np.float64)
    counts = np.zeros(n_pos + 1, dtype=np.int64)
    for t in range(n_neg):
        r = neg_rank[t]
        counts[r - 1] += 1
        c[neg_ids[t]] = (n_pos + 1 - r) * inv
    return positive_coefficients(c, counts, pos_ids_sorted, n_pos, inv), counts


@njit(cache=True)
def positive_coefficients(c, counts, pos_ids_sorted, n_pos, inv):
    """c(k-th positive) = −inv · #(negatives of rank ≤ k), written into ``c``, from the ± pattern
    ``counts``; returns ``c``."""
    cum = 0
    for k in range(n_pos):
        cum += counts[k]
        c[pos_ids_sorted[k]] = -cum * inv
    return c


def sorted_positives(scores, y):
    """Positives sorted by (−score, index) (Algorithm 1, line 1).

    Returns
    -------
    sp : ndarray of float64, shape (P,)
        Sorted positive scores.
    pos_ids : ndarray of int64, shape (P,)
        Original indices of ``sp``.
    """
    pos = np.flatnonzero(y)
    key = -scores[pos]
    order = np.argsort(key)  # the fast unstable sort; its order is the stable one unless scores tie
    ordered = key[order]
    if np.any(ordered[1:] == ordered[:-1]):
        order = np.argsort(key, kind="stable")
    pos_ids = pos[order]
    return np.ascontiguousarray(scores[pos_ids]), pos_ids


def sorted_negatives(scores, y):
    """Negatives in (−score, index) order: (scores, original indices)."""
    neg_ids = np.flatnonzero(~y)
    order = np.argsort(-scores[neg_ids], kind="stable")
    ids = neg_ids[order]
    return np.ascontiguousarray(scores[ids]), ids
