"""The products of a linear model with its rows (ssvm.problem._products, compiled in
ssvm.problem._round): the row-chunked parallel forms against the one-thread loops and numpy, the
dense row sum against its written order, the thread count from the OpenMP limit."""

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

import ssvm.problem._products as products
from ssvm.problem import _round


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
    """The row loops on the whole of ``X`` as one chunk, in the calling thread."""
    one = np.array([0, X.shape[0]], dtype=np.int64)
    if sp.issparse(X):
        arrays = products._csr_arrays(X)
        return (_round.csr_scores(*arrays, w, one, 1), _round.csr_transpose(*arrays, c, X.shape[1], one, 1)[0])
    X = np.ascontiguousarray(X)
    return _round.dense_scores(X, w, one, 1), _round.dense_transpose(X, c, one, 1)[0]


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
        out = []
        for threads in (1, 2):
            with threadpool_limits(threads, user_api="openmp"):
                out.append((products.scores(X, w), products.transpose(X, c)))
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


def written_order_dot(x, w):
    """The dense row sum as ``_round.pxd`` writes it down: 8 lanes over the first d - d mod 8
    columns, a fixed tree, then the last columns in order (one float64 operation at a time)."""
    x, d = x.astype(np.float64), x.size
    a = [0.0] * 8
    full = d - d % 8
    for j in range(0, full, 8):
        for lane in range(8):
            a[lane] = a[lane] + float(x[j + lane]) * float(w[j + lane])
    r = ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]))
    for j in range(full, d):
        r = r + float(x[j]) * float(w[j])
    return r


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dense_row_sums_in_their_written_order(dtype):
    """Bit for bit the order of ``written_order_dot``, for every row length around the lanes (a
    row sum the compiler reordered, or with a fused multiply-add, differs in some last bits)."""
    rng = np.random.default_rng(3)
    for d in [1, 2, 7, 8, 9, 15, 16, 17, 23, 24, 31, 33, 64, 100, 127]:
        X = (rng.standard_normal((40, d)) * 10.0 ** rng.integers(-8, 9, size=(40, d))).astype(dtype)
        w = rng.standard_normal(d) * 10.0 ** rng.integers(-8, 9, size=d)
        want = np.array([written_order_dot(row, w) for row in X])
        np.testing.assert_array_equal(products.scores(X, w), want, err_msg=f"d={d}")


def test_empty_shapes():
    assert products.scores(np.zeros((0, 3)), np.ones(3)).shape == (0,)
    np.testing.assert_array_equal(products.scores(np.zeros((4, 0)), np.ones(0)), np.zeros(4))
    np.testing.assert_array_equal(products.transpose(np.zeros((0, 3)), np.ones(0)), np.zeros(3))
    assert products.transpose(sp.csr_matrix((4, 0)), np.ones(4)).shape == (0,)
    np.testing.assert_array_equal(products.scores(sp.csr_matrix((4, 3)), np.ones(3)), np.zeros(4))
