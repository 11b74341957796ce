"""The max-pooled oracle of the latent AP-SVM (ssvm.losses.pooled) against slow twins."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssvm.losses import get_oracle
from ssvm.losses.pooled import max_pooled_oracle, pooled_oracle, segment_argmax


def slow_segment_argmax(values, offsets):
    out = []
    for i in range(len(offsets) - 1):
        segment = list(values[offsets[i]:offsets[i + 1]])
        out.append(offsets[i] + segment.index(max(segment)))
    return np.array(out)


def hinge(scores, y, loss):
    """Structured hinge of one query through a reference oracle: delta + scores @ c."""
    c, delta = get_oracle(loss, {"ap": "yue", "ndcg": "chakrabarti"}.get(loss, "auto"))(
        np.asarray(scores, dtype=np.float64), np.asarray(y, dtype=bool))
    return delta + np.asarray(scores) @ c


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=8), st.integers(0, 2**32 - 1),
       st.sampled_from([1e-9, 1.0, 1e9]))
def test_segment_argmax_matches_slow_twin(sizes, seed, scale):
    rng = np.random.default_rng(seed)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    values = rng.integers(-2, 3, size=offsets[-1]).astype(np.float64) * scale  # many ties
    np.testing.assert_array_equal(segment_argmax(values, offsets), slow_segment_argmax(values, offsets))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.integers(1, 3), st.integers(0, 2**32 - 1),
       st.sampled_from(["ap", "ndcg", "zero_one"]), st.booleans())
def test_pooled_oracle_is_the_hinge_of_best_windows_and_a_subgradient(neg_sizes, n_pos, seed, loss,
                                                                       ties):
    rng = np.random.default_rng(seed)
    neg_offsets = np.concatenate(([0], np.cumsum(neg_sizes))).astype(np.int64)
    n = neg_offsets[-1] + n_pos
    d = 3
    # integer features and weights give tied window scores
    X = rng.integers(-2, 3, size=(n, d)).astype(float) if ties else rng.normal(size=(n, d))
    y = np.concatenate((np.zeros(neg_offsets[-1], bool), np.ones(n_pos, bool)))
    base = get_oracle(loss, "auto")

    def pooled_hinge(w):
        s = X @ w
        neg = [s[a:b].max() for a, b in zip(neg_offsets[:-1], neg_offsets[1:])]
        return hinge(np.concatenate((neg, s[neg_offsets[-1]:])), [False] * len(neg) + [True] * n_pos, loss)

    w = rng.integers(-1, 2, size=d).astype(float) if ties else rng.normal(size=d)
    c, delta = max_pooled_oracle(X @ w, y, base=base, neg_offsets=neg_offsets)
    assert c.shape == (n,)
    assert delta + (X @ w) @ c == pytest.approx(pooled_hinge(w), abs=1e-9)
    g = X.T @ c
    for _ in range(10):  # H(w') >= H(w) + g·(w' - w): X.T @ c is a subgradient of the pooled hinge
        w2 = rng.normal(size=d) * rng.choice([0.1, 1.0, 10.0])
        assert pooled_hinge(w2) >= pooled_hinge(w) + g @ (w2 - w) - 1e-9


def test_pooled_oracle_object_is_the_function_and_batches():
    rng = np.random.default_rng(0)
    neg_offsets = np.array([0, 3, 4, 8])
    scores = rng.normal(size=11)
    y = np.r_[np.zeros(8, bool), np.ones(3, bool)]
    base = get_oracle("ap", "qs")
    oracle = pooled_oracle(base, neg_offsets)
    c, delta = max_pooled_oracle(scores, y, base=base, neg_offsets=neg_offsets)
    c1, delta1 = oracle(scores, y)
    np.testing.assert_array_equal(c1, c)
    assert delta1 == delta and oracle.name == "max-pooled qs"
    c2, delta2 = oracle.batch(scores, y, np.array([0]), np.array([11]))
    np.testing.assert_array_equal(c2, c)
    assert delta2.tolist() == [delta]
