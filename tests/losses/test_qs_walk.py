"""QS's sort-and-walk path for AP and NDCG (``ssvm.losses._core.sort_walk``): the packed-key sort against
numpy's stable argsort, and the walk against the exhaustive oracle, the sorting baselines (yue,
chakrabarti) and the grid path, bit for bit, on ties, one positive or negative, P ≫ N, extreme
scales and scores that the truncated keys cannot separate."""

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings
from losses_twins import random_query

from ssvm.losses import APLoss, NDCGLoss, get_oracle
from ssvm.losses._core import sort_walk as walk
from ssvm.losses._core import sorting as keys
from ssvm.losses._core.derivative import Result
from ssvm.losses._core.sorting import sorted_negatives, sorted_positives
from ssvm.losses.qs import _qs_on_path

LOSSES = {"ap": (APLoss(), "yue"), "ndcg": (NDCGLoss(), "chakrabarti")}


def _exact(s, y, loss="ap"):
    """The walk, the sorting baseline and the grid give the same c and Δ, bit for bit."""
    loss_obj, ref = LOSSES[loss]
    c_ref, d_ref = get_oracle(loss, ref)(s, y)
    c, d = _qs_on_path(s, y, loss_obj, walk=True)
    np.testing.assert_array_equal(c, c_ref)
    assert d == d_ref
    c_grid, d_grid = _qs_on_path(s, y, loss_obj, walk=False)
    np.testing.assert_array_equal(c_grid, c_ref)
    assert d_grid == d_ref
    return c, d


def _labels(rng, n, n_pos):
    y = np.zeros(n, bool)
    y[rng.choice(n, n_pos, replace=False)] = True
    return y


@pytest.mark.parametrize("case", ["normal", "ties", "zeros", "signed_zeros", "near", "subnormal", "huge", "one_run"])
def test_packed_order_is_the_stable_order(case):
    """Positives and negatives come out in (−score, index) order, as numpy's stable argsort gives,
    including scores whose truncated keys tie (``near``, ``one_run``: a million-wide run of them)."""
    rng = np.random.default_rng(len(case))
    n = 20_000
    s = {
        "normal": lambda: rng.normal(size=n),
        "ties": lambda: rng.integers(-3, 4, n).astype(float),
        "zeros": lambda: np.zeros(n),
        "signed_zeros": lambda: np.where(rng.random(n) < 0.5, -0.0, 0.0) + (rng.random(n) < 0.1),
        "near": lambda: 1.0 + rng.integers(0, 50, n) * np.finfo(float).eps,  # differ in the last bits only
        "subnormal": lambda: rng.normal(size=n) * 5e-324 * 1e6,
        "huge": lambda: rng.normal(size=n) * 1e300,
        "one_run": lambda: 1.0 + rng.permutation(n) * np.finfo(float).eps,
    }[case]()
    y = rng.random(n) < 0.3
    sp, pos_ids, sn, neg_ids = keys.packed_order(s, y)
    sp_ref, pos_ref = sorted_positives(s, y)
    sn_ref, neg_ref = sorted_negatives(s, y)
    np.testing.assert_array_equal(pos_ids, pos_ref)
    np.testing.assert_array_equal(neg_ids, neg_ref)
    np.testing.assert_array_equal(sp, sp_ref)
    np.testing.assert_array_equal(sn, sn_ref)


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_walk_equals_brute_on_tiny_queries(loss):
    """Thousands of tiny queries (ties, all equal, one positive, one negative, scales 1e-6..1e6)."""
    rng = np.random.default_rng(2024)
    loss_obj, ref = LOSSES[loss]
    for _ in range(1500):
        s, y = random_query(rng)
        c_ref, d_ref = get_oracle(loss, "brute")(s, y)
        c, d = _qs_on_path(s, y, loss_obj, walk=True)
        assert d + s @ c == pytest.approx(d_ref + s @ c_ref, rel=1e-9, abs=1e-9 * max(1.0, np.abs(s).max()))
        c_base, d_base = get_oracle(loss, ref)(s, y)
        np.testing.assert_array_equal(c, c_base)
        assert d == d_base


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
@pytest.mark.parametrize("frac_pos", [0.02, 0.1, 0.5, 0.9, 0.99])
@pytest.mark.parametrize("shift", [0.0, 1.0, 3.0, -1.0])
def test_walk_exact_any_p(loss, frac_pos, shift):
    rng = np.random.default_rng(int(100 * frac_pos) + int(10 * shift) + 70)
    n = 20_000
    for ties in (False, True):
        y = _labels(rng, n, int(frac_pos * n))
        s = rng.normal(size=n) + shift * y
        if ties:
            s = np.round(s * 4) / 4
        _exact(s, y, loss)


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
@pytest.mark.parametrize("n_pos,n_neg", [(1, 1), (1, 5_000), (5_000, 1), (2, 3), (30_000, 40), (40, 30_000)])
def test_walk_single_and_few(loss, n_pos, n_neg):
    rng = np.random.default_rng(n_pos * 7 + n_neg)
    y = np.zeros(n_pos + n_neg, bool)
    y[:n_pos] = True
    for s in (rng.normal(size=y.size) + y, np.zeros(y.size), np.round(rng.normal(size=y.size))):
        p = rng.permutation(y.size)
        _exact(s[p], y[p], loss)


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_walk_extreme_scales(loss):
    """Huge, tiny (subnormal differences), far from zero with a tiny spread, and signed zeros."""
    rng = np.random.default_rng(5)
    for scale, offset in [(1e-300, 0.0), (1e-310, 0.0), (1e-12, 1.0), (1.0, 1e12), (1e150, 0.0),
                          (1e-3, -1e6), (1.0, 0.0)]:
        for n_pos, n_neg in ((300, 3_000), (3_000, 300)):
            s = offset + scale * np.concatenate([rng.normal(1, 1, n_pos), rng.normal(0, 1, n_neg)])
            y = np.zeros(s.size, bool)
            y[:n_pos] = True
            p = rng.permutation(s.size)
            _exact(s[p], y[p], loss)
    s = np.where(rng.random(4_000) < 0.5, -0.0, 0.0)
    _exact(s, rng.random(4_000) < 0.3, loss)


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_walk_reads_the_exact_score_when_the_key_cannot_decide(loss):
    """Scores 1e12 ± 1: a key keeps the score only to within about 2^-38 of 1e12, wider than the
    spread, so the truncated keys leave the steps undecided and the exact scores settle them; also
    negatives one ulp beside positives."""
    rng = np.random.default_rng(8)
    s = 1e12 + rng.normal(size=8_000)
    y = rng.random(s.size) < 0.2
    shift = (s.size - 1).bit_length()
    assert np.ldexp(1e12, shift - 52) > s.std()  # the interval of a key is wider than the spread
    _exact(s, y, loss)
    sp = rng.normal(size=2_000)
    s = np.concatenate([sp, np.nextafter(sp, np.inf), np.nextafter(sp, -np.inf), sp])
    y = np.zeros(s.size, bool)
    y[:sp.size] = True
    p = rng.permutation(s.size)
    _exact(s[p], y[p], loss)


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_uncertified_runs_are_closed_exactly(loss):
    """With P ≫ N many negatives fail the tail certificate; their runs go to the divide and conquer
    and still give the exact answer."""
    rng = np.random.default_rng(9)
    n_pos, n_neg = 60_000, 3_000
    y = np.zeros(n_pos + n_neg, bool)
    y[:n_pos] = True
    s = rng.normal(size=y.size) + 0.5 * y
    loss_obj = LOSSES[loss][0]
    kind, table = loss_obj.kernel_spec(n_pos, n_neg)
    table = np.asarray(table, dtype=float)
    sp, _, sn, _ = keys.packed_order(s, y)
    pos, neg, shift = keys.sorted_keys(s, y, n_pos)
    out = Result(np.empty(s.size), np.zeros(n_pos + 1, np.int64))
    inv = 2.0 / (n_pos * n_neg)
    scale = table[0] if loss == "ndcg" else 0.0
    tol = walk.py_tolerance(sn[0], sn[-1], shift, sp, inv, scale if loss == "ndcg" else 1.0 / n_pos)
    steps = walk.Steps(sp, inv, n_pos, tol, kind, walk.inverse_log_table(s.size + 2), scale)
    runs = walk.py_walk(neg, shift, s, steps, out)
    assert runs.shape[0] > 0  # the closing step is exercised
    _exact(s, y, loss)


