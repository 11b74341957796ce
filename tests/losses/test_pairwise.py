"""The pairwise (SVM^rank) and ROC-area oracles against their twins: a plain O(n²) loop over the pairs,
the exhaustive search over every labelling of the pairs, and the swapped pairs of a stable sort."""

import numpy as np
import pytest

from ssvm.losses import loss_augmented_inference, ranking_loss
from ssvm.losses.brute import pairwise_brute_oracle
from ssvm.losses.pairwise import pairs_by_score, pairwise_batch, pairwise_oracle, svm_rank_C, swapped_pairs


def random_graded_query(rng, n_max=8):
    """A tiny query: ties in scores (exact differences of 1 included), ties in grades, one
    relevant or one irrelevant row, all grades equal, scales from 1e-3 to 1e3."""
    n = int(rng.integers(1, n_max + 1))
    kind = rng.integers(5)
    if kind == 0:
        s = np.zeros(n)
    elif kind == 1:
        s = rng.integers(-3, 4, n).astype(float)  # integer ties: differences of exactly 1
    elif kind == 2:
        s = rng.integers(-8, 9, n) / 4.0  # dyadic: exact differences
    else:
        s = rng.normal(size=n) * 10.0 ** rng.uniform(-3, 3)
    layout = rng.integers(5)
    if layout == 0:
        g = np.zeros(n, np.int64)
        g[rng.integers(n)] = 1  # one relevant
    elif layout == 1:
        g = np.ones(n, np.int64)
        g[rng.integers(n)] = 0  # one irrelevant
    elif layout == 2:
        g = np.full(n, int(rng.integers(3)), np.int64)  # all grades equal
    else:
        g = rng.integers(0, int(rng.integers(2, 5)), n).astype(np.int64)
    return s, g


def reference(s, g, normalise=False, augmented=True):
    """c and Δ from the definition: every pair r_i > r_j, violated iff s_i − s_j < 1 (augmented) or j
    ranked above i by (−score, index) (the ranking by score)."""
    n = s.size
    order = sorted(range(n), key=lambda i: (-s[i], i))
    where = {i: k for k, i in enumerate(order)}
    c = np.zeros(n)
    delta = 0.0
    pairs = 0
    for i in range(n):
        for j in range(n):
            if g[i] > g[j]:
                pairs += 1
                if (s[i] - s[j] < 1.0) if augmented else where[j] < where[i]:
                    c[i] -= 1.0
                    c[j] += 1.0
                    delta += 1.0
    if normalise and pairs:
        c, delta = c / pairs, delta / pairs
    return c, delta


@pytest.mark.parametrize("normalise", [False, True])
def test_oracle_matches_pair_loop(normalise):
    rng = np.random.default_rng(0)
    for _ in range(3000):
        s, g = random_graded_query(rng)
        c, delta = pairwise_oracle(s, g, normalise=normalise)
        c_ref, delta_ref = reference(s, g, normalise)
        np.testing.assert_allclose(c, c_ref, rtol=1e-15, atol=0)
        assert delta == pytest.approx(delta_ref, rel=1e-15, abs=0)


@pytest.mark.parametrize("normalise", [False, True])
def test_oracle_matches_exhaustive_search(normalise):
    rng = np.random.default_rng(1)
    checked = 0
    while checked < 2000:
        s, g = random_graded_query(rng, n_max=6)
        n_pairs = sum(int(a > b) for a in g for b in g)
        if n_pairs > 12:
            continue
        c, delta = pairwise_oracle(s, g, normalise=normalise)
        c_b, delta_b = pairwise_brute_oracle(s, g, normalise=normalise)
        scale = max(1.0, float(np.abs(s).max(initial=0)) * max(1, n_pairs))
        assert delta + s @ c == pytest.approx(delta_b + s @ c_b, abs=1e-12 * scale)
        if np.all(s == np.round(s * 4) / 4):  # exact arithmetic: the same output (ties: fewest swapped)
            np.testing.assert_array_equal(c, c_b)
            assert delta == delta_b
        checked += 1


