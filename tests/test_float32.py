"""The products' compiled loops against exact sums; float32 end to end in memory (X kept as it is,
products summed in float64)."""

import tracemalloc
import warnings

import hypothesis.strategies as st
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings

from ssvm import RankSVM
from ssvm.losses import get_oracle
from ssvm.problem import StructuredHinge, check_features, matvec
from ssvm.problem._products import scores, transpose


def twin_scores(X, w):
    """``X @ w`` of the stored values in float64, by a Python loop over rows (sums in long double)."""
    X = X.toarray() if sp.issparse(X) else X
    return np.array([float(np.sum(np.float64(row) * w, dtype=np.longdouble)) for row in X])


def twin_transpose(X, c):
    X = X.toarray() if sp.issparse(X) else X
    return np.array([float(np.sum(np.float64(col) * c, dtype=np.longdouble)) for col in X.T])


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 60), st.integers(1, 37), st.integers(0, 2**31 - 1),
       st.sampled_from([1e-30, 1e-3, 1.0, 1e30]), st.booleans(),
       st.sampled_from([np.float32, np.float64]))
def test_kernels_against_exact_sums(n, d, seed, scale, sparse, dtype):
    rng = np.random.default_rng(seed)
    X = (rng.standard_normal((n, d)) * scale).astype(dtype)
    X[rng.random((n, d)) < 0.3] = 0.0
    X[0, 0] = scale  # ties and repeated values
    w, c = rng.standard_normal(d), rng.standard_normal(n)
    Xs = sp.csr_matrix(X) if sparse else X
    bound_s = np.abs(X).astype(np.float64) @ np.abs(w) * 1e-14
    bound_g = np.abs(X).astype(np.float64).T @ np.abs(c) * 1e-14
    assert np.all(np.abs(scores(Xs, w) - twin_scores(X, w)) <= bound_s)
    assert np.all(np.abs(transpose(Xs, c) - twin_transpose(X, c)) <= bound_g)
    W = rng.standard_normal((d, 3))
    np.testing.assert_array_equal(scores(Xs, W)[:, 1], scores(Xs, W[:, 1].copy()))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_rows_score_does_not_depend_on_its_block(dtype):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, 100)).astype(dtype)
    w = rng.standard_normal(100)
    full = scores(X, w)
    for a, length in [(0, 173), (7, 1001), (13, 1003), (999, 1)]:
        np.testing.assert_array_equal(scores(X[a:a + length], w), full[a:a + length])
        np.testing.assert_array_equal(scores(X[a:a + length].copy(), w), full[a:a + length])


def test_features_kept_float32_without_copy():
    X = np.random.default_rng(1).standard_normal((50, 4)).astype(np.float32)
    assert check_features(X) is X
    assert check_features(sp.csr_matrix(X)).dtype == np.float32
    assert check_features(X.astype(np.int64)).dtype == np.float64
    assert check_features(X.astype(np.float16)).dtype == np.float64


def test_plane_allocates_no_copy_of_X():
    rng = np.random.default_rng(2)
    n, d = 200_000, 50
    X = rng.standard_normal((n, d), dtype=np.float32)
    y = rng.random(n) < 0.1
    queries = [np.arange(a, min(a + 1000, n)) for a in range(0, n, 1000)]
    problem = StructuredHinge(X, y, queries, get_oracle("ap", "auto"))
    assert problem.X is X
    w = rng.standard_normal(d)
    problem.plane(w)  # compiled, warm
    tracemalloc.start()
    problem.plane(w)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < X.nbytes / 4  # vectors of n entries only, no n x d array


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("loss", ["ap", "zero_one"])
def test_float32_fit_close_to_float64(sparse, loss):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((600, 8))
    y = (X[:, 0] + 0.8 * rng.standard_normal(600) > 0.5).astype(int)
    X32 = X.astype(np.float32)
    fit = {}
    for name, data in (("64", X32.astype(np.float64)), ("32", X32)):
        data = sp.csr_matrix(data) if sparse else data
        fit[name] = RankSVM(loss=loss, C=10.0, tol=1e-6).fit(data, y)
    np.testing.assert_allclose(fit["32"].coef_, fit["64"].coef_, rtol=1e-6, atol=1e-7)
    scores = fit["32"].decision_function(X32)
    assert scores.dtype == np.float64
    np.testing.assert_allclose(scores, fit["64"].decision_function(X32.astype(np.float64)),
                               rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(scores, matvec(X32, fit["32"].coef_[0]) + fit["32"].intercept_)


def test_float32_fit_does_not_copy_X():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((200_000, 40), dtype=np.float32)
    y = (rng.random(200_000) < 0.2) * 1
    qid = np.repeat(np.arange(200), 1000)
    model = RankSVM(C=1.0, max_iter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X[:60_000], y[:60_000], qid=qid[:60_000])  # compiled, warm (9.6 MB: the parallel products)
        tracemalloc.start()
        model.fit(X, y, qid=qid)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < X.nbytes / 2
