"""The products of a linear model with its rows: ``X w`` and ``Xᵀ c``, data read as they are
stored (float32 or float64), sums in float64 (docs/design.md §6).

Compiled loops rather than BLAS, for three reasons:

- a float32 ``X`` is neither up-cast nor copied, yet its sums are float64 (BLAS's float32 products
  would sum in float32, with a rounding that grows with the length of the sums);
- a row's score does not depend on where the row sits: BLAS's ``gemv`` takes another code path for
  the last rows of a call, so the same row scored in a dask block and in the whole array could
  differ in its last bit; here every row is summed by the same compiled loop, and a problem split
  into blocks adds up to the in-memory numbers up to the float64 rounding of adding the blocks;
- they stream ``X`` once per product at the memory bandwidth (single-threaded ``dgemv`` measured
  2-3x slower here; ``scripts/bench_scale.py`` times them).

``Xᵀ c`` adds ``X[i, j] · c[i]`` into float64 sums row after row; ``X w`` sums each row's products
in float64, the compiler free to vectorise that sum (its order then depends on the row length only).

An ``X`` of at least ``_PARALLEL_BYTES`` is cut into a fixed number of row chunks (from its size
alone, at most ``_MAX_CHUNKS``) that numba's threads take in parallel: ``X w`` runs the same
compiled loop on each chunk (every score bit for bit the one-thread score), ``Xᵀ c`` sums each
chunk into its own float64 vector and adds the chunks' vectors in chunk order — the same numbers
whatever the number of threads.
"""

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

__all__ = ["scores", "transpose"]

_PARALLEL_BYTES = 8 << 20  # X of at least this size: row chunks on numba's threads
_MAX_CHUNKS = 16


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _dense_scores(X, w):
    n, d = X.shape
    s = np.empty(n)
    for i in range(n):
        acc = 0.0
        for j in range(d):
            acc += X[i, j] * w[j]
        s[i] = acc
    return s


@njit(cache=True, nogil=True)
def _dense_transpose(X, c):
    n, d = X.shape
    g = np.zeros(d)
    for i in range(n):
        ci = c[i]
        for j in range(d):
            g[j] += X[i, j] * ci
    return g


@njit(cache=True, nogil=True)
def _csr_scores(data, indices, indptr, w):
    n = indptr.shape[0] - 1
    s = np.empty(n)
    for i in range(n):
        acc = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            acc += data[k] * w[indices[k]]
        s[i] = acc
    return s


@njit(cache=True, nogil=True)
def _csr_transpose(data, indices, indptr, c, d):
    g = np.zeros(d)
    for i in range(indptr.shape[0] - 1):
        ci = c[i]
        for k in range(indptr[i], indptr[i + 1]):
            g[indices[k]] += data[k] * ci
    return g


def _cuts(X):
    """Row chunks of ``X`` (cut points), from its size only: one below ``_PARALLEL_BYTES``."""
    n = X.shape[0]
    nbytes = (X.data.nbytes + X.indices.nbytes) if sp.issparse(X) else X.nbytes
    k = int(max(1, min(_MAX_CHUNKS, nbytes // _PARALLEL_BYTES, n)))
    return np.linspace(0, n, k + 1).astype(np.int64)


@njit(cache=True, parallel=True)
def _dense_scores_chunks(X, w, cuts):
    s = np.empty(X.shape[0])
    for t in prange(cuts.size - 1):
        s[cuts[t]:cuts[t + 1]] = _dense_scores(X[cuts[t]:cuts[t + 1]], w)
    return s


@njit(cache=True, parallel=True)
def _dense_transpose_chunks(X, c, cuts):
    G = np.zeros((cuts.size - 1, X.shape[1]))
    for t in prange(cuts.size - 1):
        G[t] = _dense_transpose(X[cuts[t]:cuts[t + 1]], c[cuts[t]:cuts[t + 1]])
    return G


@njit(cache=True, parallel=True)
def _csr_scores_chunks(data, indices, indptr, w, cuts):
    s = np.empty(indptr.shape[0] - 1)
    for t in prange(cuts.size - 1):
        s[cuts[t]:cuts[t + 1]] = _csr_scores(data, indices, indptr[cuts[t]:cuts[t + 1] + 1], w)
    return s


@njit(cache=True, parallel=True)
def _csr_transpose_chunks(data, indices, indptr, c, d, cuts):
    G = np.zeros((cuts.size - 1, d))
    for t in prange(cuts.size - 1):
        G[t] = _csr_transpose(data, indices, indptr[cuts[t]:cuts[t + 1] + 1], c[cuts[t]:cuts[t + 1]], d)
    return G


def scores(X, w):
    """``X @ w``, each row's sum in float64.

    Parameters
    ----------
    X : ndarray of float32 or float64, shape (n, d), or scipy.sparse.csr_matrix of those
    w : ndarray of shape (d,) or (d, k)

    Returns
    -------
    ndarray of float64, shape (n,) or (n, k)
    """
    w = np.asarray(w, dtype=np.float64)
    if w.ndim == 2:
        return np.stack([scores(X, np.ascontiguousarray(col)) for col in w.T], axis=1)
    cuts = _cuts(X)
    if sp.issparse(X):
        if cuts.size > 2:
            return _csr_scores_chunks(X.data, X.indices, X.indptr, w, cuts)
        return _csr_scores(X.data, X.indices, X.indptr, w)
    if cuts.size > 2:
        return _dense_scores_chunks(X, w, cuts)
    return _dense_scores(X, w)


def transpose(X, c):
    """``Xᵀ @ c``, accumulated in float64.

    Parameters
    ----------
    X : ndarray of float32 or float64, shape (n, d), or scipy.sparse.csr_matrix of those
    c : ndarray of shape (n,)

    Returns
    -------
    ndarray of float64, shape (d,)
    """
    c = np.ascontiguousarray(c, dtype=np.float64)
    cuts = _cuts(X)
    if sp.issparse(X):
        if cuts.size > 2:
            return _csr_transpose_chunks(X.data, X.indices, X.indptr, c, X.shape[1], cuts).sum(axis=0)
        return _csr_transpose(X.data, X.indices, X.indptr, c, X.shape[1])
    if cuts.size > 2:
        return _dense_transpose_chunks(X, c, cuts).sum(axis=0)
    return _dense_transpose(X, c)
