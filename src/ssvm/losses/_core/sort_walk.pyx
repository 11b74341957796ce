"""QS with many positives (P ≥ N / 50, AP and NDCG): one sort, then one certified monotone walk — a
second exact algorithm beside Algorithm 2 of Mohapatra et al., the path ``oracle="qs"`` takes there
(with many positives the score grid of :mod:`.grid` needs millions of bins and its cost is cache
misses, not arithmetic).

1. **One sort.**  The positives' and the negatives' packed keys (:mod:`.sorting`) are sorted
   (:func:`~.sorting.sort_large` for one query: numpy's SIMD sort or a radix sort; the bucket sort
   inside the compiled loop over small queries).  Keys whose high bits tie (scores equal or a few ulps
   apart) are put in exact (−score, index) order after.  The negatives certified to rank below every
   positive (at a trained w, most of them) are set aside before the sort (:mod:`.set_aside`): their
   coefficient is 0, and the walk is told how many there are.
2. **One walk.**  Going down the negatives in order j = 1..N, opt_j never decreases (Observation 4),
   so each negative's scan starts at the previous opt.  The scan also stops at its first losing step
   k0, with a certificate that no later step f_j(k+1) − f_j(k) = (sp[k] − s)·2/(PN) + d_j(k) can win:
   the score part never rises with k, and the loss part d_j rises on the tail, so on a segment [b, e]
   of it every step is at most (sp[b] − s)·2/(PN) + d_j(e) — for NDCG d_j(k) = (D(k+j) − D(k+j−1)) / Σ D
   rises everywhere (segments of growing length from k0); for AP d_j(k) = −k / (P (k+j−1)(k+j)) falls up
   to k = j − 1, so the steps k0..j never rise (the first losing one covers them) and the segments start
   at j + 1.  The certificate holds with a margin well above the rounding error, so the walk returns
   exactly what :c:func:`best_rank` returns; it takes O(1) steps and O(log P) bounds per negative.
   NDCG, whose tail needs the segments for almost every negative, reuses the last certificate while
   its margin lasts: a later negative (first losing step at or past the certified one's) shares its
   segments, whose bounds grow by at most (s − s')·2/(PN) in the score part and, h(m) = 1/log2(m+1) −
   1/log2(m) being concave, by at most (j' − j)(h(k+j) − h(k+j−1)) in the loss part.
   The walk reads each negative's score from its key, which pins it to an interval of 2^shift ulps; a
   computed step never rises with the score (every rounding is monotone), so the steps at the
   interval's ends bound it exactly, and the exact score is read only when they disagree.  A negative
   whose certificate fails (a step within rounding of zero, or a tail bound too loose) is left open;
   the open ones get their opt by the divide and conquer of Algorithm 2 between the opts of their
   certified neighbours (:c:func:`chain_opts`).
3. **Coefficients** of Lemma 6, written back to the original positions during the walk.

Every step's loss part is the loss's d_j(k) of :c:func:`loss_step` (``ap_step``, or ``ndcg_step`` of the
kept table of 1/log2(m), :func:`~.derivative.inverse_log_table`: the same numbers as the closed form); the
walk is compiled once per loss, so that its loop carries only what that loss needs.  Time O(N log N) for the
sort (O(N) passes for the radix sort), O(N log P) at worst for the rest; the result is bit for bit the
grid's, yue's and chakrabarti's.  :func:`walk_oracle_core` serves one query; :c:func:`walk_queries` many
small ones (the block-level form the fused round calls).
"""

from collections import namedtuple

import numpy as np

from libc.math cimport INFINITY, ldexp
from libc.stdint cimport int64_t, uint64_t

