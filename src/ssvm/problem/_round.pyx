"""The problem layer's compiled loops: the products of a linear model with its rows, ``X w`` and
``Xᵀ c`` (docs/design.md §6), for dense C-contiguous float32/float64 ``X`` and CSR ``X`` (int32 or
int64 indices), data read as stored and every sum in float64.

Each product is a loop over rows. ``X w`` sums each dense row with :c:func:`row_dot` (``_round.pxd``:
16 running sums in a fixed order, the same on every CPU) and each CSR row in its stored order;
``Xᵀ c`` adds ``X[i, j] · c[i]`` into float64 sums row after row. The row loops take the rows
``lo:hi`` of a chunk; the ``def`` functions run the chunks given by ``cuts`` (:mod:`._products`
chooses them from the size of ``X`` only) on OpenMP threads (``n_threads``, from
:func:`ssvm._threads.effective_n_threads`): ``X w`` writes each row's score whichever thread runs
its chunk, and ``Xᵀ c`` sums each chunk into its own row of a ``(chunks, d)`` array, which the caller
adds in chunk order — the same numbers on any number of threads. One chunk runs in the calling
thread. Every loop runs without the GIL.
"""

import numpy as np

from cython.parallel cimport prange

__all__ = ["dense_scores", "csr_scores", "dense_transpose", "csr_transpose"]


cdef void csr_scores_rows(const floating[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
                          const double* w, double* s, int64_t lo, int64_t hi) noexcept nogil:
    """``s[i] = X[i] · w`` for the rows ``lo:hi`` of a CSR ``X``, each row's entries in their order."""
    cdef int64_t i, k
    cdef double acc
    for i in range(lo, hi):
        acc = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            acc = acc + <double>data[k] * w[indices[k]]
        s[i] = acc


cdef void csr_transpose_rows(const floating[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
                             const double* c, double* g, int64_t lo, int64_t hi) noexcept nogil:
    """``g += X[lo:hi]ᵀ c[lo:hi]`` of a CSR ``X``, row after row."""
    cdef int64_t i, k
    cdef double ci
    for i in range(lo, hi):
        ci = c[i]
        for k in range(indptr[i], indptr[i + 1]):
            g[indices[k]] += <double>data[k] * ci


def dense_scores(const floating[:, ::1] X, const double[::1] w, const int64_t[::1] cuts, int n_threads):
    """``X @ w`` of a dense C-contiguous ``X``, the chunks ``cuts[t]:cuts[t+1]`` on ``n_threads`` threads.

    Parameters
    ----------
    X : ndarray of float32 or float64, shape (n, d), C-contiguous, n >= 1 and d >= 1
    w : ndarray of float64, shape (d,)
    cuts : ndarray of int64
        Row cuts, ascending from 0 to n (two: one chunk, in the calling thread).
    n_threads : int

    Returns
    -------
    ndarray of float64, shape (n,)
    """
    out = np.empty(X.shape[0])
    cdef double[::1] s = out
    cdef Py_ssize_t t, n_chunks = cuts.shape[0] - 1
    with nogil:
        if n_chunks == 1:
            dense_scores_rows(&X[0, 0], X.shape[1], &w[0], &s[0], cuts[0], cuts[1])
        else:
            for t in prange(n_chunks, num_threads=n_threads, schedule="dynamic"):
                dense_scores_rows(&X[0, 0], X.shape[1], &w[0], &s[0], cuts[t], cuts[t + 1])
    return out


def csr_scores(const floating[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
               const double[::1] w, const int64_t[::1] cuts, int n_threads):
    """``X @ w`` of a CSR ``X`` given by its arrays (``indptr`` of the indices' type), as
    :func:`dense_scores`.

    Returns
    -------
    ndarray of float64, shape (n,)
    """
    out = np.empty(indptr.shape[0] - 1)
    cdef double[::1] s = out
    cdef Py_ssize_t t, n_chunks = cuts.shape[0] - 1
    with nogil:
        if n_chunks == 1:
            csr_scores_rows(data, indices, indptr, &w[0], &s[0], cuts[0], cuts[1])
        else:
            for t in prange(n_chunks, num_threads=n_threads, schedule="dynamic"):
                csr_scores_rows(data, indices, indptr, &w[0], &s[0], cuts[t], cuts[t + 1])
    return out


def dense_transpose(const floating[:, ::1] X, const double[::1] c, const int64_t[::1] cuts, int n_threads):
    """``Xᵀ @ c`` of a dense C-contiguous ``X``, per chunk: row ``t`` is the sum over the chunk
    ``cuts[t]:cuts[t+1]`` (add the rows in order for the product).

    Parameters
    ----------
    X : ndarray of float32 or float64, shape (n, d), C-contiguous, n >= 1 and d >= 1
    c : ndarray of float64, shape (n,)
    cuts : ndarray of int64
    n_threads : int

    Returns
    -------
    ndarray of float64, shape (len(cuts) - 1, d)
    """
    cdef Py_ssize_t t, n_chunks = cuts.shape[0] - 1
    out = np.zeros((n_chunks, X.shape[1]))
    cdef double[:, ::1] G = out
    with nogil:
        if n_chunks == 1:
            dense_transpose_rows(&X[0, 0], X.shape[1], &c[0], &G[0, 0], cuts[0], cuts[1])
        else:
            for t in prange(n_chunks, num_threads=n_threads, schedule="dynamic"):
                dense_transpose_rows(&X[0, 0], X.shape[1], &c[0], &G[t, 0], cuts[t], cuts[t + 1])
    return out


def csr_transpose(const floating[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
                  const double[::1] c, Py_ssize_t d, const int64_t[::1] cuts, int n_threads):
    """``Xᵀ @ c`` of a CSR ``X`` with ``d`` columns given by its arrays, per chunk, as
    :func:`dense_transpose`.

    Returns
    -------
    ndarray of float64, shape (len(cuts) - 1, d)
    """
    cdef Py_ssize_t t, n_chunks = cuts.shape[0] - 1
    out = np.zeros((n_chunks, d))
    cdef double[:, ::1] G = out
    with nogil:
        if n_chunks == 1:
            csr_transpose_rows(data, indices, indptr, &c[0], &G[0, 0], cuts[0], cuts[1])
        else:
            for t in prange(n_chunks, num_threads=n_threads, schedule="dynamic"):
                csr_transpose_rows(data, indices, indptr, &c[0], &G[t, 0], cuts[t], cuts[t + 1])
    return out
