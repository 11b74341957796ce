"""Products of a float32 ``X``: the data read as float32, the sums in float64 (DESIGN.md §6).

BLAS's float32 products would sum in float32, with a rounding that grows with the length of the
sums and, for ``X w``, depends on where a row sits in the call (its last rows take another code
path). These compiled loops read ``X`` as it is (no up-cast copy) and accumulate in float64:

- ``X w``: each row's dot product in float64, by the same compiled loop for every row, so a row's
  score does not depend on the block of rows it is computed in;
- ``Xᵀ c``: ``X[i, j] · c[i]`` added into float64 sums row after row.

So a float32 problem split into blocks (dask) adds up to the same numbers as in one piece, up to
the float64 rounding of adding the blocks' sums.
"""

import numpy as np
import scipy.sparse as sp
from numba import njit

__all__ = ["scores_float32", "transpose_float32"]


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _dense_scores(X, w):
    # reassociation lets the compiler vectorise each row's sum; the order it picks depends on the
    # row length only, so it is the same for every row
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


def scores_float32(X, w):
    """``X @ w`` of a float32 ``X``, each row's sum in float64.

    Parameters
    ----------
    X : ndarray of float32, shape (n, d), or scipy.sparse.csr_matrix of float32
    w : ndarray of shape (d,) or (d, k)

    Returns
    -------
    ndarray of float64, shape (n,) or (n, k)
    """
    w = np.asarray(w, dtype=np.float64)
    if w.ndim == 2:
        return np.stack([scores_float32(X, np.ascontiguousarray(col)) for col in w.T], axis=1)
    if sp.issparse(X):
        return _csr_scores(X.data, X.indices, X.indptr, w)
    return _dense_scores(X, w)


def transpose_float32(X, c):
    """``Xᵀ c`` of a float32 ``X`` and a float64 ``c``, accumulated in float64.

    Parameters
    ----------
    X : ndarray of float32, shape (n, d), or scipy.sparse.csr_matrix of float32
    c : ndarray of shape (n,)

    Returns
    -------
    ndarray of float64, shape (d,)
    """
    c = np.ascontiguousarray(c, dtype=np.float64)
    if sp.issparse(X):
        return _csr_transpose(X.data, X.indices, X.indptr, c, X.shape[1])
    return _dense_transpose(X, c)