from ..._work_memory cimport thread_work
from .derivative cimport (
    KIND_AP,
    KIND_NDCG_LOG2,
    ap_step,
    ndcg_step,
    loss_value,
    make_objective,
    objective_t,
    positive_coefficients,
    result_t,
)
from .numerics cimport EPS, GROWTH_ROUNDING, KEY_HUGE, KEY_NORMAL, STEP_MARGIN
from .opt_ranks cimport assign_block, chain_opts
from .query_setup cimport setup_query
from .set_aside cimport sort_above_bottom, split_bottom
from .sorting cimport key_score, low_mask, repair_run

from .derivative import inverse_log_table
from .sorting import packed_keys, py_unpack, sort_large

__all__ = ["Steps", "walk_oracle_core", "walk_batch", "py_walk", "py_tolerance"]

# what a negative's scan in walk finds, with its rank o: o is the opt (CERTIFIED); o <= opt, no certificate
# (OPEN); nothing, the key's score interval is too wide to decide step o (UNDECIDED); o is the first losing
# step and its tail is still to be certified (TAIL, NDCG)
cdef enum:
    CERTIFIED = 0
    OPEN = 1
    UNDECIDED = 2
    TAIL = 3


cdef inline double max_py(double a, double b) noexcept nogil:
    """Python's max(a, b): ``a`` unless ``b`` is larger."""
    return b if b > a else a


cdef inline double min_py(double a, double b) noexcept nogil:
    """Python's min(a, b): ``a`` unless ``b`` is smaller."""
    return b if b < a else a


# The walk is compiled once per loss (a fused type of two tags): its steps' loss part and its tail's segments
# are AP's or NDCG's at compile time, so the loop carries only what its loss needs.
ctypedef struct ap_tag:
    char unused
ctypedef struct ndcg_tag:
    char unused
ctypedef fused loss_tag:
    ap_tag
    ndcg_tag


cdef inline double loss_part(loss_tag* tag, const objective_t* st, int64_t k, int64_t j) noexcept nogil:
    """d_j(k) of the walk's loss (:c:func:`loss_step` for that loss: NDCG's from the 1/log2 table)."""
    if loss_tag is ap_tag:
        return ap_step(st.n_pos, k, j)
    else:
        return ndcg_step(st.lt[k + j + 1], st.lt[k + j], st.scale)


cdef inline double tail_worst(loss_tag* tag, double s_lo, int64_t j, int64_t k, const objective_t* st,
                              double tol) noexcept nogil:
    """The largest bound on the steps after k (the first losing step of a score >= s_lo at order j), or one
    >= −tol as soon as a segment's is (no certificate).

    The loss part d_j rises on the tail — AP's falls up to k = j − 1 and rises after (the steps k..j never
    rise: the first losing one covers them), NDCG's rises everywhere — so on a segment [b, e] of it every
    step is at most (sp[b] − s_lo)·2/(PN) + d_j(e)."""
    cdef int64_t n_pos = st.n_pos
    cdef int64_t b, e
    if loss_tag is ap_tag:
        b = k if k > j + 1 else j + 1
    else:
        b = k + 1
    cdef double worst = -INFINITY
    cdef double bound
    while b <= n_pos:
        if loss_tag is ap_tag:
            e = 2 * b
        else:
            e = b + 2 * (b - k)
        if e > n_pos:
            e = n_pos
        bound = (st.sp[b - 1] - s_lo) * st.inv + loss_part(tag, st, e, j)
        if bound >= -tol:
            return bound
        worst = max_py(worst, bound)
        b = e + 1
    return worst


cdef double tolerance(double s_top, double s_bottom, int64_t shift, const double* sp, int64_t n_pos, double inv,
                      double loss_bound) noexcept nogil:
    """Margin for every step of the walk: a step's rounding error is below 8 eps (|score part| +
    ``loss_bound``), the loss part's bound (AP: 1 / P; NDCG: its scale, as the difference of two logarithms
    in [0, 1] loses its relative precision); the score part is bounded over the negatives' scores
    [s_bottom, s_top], widened by the width of a key's interval."""
    cdef double wide = ldexp(max_py(abs(s_top), abs(s_bottom)), <int>(shift - 50))
    cdef double a = (max_py(abs(sp[0] - s_top), abs(sp[0] - s_bottom))
                     + max_py(abs(sp[n_pos - 1] - s_top), abs(sp[n_pos - 1] - s_bottom)) + 2.0 * wide)
    return STEP_MARGIN * EPS * (a * inv + loss_bound)


