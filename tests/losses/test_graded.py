"""The graded NDCG oracle (threshold decomposition, docs/design.md §9) against slow twins built from the
definitions: α_t per threshold t = 1..max r from the graded ideal DCG, the exhaustive binary oracle
per threshold, graded NDCG summed position by position."""

import numpy as np
import pytest

from ssvm.losses import NDCGLoss
from ssvm.losses._core.derivative import inverse_log_table
from ssvm.losses._core.graded import graded_batch as graded_small_batch
from ssvm.losses.brute import rank_brute_oracle
from ssvm.losses.graded import (
    check_grades,
    combine_levels,
    graded_ndcg_batch,
    graded_ndcg_oracle,
    graded_ndcg_value,
    level_weights,
)
from ssvm.losses.qs import qs_batch

_NDCG = NDCGLoss()
GAIN = {"exponential": lambda r: 2.0 ** r - 1.0, "linear": lambda r: np.asarray(r, dtype=float),
        "binary": lambda r: (np.asarray(r) > 0).astype(float)}


def dcg(gains_in_order, k=None):
    """Σ_i gain_(i) / log2(1 + i) over the first k positions."""
    g = np.asarray(gains_in_order, dtype=float)[:k]
    return float(np.sum(g / np.log2(np.arange(2, g.size + 2))))


def ref_ndcg(order, grades, gain, k=None):
    """Graded NDCG (at k) of the ranking ``order`` (row indices, best first), from the definition."""
    g = GAIN[gain](grades)
    return dcg(g[order], k) / dcg(np.sort(g)[::-1], k)


def ref_alphas(grades, gain, k=None):
    """α_t = (g(t) − g(t−1)) · IDCG_t / IDCG for t = 1..max r (IDCG: the graded ideal DCG itself)."""
    g = GAIN[gain]
    idcg = dcg(np.sort(g(grades))[::-1], k)
    return {t: (g(t) - g(t - 1)) * dcg(np.ones(int(np.sum(grades >= t))), k) / idcg
            for t in range(1, int(grades.max()) + 1)}


def ref_graded_oracle(scores, grades, gain):
    """Σ_t α_t (c_t, δ_t) over t = 1..max r, each by the exhaustive binary oracle (skipping a
    threshold that leaves no row irrelevant)."""
    c = np.zeros(scores.size)
    delta = 0.0
    for t, alpha in ref_alphas(grades, gain).items():
        y = grades >= t
        if y.all() or alpha == 0.0:
            continue
        c_t, d_t = rank_brute_oracle(scores, y, _NDCG)
        c += alpha * c_t
        delta += alpha * d_t
    return c, delta


def random_batch(rng, n_queries, n_max=8, max_grade=4):
    """Stacked queries with gaps, grades 0..max_grade (ties, one row per grade, all-but-one equal)."""
    starts, ends, pos = [], [], 0
    for _ in range(n_queries):
        pos += int(rng.integers(0, 2))
        size = int(rng.integers(2, n_max + 1))
        starts.append(pos)
        ends.append(pos + size)
        pos += size
    n = pos + int(rng.integers(0, 2))
    kind = rng.integers(4)
    s = rng.normal(size=n) if kind < 2 else rng.integers(-2, 3, n).astype(float)
    s *= 10.0 ** rng.uniform(-4, 4)
    grades = rng.integers(0, max_grade + 1, n)
    for a, b in zip(starts, ends):
        layout = rng.integers(4)
        if layout == 0 and b - a >= max_grade + 1:  # one row per grade
            grades[a:a + max_grade + 1] = rng.permutation(max_grade + 1)
        elif layout == 1:  # all but one equal
            grades[a:b] = rng.integers(0, max_grade + 1)
        if grades[a:b].min() == grades[a:b].max():
            grades[a + int(rng.integers(b - a))] = (grades[a] + 1 + rng.integers(max_grade)) % (max_grade + 1)
    return s, grades, np.array(starts), np.array(ends)


