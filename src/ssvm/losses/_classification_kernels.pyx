"""Compiled per-query forms of the 0-1, precision@k and recall@k oracles (:mod:`.classification`).

Each ``*_query`` kernel (declared in ``_classification_kernels.pxd``) solves one query, writes its
``c`` and returns Δ, with exactly the arithmetic of the numpy oracle it mirrors (tests compare them
bit for bit). The 0-1 loss decides each sample alone (flip it iff ``1 − yᵢ sᵢ > 0``); precision@k
takes the k largest augmented scores ``aᵢ = sᵢ + [i negative]`` by one selection in O(n) (Mensink,
Verbeek & Caetano 2011, section 4), ties at the k-th value by (positives first, index); recall@k is the
same selection with its own normaliser and offset (:c:func:`topk_query`, one kernel for both). The fused
training round (:mod:`ssvm.problem._fused`) calls them inside its compiled loop, and
:func:`batch_loop` (:func:`precision_at_k_batch`, :func:`~ssvm.losses.classification.zero_one_batch`)
runs them over many stacked queries in one call without the GIL.
"""

import numpy as np

from libcpp.vector cimport vector

__all__ = ["zero_one_into", "precision_at_k_into", "precision_at_k_batch", "recall_at_k_batch", "batch_loop"]

cdef extern from "<algorithm>" namespace "std" nogil:
    void nth_element[Iter](Iter first, Iter nth, Iter last)

cdef extern from "_simd.h":
    pass

cdef extern from *:
    """
    #include <cstdint>
    /* The 0-1 oracle's c of one query (see zero_one_query), in double arithmetic only, without a
       branch (labels and violations follow no pattern a predictor could learn) and without
       aliasing (restrict), so that the compiler vectorises it: y = ±1 is 2 [relevant] − 1;
       c = −y / n is −y · (1/n), the same bits (a division by n is symmetric in sign), times
       m = [1 − y s > 0], plus 0.0 (which turns the −0.0 of −(1/n) · 0 into the oracle's +0.0 and
       leaves every other value as it is). Returns the violations: the c that are not 0. In every
       version of SSVM_CLONES (_simd.h). */
    SSVM_CLONES static std::int64_t ssvm_zero_one_c(const double* __restrict__ s, const unsigned char* __restrict__ y,
                                               std::int64_t n, double* __restrict__ c) {
        const double inv = 1.0 / n;
        std::int64_t n_viol = 0;
        for (std::int64_t i = 0; i < n; ++i) {
            const double ypm = 2.0 * y[i] - 1.0;
            const double m = (1.0 - ypm * s[i] > 0.0) ? 1.0 : 0.0;
            const double ci = (-ypm * inv) * m + 0.0;
            c[i] = ci;
            n_viol += ci != 0.0;  /* counted in the same pass: a second one re-reads c from memory */
        }
        return n_viol;
    }
    """
    int64_t zero_one_c "ssvm_zero_one_c"(const double* s, const unsigned char* y, int64_t n, double* c) noexcept nogil


cdef double zero_one_query(const double* s, const unsigned char* y, int64_t n, double* c) noexcept nogil:
    """:func:`~ssvm.losses.classification.zero_one_oracle` of the query ``s[:n]`` into ``c``; returns Δ.

    Flip sample i iff ``1 − yᵢ sᵢ > 0`` (``yᵢ = ±1``): ``cᵢ = −yᵢ / n`` there, 0 elsewhere; Δ is the
    fraction flipped (the loop: ``zero_one_c`` above, vectorised).
    """
    return zero_one_c(s, y, n, c) / <double>n


cdef double topk_query(const double* s, const unsigned char* y, int64_t n, int64_t k, int recall, double* c,
                       double* work) noexcept nogil:
    """The top-k oracle of the query ``s[:n]`` into ``c``; returns Δ: precision@k (``recall = 0``) or recall
    in the top k (``recall = 1``). ``work`` holds n doubles (overwritten).

    Both have the same output set (k rows) and the same loss-augmented argmax: the k largest augmented
    scores ``a = s + [negative]`` (the k-th by ``std::nth_element``, as ``np.partition`` finds it), ties at
    the k-th value by (positives first, index). They differ only in the normaliser m of Δ and Ψ and in
    Δ's offset: precision@k has m = k, Δ = b / k; recall@k has m = min(P, k), Δ = 1 − a / m =
    (b − max(0, k − P)) / m (a positives and b = k − a negatives chosen); c = (chosen − t*) / m.
    """
    cdef int64_t i, m, n_pos = 0, n_neg, n_chosen_neg = 0, offset = 0
    cdef double v, a, w_pos, w_neg, norm
    cdef int positive
    k = min(k, n)
    for i in range(n):
        work[i] = s[i] + (0.0 if y[i] else 1.0)
        n_pos += y[i]
    nth_element(work, work + (n - k), work + n)
    v = work[n - k]  # the k-th largest augmented score
    m = k
    for i in range(n):  # c holds "chosen" (1.0 or 0.0) until the last loop
        a = s[i] + (0.0 if y[i] else 1.0)
        c[i] = 1.0 if a > v else 0.0
        if a > v:
            m -= 1
    for positive in range(1, -1, -1):  # the ties: positives first, then negatives, by index
        for i in range(n):
            if (y[i] != 0) == positive and s[i] + (0.0 if y[i] else 1.0) == v:
                c[i] = 1.0 if m > 0 else 0.0  # chosen or not, decided once
                m -= 1
    n_neg = n - n_pos
    w_pos = min(1.0, k / <double>n_pos)
    w_neg = max(0, k - n_pos) / <double>n_neg if n_neg else 0.0
    norm = <double>k
    if recall:
        norm = <double>min(n_pos, k)
        offset = max(0, k - n_pos)
    for i in range(n):
        if c[i] != 0.0 and not y[i]:
            n_chosen_neg += 1
        c[i] = (c[i] - (w_pos if y[i] else w_neg)) / norm
    return (n_chosen_neg - offset) / norm