_SCORE = st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.0, 1.0 + 2.0 ** -52, 5e-324, -5e-324, 1e300, -1e300]),
                   st.floats(-1e6, 1e6, allow_nan=False), st.integers(-3, 3).map(float))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_SCORE, st.booleans()), min_size=2, max_size=60), st.sampled_from(["ap", "ndcg"]))
def test_walk_equals_the_baseline_on_adversarial_scores(pairs, loss):
    """Hypothesis: signed zeros, subnormals, ±1e300, one-ulp neighbours and heavy ties."""
    s = np.array([v for v, _ in pairs])
    y = np.array([b for _, b in pairs])
    y[0], y[1] = True, False
    _exact(s, y, loss)


def test_inverse_log_table_is_what_best_rank_computes():
    from math import log2

    t = walk.inverse_log_table(5_000)
    m = np.arange(2, 5_000)
    np.testing.assert_array_equal(t[m], [1.0 / log2(float(v)) for v in m])
    assert walk.inverse_log_table(10) is t  # kept and reused


def test_walk_is_the_default_with_many_positives_only():
    from ssvm.losses.qs import _use_walk
    from ssvm.losses.rank_losses import KIND_AP, KIND_NDCG_LOG2, KIND_SUM_TABLE

    assert _use_walk(KIND_AP, 20, 1000) and not _use_walk(KIND_AP, 19, 1000)
    assert _use_walk(KIND_NDCG_LOG2, 20, 1000) and not _use_walk(KIND_NDCG_LOG2, 19, 1000)
    assert not _use_walk(KIND_SUM_TABLE, 500, 1000)
    with pytest.raises(ValueError, match="AP and NDCG"):
        _qs_on_path(np.zeros(4), np.array([True, False, True, False]), NDCGLoss(discount="chakrabarti"), walk=True)