@pytest.mark.parametrize("gain", ["exponential", "linear"])
@pytest.mark.parametrize("seed", range(4))
def test_fused_oracle_equals_per_threshold_brute_force(gain, seed):
    rng = np.random.default_rng(seed)
    for _ in range(250):
        s, grades, starts, ends = random_batch(rng, int(rng.integers(1, 5)))
        c, delta = graded_ndcg_batch(s, grades, starts, ends, gain)
        inside = np.zeros(s.size, bool)
        for k, (a, b) in enumerate(zip(starts, ends)):
            c_ref, d_ref = ref_graded_oracle(s[a:b], grades[a:b], gain)
            scale = max(1.0, float(np.abs(s[a:b]).max()))
            np.testing.assert_allclose(c[a:b], c_ref, rtol=1e-9, atol=1e-12)
            assert delta[k] == pytest.approx(d_ref, rel=1e-9, abs=1e-12)
            h, h_ref = delta[k] + s[a:b] @ c[a:b], d_ref + s[a:b] @ c_ref
            assert h == pytest.approx(h_ref, rel=1e-9, abs=1e-12 * scale)
            # the hinge upper-bounds the graded loss of the ranking by score
            order = np.argsort(-s[a:b], kind="stable")
            assert h >= 1.0 - ref_ndcg(order, grades[a:b], gain) - 1e-12 * scale
            inside[a:b] = True
        assert np.all(c[~inside] == 0.0)


@pytest.mark.parametrize("seed", range(3))
def test_fused_oracle_is_the_level_sum_of_binary_qs_bit_for_bit(seed):
    """The fused kernel (one sort, a walk per level) gives exactly Σ α (binary QS per level); large
    queries (numpy's sort) too."""
    rng = np.random.default_rng(seed)
    for trial in range(20):
        n_q = int(rng.integers(1, 30))
        sizes = rng.choice([2, 5, 40, 300, 5000 if trial % 5 == 0 else 200], n_q)
        ends = np.cumsum(sizes)
        starts = ends - sizes
        s = rng.normal(size=ends[-1])
        if trial % 2:
            s = np.round(s * 4) / 4
        grades = rng.choice(5, ends[-1], p=[0.5, 0.3, 0.12, 0.06, 0.02])
        for a, b in zip(starts, ends):
            grades[a], grades[b - 1] = 0, 3
        for gain in ("exponential", "linear", "binary"):
            c, delta = graded_ndcg_batch(s, grades, starts, ends, gain)
            c2, d2 = combine_levels(lambda *a: qs_batch(*a, _NDCG), s, grades, starts, ends, gain)
            assert np.array_equal(c, c2) and np.array_equal(delta, d2)


@pytest.mark.parametrize("seed", range(3))
def test_zero_one_grades_give_the_binary_oracle_bit_for_bit(seed):
    """With grades in {0, 1} every gain is the binary NDCG oracle, the fused kernel itself included."""
    rng = np.random.default_rng(seed)
    for trial in range(60):
        n = int(rng.integers(2, 3000))
        s = rng.normal(size=n) * 10.0 ** rng.uniform(-5, 5)
        if trial % 3 == 0:
            s = np.round(s, 1)
        y = rng.random(n) < rng.choice([0.002, 0.02, 0.2, 0.6])
        y[0], y[-1] = True, False
        c_bin, d_bin = qs_batch(s, y, np.array([0]), np.array([n]), _NDCG)
        c = np.empty(n)
        d = np.empty(1)
        graded_small_batch(s, y.astype(np.int64), np.array([0]), np.array([n]), 0, inverse_log_table(n + 2), c, d)
        assert np.array_equal(c, c_bin) and d[0] == d_bin[0]
        for gain in ("exponential", "linear", "binary"):
            c_g, d_g = graded_ndcg_oracle(s, y.astype(np.int64), gain)
            assert np.array_equal(c_g, c_bin) and d_g == d_bin[0]


@pytest.mark.parametrize("gain", ["exponential", "linear"])
def test_decomposition_identity_full_and_truncated(gain):
    """1 − NDCG@k = Σ_t α_t^k (1 − NDCG@k_t) with α_t^k from the cut lists, on random queries."""
    rng = np.random.default_rng(7)
    for _ in range(400):
        n = int(rng.integers(2, 40))
        grades = rng.integers(0, 5, n)
        if grades.max() == 0:
            grades[0] = 1
        order = rng.permutation(n)
        for k in (None, 1, 3, 10):
            alphas = ref_alphas(grades, gain, k)
            assert sum(alphas.values()) == pytest.approx(1.0, rel=1e-12)
            total = 0.0
            for t, alpha in alphas.items():
                ideal_t = dcg(np.ones(int(np.sum(grades >= t))), k)
                total += alpha * (1.0 - dcg((grades >= t)[order].astype(float), k) / ideal_t)
            assert total == pytest.approx(1.0 - ref_ndcg(order, grades, gain, k), rel=1e-10, abs=1e-13)
        s = np.empty(n)
        s[order] = -np.arange(n, dtype=float)  # scores that rank the rows as `order`
        for k in (None, 3):
            assert graded_ndcg_value(s, grades, gain, k) == pytest.approx(ref_ndcg(order, grades, gain, k), rel=1e-12)


