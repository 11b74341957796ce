"""The discrete derivative of each built-in QS loss, written once, and what the oracles build on it
(Mohapatra, Rolínek, Jawahar, Kolmogorov, Kumar, "Efficient Optimization for Rank-based Loss
Functions", §4: problem (5), Observation 3, Lemma 6).

Notation: P positives sorted by (−score, index) into ``sp``; the j-th negative in (−score, index)
order (j = 1..N) gets an interleaving rank r ∈ 1..P+1 (1 + the number of positives above it).  The
objective of problem (5) splits over the negatives (Observation 3) into f_j(r), whose discrete
derivative is

    f_j(i+1) − f_j(i) = 2 (sp[i] − s_j) / (P N) + d_j(i),     d_j(i) = δ_j(i+1) − δ_j(i).

A loss enters the kernels only through d_j(i), as ``(kind, table)`` (:meth:`ssvm.losses.QSLoss.kernel_spec`):

* AP (``KIND_AP``): d_j(i) = −i / (P (i+j−1)(i+j)) (Yue et al. 2007; Prop. 8), :func:`ap_step`;
* NDCG with D(m) = 1/log2(1+m) (``KIND_NDCG_LOG2``): d_j(i) = (D(i+j) − D(i+j−1)) / Σ_{k≤P} D(k)
  (Prop. 7), :func:`ndcg_step` of two values of :func:`inverse_log2` — computed, or read from the
  table of 1/log2(m) that the walk keeps (the same numbers, bit for bit);
* any loss whose d_j(i) depends on i + j only (``KIND_SUM_TABLE``): ``table[i + j]``.

:func:`loss_step` is that one definition (inline in ``derivative.pxd``: every kernel compiles it into
its loops); :func:`sum_table` builds a sum table from it, so table look-ups equal the closed form bit
for bit.  :func:`best_rank` is opt_j over a range of ranks.  Tie rule (the paper's footnote 1): among
equally good ranks the largest is taken, so every exact oracle returns the same ranking.

Lemma 6 (and Observation 2) turn the negatives' ranks into the output: c(negative of rank r) =
2 (P + 1 − r) / (P N), c(k-th positive) = −2 #(negatives of rank ≤ k) / (P N)
(:func:`write_coefficients`, :func:`positive_coefficients`), and Δ from the ± pattern
(:func:`loss_value`: positive k sits at ind(k) = k + #(negatives of rank ≤ k)).
"""

from collections import namedtuple

import numpy as np

from .sorting import CACHE_MAX_ENTRIES

from libc.stdint cimport int64_t

__all__ = ["KINDS", "LOSS_KINDS", "Objective", "Result", "py_loss_step", "py_best_rank", "has_one_class_query",
           "sum_table", "derivative_matrix", "py_write_coefficients", "ndcg_norm", "loss_values", "discounts",
           "inverse_log_table", "count_positives"]

#: the kinds of derivative.pxd's enum, for Python (``ssvm.losses.rank_losses`` names them)
KINDS = {"ap": KIND_AP, "ndcg_log2": KIND_NDCG_LOG2, "sum_table": KIND_SUM_TABLE}
#: (KIND_AP, KIND_NDCG_LOG2, KIND_SUM_TABLE) as the compiled kernels know them (a test checks rank_losses' agree)
LOSS_KINDS = (KIND_AP, KIND_NDCG_LOG2, KIND_SUM_TABLE)

Objective = namedtuple("Objective", ["sp", "inv", "kind", "table", "n_pos"])
Objective.__doc__ = """f_j of problem (5) for one query, from Python (the kernels' ``objective_t``): ``sp``
(float64, the positives' scores sorted by (−score, index)), ``inv`` = 2 / (P N), the loss's derivative
``(kind, table)`` (see :meth:`ssvm.losses.QSLoss.kernel_spec`) and ``n_pos`` = P."""

Result = namedtuple("Result", ["c", "counts"])
Result.__doc__ = """What an oracle kernel writes, from Python (the kernels' ``result_t``): ``c`` (float64 (n,),
Lemma 6's coefficients, by index) and ``counts`` (int64 (P + 1,), negatives per interleaving rank: the ±
pattern that gives Δ)."""