cdef int64_t walk(loss_tag* tag, uint64_t* neg, int64_t n, int64_t shift, const double* scores,
                  const objective_t* st, double tol, result_t* out, walk_work_t* work) noexcept nogil:
    """The walk over the sorted negative keys (orders 1, 2, ...): writes ``out`` for every certified negative
    and leaves the runs of uncertified ones in ``work.runs`` (first position, end, lower and upper bound of
    their opts); returns their number.

    Each key gives its score to within its truncated bits (an interval [s_lo, s_hi]); the exact score is
    read only when that interval leaves a step undecided.  Each negative's scan from the previous opt is
    best_rank(s, j, ·, P + 1) for every s in [s_lo, s_hi], stopped at the first step k that does not win,
    with a certificate that no later step wins (:func:`tail_worst`); its outcome is a status
    (``CERTIFIED`` ...) and a rank.  See the module's text."""
    cdef const double* sp = st.sp
    cdef int64_t n_pos = st.n_pos
    cdef double inv = st.inv
    cdef const double* lt = st.lt
    cdef double scale = st.scale
    cdef double* c = out.c
    cdef int64_t* counts = out.counts
    cdef uint64_t low = low_mask(shift)
    cdef uint64_t every_bit = ~(<uint64_t>0)
    # NDCG's last tail certificate: its s_lo, order, first losing step, margin, growth bound
    cdef double cert_s = 0.0
    cdef int64_t cert_j = 0
    cdef int64_t cert_k = n_pos + 1
    cdef double cert_m = -1.0
    cdef double cert_g = 0.0
    cdef int64_t run_o = 1  # certified negatives at rank run_o not yet added to counts (one add a run)
    cdef int64_t run_n = 0
    cdef int64_t top = n_pos + 1
    cdef int64_t r = 1  # a lower bound of the next opt (Observation 4)
    cdef int64_t n_runs = 0
    cdef bint prev_open = False
    cdef int64_t t, i, j, k, o
    cdef int status
    cdef uint64_t key
    cdef double s_lo, s_hi, d, step, worst
    cdef run_t run
    work.runs.clear()
    for t in range(n):
        key = neg[t]
        if t + 1 < n and not ((neg[t + 1] ^ key) >> shift) and (t == 0 or ((neg[t - 1] ^ key) >> shift)):
            repair_run(neg, n, t, scores, shift)  # keys whose high bits tie: exact order first
            key = neg[t]
        i = <int64_t>(key & low)
        s_lo = key_score(key | low, every_bit)  # the ends of the score's interval
        s_hi = key_score(key, ~low)
        j = t + 1
        if not (KEY_NORMAL < min_py(abs(s_lo), abs(s_hi)) and max_py(abs(s_lo), abs(s_hi)) < KEY_HUGE):
            s_lo = scores[i]  # a subnormal, infinite or NaN end: the exact score
            s_hi = s_lo
        while True:  # the scan from r: best_rank(s, j, r, P + 1) for every s in [s_lo, s_hi], or UNDECIDED
            status = CERTIFIED
            o = top
            for k in range(r, top):
                d = loss_part(tag, st, k, j)
                step = (sp[k - 1] - s_lo) * inv + d  # >= the step at s: a computed step never rises with s
                if step >= 0.0:
                    if (sp[k - 1] - s_hi) * inv + d >= 0.0:  # <= the step at s: it wins, go on
                        continue
                    status = UNDECIDED  # the interval is too wide to decide step k
                elif step >= -tol:
                    status = OPEN  # k <= opt, no certificate
                elif loss_tag is ndcg_tag:
                    status = TAIL  # NDCG: the tail after k is certified below
                elif tail_worst(tag, s_lo, j, k, st, tol) >= -tol:
                    status = OPEN
                o = k
                break
            if status != UNDECIDED:
                break
            s_lo = scores[i]  # undecided on the interval: the exact score
            s_hi = s_lo
        if loss_tag is ndcg_tag and status == TAIL:  # NDCG: the first losing step o, its tail not yet certified
            status = CERTIFIED
            if not (o >= cert_k and (cert_s - s_lo) * inv + <double>(j - cert_j) * cert_g < cert_m):
                worst = tail_worst(tag, s_lo, j, o, st, tol)
                if worst >= -tol:
                    status = OPEN
                elif o + j >= 3:
                    cert_s = s_lo
                    cert_j = j
                    cert_k = o
                    cert_m = 0.5 * (-tol - worst) if worst > -INFINITY else 0.0
                    # h(k+j) − h(k+j−1), doubled, plus the rounding of the difference (which, for huge k + j,
                    # is as large as the difference itself)
                    cert_g = (2.0 * abs(lt[o + j + 1] - 2.0 * lt[o + j] + lt[o + j - 1])
                              + GROWTH_ROUNDING * EPS * lt[o + j - 1]) * scale
        if status == CERTIFIED:
            if o != run_o:
                counts[run_o - 1] += run_n
                run_o = o
                run_n = 0
            run_n += 1
            c[i] = <double>(top - o) * inv
            if prev_open:
                work.runs[n_runs - 1].hi = o
        else:
            if not prev_open:
                run.first = t
                run.lo = o
                run.hi = top
                work.runs.push_back(run)
                n_runs += 1
            work.runs[n_runs - 1].end = t + 1
        prev_open = status != CERTIFIED
        r = o
    counts[run_o - 1] += run_n
    return n_runs


