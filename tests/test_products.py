"""The products of a linear model with its rows (ssvm.problem._products): the row-chunked
parallel forms against the one-thread loops and numpy."""

import numba
import numpy as np
import pytest
import scipy.sparse as sp

import ssvm.problem._products as products


def layouts(seed, n=3000, d=7):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 10.0 ** rng.integers(-3, 4, size=(n, 1))
    X[rng.random(X.shape) < 0.4] = 0.0
    X[5] = X[6]  # equal rows
    for dtype in (np.float64, np.float32):
        Xt = X.astype(dtype)
        yield Xt
        yield sp.csr_matrix(Xt)
        yield np.asfortranarray(Xt)  # any layout, no copy asked


def one_thread(X, w, c):
    if sp.issparse(X):
        return (products._csr_scores(X.data, X.indices, X.indptr, w),
                products._csr_transpose(X.data, X.indices, X.indptr, c, X.shape[1]))
    return products._dense_scores(X, w), products._dense_transpose(X, c)


@pytest.mark.parametrize("seed", range(3))
def test_parallel_products_equal_the_one_thread_loops(seed, monkeypatch):
    """Chunked over rows: every score bit for bit; Xᵀ c to rounding, the same on 1 and 2 threads."""
    monkeypatch.setattr(products, "_PARALLEL_BYTES", 1000)  # chunks on small arrays
    rng = np.random.default_rng(seed)
    for X in layouts(seed):
        assert products._cuts(X).size - 1 == products._MAX_CHUNKS
        w, c = rng.normal(size=X.shape[1]), rng.normal(size=X.shape[0])
        s_one, g_one = one_thread(X, w, c)
        dense = X.toarray() if sp.issparse(X) else X
        before = numba.get_num_threads()
        try:
            out = []
            for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
                numba.set_num_threads(threads)
                out.append((products.scores(X, w), products.transpose(X, c)))
        finally:
            numba.set_num_threads(before)
        (s1, g1), (s2, g2) = out
        np.testing.assert_array_equal(s1, s_one)
        np.testing.assert_array_equal(s2, s_one)
        np.testing.assert_array_equal(g1, g2)  # the chunks' sums added in chunk order
        scale = np.abs(dense.astype(np.float64)).T @ np.abs(c)
        np.testing.assert_allclose(g1, g_one, rtol=0, atol=1e-13 * scale.max())
        np.testing.assert_allclose(g1, dense.astype(np.float64).T @ c, rtol=0, atol=1e-12 * scale.max())


def test_chunks_follow_the_size_only(monkeypatch):
    X = np.zeros((100, 10))
    assert products._cuts(X).tolist() == [0, 100]  # 8 kB: one chunk, the one-thread loop
    monkeypatch.setattr(products, "_PARALLEL_BYTES", 2000)
    assert products._cuts(X).tolist() == [0, 25, 50, 75, 100]  # 8000 / 2000 = 4 chunks
    assert products._cuts(np.zeros((3, 1000))).size - 1 == 3  # never more chunks than rows
    assert products._cuts(np.zeros((0, 5))).tolist() == [0, 0]