cdef objective_t make_objective(const double* sp, int64_t n_pos, int64_t n_neg, int kind, const double* table,
                                const double* lt, int64_t lt_size) noexcept nogil:
    """The :c:type:`objective_t` of a query with P = ``n_pos`` positives (scores ``sp``, decreasing) and
    ``n_neg`` negatives: the one place 2 / (P N) and NDCG's scale are computed, so that every step of
    every path uses the same numbers.  ``lt``: the 1/log2 table of ``lt_size`` entries (NDCG), or NULL."""
    cdef objective_t obj
    obj.sp = sp
    obj.inv = 2.0 / <double>(n_pos * n_neg)
    obj.kind = kind
    obj.table = table
    obj.n_pos = n_pos
    obj.lt = lt if kind == KIND_NDCG_LOG2 else NULL
    obj.lt_size = lt_size if obj.lt != NULL else 0
    obj.scale = table[0] if kind == KIND_NDCG_LOG2 else 0.0
    return obj


cdef void positive_coefficients(double* c, const int64_t* counts, const int64_t* pos_ids, int64_t n_pos,
                                double inv) noexcept nogil:
    """c(k-th positive) = −inv · #(negatives of rank ≤ k), written into ``c`` at ``pos_ids[k − 1]``,
    from the ± pattern ``counts``."""
    cdef int64_t cum = 0
    cdef int64_t k
    for k in range(n_pos):
        cum += counts[k]
        c[pos_ids[k]] = <double>(-cum) * inv


cdef void write_coefficients(const int64_t* neg_rank, const int64_t* neg_ids, const int64_t* pos_ids, int64_t n_pos,
                             int64_t n_neg, double* c, int64_t* counts) noexcept nogil:
    """Lemma 6's ``c`` (every entry the negatives and positives hold) and the ± pattern ``counts``
    (P + 1 entries, zeroed here) from the negatives' interleaving ranks ``neg_rank`` (negative t at
    index ``neg_ids[t]``) and the positives' indices in (−score, index) order."""
    cdef double inv = 2.0 / <double>(n_pos * n_neg)
    cdef int64_t t, r
    for t in range(n_pos + 1):
        counts[t] = 0
    for t in range(n_neg):
        r = neg_rank[t]
        counts[r - 1] += 1
        c[neg_ids[t]] = <double>(n_pos + 1 - r) * inv
    positive_coefficients(c, counts, pos_ids, n_pos, inv)


cpdef double ndcg_norm(int64_t n_pos, bint log2_form) noexcept nogil:
    """Σ_{i ≤ P} D(i), the ideal DCG of P relevant rows (D as in :func:`discount`)."""
    cdef double norm = 0.0
    cdef int64_t i
    for i in range(1, n_pos + 1):
        norm += discount(<double>i, log2_form)
    return norm


cdef double loss_value(int kind, const int64_t* counts, int64_t n_pos, bint log2_form) noexcept nogil:
    """Δ of one ± pattern ``counts`` (P + 1 entries) for AP (``kind`` = KIND_AP) or NDCG (else,
    discount as in :func:`ndcg_norm`): positive k (1-based) sits at ind(k) = k + #(negatives of rank ≤ k).
    Every oracle sums the loss here, in this order."""
    cdef int64_t before = 0
    cdef int64_t k
    cdef double acc = 0.0
    for k in range(1, n_pos + 1):
        before += counts[k - 1]
        if kind == KIND_AP:
            acc += <double>k / <double>(k + before)
        else:
            acc += discount(<double>(k + before), log2_form)
    if kind == KIND_AP:
        return 1.0 - acc / <double>n_pos
    return 1.0 - acc / ndcg_norm(n_pos, log2_form)


cdef double builtin_scale(int kind, int64_t n_pos) noexcept nogil:
    """The kernel table's entry of the built-in AP (0, unused) or NDCG (log2) loss for P = ``n_pos``,
    as :meth:`NDCGLoss.kernel_spec` computes it: 1 / Σ_{k≤P} D(k)."""
    if kind == KIND_NDCG_LOG2:
        return 1.0 / ndcg_norm(n_pos, True)
    return 0.0


cdef objective_t _objective_of(obj, const double[::1] sp, const double[::1] table):
    """The kernels' objective_t of an :class:`Objective` (its arrays held by the caller)."""
    cdef objective_t o
    o.sp = &sp[0] if sp.shape[0] else NULL
    o.inv = float(obj.inv)
    o.kind = int(obj.kind)
    o.table = &table[0]
    o.n_pos = int(obj.n_pos)
    o.lt = NULL
    o.lt_size = 0
    o.scale = table[0] if o.kind == KIND_NDCG_LOG2 else 0.0
    return o


