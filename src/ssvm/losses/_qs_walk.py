"""QS with many positives (P ≥ N / 50, AP and NDCG): one sort, then one monotone walk.

With many positives the score grid of :mod:`ssvm.losses.qs` needs millions of bins and its cost is
cache misses, not arithmetic.  Here instead:

1. **One sort.**  Each score is packed with its index into a uint64 whose high bits are an
   order-preserving image of −score and whose low bits are the index, and the positives' and
   the negatives' keys are sorted (:func:`._key_sort.sort_large`: numpy's SIMD sort, a third of an
   argsort's time, or a radix sort where numpy's is slow).  Keys whose
   high bits tie (scores equal or a few ulps apart) are put in exact (−score, index) order after.
   The negatives certified to rank below every positive (at a trained w, most of them) are set
   aside before the sort (:mod:`._qs_bottom`): their coefficient is 0, and the walk is told how
   many there are.
2. **One walk.**  Going down the negatives in order j = 1..N, opt_j never decreases (Observation
   4), so each negative's scan starts at the previous opt.  The scan also stops at its first
   losing step k0, with a certificate that no later step f_j(k+1) − f_j(k) = (sp[k] − s)·2/(PN) +
   d_j(k) can win: the score part never rises with k, and the loss part d_j rises on the tail, so
   on a segment [b, e] of it every step is at most (sp[b] − s)·2/(PN) + d_j(e) — for NDCG
   d_j(k) = (D(k+j) − D(k+j−1)) / Σ D rises everywhere (segments of growing length from k0); for
   AP d_j(k) = −k / (P (k+j−1)(k+j)) falls up to k = j − 1, so the steps k0..j never rise (the
   first losing one covers them) and the segments start at j + 1.  The certificate holds with a
   margin well above the rounding error, so the walk returns exactly what :func:`best_rank`
   returns; it takes O(1) steps and O(log P) bounds per negative.  NDCG, whose tail needs the
   segments for almost every negative, reuses the last certificate while its margin lasts: a
   later negative (first losing step at or past the certified one's) shares its segments, whose
   bounds grow by at most (s − s')·2/(PN) in the score part and, h(m) = 1/log2(m+1) − 1/log2(m)
   being concave, by at most (j' − j)(h(k+j) − h(k+j−1)) in the loss part.
   The walk reads each negative's score from its key, which pins it to an interval of 2^shift
   ulps; a computed step never rises with the score (every rounding is monotone), so the steps at
   the interval's ends bound it exactly, and the exact score is read only when they disagree.
   A negative whose certificate fails (a step within rounding of zero, or a tail bound too loose)
   is left open; the open ones get their opt by the divide and conquer of Algorithm 2 between the
   opts of their certified neighbours.
3. **Coefficients** of Lemma 6, written back to the original positions during the walk.

Time O(N log N) for the sort (O(N) passes for the radix sort), O(N log P) at worst for the rest;
the walk path's result is bit for bit the grid's, yue's and chakrabarti's.  :func:`walk_oracle_core`
serves one query (keys sorted by :func:`~._key_sort.sort_large`); :func:`walk_batch` many small
ones in one compiled loop (sorted by :func:`~._qs_bottom.sort_above_bottom`).

The packed keys live in :mod:`._packed_keys`.  Cache: the 1/log2 table, kept from call to call up
to ``CACHE_MAX_ENTRIES`` entries (128 MiB; a larger query gets a table of its own, not kept).
"""

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ._key_sort import sort_large
from ._numerics import EPS, GROWTH_ROUNDING, KEY_HUGE, KEY_NORMAL, STEP_MARGIN
from ._packed_keys import (
    CACHE_MAX_ENTRIES,
    batch_scratch,
    key_score,
    packed_keys,
    query_keys,
    repair_run,
    unpack,
)
from ._qs_bottom import sort_above_bottom, split_bottom, walk_bound
from ._qs_recursion import assign_block, chain_opts
from ._rank_kernels import Objective, Result, loss_step, positive_coefficients
from .rank_losses import KIND_AP, KIND_NDCG_LOG2, builtin_table, builtin_value

__all__ = ["walk_oracle_core", "walk_batch", "inverse_log_table"]

# what a negative's scan in _walk finds, with its rank o: o is the opt (CERTIFIED); o <= opt, no
# certificate (OPEN); nothing, the key's score interval is too wide to decide step o (UNDECIDED); o is
# the first losing step and its tail is still to be certified (TAIL, NDCG).  The scan sets the status
# and the rank as two locals of the walk's loop: a function returning them as a pair was much slower
# at N = 10^6 (reference counts of the arrays it was passed, in the hot loop).
CERTIFIED, OPEN, UNDECIDED, TAIL = 0, 1, 2, 3

