"""The graded NDCG oracle's compiled loop: one sort per query, one certified walk per grade level.

Graded NDCG decomposes exactly over relevance thresholds (docs/design.md §9, :mod:`ssvm.losses.graded`):
``1 − NDCG = Σ_t α_t (1 − NDCG_t)``, NDCG_t the binary NDCG of ``[r ≥ t]``.  Thresholds between two
consecutive distinct grades of a query split its rows alike, so they are taken together: for the
query's distinct grades v_0 < v_1 < ... < v_L the levels k = 1..L have the split ``[r ≥ v_k]`` and
the weight ``α_k = (g(v_k) − g(v_{k−1})) · IDCG_k / IDCG`` with ``IDCG = g(v_0) · IDCG_all +
Σ_k (g(v_k) − g(v_{k−1})) · IDCG_k`` (the graded ideal DCG written over the same thresholds; the
thresholds t ≤ v_0 leave no row irrelevant, cost nothing and only count in IDCG).

Per query the rows' packed keys (:mod:`._packed_keys`) are sorted and repaired once, in exact
(−score, index) order; each level splits them in one pass into its positives and negatives, both
still in that order, and runs the certified walk of :mod:`._qs_walk` (exact for any P and N; its
result is bit for bit the grid's) on the negatives ahead of those certified to rank last
(:func:`~._qs_bottom.sorted_bottom`), accumulating ``c += α_k c_k`` and ``delta += α_k δ_k``.  With
one level (0/1 grades) α is exactly 1 and the answer is the binary walk's, bit for bit.
"""

import numpy as np
from numba import njit

from ._packed_keys import _key, index_bits, repair, sort_score_keys, unpack
from ._qs_bottom import sorted_bottom, walk_bound
from ._qs_walk import _walk_core
from .rank_losses import KIND_NDCG_LOG2, builtin_table, builtin_value, ndcg_norm

__all__ = ["GAIN_CODES", "gain_value", "level_alphas", "graded_query", "graded_small_batch", "pack_all"]

#: gain name -> the code the compiled loops take
GAIN_CODES = {"exponential": 0, "linear": 1, "binary": 2}


@njit(cache=True, inline="always")
def gain_value(code, v):
    """g(v): 2^v − 1 (code 0), v (1) or [v > 0] (2)."""
    if code == 0:
        return 2.0 ** v - 1.0
    if code == 1:
        return float(v)
    return 1.0 if v > 0 else 0.0


@njit(cache=True)
def pack_all(scores, shift, keys):
    """The packed key of every row of one query into ``keys`` (unsorted)."""
    high = ~((np.uint64(1) << np.uint64(shift)) - np.uint64(1))
    bits_of = scores.view(np.uint64)
    for i in range(scores.size):
        keys[i] = _key(bits_of[i], high, i)


@njit(cache=True)
def _grade_counts(r):
    """The distinct grades of ``r`` (ascending) and how many rows have each: one counting pass when
    the grades are small (as they are: 0-4 in LETOR sets), else a sort."""
    top = r.max()
    if top > 2 * r.size + 64:
        levels = np.unique(r)
        counts = np.zeros(levels.size, dtype=np.int64)
        for i in range(r.size):
            counts[np.searchsorted(levels, r[i])] += 1
        return levels, counts
    counts = np.zeros(top + 1, dtype=np.int64)
    for i in range(r.size):
        counts[r[i]] += 1
    levels = np.flatnonzero(counts)
    return levels.astype(np.int64), counts[levels]


@njit(cache=True)
def level_alphas(r, code):
    """The distinct grades v_0 < ... < v_L of one query's grades ``r`` and the weight α_k of each
    level's split ``[r ≥ v_k]`` (α_0 = 0: that split leaves no row irrelevant).

    α_k = (g(v_k) − g(v_{k−1})) · IDCG_k / IDCG, IDCG_k the binary ideal DCG of ``[r ≥ v_k]`` and
    IDCG = g(v_0) · IDCG_0 + Σ_k (g(v_k) − g(v_{k−1})) · IDCG_k, the graded ideal DCG summed over
    the same thresholds (so that one level gives α = 1 exactly)."""
    levels, n_at_least = _grade_counts(r)
    n_levels = levels.size
    for k in range(n_levels - 2, -1, -1):  # rows with grade >= levels[k]
        n_at_least[k] += n_at_least[k + 1]
    weight = np.empty(n_levels)  # g(v_0), then g(v_k) − g(v_{k−1})
    ideal = np.empty(n_levels)  # IDCG of [r >= v_k]
    weight[0] = gain_value(code, levels[0])
    for k in range(1, n_levels):
        weight[k] = gain_value(code, levels[k]) - gain_value(code, levels[k - 1])
    idcg = 0.0
    for k in range(n_levels):
        ideal[k] = ndcg_norm(n_at_least[k], np.bool_(True))
        if weight[k] != 0.0:
            idcg += weight[k] * ideal[k]
    alpha = np.zeros(n_levels)
    for k in range(1, n_levels):
        if weight[k] != 0.0:
            alpha[k] = weight[k] * ideal[k] / idcg
    return levels, alpha


