"""The batched oracles (QS in one compiled loop over many queries, 0-1 vectorised) against the
oracles called per query, and the problem layer's use of them."""

import numpy as np
import pytest

from ssvm.losses import APLoss, NDCGLoss, get_oracle
from ssvm.losses._classification_kernels import precision_at_k_batch
from ssvm.losses.classification import zero_one_batch, zero_one_oracle
from ssvm.losses.qs import qs_batch, qs_oracle
from ssvm.problem import StructuredHinge


def _layout(rng, n_queries, big=False):
    """Stacked queries with gaps between some of them; scores with ties now and then."""
    starts, ends, pos = [], [], 0
    for _ in range(n_queries):
        pos += int(rng.integers(0, 3))  # rows that belong to no query
        size = int(rng.choice([2, 3, 7, 40, 300])) if not (big and rng.random() < 0.2) else 6000
        starts.append(pos)
        ends.append(pos + size)
        pos += size
    n = pos + int(rng.integers(0, 3))
    y = rng.random(n) < rng.choice([0.003, 0.1, 0.5, 0.9])  # 0.3%: few positives, the grid's queries
    s = rng.normal(size=n) + y * rng.choice([0.0, 1.0, 3.0])
    if rng.random() < 0.4:
        s = np.round(s * 2) / 2
    for a, b in zip(starts, ends):  # every query has a positive and a negative
        y[a], y[b - 1] = True, False
    return s * 10.0 ** rng.uniform(-5, 5), y, np.array(starts), np.array(ends)


@pytest.mark.parametrize("loss", [APLoss(), NDCGLoss()])
@pytest.mark.parametrize("seed", range(12))
def test_batch_equals_per_query(loss, seed):
    rng = np.random.default_rng(seed)
    s, y, starts, ends = _layout(rng, int(rng.integers(1, 60)), big=seed % 4 == 0)
    c, delta = qs_batch(s, y, starts, ends, loss)
    inside = np.zeros(s.size, bool)
    for k, (a, b) in enumerate(zip(starts, ends)):
        c_q, d_q = qs_oracle(s[a:b], y[a:b], loss)
        np.testing.assert_array_equal(c[a:b], c_q)
        assert delta[k] == d_q
        inside[a:b] = True
    assert not c[~inside].any()


@pytest.mark.parametrize("seed", range(8))
def test_zero_one_batch_equals_per_query(seed):
    rng = np.random.default_rng(seed)
    s, y, starts, ends = _layout(rng, int(rng.integers(1, 60)), big=seed % 2 == 0)  # both of its paths
    s[rng.random(s.size) < 0.2] = 1.0  # on the margin: 1 − y s = 0 is not a violation
    c, delta = zero_one_batch(s, y, starts, ends)
    inside = np.zeros(s.size, bool)
    for k, (a, b) in enumerate(zip(starts, ends)):
        c_q, d_q = zero_one_oracle(s[a:b], y[a:b])
        np.testing.assert_array_equal(c[a:b], c_q)
        assert delta[k] == d_q
        inside[a:b] = True
    assert not c[~inside].any()


def test_batch_takes_each_querys_path():
    """One batch with queries on the walk (P ≥ N / 50), on the grid (fewer positives) and above the
    compiled loops' size: each gives exactly qs_oracle's answer."""
    rng = np.random.default_rng(5)
    sizes = [300, 300, 5000, 40, 2000]
    n_pos = [150, 2, 3, 1, 40]  # walk, grid, alone (> 4096), walk, grid
    starts = np.cumsum([0] + sizes[:-1])
    ends = starts + sizes
    y = np.zeros(sum(sizes), bool)
    for a, size, p in zip(starts, sizes, n_pos):
        y[a + rng.choice(size, p, replace=False)] = True
    s = np.round(rng.normal(size=y.size) + y, 1)
    for loss in (APLoss(), NDCGLoss()):
        c, delta = qs_batch(s, y, starts, ends, loss)
        for k, (a, b) in enumerate(zip(starts, ends)):
            c_q, d_q = qs_oracle(s[a:b], y[a:b], loss)
            np.testing.assert_array_equal(c[a:b], c_q)
            assert delta[k] == d_q


def test_the_registry_declares_batch_forms_for_qs_on_ap_and_ndcg_and_zero_one():
    assert get_oracle("ap", "qs").batched is qs_batch
    assert get_oracle("ndcg", "auto", gain="binary").batched is qs_batch  # the graded default has its own
    assert get_oracle("zero_one").batched is zero_one_batch
    assert get_oracle("precision_at_k", k=3).batched is precision_at_k_batch
    for oracle in (get_oracle("ap", "yue"), get_oracle("ndcg", "chakrabarti"), get_oracle("zero_one", "brute"),
                   get_oracle(NDCGLoss("chakrabarti"), "qs"),
                   get_oracle(type("MyAP", (APLoss,), {})(), "qs")):
        assert oracle.batched is None
    # a subclass is served by the compiled loop only when it declares so itself
    assert get_oracle(type("MyAP", (APLoss,), {"compiled_batch": True})(), "qs").batched is qs_batch


@pytest.mark.parametrize("loss", ["ap", "ndcg", "zero_one"])
def test_problem_hinge_with_the_batch_equals_a_loop_over_queries(loss):
    rng = np.random.default_rng(1)
    s, y, starts, ends = _layout(rng, 30)
    X = rng.normal(size=(s.size, 5))
    queries = [np.arange(a, b) for a, b in zip(starts, ends)]
    w = rng.normal(size=5)
    oracle = get_oracle(loss, "auto")
    H, g = StructuredHinge(X, y, queries, oracle).hinge(w)
    looped = StructuredHinge(X, y, queries, lambda sq, yq: oracle(sq, yq))  # not batchable
    H_ref, g_ref = looped.hinge(w)
    assert H == pytest.approx(H_ref, rel=1e-14)
    np.testing.assert_allclose(g, g_ref, rtol=1e-12, atol=1e-15)