cdef double precision_at_k_query(const double* s, const unsigned char* y, int64_t n, int64_t k, double* c,
                                 double* work) noexcept nogil:
    """:func:`~ssvm.losses.classification.precision_at_k_oracle` of the query ``s[:n]`` into ``c``;
    returns Δ (:c:func:`topk_query` with ``recall = 0``). ``work`` holds n doubles (overwritten)."""
    return topk_query(s, y, n, k, 0, c, work)


def zero_one_into(const double[::1] scores, y, double[::1] c):
    """:func:`~ssvm.losses.classification.zero_one_oracle` of one query into ``c``; returns Δ.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,), n >= 1
    y : ndarray of bool, shape (n,)
    c : ndarray of float64, shape (n,)
        Written.

    Returns
    -------
    float
    """
    cdef const unsigned char[::1] yb = np.ascontiguousarray(y, dtype=np.bool_).view(np.uint8)
    cdef double delta
    with nogil:
        delta = zero_one_query(&scores[0], &yb[0], scores.shape[0], &c[0])
    return delta


def precision_at_k_into(const double[::1] scores, y, int64_t k, double[::1] c, bint recall=False):
    """:func:`~ssvm.losses.classification.precision_at_k_oracle` (or, with ``recall``,
    :func:`~ssvm.losses.classification.recall_at_k_oracle`) of one query into ``c``; returns Δ.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,), n >= 1
    y : ndarray of bool, shape (n,), with a positive
    k : int
        At least 1; clipped to n.
    c : ndarray of float64, shape (n,)
        Written.
    recall : bool, default=False
        Recall in the top k instead of precision@k.

    Returns
    -------
    float
    """
    cdef const unsigned char[::1] yb = np.ascontiguousarray(y, dtype=np.bool_).view(np.uint8)
    cdef vector[double] work = vector[double](scores.shape[0])
    cdef double delta
    with nogil:
        delta = topk_query(&scores[0], &yb[0], scores.shape[0], k, recall, &c[0], work.data())
    return delta


def batch_loop(scores, y, starts, ends, k, recall=False):
    """``(c, delta)`` of 0-1 (``k = 0``), precision@k or, with ``recall``, recall@k (``k >= 1``) over stacked
    queries.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
    starts, ends : ndarray of int, shape (Q,)
        Query ``q`` is ``scores[starts[q]:ends[q]]`` (disjoint, non-empty ranges).
    k : int
    recall : bool, default=False
        Recall in the top k instead of precision@k (``k >= 1``).

    Returns
    -------
    c : ndarray of float64, shape (n,)
        Each query's ``c`` in its rows, zero elsewhere.
    delta : ndarray of float64, shape (Q,)
    """
    cdef const double[::1] s = np.ascontiguousarray(scores, dtype=np.float64)
    cdef const unsigned char[::1] yb = np.ascontiguousarray(y, dtype=np.bool_).view(np.uint8)
    cdef const int64_t[::1] a = np.ascontiguousarray(starts, dtype=np.int64)
    cdef const int64_t[::1] b = np.ascontiguousarray(ends, dtype=np.int64)
    cdef int64_t kk = int(k), q, largest = 0, covered = 0
    for q in range(a.shape[0]):
        largest = max(largest, b[q] - a[q])
        covered += b[q] - a[q]
    # disjoint queries whose rows add up to n cover every row, and the kernels write each of their rows:
    # no zeros to write first (an np.zeros of a 10^6-row query costs a fifth of the 0-1 oracle)
    c_out = np.empty(s.shape[0]) if covered == s.shape[0] else np.zeros(s.shape[0])
    delta_out = np.empty(a.shape[0])
    cdef double[::1] c = c_out
    cdef double[::1] delta = delta_out
    cdef int rr = 1 if recall else 0
    cdef vector[double] work = vector[double](largest if kk else 0)
    with nogil:
        for q in range(a.shape[0]):
            if kk:
                delta[q] = topk_query(&s[a[q]], &yb[a[q]], b[q] - a[q], kk, rr, &c[a[q]], work.data())
            else:
                delta[q] = zero_one_query(&s[a[q]], &yb[a[q]], b[q] - a[q], &c[a[q]])
    return c_out, delta_out


def precision_at_k_batch(scores, y, starts, ends, k=10):
    """:func:`~ssvm.losses.classification.precision_at_k_oracle` on many stacked queries in one
    compiled loop.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
        Stacked scores; rows outside the queries are ignored.
    y : ndarray of bool, shape (n,)
    starts, ends : ndarray of int, shape (Q,)
        Query ``q`` is ``scores[starts[q]:ends[q]]``; ranges disjoint, each with a positive and a
        negative.
    k : int, default=10
        Clipped to each query's size.

    Returns
    -------
    c : ndarray of float64, shape (n,)
        Each query's ``c`` in its rows, zero elsewhere.
    delta : ndarray of float64, shape (Q,)
    """
    return batch_loop(scores, y, starts, ends, k)


def recall_at_k_batch(scores, y, starts, ends, k=10):
    """:func:`~ssvm.losses.classification.recall_at_k_oracle` on many stacked queries in one compiled loop.

    Parameters
    ----------
    scores, y, starts, ends
        As in :func:`precision_at_k_batch`.
    k : int, default=10
        Clipped to each query's size.

    Returns
    -------
    c : ndarray of float64, shape (n,)
        Each query's ``c`` in its rows, zero elsewhere.
    delta : ndarray of float64, shape (Q,)
    """
    return batch_loop(scores, y, starts, ends, k, recall=True)