#: the positives' scores of an objective built for a derivative alone (no scores: ``sp`` is NULL)
_NO_SCORES = np.zeros(0)


def _table_of(obj):
    table = np.ascontiguousarray(obj.table, dtype=np.float64)
    return table if table.size else np.zeros(1)


def py_best_rank(double s, int64_t j, int64_t lo, int64_t hi, obj, lt=None):
    """:c:func:`best_rank` from Python: the largest argmax over ranks ``lo..hi`` of f_j (``obj``, an
    :class:`Objective`) for a negative with score ``s`` at order j; NDCG's steps from the 1/log2
    table ``lt`` when given (:func:`inverse_log_table`), else computed.

    Returns
    -------
    int
    """
    sp = np.ascontiguousarray(obj.sp, dtype=np.float64)
    table = _table_of(obj)
    cdef objective_t o = _objective_of(obj, sp, table)
    cdef const double[::1] ltv
    if lt is not None and o.kind == KIND_NDCG_LOG2:
        ltv = np.ascontiguousarray(lt, dtype=np.float64)
        o.lt = &ltv[0]
        o.lt_size = ltv.shape[0]
    return best_rank(s, j, lo, hi, &o)


def py_loss_step(int kind, table, int64_t n_pos, int64_t i, int64_t j):
    """:c:func:`loss_step` from Python: d_j(i) of the loss ``(kind, table)`` with P = ``n_pos``.

    Returns
    -------
    float
    """
    obj = Objective(None, 0.0, kind, table, n_pos)
    cdef const double[::1] t = _table_of(obj)
    cdef objective_t o = _objective_of(obj, _NO_SCORES, t)
    return loss_step(&o, i, j)


def derivative_matrix(int kind, table, int64_t n_pos, int64_t n_neg):
    """d[j − 1, i − 1] = d_j(i) for j = 1..N, i = 1..P, as the kernels evaluate it.

    Returns
    -------
    ndarray of float64, shape (n_neg, n_pos)
    """
    obj = Objective(None, 0.0, kind, table, n_pos)
    cdef const double[::1] t = _table_of(obj)
    out = np.empty((n_neg, n_pos))
    cdef double[:, ::1] d = out
    cdef objective_t o = _objective_of(obj, _NO_SCORES, t)
    cdef int64_t i, j
    with nogil:
        for j in range(1, n_neg + 1):
            for i in range(1, n_pos + 1):
                d[j - 1, i - 1] = loss_step(&o, i, j)
    return out


def sum_table(int kind, table, int64_t n_pos, int64_t n_neg):
    """Table t[i + j] of d_j(i) for a loss whose derivative depends on i + j only, built with
    :c:func:`loss_step` itself (look-ups are bit for bit the closed form).

    Returns
    -------
    ndarray of float64, shape (P + N + 1,)
    """
    obj = Objective(None, 0.0, kind, table, n_pos)
    cdef const double[::1] t = _table_of(obj)
    out = np.zeros(n_pos + n_neg + 1)
    cdef double[::1] s = out
    cdef objective_t o = _objective_of(obj, _NO_SCORES, t)
    with nogil:
        fill_sum_table(&o, n_pos + n_neg, &s[0])
    return out


def py_write_coefficients(const int64_t[::1] neg_rank, const int64_t[::1] neg_ids, const int64_t[::1] pos_ids,
                          int64_t n, int64_t n_pos, int64_t n_neg):
    """:c:func:`write_coefficients` from Python: ``(c, counts)`` of Lemma 6 from the negatives' ranks.

    Parameters
    ----------
    neg_rank, neg_ids : ndarray of int64, shape (N,)
        The negatives' interleaving ranks and their indices.
    pos_ids : ndarray of int64, shape (P,)
        The positives' indices in (−score, index) order.
    n, n_pos, n_neg : int
        The query's size, P and N.

    Returns
    -------
    c : ndarray of float64, shape (n,)
    counts : ndarray of int64, shape (P + 1,)
    """
    c = np.zeros(n)
    counts = np.empty(n_pos + 1, dtype=np.int64)
    cdef double[::1] cv = c
    cdef int64_t[::1] kv = counts
    with nogil:
        write_coefficients(&neg_rank[0] if n_neg else NULL, &neg_ids[0] if n_neg else NULL,
                           &pos_ids[0] if n_pos else NULL, n_pos, n_neg, &cv[0] if n else NULL, &kv[0])
    return c, counts


