"""QS with many positives (P ≥ N / 50, AP and NDCG): one sort, then one monotone walk.

With many positives the score grid of :mod:`ssvm.losses.qs` needs millions of bins and its cost is
cache misses, not arithmetic.  Here instead:

1. **One sort.**  Each score is packed with its index into a uint64 whose high bits are an
   order-preserving image of −score and whose low bits are the index, and numpy sorts the
   positives' and the negatives' keys (its SIMD sort: a third of an argsort's time).  Keys whose
   high bits tie (scores equal or a few ulps apart) are put in exact (−score, index) order after.
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

Time O(N log N) for the sort (numpy's), O(N log P) at worst for the rest; the walk path's result is
bit for bit the grid's, yue's and chakrabarti's.
"""

import math
import threading

import numpy as np
from numba import njit

from ._qs_recursion import assign_block, chain_opts
from ._rank_kernels import loss_step, positive_coefficients
from .rank_losses import KIND_AP, KIND_NDCG_LOG2

__all__ = ["walk_oracle_core", "packed_order"]

_EPS = 2.220446049250313e-16
# a key's interval is not used when an end is closer to 0 than _NORMAL (−0.0 or subnormal: slow
# arithmetic), beyond _HUGE or not a number: the exact score is
_NORMAL = 1e-290
_HUGE = 1e300


@njit(cache=True)
def _pack(bits_of, y, shift, pos, neg):
    """Keys of the positives into ``pos`` and of the negatives into ``neg`` (each one longer than
    needed): an order-preserving image of −score in the high bits (``shift`` low bits cleared), the
    sample's index in the low bits."""
    sign = np.uint64(1) << np.uint64(63)
    high = ~((np.uint64(1) << np.uint64(shift)) - np.uint64(1))
    n_p = 0
    n_n = 0
    for i in range(y.size):  # branch-free: the labels and the signs are unpredictable
        u = bits_of[i]
        u = np.uint64(0) if u == sign else u  # −0.0 ties with +0.0
        key = ~(u ^ ((np.uint64(0) - (u >> np.uint64(63))) | sign))  # descending in the score
        key = (key & high) | np.uint64(i)
        neg[n_n] = key
        pos[n_p] = key
        yi = y[i]
        n_p += yi
        n_n += 1 - yi


@njit(cache=True)
def _repair_run(keys, a, scores, shift):
    """If a run of keys with the same high bits starts at ``a`` (sorted by index, as the sort left
    it), put it in exact (−score, index) order; returns the run's end."""
    n = keys.size
    sh = np.uint64(shift)
    low = (np.uint64(1) << sh) - np.uint64(1)
    b = a + 1
    while b < n and not (keys[b] ^ keys[a]) >> sh:
        b += 1
    if b - a > 1:
        vals = np.empty(b - a)
        ordered = True  # by (−score, index): the run is sorted by index already
        for q in range(b - a):
            vals[q] = scores[np.int64(keys[a + q] & low)]
            ordered &= q == 0 or vals[q] <= vals[q - 1]
        if not ordered:
            run = keys[a:b].copy()
            order = np.argsort(-vals, kind="mergesort")  # stable: ties keep the index order
            for q in range(b - a):
                keys[a + q] = run[order[q]]
    return b


@njit(cache=True)
def _repair(keys, scores, shift):
    """Put sorted keys in exact (−score, index) order: keys whose high bits tie (scores equal or a
    few ulps apart) come sorted by index and are reordered by their scores (in place; rare)."""
    sh = np.uint64(shift)
    t = 1
    while t < keys.size:
        if (keys[t] ^ keys[t - 1]) >> sh:
            t += 1
        else:
            t = _repair_run(keys, t - 1, scores, shift) + 1


@njit(cache=True)
def _unpack(keys, scores, shift):
    """Scores and indices of sorted, repaired keys."""
    low = (np.uint64(1) << np.uint64(shift)) - np.uint64(1)
    ids = np.empty(keys.size, dtype=np.int64)
    vals = np.empty(keys.size, dtype=np.float64)
    for t in range(keys.size):
        i = np.int64(keys[t] & low)
        ids[t] = i
        vals[t] = scores[i]
    return vals, ids


_LOCAL = threading.local()


def _key_buffer(n):
    """A uint64 work array of at least ``n`` entries, kept per thread from call to call: a training
    run asks for the same query again and again, and reusing the pages saves their faults (a few
    ms per call at N = 10^6)."""
    buf = getattr(_LOCAL, "keys", None)
    if buf is None or buf.size < n:
        buf = _LOCAL.keys = np.empty(n, dtype=np.uint64)
    return buf


def _sorted_keys(scores, y, n_pos):
    """Packed keys of the positives, in exact (−score, index) order, and of the negatives, sorted by
    key (runs of tied high bits still by index: the walk repairs them as it meets them)."""
    shift = max(int(scores.size - 1).bit_length(), 1)
    buf = _key_buffer(scores.size + 2)
    pos = buf[:n_pos + 1]
    neg = buf[n_pos + 1:scores.size + 2]
    _pack(scores.view(np.uint64), y, shift, pos, neg)
    pos = pos[:-1]
    neg = neg[:-1]
    pos.sort()
    neg.sort()
    _repair(pos, scores, shift)
    return pos, neg, shift