Steps = namedtuple("Steps", ["sp", "inv", "n_pos", "tol", "kind", "lt", "scale"])
Steps.__doc__ = """The walk's steps f_j(k+1) − f_j(k) = (sp[k] − s)·inv + d_j(k): sorted positive scores,
2/(PN), P, the margin of every decision (:func:`_tolerance`), the loss (``KIND_AP`` or
``KIND_NDCG_LOG2``), the 1/log2 table and NDCG's scale 1/Σ D (0 for AP)."""


@njit(cache=True, inline="always")
def _loss_part(st, k, j):
    """d_j(k), bit for bit as :func:`best_rank` computes it: AP's closed form, or NDCG's
    (1/log2(k+j+1) − 1/log2(k+j)) · scale with the logarithms from the table ``st.lt``."""
    if st.kind == KIND_AP:
        return loss_step(KIND_AP, st.lt, st.n_pos, k, j)
    return (st.lt[k + j + 1] - st.lt[k + j]) * st.scale


@njit(cache=True, inline="always")
def _tail_worst(s_lo, j, k, st):
    """The largest bound on the steps after k (the first losing step of a score >= s_lo at order
    j), or one >= −tol as soon as a segment's is (no certificate).

    The loss part d_j rises on the tail — AP's falls up to k = j − 1 and rises after (the steps
    k..j never rise: the first losing one covers them), NDCG's rises everywhere — so on a segment
    [b, e] of it every step is at most (sp[b] − s_lo)·2/(PN) + d_j(e)."""
    n_pos = st.n_pos
    ap = st.kind == KIND_AP
    b = max(k, j + 1) if ap else k + 1
    worst = -np.inf
    while b <= n_pos:
        e = min(2 * b if ap else b + 2 * (b - k), n_pos)
        bound = (st.sp[b - 1] - s_lo) * st.inv + _loss_part(st, e, j)
        if bound >= -st.tol:
            return bound
        worst = max(worst, bound)
        b = e + 1
    return worst


@njit(cache=True)
def _tolerance(s_top, s_bottom, shift, sp, inv, loss_bound):
    """Margin for every step of the walk: a step's rounding error is below 8 eps (|score part| +
    ``loss_bound``), the loss part's bound (AP: 1 / P; NDCG: its scale, as the difference of two
    logarithms in [0, 1] loses its relative precision); the score part is bounded over the
    negatives' scores [s_bottom, s_top], widened by the width of a key's interval."""
    n_pos = sp.size
    wide = math.ldexp(max(abs(s_top), abs(s_bottom)), shift - 50)
    a = (max(abs(sp[0] - s_top), abs(sp[0] - s_bottom)) + max(abs(sp[n_pos - 1] - s_top),
                                                               abs(sp[n_pos - 1] - s_bottom)) + 2.0 * wide)
    return STEP_MARGIN * EPS * (a * inv + loss_bound)


