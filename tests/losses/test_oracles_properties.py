"""Property tests (hypothesis): the returned c really encodes the returned ranking, H bounds the
loss of the predicted ranking, and the fast oracles match the exhaustive one."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from losses_twins import ap_loss, ndcg_loss, psi_coefficients, ranking_from_c

from ssvm.losses import get_oracle, loss_augmented_inference, ranking_loss, supported_oracles

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def queries(draw, n_max=10):
    n = draw(st.integers(2, n_max))
    y = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    if y.all() or not y.any():
        y[0] = not y[0]
    elems = st.one_of(st.integers(-3, 3).map(float), st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False))
    scores = np.array(draw(st.lists(elems, min_size=n, max_size=n)), dtype=float)
    return scores, y


@SETTINGS
@given(queries(), st.sampled_from(["ap", "ndcg"]))
def test_c_encodes_the_ranking(q, loss):
    """Rebuild the ranking from c (Lemma 6), recompute Ψ and Δ from their definitions."""
    scores, y = q
    loss_fn = ap_loss if loss == "ap" else ndcg_loss
    for oracle in supported_oracles(loss):
        c, delta = loss_augmented_inference(scores, y, loss=loss, oracle=oracle)
        order = ranking_from_c(scores, y, c)
        np.testing.assert_allclose(c, psi_coefficients(order, y), atol=1e-12)
        assert delta == pytest.approx(loss_fn(order, y), abs=1e-12)
        assert abs(c.sum()) < 1e-12


@SETTINGS
@given(queries(), st.sampled_from(["ap", "ndcg", "zero_one", "precision_at_k"]), st.integers(1, 12))
def test_hinge_bounds_the_loss(q, loss, k):
    scores, y = q
    params = {"k": k} if loss == "precision_at_k" else {}
    c, delta = loss_augmented_inference(scores, y, loss=loss, **params)
    h = delta + scores @ c
    tol = 1e-9 * max(1.0, np.abs(scores).max())
    assert h >= ranking_loss(scores, y, loss=loss, **params) - tol
    assert 0.0 <= delta <= 1.0
    if loss != "zero_one":
        assert abs(c.sum()) <= 1e-12 * max(1, c.size)


@SETTINGS
@given(queries(n_max=9), st.sampled_from(["ap", "ndcg"]))
def test_fast_oracles_match_brute(q, loss):
    scores, y = q
    cb, db = loss_augmented_inference(scores, y, loss=loss, oracle="brute")
    vb = db + scores @ cb
    for oracle in supported_oracles(loss):
        c, d = loss_augmented_inference(scores, y, loss=loss, oracle=oracle)
        assert d + scores @ c == pytest.approx(vb, rel=1e-9, abs=1e-9 * max(1, np.abs(scores).max()))


@SETTINGS
@given(queries(n_max=40), st.sampled_from(["ap", "ndcg"]))
def test_qs_equals_sorting_baseline(q, loss):
    """The QS kernel returns exactly the (c, Δ) of the sort-everything baseline (ties included)."""
    scores, y = q
    c1, d1 = get_oracle(loss, "qs")(scores, y)
    c2, d2 = get_oracle(loss, "yue" if loss == "ap" else "chakrabarti")(scores, y)
    np.testing.assert_array_equal(c1, c2)
    assert d1 == d2