@pytest.mark.parametrize("normalise", [False, True])
def test_ranking_by_score_matches_pair_loop_and_bounds(normalise):
    rng = np.random.default_rng(2)
    for _ in range(3000):
        s, g = random_graded_query(rng)
        c, delta = pairs_by_score(s, g, np.array([0]), np.array([s.size]), normalise=normalise)
        c_ref, delta_ref = reference(s, g, normalise, augmented=False)
        np.testing.assert_allclose(c, c_ref, rtol=1e-15, atol=0)
        assert delta[0] == pytest.approx(delta_ref, rel=1e-15, abs=0)
        assert swapped_pairs(s, g, normalise) == delta[0]
        c_a, delta_a = pairwise_oracle(s, g, normalise=normalise)  # upper bound: H ≥ Δ(ranking by score)
        assert delta_a + s @ c_a >= delta[0] - 1e-12 * max(1.0, float(np.abs(s).max(initial=0)))


def test_hinge_is_the_sum_over_pairs():
    rng = np.random.default_rng(3)
    for _ in range(300):
        n = int(rng.integers(2, 60))
        s = rng.normal(size=n) * 2
        g = rng.integers(0, 5, n)
        c, delta = pairwise_oracle(s, g)
        hinge = sum(max(0.0, 1.0 - (s[i] - s[j])) for i in range(n) for j in range(n) if g[i] > g[j])
        assert delta + s @ c == pytest.approx(hinge, rel=1e-12, abs=1e-12)


def test_batch_is_per_query_and_large_queries_take_the_radix_sort():
    rng = np.random.default_rng(4)
    sizes = [1, 7, 5000, 3, 4097, 40]
    s = np.concatenate([rng.integers(-20, 20, m) / 8.0 for m in sizes])
    g = rng.integers(0, 4, s.size)
    ends = np.cumsum(sizes)
    starts = ends - sizes
    for normalise in (False, True):
        c, delta = pairwise_batch(s, g, starts, ends, normalise=normalise)
        for q, (a, b) in enumerate(zip(starts, ends)):
            c_q, d_q = pairwise_oracle(s[a:b], g[a:b], normalise=normalise)
            np.testing.assert_array_equal(c[a:b], c_q)
            assert delta[q] == d_q
    a, b = starts[2], ends[2]  # a large query against the pair loop, vectorised
    sq, gq = s[a:b], g[a:b]
    violated = (gq[:, None] > gq[None, :]) & (sq[:, None] - sq[None, :] < 1.0)
    c, delta = pairwise_oracle(sq, gq)
    np.testing.assert_array_equal(c, violated.sum(axis=0) - violated.sum(axis=1))
    assert delta == violated.sum()


def test_registry_entry_points():
    s = np.array([0.5, 1.0, 0.0, 2.0])
    g = np.array([2, 1, 0, 0])
    c, delta = loss_augmented_inference(s, g, loss="pairwise")
    np.testing.assert_array_equal(c, reference(s, g)[0])
    assert ranking_loss(s, g, loss="pairwise") == 3.0  # (0,1), (0,3), (1,3) swapped
    assert ranking_loss(s, g, loss="roc_auc") == pytest.approx(3 / 5)
    c_b, delta_b = loss_augmented_inference(s, g, loss="roc_auc", oracle="brute")
    assert delta_b + s @ c_b == pytest.approx(delta / 5 + s @ c / 5)


def test_auc_metric_is_sklearns_on_distinct_scores():
    from sklearn.metrics import roc_auc_score

    from ssvm.metrics import ranking_score

    rng = np.random.default_rng(5)
    y = rng.random(200) < 0.3
    s = rng.normal(size=200)
    qid = np.repeat(np.arange(4), 50)
    expected = np.mean([roc_auc_score(y[qid == q], s[qid == q]) for q in range(4)])
    assert ranking_score(y, s, qid=qid, loss="pairwise") == pytest.approx(expected, rel=1e-12)
    assert ranking_score(y, s, qid=qid, loss="roc_auc") == pytest.approx(expected, rel=1e-12)


def test_svm_rank_C():
    assert svm_rank_C(3.0, 10, 5) == 1.5
    with pytest.raises(ValueError, match="n_pair_queries"):
        svm_rank_C(3.0, 4, 5)
    with pytest.raises(ValueError, match="> 0"):
        svm_rank_C(0.0, 4, 4)