@njit(cache=True)
def _walk(neg, shift, scores, st, out):
    """The walk over the sorted negative keys (orders 1, 2, ...): writes ``out`` (:class:`Result`)
    for every certified negative and returns the runs of uncertified ones (first position, end,
    lower and upper bound of their opts).

    Each key gives its score to within its truncated bits (an interval [s_lo, s_hi]); the exact
    score is read only when that interval leaves a step undecided.  Each negative's scan from the
    previous opt is best_rank(s, j, ·, P + 1) for every s in [s_lo, s_hi], stopped at the first step
    k that does not win, with a certificate that no later step wins (:func:`_tail_worst`); its
    outcome is ``(status, o)`` (``CERTIFIED`` ...).  See the module docstring."""
    sp = st.sp
    n_pos = st.n_pos
    inv = st.inv
    tol = st.tol
    kind = st.kind
    lt = st.lt
    scale = st.scale
    c = out.c
    counts = out.counts
    sh = np.uint64(shift)
    low = (np.uint64(1) << sh) - np.uint64(1)
    every_bit = ~np.uint64(0)
    # NDCG's last tail certificate: its s_lo, order, first losing step, margin, growth bound
    cert_s, cert_j, cert_k, cert_m, cert_g = 0.0, 0, n_pos + 1, -1.0, 0.0
    runs = np.empty(((neg.size + 1) // 2, 4), dtype=np.int64)  # runs are separated: at most half
    run_o, run_n = 1, 0  # certified negatives at rank run_o not yet added to counts (one add a run)
    top = n_pos + 1
    r = 1  # a lower bound of the next opt (Observation 4)
    n_runs = 0
    prev_open = False
    n = neg.size
    for t in range(n):
        key = neg[t]
        if t + 1 < n and not (neg[t + 1] ^ key) >> sh and (t == 0 or (neg[t - 1] ^ key) >> sh):
            repair_run(neg, t, scores, shift)  # keys whose high bits tie: exact order first
            key = neg[t]
        i = np.int64(key & low)
        s_lo = key_score(key | low, every_bit)  # the ends of the score's interval
        s_hi = key_score(key, ~low)
        j = t + 1
        if not (KEY_NORMAL < min(abs(s_lo), abs(s_hi)) and max(abs(s_lo), abs(s_hi)) < KEY_HUGE):
            s_lo = s_hi = scores[i]  # a subnormal, infinite or NaN end: the exact score
        while True:  # the scan from r: best_rank(s, j, r, P + 1) for every s in [s_lo, s_hi], or UNDECIDED
            status = CERTIFIED
            o = top
            for k in range(r, top):
                d = _loss_part(st, k, j)
                step = (sp[k - 1] - s_lo) * inv + d  # >= the step at s: a computed step never rises with s
                if step >= 0.0:
                    if (sp[k - 1] - s_hi) * inv + d >= 0.0:  # <= the step at s: it wins, go on
                        continue
                    status = UNDECIDED  # the interval is too wide to decide step k
                elif step >= -tol:
                    status = OPEN  # k <= opt, no certificate
                elif kind != KIND_AP:
                    status = TAIL  # NDCG: the tail after k is certified below
                elif _tail_worst(s_lo, j, k, st) >= -tol:
                    status = OPEN
                o = k
                break
            if status != UNDECIDED:
                break
            s_lo = s_hi = scores[i]  # undecided on the interval: the exact score
        if status == TAIL:  # NDCG: the first losing step o, its tail not yet certified
            status = CERTIFIED
            if not (o >= cert_k and (cert_s - s_lo) * inv + (j - cert_j) * cert_g < cert_m):
                worst = _tail_worst(s_lo, j, o, st)
                if worst >= -tol:
                    status = OPEN
                elif o + j >= 3:
                    cert_s, cert_j, cert_k = s_lo, j, o
                    cert_m = 0.5 * (-tol - worst) if worst > -np.inf else 0.0
                    # h(k+j) − h(k+j−1), doubled, plus the rounding of the difference (which, for
                    # huge k + j, is as large as the difference itself)
                    cert_g = (2.0 * abs(lt[o + j + 1] - 2.0 * lt[o + j] + lt[o + j - 1])
                              + GROWTH_ROUNDING * EPS * lt[o + j - 1]) * scale
        if status == CERTIFIED:
            if o != run_o:
                counts[run_o - 1] += run_n
                run_o, run_n = o, 0
            run_n += 1
            c[i] = (top - o) * inv
            if prev_open:
                runs[n_runs - 1, 3] = o
        else:
            if not prev_open:
                runs[n_runs, 0] = t
                runs[n_runs, 2] = o
                runs[n_runs, 3] = top
                n_runs += 1
            runs[n_runs - 1, 1] = t + 1
        prev_open = status != CERTIFIED
        r = o
    counts[run_o - 1] += run_n
    return runs[:n_runs]


@njit(cache=True)
def _close(runs, neg, shift, scores, obj, out):
    """opts of the uncertified negatives, run by run, between their neighbours' bounds."""
    low = (np.uint64(1) << np.uint64(shift)) - np.uint64(1)
    for q in range(runs.shape[0]):
        a = runs[q, 0]
        b = runs[q, 1]
        ids = np.empty(b - a, dtype=np.int64)
        vals = np.empty(b - a)
        orders = np.empty(b - a, dtype=np.int64)
        for t in range(b - a):
            ids[t] = np.int64(neg[a + t] & low)
            vals[t] = scores[ids[t]]
            orders[t] = a + 1 + t
        ranks = np.empty(b - a, dtype=np.int64)
        chain_opts(vals, orders, runs[q, 2], runs[q, 3], obj, ranks)
        for t in range(b - a):
            assign_block(ids, t, t + 1, ranks[t], obj, out)


@njit(cache=True)
def _walk_core(scores, bound, pos_ids, neg, n_neg, shift, table, c):
    """The walk of one query (``bound``: its steps, :func:`~._qs_bottom.walk_bound`; positives
    already sorted, negative keys sorted by key): fills ``c``, returns the ± pattern.  ``neg`` holds
    the first negatives in order; the other ``n_neg − neg.size`` rank below every positive (set
    aside by :mod:`._qs_bottom`, their ``c`` written)."""
    sp, inv, kind, lt, scale = bound
    n_pos = sp.size
    out = Result(c, np.zeros(n_pos + 1, dtype=np.int64))
    out.counts[n_pos] = n_neg - neg.size
    if neg.size:
        low = (np.uint64(1) << np.uint64(shift)) - np.uint64(1)
        tol = _tolerance(scores[np.int64(neg[0] & low)], scores[np.int64(neg[-1] & low)], shift, sp, inv,
                         scale if kind == KIND_NDCG_LOG2 else 1.0 / n_pos)
        runs = _walk(neg, shift, scores, Steps(sp, inv, n_pos, tol, kind, lt, scale), out)
        _close(runs, neg, shift, scores, Objective(sp, inv, kind, table, n_pos), out)
    positive_coefficients(c, out.counts, pos_ids, n_pos, inv)
    return out.counts


@njit(cache=True)
def _inverse_logs(n):
    """1 / log2(m) for m < n (entries 0 and 1 unused), as :func:`best_rank` computes them."""
    t = np.zeros(n)
    for m in range(2, n):
        t[m] = 1.0 / math.log2(float(m))
    return t


_INVERSE_LOGS = np.zeros(0)


def inverse_log_table(n):
    """The 1/log2 table for m < n (:func:`_inverse_logs`), kept from call to call: it depends on
    nothing else.  Grows by doubling up to ``CACHE_MAX_ENTRIES`` entries; a larger ``n`` gets a
    table of its own and the kept one stays as it is."""
    global _INVERSE_LOGS
    if _INVERSE_LOGS.size >= n:
        return _INVERSE_LOGS
    if n > CACHE_MAX_ENTRIES:
        return _inverse_logs(n)
    _INVERSE_LOGS = _inverse_logs(min(max(n, 2 * _INVERSE_LOGS.size), CACHE_MAX_ENTRIES))
    return _INVERSE_LOGS


def walk_oracle_core(scores, y, n_pos, c, kind, table):
    """QS by one sort and a certified monotone walk, for AP and NDCG (log2 discount); fills ``c``
    and returns the ± pattern.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
        Finite scores of one query with a positive and a negative.
    y : ndarray of bool, shape (n,)
    n_pos : int
        The number of positives, ``count_nonzero(y)`` (the caller has it already).
    c : ndarray of float64, shape (n,)
        Output: the coefficients of Ψ(X, R̂) − Ψ(X, R*) (every entry is written).
    kind : int
        ``KIND_AP`` or ``KIND_NDCG_LOG2``.
    table : ndarray of float64
        The loss's kernel table (``kernel_spec``): ignored for AP, [1 / Σ D] for NDCG.

    Returns
    -------
    counts : ndarray of int64, shape (P + 1,)
        Negatives per interleaving rank (the ± pattern that gives Δ).
    """
    if kind not in (KIND_AP, KIND_NDCG_LOG2):
        raise ValueError("the walk serves AP and NDCG (log2) only")
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    pos, neg, shift = packed_keys(scores, y, n_pos)
    sp, pos_ids = unpack(pos, scores, shift)
    n_neg = neg.size
    table = np.asarray(table, dtype=np.float64)
    lt = inverse_log_table(scores.size + 2) if kind == KIND_NDCG_LOG2 else np.zeros(1)
    bound = walk_bound(sp, n_neg, kind, table, lt)
    neg = neg[:split_bottom(neg, shift, scores, bound, c)]
    sort_large(neg, shift)
    return _walk_core(scores, bound, pos_ids, neg, n_neg, shift, table, c)


@njit(cache=True)
def walk_batch(scores, y, starts, ends, n_pos, kind, lt, c_all, delta):
    """The walk on the queries ``scores[starts[k]:ends[k]]`` (``n_pos[k]`` positives) in one
    compiled loop, for AP or NDCG (log2): exactly :func:`walk_oracle_core` on each, with Δ by
    :func:`builtin_value`; ``lt`` is the 1/log2 table for the largest query (NDCG).  The keys are
    sorted by :func:`~._qs_bottom.sort_above_bottom` (numpy's sort would cost a call per query),
    which sets aside the negatives that rank last."""
    buf, table = batch_scratch(starts, ends)
    for k in range(starts.size):
        a = starts[k]
        b = ends[k]
        s = scores[a:b]
        pos, neg, shift = query_keys(s, y[a:b], n_pos[k], buf)
        sp, pos_ids = unpack(pos, s, shift)
        n_neg = neg.size
        builtin_table(kind, n_pos[k], table)
        bound = walk_bound(sp, n_neg, kind, table, lt)
        neg = neg[:sort_above_bottom(neg, shift, s, bound, c_all[a:b])]
        counts = _walk_core(s, bound, pos_ids, neg, n_neg, shift, table, c_all[a:b])
        delta[k] = builtin_value(kind, counts)
