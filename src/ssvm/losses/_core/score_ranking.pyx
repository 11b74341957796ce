"""The outputs by score that the direct-loss gradient needs besides the loss-augmented oracles (Song et
al. 2016, eqs. 2–3): R_w, each query ranked by (−score, index), and the 0-1 labelling by score.

* Rank losses (AP, NDCG): the positives and the negatives of a query in (−score, index) order (the
  packed keys of :mod:`.sorting`: the bucket sort inside the loop over small queries, ``packed_order``
  for a large one); merging them gives each negative's interleaving rank (1 + the positives above it),
  and Lemma 6's coefficients and Δ come from the ranks as in every oracle (:c:func:`write_coefficients`,
  :c:func:`loss_value`).
* 0-1: a row is off its true label iff yᵢ sᵢ < margin (yᵢ ∈ ±1; with margin 0 also a positive scoring 0):
  R_w labels a row positive iff its score is > 0, the loss-diminished output (max F − εΔ) moves a row
  off its true label iff yᵢ sᵢ < −ε.
"""

import numpy as np

from libc.stdint cimport int64_t, uint64_t
from libcpp.vector cimport vector

from .derivative cimport loss_value, write_coefficients
from .sorting cimport index_bits, pack, repair, sort_score_keys, sort_work_t, unpack

__all__ = ["merge_ranks", "ranking_terms", "ranked_batch", "flip_batch"]


cdef void merge(const double* sp, const int64_t* pos_ids, int64_t n_pos, const double* sn, const int64_t* neg_ids,
                int64_t n_neg, int64_t* ranks) noexcept nogil:
    """Interleaving rank of each negative (1 + the positives above it) when positives and negatives, each
    sorted by (−score, index), are merged in that order."""
    cdef int64_t k = 0
    cdef int64_t t, j
    cdef double s
    for t in range(n_neg):
        s = sn[t]
        j = neg_ids[t]
        while k < n_pos and (sp[k] > s or (sp[k] == s and pos_ids[k] < j)):
            k += 1
        ranks[t] = k + 1


def merge_ranks(const double[::1] sp, const int64_t[::1] pos_ids, const double[::1] sn, const int64_t[::1] neg_ids):
    """:c:func:`merge` from Python: the negatives' interleaving ranks.

    Returns
    -------
    ndarray of int64, shape (N,)
    """
    ranks = np.empty(sn.shape[0], dtype=np.int64)
    cdef int64_t[::1] rv = ranks
    if sn.shape[0]:
        with nogil:
            merge(&sp[0] if sp.shape[0] else NULL, &pos_ids[0] if sp.shape[0] else NULL, sp.shape[0], &sn[0],
                  &neg_ids[0], sn.shape[0], &rv[0])
    return ranks


def ranking_terms(const double[::1] sp, const int64_t[::1] pos_ids, const double[::1] sn, const int64_t[::1] neg_ids,
                  int64_t n, int kind, bint log2_form=True):
    """``(c, delta)`` of the merged ranking of sorted positives and negatives (Lemma 6), Δ of the built-in
    loss ``kind``.

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : float
    """
    cdef int64_t n_pos = sp.shape[0]
    cdef int64_t n_neg = sn.shape[0]
    c = np.zeros(n)
    cdef double[::1] cv = c
    cdef vector[int64_t] ranks
    cdef vector[int64_t] counts
    cdef double delta
    with nogil:
        ranks.resize(n_neg)
        counts.resize(n_pos + 1)
        merge(&sp[0], &pos_ids[0], n_pos, &sn[0], &neg_ids[0], n_neg, ranks.data())
        write_coefficients(ranks.data(), &neg_ids[0], &pos_ids[0], n_pos, n_neg, &cv[0], counts.data())
        delta = loss_value(kind, counts.data(), n_pos, log2_form)
    return c, delta


def ranked_batch(const double[::1] scores, const unsigned char[::1] y, const int64_t[::1] starts,
                 const int64_t[::1] ends, int kind, double[::1] c, double[::1] delta):
    """``(c, delta)`` of R_w for the built-in AP or NDCG (log2) on the queries ``scores[starts[q]:ends[q]]``
    (each with a positive and a negative), in one loop: the queries' ``c`` into their rows, Δ into
    ``delta``.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of uint8 (bool viewed as such), shape (n,)
    starts, ends : ndarray of int64, shape (Q,)
    kind : int
    c : ndarray of float64, shape (n,)
    delta : ndarray of float64, shape (Q,)
    """
    cdef vector[uint64_t] buf
    cdef vector[double] vals
    cdef vector[int64_t] ids
    cdef vector[int64_t] ranks
    cdef vector[int64_t] counts
    cdef sort_work_t work
    cdef int64_t q, a, n, n_pos, n_neg, i, shift
    cdef uint64_t* neg
    with nogil:
        for q in range(starts.shape[0]):
            a = starts[q]
            n = ends[q] - a
            n_pos = 0
            for i in range(a, a + n):
                n_pos += y[i]
            n_neg = n - n_pos
            buf.resize(n + 2)
            vals.resize(n)
            ids.resize(n)
            ranks.resize(n_neg)
            counts.resize(n_pos + 1)
            shift = index_bits(n)
            neg = buf.data() + n_pos + 1
            pack(&scores[a], &y[a], n, shift, buf.data(), neg)
            sort_score_keys(buf.data(), n_pos, shift, &work)
            repair(buf.data(), n_pos, &scores[a], shift)
            sort_score_keys(neg, n_neg, shift, &work)
            repair(neg, n_neg, &scores[a], shift)
            unpack(buf.data(), n_pos, &scores[a], shift, vals.data(), ids.data())
            unpack(neg, n_neg, &scores[a], shift, vals.data() + n_pos, ids.data() + n_pos)
            merge(vals.data(), ids.data(), n_pos, vals.data() + n_pos, ids.data() + n_pos, n_neg, ranks.data())
            write_coefficients(ranks.data(), ids.data() + n_pos, ids.data(), n_pos, n_neg, &c[a], counts.data())
            delta[q] = loss_value(kind, counts.data(), n_pos, True)


def flip_batch(const double[::1] scores, const unsigned char[::1] y, const int64_t[::1] starts,
               const int64_t[::1] ends, double margin, double[::1] c, double[::1] delta):
    """The rows off their true label per query: yᵢ sᵢ < ``margin`` (with margin 0 also a positive scoring 0);
    their ``c`` = ∓1/nᵢ into ``c`` (nᵢ the query's size; other rows untouched), the share of them into
    ``delta``.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of uint8 (bool viewed as such), shape (n,)
    starts, ends : ndarray of int64, shape (Q,)
    margin : float
    c : ndarray of float64, shape (n,)
    delta : ndarray of float64, shape (Q,)
    """
    cdef int64_t q, i, n, wrong
    cdef double ys
    with nogil:
        for q in range(starts.shape[0]):
            n = ends[q] - starts[q]
            wrong = 0
            for i in range(starts[q], ends[q]):
                ys = scores[i] if y[i] else -scores[i]
                if ys < margin or (margin == 0.0 and ys == 0.0 and y[i]):
                    c[i] = -1.0 / <double>n if y[i] else 1.0 / <double>n
                    wrong += 1
            delta[q] = <double>wrong / <double>n