cdef void close_runs(int64_t n_runs, const uint64_t* neg, int64_t shift, const double* scores, const objective_t* obj,
                     result_t* out, walk_work_t* work) noexcept nogil:
    """opts of the uncertified negatives, run by run, between their neighbours' bounds."""
    cdef uint64_t low = low_mask(shift)
    cdef int64_t q, a, m, t
    cdef run_t run
    for q in range(n_runs):
        run = work.runs[q]
        a = run.first
        m = run.end - a
        work.ids.resize(m)
        work.vals.resize(m)
        work.orders.resize(m)
        work.ranks.resize(m)
        for t in range(m):
            work.ids[t] = <int64_t>(neg[a + t] & low)
            work.vals[t] = scores[work.ids[t]]
            work.orders[t] = a + 1 + t
        chain_opts(work.vals.data(), work.orders.data(), m, run.lo, run.hi, obj, work.ranks.data())
        for t in range(m):
            assign_block(work.ids.data(), t, t + 1, work.ranks[t], obj, out)


cdef void walk_core(const double* scores, const objective_t* obj, const int64_t* pos_ids, uint64_t* neg,
                    int64_t n_kept, int64_t n_neg, int64_t shift, double* c, int64_t* counts,
                    walk_work_t* work) noexcept nogil:
    """The walk of one query (``obj``: its steps; positives sorted, the first ``n_kept`` of its ``n_neg``
    negatives' keys sorted by key, the others set aside below every positive with their ``c`` written):
    fills ``c`` and the ± pattern ``counts`` (P + 1 entries)."""
    cdef int64_t n_pos = obj.n_pos
    cdef int64_t t
    for t in range(n_pos + 1):
        counts[t] = 0
    counts[n_pos] = n_neg - n_kept
    cdef uint64_t low = low_mask(shift)
    cdef double tol
    cdef int64_t n_runs
    cdef result_t out
    out.c = c
    out.counts = counts
    if n_kept:
        tol = tolerance(scores[<int64_t>(neg[0] & low)], scores[<int64_t>(neg[n_kept - 1] & low)], shift, obj.sp,
                        n_pos, obj.inv, obj.scale if obj.kind == KIND_NDCG_LOG2 else 1.0 / <double>n_pos)
        if obj.kind == KIND_AP:
            n_runs = walk(<ap_tag*>NULL, neg, n_kept, shift, scores, obj, tol, &out, work)
        else:
            n_runs = walk(<ndcg_tag*>NULL, neg, n_kept, shift, scores, obj, tol, &out, work)
        close_runs(n_runs, neg, shift, scores, obj, &out, work)
    positive_coefficients(c, counts, pos_ids, n_pos, obj.inv)


