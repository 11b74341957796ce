"""The products of a linear model with its rows: ``X w`` and ``Xᵀ c``, data read as they are
stored (float32 or float64), sums in float64 (docs/design.md §6).

Compiled loops (:mod:`._round`) rather than BLAS, for three reasons:

- a float32 ``X`` is neither up-cast nor copied, yet its sums are float64 (BLAS's float32 products
  would sum in float32, with a rounding that grows with the length of the sums);
- a row's score does not depend on where the row sits: BLAS's ``gemv`` takes another code path for
  the last rows of a call, so the same row scored in a dask block and in the whole array could
  differ in its last bit; here every row is summed by the same loop, in an order fixed by its
  length alone (:mod:`._round`), and a problem split into blocks adds up to the in-memory numbers
  up to the float64 rounding of adding the blocks;
- they stream ``X`` once per product at the memory bandwidth (single-threaded ``dgemv`` measured
  2-3x slower here; ``scripts/bench_scale.py`` times them).

An ``X`` of at least ``_PARALLEL_BYTES`` is cut into a fixed number of row chunks (from its size
alone, at most ``_MAX_CHUNKS``) that OpenMP threads take in parallel (as many as
:func:`ssvm._threads.effective_n_threads` allows: ``threadpoolctl``'s OpenMP limit and
``OMP_NUM_THREADS`` are obeyed): ``X w`` runs the same row loop on each chunk (every score bit for
bit the one-thread score), ``Xᵀ c`` sums each chunk into its own float64 vector and adds the
chunks' vectors in chunk order — the same numbers whatever the number of threads. A dense ``X``
that is not C-contiguous is read through a C-contiguous copy.
"""

import numpy as np
import scipy.sparse as sp

from .._threads import effective_n_threads
from . import _round

__all__ = ["scores", "transpose"]

_PARALLEL_BYTES = 8 << 20  # X of at least this size: row chunks on OpenMP threads
_MAX_CHUNKS = 16


def _cuts(X):
    """Row chunks of ``X`` (cut points), from its size only: one below ``_PARALLEL_BYTES``."""
    n = X.shape[0]
    nbytes = (X.data.nbytes + X.indices.nbytes) if sp.issparse(X) else X.nbytes
    k = int(max(1, min(_MAX_CHUNKS, nbytes // _PARALLEL_BYTES, n)))
    if k == 1:  # np.linspace costs tens of microseconds: more than a small product
        return np.array([0, n], dtype=np.int64)
    return np.linspace(0, n, k + 1).astype(np.int64)


def _csr_arrays(X):
    """``(data, indices, indptr)`` of a CSR ``X``, ``indptr`` of the indices' type."""
    return X.data, X.indices, X.indptr.astype(X.indices.dtype, copy=False)


def _threads(cuts):
    return 1 if cuts.size <= 2 else min(effective_n_threads(), cuts.size - 1)


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
    w = np.ascontiguousarray(w, dtype=np.float64)
    if w.ndim == 2:
        return np.stack([scores(X, np.ascontiguousarray(col)) for col in w.T], axis=1)
    n, d = X.shape
    if n == 0 or d == 0:
        return np.zeros(n)
    cuts = _cuts(X)
    if sp.issparse(X):
        return _round.csr_scores(*_csr_arrays(X), w, cuts, _threads(cuts))
    return _round.dense_scores(np.ascontiguousarray(X), w, cuts, _threads(cuts))


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
    n, d = X.shape
    if n == 0 or d == 0:
        return np.zeros(d)
    cuts = _cuts(X)
    if sp.issparse(X):
        G = _round.csr_transpose(*_csr_arrays(X), c, d, cuts, _threads(cuts))
    else:
        G = _round.dense_transpose(np.ascontiguousarray(X), c, cuts, _threads(cuts))
    return G[0] if G.shape[0] == 1 else G.sum(axis=0)