def packed_order(scores, y):
    """Positives and negatives, each in (−score, index) order, by one packed-key sort.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
        Finite scores.
    y : ndarray of bool, shape (n,)

    Returns
    -------
    sp, pos_ids, sn, neg_ids : ndarray
        Sorted scores and original indices of the positives, then of the negatives.
    """
    pos, neg, shift = _sorted_keys(scores, y, int(np.count_nonzero(y)))
    _repair(neg, scores, shift)
    return (*_unpack(pos, scores, shift), *_unpack(neg, scores, shift))


@njit(cache=True, inline="always")
def _loss_part(kind, lt, scale, n_pos, k, j):
    """d_j(k), bit for bit as :func:`best_rank` computes it: AP's closed form, or NDCG's
    (1/log2(k+j+1) − 1/log2(k+j)) · scale with the logarithms from the table ``lt``."""
    if kind == KIND_AP:
        return loss_step(KIND_AP, lt, n_pos, k, j)
    return (lt[k + j + 1] - lt[k + j]) * scale


@njit(cache=True, inline="always")
def _walk_rank(s_lo, s_hi, j, lo, sp, inv, n_pos, tol, kind, lt, scale):
    """best_rank(s, j, lo, P + 1) for a score s known only to lie in [s_lo, s_hi]: the certified
    opt (> 0); −k with k <= opt when the certificate fails; 0 when [s_lo, s_hi] is too wide to
    decide a step (see the module docstring).

    A computed step never rises with s (every rounding is monotone), so the steps at s_hi and s_lo
    bound the step at s exactly.  For NDCG the first losing step k comes back as k + P + 2: its
    tail is certified by the caller (:func:`_tail_worst`, with a certificate reused from negative to
    negative)."""
    for k in range(lo, n_pos + 1):
        d = _loss_part(kind, lt, scale, n_pos, k, j)
        step = (sp[k - 1] - s_lo) * inv + d  # >= the step at s
        if step >= 0.0:
            if (sp[k - 1] - s_hi) * inv + d >= 0.0:  # <= the step at s
                continue
            return 0
        if step >= -tol:
            return -k
        if kind != KIND_AP:
            return k + n_pos + 2
        return k if _tail_worst(s_lo, j, k, sp, inv, n_pos, tol, kind, lt, scale) < -tol else -k
    return n_pos + 1


@njit(cache=True, inline="always")
def _tail_worst(s_lo, j, k, sp, inv, n_pos, tol, kind, lt, scale):
    """The largest bound on the steps after k (the first losing step of a score >= s_lo at order
    j), or one >= −tol as soon as a segment's is (no certificate).

    The loss part d_j rises on the tail — AP's falls up to k = j − 1 and rises after (the steps
    k..j never rise: the first losing one covers them), NDCG's rises everywhere — so on a segment
    [b, e] of it every step is at most (sp[b] − s_lo)·2/(PN) + d_j(e)."""
    b = max(k, j + 1) if kind == KIND_AP else k + 1
    worst = -np.inf
    while b <= n_pos:
        e = min(2 * b if kind == KIND_AP else b + 2 * (b - k), n_pos)
        bound = (sp[b - 1] - s_lo) * inv + _loss_part(kind, lt, scale, n_pos, e, j)
        if bound >= -tol:
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
    return 32.0 * _EPS * (a * inv + loss_bound)


