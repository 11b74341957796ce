"""precision@k's tie rule, checked where it decides: the k largest augmented scores a_i = s_i +
[i negative], ties by (positives first, index) — against a slow twin that sorts by that key, on
queries built to tie, and on the smallest case that tells the rule apart from "by index"."""

import numpy as np
import pytest
from losses_twins import random_query

from ssvm.losses import get_oracle, loss_augmented_inference
from ssvm.losses.classification import ground_truth_topk_weights

N_CASES = 3000


def topk_by_the_documented_rule(scores, y, k):
    """(c, delta) of the top-k set chosen by sorting on (−a_i, negative, index), a Python sort."""
    k = min(k, scores.size)
    a = scores + np.where(y, 0.0, 1.0)
    order = sorted(range(scores.size), key=lambda i: (-a[i], not y[i], i))
    chosen = np.zeros(scores.size)
    chosen[order[:k]] = 1.0
    c = (chosen - ground_truth_topk_weights(y, k)) / k
    return c, float(np.count_nonzero((chosen > 0) & ~y)) / k


def tied_query(rng):
    """Integer scores, so that a positive scoring s + 1 ties a negative scoring s; every layout."""
    n = int(rng.integers(2, 12))
    scores = rng.integers(-1, 2, n).astype(float)
    y = rng.random(n) < rng.uniform(0.1, 0.9)
    y[rng.integers(n)] = True
    y[(int(np.flatnonzero(y)[0]) + 1) % n] = False
    return scores, y


def test_a_positive_ties_a_negative_positive_first():
    """scores [0.0 (negative), 1.0 (positive)], k = 1: both have a = 1; the positive is taken, so
    nothing is lost (Δ = 0) and the output is the ground truth (c = 0) — "by index" would take the
    negative (Δ = 1, c = [1, −1])."""
    c, delta = loss_augmented_inference(np.array([0.0, 1.0]), np.array([False, True]), "precision_at_k", k=1)
    assert delta == 0.0
    np.testing.assert_array_equal(c, [0.0, 0.0])


@pytest.mark.parametrize("oracle", ["auto", "brute"])
def test_oracles_follow_the_rule_on_ties(oracle):
    rng = np.random.default_rng(77)
    n_decided_by_rule = 0
    for case in range(N_CASES):
        scores, y = tied_query(rng) if case % 3 else random_query(rng)
        k = int(rng.integers(1, scores.size + 2))
        c_ref, d_ref = topk_by_the_documented_rule(scores, y, k)
        c, d = get_oracle("precision_at_k", oracle, k=k)(scores, y)
        np.testing.assert_array_equal(c, c_ref)
        assert d == d_ref
        a = scores + np.where(y, 0.0, 1.0)
        kk = min(k, scores.size)
        kth = np.sort(a)[::-1][kk - 1]
        group = a == kth  # the tie at the k-th place: cut inside it, with both labels in it?
        n_decided_by_rule += bool(kk < np.count_nonzero(a >= kth) and y[group].any() and (~y[group]).any())
    assert n_decided_by_rule > N_CASES // 10  # the rule decides often: the comparison is not vacuous
