"""The compiled kernels outside the QS family against slow twins written in Python: the 0-1 and
precision@k per-query kernels bit for bit (zeros' signs included), the discrete derivative table,
and the constants the kernels share with ssvm.losses.rank_losses."""

import math

import numpy as np
import pytest

from ssvm.losses import APLoss, NDCGLoss
from ssvm.losses._classification_kernels import batch_loop, precision_at_k_into, zero_one_into
from ssvm.losses._core.derivative import LOSS_KINDS, derivative_matrix
from ssvm.losses.classification import precision_at_k_oracle, zero_one_oracle
from ssvm.losses.rank_losses import KIND_AP, KIND_NDCG_LOG2, KIND_SUM_TABLE


def bits(a):
    return np.asarray(a, dtype=np.float64).view(np.uint64)


def queries(seed, count):
    """Small queries with ties, one positive or one negative, huge and tiny scores."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(2, 40))
        s = rng.integers(-3, 4, n) * rng.choice([0.5, 1.0, 1e-9, 1e9, 1e-300, 1e300]) + rng.choice([0.0, 1.0]) * \
            rng.normal(size=n)
        y = np.zeros(n, dtype=bool)
        y[rng.permutation(n)[:rng.integers(1, n)]] = True
        yield s, y, int(rng.integers(1, n + 3)), rng


def test_classification_kernels_equal_the_numpy_oracles_to_the_bit():
    """Every c bit for bit, +0.0 where the oracle writes +0.0 (the 0-1 kernel builds its zeros by
    arithmetic: a planted −0.0 fails here), and Δ equal."""
    for s, y, k, _ in queries(0, 4000):
        c = np.full(s.size, np.nan)
        c_ref, d_ref = zero_one_oracle(s, y)
        assert zero_one_into(s, y, c) == d_ref
        np.testing.assert_array_equal(bits(c), bits(c_ref))
        c_ref, d_ref = precision_at_k_oracle(s, y, k)
        assert precision_at_k_into(s, y, k, c) == d_ref
        np.testing.assert_array_equal(bits(c), bits(c_ref))


@pytest.mark.parametrize("k", [0, 1, 5])
def test_batch_loop_equals_the_oracle_per_query_to_the_bit(k):
    rng = np.random.default_rng(k)
    sizes = rng.integers(2, 300, 60)
    ends = np.cumsum(sizes) + np.arange(sizes.size)  # a row between queries: left at 0
    starts = ends - sizes
    s = np.round(rng.normal(size=int(ends[-1]) + 1), 1)
    y = rng.random(s.size) < 0.3
    y[starts], y[ends - 1] = True, False
    c, delta = batch_loop(s, y, starts, ends, k)
    assert np.all(bits(np.delete(c, np.concatenate([np.arange(a, b) for a, b in zip(starts, ends)]))) == 0)
    for q, (a, b) in enumerate(zip(starts, ends)):
        c_ref, d_ref = precision_at_k_oracle(s[a:b], y[a:b], k) if k else zero_one_oracle(s[a:b], y[a:b])
        np.testing.assert_array_equal(bits(c[a:b]), bits(c_ref))
        assert delta[q] == d_ref


@pytest.mark.parametrize("k", [0, 1, 5])
def test_batch_loop_over_queries_that_cover_every_row_in_any_order(k):
    """Queries that cover every row (the output is not zeroed first: each row is a query's) give the
    oracle's answer per query, bit for bit, in whatever order they are listed."""
    rng = np.random.default_rng(10 + k)
    sizes = rng.integers(2, 300, 40)
    ends = np.cumsum(sizes)
    starts = ends - sizes
    order = rng.permutation(sizes.size)
    starts, ends = starts[order], ends[order]
    s = np.round(rng.normal(size=int(sizes.sum())), 1)
    y = rng.random(s.size) < 0.3
    y[starts], y[ends - 1] = True, False
    np.empty(4 * s.size).fill(np.nan)  # freed memory that an unwritten row of the output could show
    c, delta = batch_loop(s, y, starts, ends, k)
    for q, (a, b) in enumerate(zip(starts, ends)):
        c_ref, d_ref = precision_at_k_oracle(s[a:b], y[a:b], k) if k else zero_one_oracle(s[a:b], y[a:b])
        np.testing.assert_array_equal(bits(c[a:b]), bits(c_ref))
        assert delta[q] == d_ref


def twin_step(kind, table, n_pos, i, j):
    """d_j(i) as the closed forms of ssvm.losses.rank_losses state it, in Python floats."""
    m = float(i + j)
    if kind == KIND_AP:
        return -i / (n_pos * (m - 1.0) * m)
    if kind == KIND_NDCG_LOG2:
        return (1.0 / math.log2(1.0 + m) - 1.0 / math.log2(m)) * table[0]
    return table[i + j]


@pytest.mark.parametrize("loss", [APLoss(), NDCGLoss(), NDCGLoss("chakrabarti")], ids=repr)
@pytest.mark.parametrize("n_pos, n_neg", [(1, 1), (1, 9), (7, 1), (13, 31), (60, 5)])
def test_derivative_matrix_against_the_closed_forms(loss, n_pos, n_neg):
    kind, table = loss.kernel_spec(n_pos, n_neg)
    table = np.asarray(table, dtype=np.float64)
    want = [[twin_step(kind, table, n_pos, i, j) for i in range(1, n_pos + 1)] for j in range(1, n_neg + 1)]
    np.testing.assert_array_equal(bits(derivative_matrix(kind, table, n_pos, n_neg)), bits(want))


def test_the_kernels_loss_kinds_are_rank_losses():
    assert LOSS_KINDS == (KIND_AP, KIND_NDCG_LOG2, KIND_SUM_TABLE)