cdef void walk_queries(const double* scores, const unsigned char* y, const int64_t* starts, const int64_t* ends,
                       const int64_t* n_pos, int64_t n_queries, int kind, const double* lt, int64_t lt_size,
                       double* c, double* delta, walk_work_t* work) noexcept nogil:
    """The walk on the queries ``scores[starts[q]:ends[q]]`` (``n_pos[q]`` positives, a positive and a
    negative each) for AP or NDCG (log2): exactly :func:`walk_oracle_core` on each, with Δ by
    :c:func:`loss_value`; ``lt`` (``lt_size`` entries) is the 1/log2 table for the largest query (NDCG).  The
    keys are sorted by the bucket sort (:c:func:`sort_above_bottom`), which sets aside the negatives that
    rank last.  ``c`` and ``delta`` are written at the queries' rows and positions; ``work`` may be shared
    by calls in one thread."""
    cdef int64_t q, a, n, p, shift, kept
    cdef double table[1]
    cdef objective_t obj
    cdef uint64_t* neg
    for q in range(n_queries):
        a = starts[q]
        n = ends[q] - a
        p = n_pos[q]
        obj = setup_query(scores + a, y + a, n, p, kind, True, lt, lt_size, table, &shift, work)
        neg = work.buf.data() + p + 1
        kept = sort_above_bottom(neg, n - p, shift, scores + a, &obj, c + a, &work.sort)
        walk_core(scores + a, &obj, work.pos_ids.data(), neg, kept, n - p, shift, c + a, work.counts.data(), work)
        delta[q] = loss_value(kind, work.counts.data(), p, True)


# ---- from Python ----