def loss_values(int kind, counts, bint log2_form=True):
    """:c:func:`loss_value` of ± patterns of any leading shape (..., P + 1).

    Parameters
    ----------
    kind : int
        ``KIND_AP``, else NDCG.
    counts : array-like of int, shape (..., P + 1)
    log2_form : bool, default=True
        NDCG's discount: 1/log2(1 + i), else Chakrabarti et al.'s.

    Returns
    -------
    float or ndarray of float64, shape (...)
    """
    counts = np.asarray(counts, dtype=np.int64)
    flat = np.ascontiguousarray(counts.reshape(-1, counts.shape[counts.ndim - 1]))  # (no wraparound here)
    out = np.empty(flat.shape[0])
    cdef const int64_t[:, ::1] cv = flat
    cdef double[::1] ov = out
    cdef int64_t n_pos = flat.shape[1] - 1
    cdef Py_ssize_t r
    with nogil:
        for r in range(cv.shape[0]):
            ov[r] = loss_value(kind, &cv[r, 0], n_pos, log2_form)
    return out.reshape(counts.shape[:-1]) if counts.ndim > 1 else float(out[0])


def discounts(i, bint log2_form=True):
    """NDCG's discount D at every entry of ``i`` (:c:func:`discount`, the one definition).

    Returns
    -------
    ndarray of float64, the shape of ``i``
    """
    values = np.ascontiguousarray(i, dtype=np.float64)
    out = np.empty(values.shape)
    cdef const double[::1] iv = values.reshape(-1)
    cdef double[::1] ov = out.reshape(-1)
    cdef Py_ssize_t t
    with nogil:
        for t in range(iv.shape[0]):
            ov[t] = discount(iv[t], log2_form)
    return out


def _inverse_logs(int64_t n):
    """1 / log2(m) for m < n (entries 0 and 1 unused), as :c:func:`inverse_log2` computes them."""
    out = np.zeros(max(n, 0))
    cdef double[::1] t = out
    cdef int64_t m
    with nogil:
        for m in range(2, n):
            t[m] = inverse_log2(<double>m)
    return out


_INVERSE_LOGS = np.zeros(0)


def inverse_log_table(n):
    """The table of 1/log2(m) for m < ``n`` (NDCG's discount D(m − 1)), kept from call to call: it
    depends on nothing else.  Grows by doubling up to ``CACHE_MAX_ENTRIES`` entries; a larger ``n`` gets
    a table of its own and the kept one stays as it is.

    Returns
    -------
    ndarray of float64, at least ``n`` entries
    """
    global _INVERSE_LOGS
    if _INVERSE_LOGS.size >= n:
        return _INVERSE_LOGS
    if n > CACHE_MAX_ENTRIES:
        return _inverse_logs(n)
    _INVERSE_LOGS = _inverse_logs(min(max(n, 2 * _INVERSE_LOGS.size), CACHE_MAX_ENTRIES))
    return _INVERSE_LOGS


def count_positives(const unsigned char[::1] y, const int64_t[::1] starts, const int64_t[::1] ends):
    """P of every query ``y[starts[q]:ends[q]]`` (labels as uint8: a bool array's buffer).

    Returns
    -------
    ndarray of int64, shape (Q,)
    """
    out = np.zeros(starts.shape[0], dtype=np.int64)
    cdef int64_t[::1] n_pos = out
    cdef Py_ssize_t q
    cdef int64_t i, p
    with nogil:
        for q in range(starts.shape[0]):
            p = 0
            for i in range(starts[q], ends[q]):
                p += y[i]
            n_pos[q] = p
    return out


def has_one_class_query(const int64_t[::1] n_pos, const int64_t[::1] sizes):
    """Whether a query has no positive (``n_pos[q] == 0``) or no negative (``n_pos[q] == sizes[q]``) row.

    Returns
    -------
    bool
    """
    cdef Py_ssize_t q
    for q in range(n_pos.shape[0]):
        if n_pos[q] == 0 or n_pos[q] == sizes[q]:
            return True
    return False