@njit(cache=True)
def graded_query(s, r, keys, shift, code, lt, pos, neg, c_t, c):
    """``(c, delta)`` of one query whose keys are sorted and repaired: writes ``c`` (every entry),
    returns delta.  ``pos``, ``neg``, ``c_t`` are work arrays of at least ``s.size`` entries;
    ``keys`` is overwritten.

    The rows are renumbered in key order first (row t: the t-th in (−score, index) order, its key's
    index bits set to t, which keeps the keys sorted and ties in index order): every split, walk and
    sum then reads and writes in sequence, and ``c`` is scattered back to the rows once."""
    n = s.size
    levels, alpha = level_alphas(r, code)
    low = (np.uint64(1) << np.uint64(shift)) - np.uint64(1)
    rows = np.empty(n, dtype=np.int64)
    s_sorted = np.empty(n)
    r_sorted = np.empty(n, dtype=np.int64)
    c_sorted = np.zeros(n)
    for t in range(n):
        i = np.int64(keys[t] & low)
        rows[t] = i
        s_sorted[t] = s[i]
        r_sorted[t] = r[i]
        keys[t] = (keys[t] & ~low) | np.uint64(t)
    delta = 0.0
    table = np.zeros(1)
    for k in range(1, levels.size):
        if alpha[k] == 0.0:
            continue  # binary gains above grade 1: the split adds nothing
        v = levels[k]
        n_pos = 0
        n_neg = 0
        for t in range(n):  # branch-free: the grades are unpredictable
            key = keys[t]
            above = np.int64(r_sorted[t] >= v)
            pos[n_pos] = key
            neg[n_neg] = key
            n_pos += above
            n_neg += 1 - above
        sp, pos_ids = unpack(pos[:n_pos], s_sorted, shift)
        builtin_table(KIND_NDCG_LOG2, n_pos, table)
        bound = walk_bound(sp, n_neg, KIND_NDCG_LOG2, table, lt)
        kept = sorted_bottom(neg[:n_neg], shift, s_sorted, bound, c_t[:n])  # the rest rank last: not walked
        counts = _walk_core(s_sorted, bound, pos_ids, neg[:kept], n_neg, shift, table, c_t[:n])
        delta += alpha[k] * builtin_value(KIND_NDCG_LOG2, counts)
        for t in range(n):
            c_sorted[t] += alpha[k] * c_t[t]
    for t in range(n):
        c[rows[t]] = c_sorted[t]
    return delta


@njit(cache=True)
def graded_small_batch(scores, grades, starts, ends, code, lt, c_all, delta):
    """:func:`graded_query` on the queries ``scores[starts[k]:ends[k]]``, each sorted by
    :func:`sort_score_keys` inside this loop (numpy's sort would cost a call per query)."""
    n_max = 0
    for k in range(starts.size):
        n_max = max(n_max, ends[k] - starts[k])
    keys = np.empty(n_max, dtype=np.uint64)
    pos = np.empty(n_max, dtype=np.uint64)
    neg = np.empty(n_max, dtype=np.uint64)
    c_t = np.empty(n_max)
    for k in range(starts.size):
        a = starts[k]
        b = ends[k]
        s = scores[a:b]
        shift = index_bits(b - a)
        q_keys = keys[:b - a]
        pack_all(s, shift, q_keys)
        sort_score_keys(q_keys, shift)
        repair(q_keys, s, shift)
        delta[k] = graded_query(s, grades[a:b], q_keys, shift, code, lt, pos, neg, c_t, c_all[a:b])