def walk_oracle_core(scores, y, n_pos, c, kind, table):
    """QS by one sort and a certified monotone walk, for AP and NDCG (log2 discount); fills ``c`` and returns
    the ± pattern.

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
    sp, pos_ids = py_unpack(pos, scores, shift)
    table = np.ascontiguousarray(table, dtype=np.float64)
    if table.size == 0:
        table = np.zeros(1)
    lt = inverse_log_table(scores.size + 2) if kind == KIND_NDCG_LOG2 else np.zeros(1)
    counts = np.empty(n_pos + 1, dtype=np.int64)
    cdef const double[::1] sv = scores
    cdef const double[::1] spv = sp
    cdef const int64_t[::1] idv = pos_ids
    cdef const double[::1] tv = table
    cdef const double[::1] ltv = lt
    cdef uint64_t[::1] negv = neg
    cdef double[::1] cv = c
    cdef int64_t[::1] kv = counts
    cdef int64_t n_neg = neg.size
    cdef int64_t p = n_pos
    cdef int k = kind
    cdef int64_t sh = shift
    cdef int64_t kept
    cdef objective_t obj
    cdef walk_work_t* work = thread_work[walk_work_t]()  # kept from call to call: _work_memory.h
    with nogil:
        obj = make_objective(&spv[0], p, n_neg, k, &tv[0], &ltv[0], ltv.shape[0])
        kept = split_bottom(&negv[0], n_neg, sh, &sv[0], &obj, &cv[0])
    sort_large(neg[:kept], shift)
    with nogil:
        walk_core(&sv[0], &obj, &idv[0], &negv[0], kept, n_neg, sh, &cv[0], &kv[0], work)
    return counts


def walk_batch(const double[::1] scores, const unsigned char[::1] y, const int64_t[::1] starts,
               const int64_t[::1] ends, const int64_t[::1] n_pos, int kind, const double[::1] lt, double[::1] c,
               double[::1] delta):
    """:c:func:`walk_queries` from Python (``qs_batch``'s walk loop): the queries' ``c`` into their rows, Δ
    into ``delta``.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of uint8 (bool viewed as such), shape (n,)
    starts, ends, n_pos : ndarray of int64, shape (Q,)
    kind : int
        ``KIND_AP`` or ``KIND_NDCG_LOG2``.
    lt : ndarray of float64
        The 1/log2 table (:func:`~.derivative.inverse_log_table`) for the largest query (NDCG; else any).
    c : ndarray of float64, shape (n,)
    delta : ndarray of float64, shape (Q,)
    """
    cdef walk_work_t* work = thread_work[walk_work_t]()  # kept from call to call: _work_memory.h
    if starts.shape[0]:
        with nogil:
            walk_queries(&scores[0], &y[0], &starts[0], &ends[0], &n_pos[0], starts.shape[0], kind, &lt[0],
                         lt.shape[0], &c[0], &delta[0], work)


Steps = namedtuple("Steps", ["sp", "inv", "n_pos", "tol", "kind", "lt", "scale"])
Steps.__doc__ = """The walk's steps f_j(k+1) − f_j(k) = (sp[k] − s)·inv + d_j(k), from Python: sorted positive
scores, 2/(PN), P, the margin of every decision (:func:`py_tolerance`), the loss (``KIND_AP`` or
``KIND_NDCG_LOG2``), the 1/log2 table and NDCG's scale 1/Σ D (0 for AP)."""


def py_tolerance(double s_top, double s_bottom, int64_t shift, const double[::1] sp, double inv, double loss_bound):
    """:c:func:`tolerance` from Python.

    Returns
    -------
    float
    """
    return tolerance(s_top, s_bottom, shift, &sp[0], sp.shape[0], inv, loss_bound)


def py_walk(uint64_t[::1] neg, int64_t shift, const double[::1] scores, steps, out):
    """:c:func:`walk` from Python (``steps``: :class:`Steps`; ``out``: a ``Result`` of c and counts): the
    runs of uncertified negatives.

    Returns
    -------
    ndarray of int64, shape (n_runs, 4)
        First position, end, lower and upper bound of the opts of each run.
    """
    cdef const double[::1] sp = np.ascontiguousarray(steps.sp, dtype=np.float64)
    cdef const double[::1] lt = np.ascontiguousarray(steps.lt, dtype=np.float64)
    cdef double[::1] c = out.c
    cdef int64_t[::1] counts = out.counts
    cdef objective_t st
    st.sp = &sp[0]
    st.inv = steps.inv
    st.n_pos = steps.n_pos
    st.kind = steps.kind
    st.table = NULL
    st.lt = &lt[0]
    st.lt_size = lt.shape[0]
    st.scale = steps.scale
    cdef result_t res
    res.c = &c[0]
    res.counts = &counts[0]
    cdef walk_work_t work
    cdef int64_t n_runs
    if st.kind == KIND_AP:
        n_runs = walk(<ap_tag*>NULL, &neg[0], neg.shape[0], shift, &scores[0], &st, float(steps.tol), &res, &work)
    else:
        n_runs = walk(<ndcg_tag*>NULL, &neg[0], neg.shape[0], shift, &scores[0], &st, float(steps.tol), &res, &work)
    runs = np.empty((n_runs, 4), dtype=np.int64)
    for q in range(n_runs):
        runs[q] = (work.runs[q].first, work.runs[q].end, work.runs[q].lo, work.runs[q].hi)
    return runs
