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
"""

import numpy as np
import scipy.sparse as sp
from numba import njit

__all__ = ["scores", "transpose"]


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
    if sp.issparse(X):
        return _csr_scores(X.data, X.indices, X.indptr, w)
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
    if sp.issparse(X):
        return _csr_transpose(X.data, X.indices, X.indptr, c, X.shape[1])
    return _dense_transpose(X, c)