def test_level_weights_by_hand():
    """Grades (0, 1, 2), exponential gains 0, 1, 3: α_1 = 1 · IDCG_1 / IDCG, α_2 = 2 · 1 / IDCG with
    IDCG = 3 + 1/log2(3) — an α built with the IDCG of the wrong threshold, or with g(t) in place of
    g(t) − g(t−1), gives other numbers (and no longer sums to 1)."""
    idcg = 3.0 + 1.0 / np.log2(3.0)
    levels, alpha = level_weights([2, 0, 1], "exponential")
    assert levels.tolist() == [0, 1, 2]
    np.testing.assert_allclose(alpha, [0.0, (1.0 + 1.0 / np.log2(3.0)) / idcg, 2.0 / idcg], rtol=1e-15)
    # linear gains 0, 1, 2: IDCG = 2 + 1/log2(3), both steps weigh 1
    levels, alpha = level_weights([2, 0, 1], "linear")
    idcg = 2.0 + 1.0 / np.log2(3.0)
    np.testing.assert_allclose(alpha, [0.0, (1.0 + 1.0 / np.log2(3.0)) / idcg, 1.0 / idcg], rtol=1e-15)
    # grades that skip a value: the levels (0, 3) carry g(3) − g(0) = 7 at once
    levels, alpha = level_weights([0, 3, 3, 0], "exponential")
    assert levels.tolist() == [0, 3] and alpha.tolist() == [0.0, 1.0]
    # binary gains see only the first split above zero
    levels, alpha = level_weights([0, 1, 2, 4], "binary")
    assert alpha.tolist() == [0.0, 1.0, 0.0, 0.0]


def test_lowest_grade_above_zero_counts_in_the_ideal_dcg():
    """Grades (1, 2): the threshold t = 1 leaves no row irrelevant but its gain is in IDCG, so
    α_2 < 1 and the hinge is α_2 times the binary hinge of [r ≥ 2]."""
    s, grades = np.array([0.3, 0.1]), np.array([1, 2])
    c, delta = graded_ndcg_oracle(s, grades, "exponential")
    ideal = 3.0 + 1.0 / np.log2(3.0)
    alpha = 2.0 * 1.0 / ideal
    c_bin, d_bin = rank_brute_oracle(s, grades >= 2, _NDCG)
    np.testing.assert_allclose(c, alpha * c_bin, rtol=1e-14)
    assert delta == pytest.approx(alpha * d_bin, rel=1e-14)
    assert 1.0 - graded_ndcg_value(s, grades) == pytest.approx(alpha * d_bin, rel=1e-12)


@pytest.mark.parametrize("gain", ["exponential", "linear"])
def test_gradient_matches_finite_differences(gain):
    """H is piecewise linear: away from ties its central differences are c exactly (up to rounding)."""
    rng = np.random.default_rng(3)
    for _ in range(40):
        n = int(rng.integers(3, 60))
        s = rng.normal(size=n)
        grades = rng.integers(0, 5, n)
        grades[0], grades[1] = 0, 4
        c, delta = graded_ndcg_oracle(s, grades, gain)
        h = 1e-7

        def hinge(x, grades=grades):  # bound now (ruff B023)
            c_x, d_x = graded_ndcg_oracle(x, grades, gain)
            return d_x + x @ c_x

        fd = np.array([(hinge(s + h * e) - hinge(s - h * e)) / (2 * h) for e in np.eye(n)])
        np.testing.assert_allclose(fd, c, atol=1e-6)


@pytest.mark.parametrize("bad, what", [([0, 1, -1], "1 of 3 rows with negative"),
                                       ([0.0, 0.5, 2.0], "1 of 3 rows with non-integer"),
                                       ([0.0, np.nan, np.nan, 1.0], "2 of 4 rows with NaN")])
def test_bad_grades_say_what_and_what_to_pass(bad, what):
    with pytest.raises(ValueError, match=what) as info:
        check_grades(np.array(bad))
    assert "non-negative integer grades" in str(info.value) and "gain='binary'" in str(info.value)


def test_check_grades_accepts_bool_and_integral_floats_and_refuses_huge_exponential():
    assert check_grades(np.array([True, False])).tolist() == [1, 0]
    assert check_grades(np.array([0.0, 4.0])).dtype == np.int64
    with pytest.raises(ValueError, match="gain='linear'"):
        check_grades(np.array([0, 100]))
    assert check_grades(np.array([0, 100]), gain="linear").max() == 100
    with pytest.raises(ValueError, match="numeric"):
        check_grades(np.array(["a", "b"]))