@njit(cache=True)
def _walk(neg, tol, shift, scores, sp, inv, c, counts, kind, lt, scale):
    """The walk over the sorted negative keys (orders 1, 2, ...): writes c and counts for
    every certified negative and returns the runs of uncertified ones (first position, end, lower
    and upper bound of their opts).

    Each key gives its score to within its truncated bits (an interval [s_lo, s_hi]); the exact
    score is read only when that interval leaves a step undecided."""
    n_pos = sp.size
    sh = np.uint64(shift)
    low = (np.uint64(1) << sh) - np.uint64(1)
    sign = np.uint64(1) << np.uint64(63)
    buf = np.empty(2, dtype=np.uint64)
    as_float = buf.view(np.float64)
    # NDCG's last tail certificate: its s_lo, order, first losing step, margin, growth bound
    cert_s, cert_j, cert_k, cert_m, cert_g = 0.0, 0, n_pos + 1, -1.0, 0.0
    runs = np.empty(((neg.size + 1) // 2, 4), dtype=np.int64)  # runs are separated: at most half
    top = n_pos + 1
    r = 1  # a lower bound of the next opt (Observation 4)
    n_runs = 0
    prev_open = False
    n = neg.size
    for t in range(n):
        key = neg[t]
        if t + 1 < n and not (neg[t + 1] ^ key) >> sh and (t == 0 or (neg[t - 1] ^ key) >> sh):
            _repair_run(neg, t, scores, shift)  # keys whose high bits tie: exact order first
            key = neg[t]
        i = np.int64(key & low)
        k_hi = ~(key & ~low)  # ascending keys of the ends of the score's interval
        k_lo = ~(key | low)
        buf[0] = k_lo ^ sign if k_lo & sign else ~k_lo
        buf[1] = k_hi ^ sign if k_hi & sign else ~k_hi
        s_lo = as_float[0]
        s_hi = as_float[1]
        j = t + 1
        o = 0
        if _NORMAL < min(abs(s_lo), abs(s_hi)) and max(abs(s_lo), abs(s_hi)) < _HUGE:  # no subnormal, inf or NaN end
            o = _walk_rank(s_lo, s_hi, j, r, sp, inv, n_pos, tol, kind, lt, scale)
        if o == 0:  # undecided on the interval: the exact score
            s_lo = scores[i]
            o = _walk_rank(s_lo, s_lo, j, r, sp, inv, n_pos, tol, kind, lt, scale)
        if o > top:  # NDCG: the first losing step k, its tail not yet certified
            o -= top + 1
            if not (o >= cert_k and (cert_s - s_lo) * inv + (j - cert_j) * cert_g < cert_m):
                worst = _tail_worst(s_lo, j, o, sp, inv, n_pos, tol, kind, lt, scale)
                if worst >= -tol:
                    o = -o
                elif o + j >= 3:
                    cert_s, cert_j, cert_k = s_lo, j, o
                    cert_m = 0.5 * (-tol - worst) if worst > -np.inf else 0.0
                    # h(k+j) − h(k+j−1), doubled, plus the rounding of the difference (which, for
                    # huge k + j, is as large as the difference itself)
                    cert_g = (2.0 * abs(lt[o + j + 1] - 2.0 * lt[o + j] + lt[o + j - 1])
                              + 8.0 * _EPS * lt[o + j - 1]) * scale
        if o > 0:
            counts[o - 1] += 1
            c[i] = (top - o) * inv
            if prev_open:
                runs[n_runs - 1, 3] = o
        else:
            if not prev_open:
                runs[n_runs, 0] = t
                runs[n_runs, 2] = -o
                runs[n_runs, 3] = top
                n_runs += 1
            runs[n_runs - 1, 1] = t + 1
        prev_open = o < 0
        r = abs(o)
    return runs[:n_runs]


@njit(cache=True)
def _close(runs, neg, shift, scores, sp, inv, c, counts, kind, table):
    """opts of the uncertified negatives, run by run, between their neighbours' bounds."""
    n_pos = sp.size
    low = (np.uint64(1) << np.uint64(shift)) - np.uint64(1)
    for q in range(runs.shape[0]):
        a = runs[q, 0]
        b = runs[q, 1]
        ids = np.empty(b - a, dtype=np.int64)
        vals = np.empty(b - a)
        for t in range(b - a):
            ids[t] = np.int64(neg[a + t] & low)
            vals[t] = scores[ids[t]]
        ranks = np.empty(b - a, dtype=np.int64)
        chain_opts(vals, np.arange(a + 1, b + 1), runs[q, 2], runs[q, 3], sp, inv, kind, table, n_pos, ranks)
        for t in range(b - a):
            assign_block(ids, t, t + 1, ranks[t], c, counts, n_pos, inv)


@njit(cache=True)
def _walk_core(pos, neg, shift, scores, c, kind, table, lt):
    sp, pos_ids = _unpack(pos, scores, shift)
    n_pos = sp.size
    inv = 2.0 / (n_pos * neg.size)
    scale = table[0] if kind == KIND_NDCG_LOG2 else 0.0
    low = (np.uint64(1) << np.uint64(shift)) - np.uint64(1)
    tol = _tolerance(scores[np.int64(neg[0] & low)], scores[np.int64(neg[-1] & low)], shift, sp, inv,
                     scale if kind == KIND_NDCG_LOG2 else 1.0 / n_pos)
    counts = np.zeros(n_pos + 1, dtype=np.int64)
    runs = _walk(neg, tol, shift, scores, sp, inv, c, counts, kind, lt, scale)
    _close(runs, neg, shift, scores, sp, inv, c, counts, kind, table)
    positive_coefficients(c, counts, pos_ids, n_pos, inv)
    return counts


@njit(cache=True)
def _inverse_logs(n):
    """1 / log2(m) for m < n (entries 0 and 1 unused), as :func:`best_rank` computes them."""
    t = np.zeros(n)
    for m in range(2, n):
        t[m] = 1.0 / math.log2(float(m))
    return t


_INVERSE_LOGS = np.zeros(0)


def _inverse_log_table(n):
    """The 1/log2 table for m < n, grown as needed and kept: it depends on nothing else."""
    global _INVERSE_LOGS
    if _INVERSE_LOGS.size < n:
        _INVERSE_LOGS = _inverse_logs(max(n, 2 * _INVERSE_LOGS.size))
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
    pos, neg, shift = _sorted_keys(scores, y, n_pos)
    lt = _inverse_log_table(scores.size + 2) if kind == KIND_NDCG_LOG2 else np.zeros(1)
    return _walk_core(pos, neg, shift, scores, c, kind, np.asarray(table, dtype=np.float64), lt)
