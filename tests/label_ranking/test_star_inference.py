"""Exact c-star inference against enumeration of every label set (ties, fixed labels, loss term)."""

import numpy as np
import pytest
from label_ranking_twins import all_sets, brute_inference, random_star, set_score

from ssvm.label_ranking import MAX_CORE, star_inference


def _close(x, y, scale):
    return np.allclose(x, y, rtol=1e-9, atol=1e-9 * scale)


@pytest.mark.parametrize("seed", range(4))
def test_matches_enumeration(seed):
    """Best value, a set attaining it and all max-marginals, on 1000 random tiny instances each."""
    rng = np.random.default_rng(seed)
    for _ in range(1000):
        a, P, core = random_star(rng)
        L = len(a)
        k = int(rng.integers(-1, L + 1))
        fixed = rng.integers(-1, 2, L).astype(np.int8) if rng.random() < 0.4 else None
        T, value, vin, vout = star_inference(
            a[None], core, P[core], k, fixed=None if fixed is None else fixed[None],
            marginals=True)
        best, _, bvin, bvout = brute_inference(a, P, k, fixed)
        scale = 1.0 + np.abs(a).sum() + np.abs(P).sum()
        if best == -np.inf:
            assert value[0] == -np.inf and not T.any()
            continue
        assert _close(value[0], best, scale)
        assert _close(set_score(a, P, T[0]), best, scale)  # the returned set attains it
        if k >= 0:
            assert T[0].sum() == k
        if fixed is not None:
            assert not np.any(T[0][fixed == -1]) and np.all(T[0][fixed == 1])
        assert np.array_equal(np.isinf(vin[0]), np.isinf(bvin))
        assert np.array_equal(np.isinf(vout[0]), np.isinf(bvout))
        finite = np.isfinite(bvin)
        assert _close(vin[0][finite], bvin[finite], scale)
        finite = np.isfinite(bvout)
        assert _close(vout[0][finite], bvout[finite], scale)


def test_loss_augmented_matches_enumeration():
    """With the precision@k term: max_t Δ(t) + f(t), Δ(t) = #(t ∧ ¬y)/k, by enumeration."""
    rng = np.random.default_rng(10)
    for _ in range(2000):
        a, P, core = random_star(rng)
        L = len(a)
        y = rng.random(L) < 0.5
        k = int(rng.integers(1, L + 1))
        T, value = star_inference((a + (~y) / k)[None], core, P[core], k)
        best = max(np.sum(t & ~y) / k + set_score(a, P, t) for t in all_sets(L, k))
        scale = 1.0 + np.abs(a).sum() + np.abs(P).sum()
        assert _close(value[0], best, scale)
        assert _close(np.sum(T[0] & ~y) / k + set_score(a, P, T[0]), best, scale)


def _sets_of_size(L, k):
    from label_ranking_twins import all_sets
    return all_sets(L, k)


def test_distinct_scores_give_the_enumerated_set():
    """Without ties the maximiser is unique: the sets themselves agree."""
    rng = np.random.default_rng(3)
    for _ in range(500):
        L = int(rng.integers(2, 8))
        C = int(rng.integers(0, L + 1))
        core = rng.permutation(L)[:C]
        a = rng.standard_normal(L)
        P = np.zeros((L, L))
        for c in core:
            for j in range(L):
                if j != c:
                    P[c, j] = P[j, c] = rng.standard_normal() if P[c, j] == 0 else P[c, j]
        k = int(rng.integers(0, L + 1))
        T, _ = star_inference(a[None], core, P[core], k)
        _, t_best, _, _ = brute_inference(a, P, k)
        assert np.array_equal(T[0], t_best)


def test_ties_prefer_lower_label_index():
    T, value = star_inference(np.zeros((1, 5)), [], np.zeros((0, 5)), 2)
    assert T[0].tolist() == [True, True, False, False, False] and value[0] == 0.0
    T, _ = star_inference(np.array([[1.0, 2.0, 1.0, 1.0]]), [], np.zeros((0, 4)), 2)
    assert T[0].tolist() == [True, True, False, False]


def test_independent_model_is_top_k_and_threshold():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((50, 9))
    T, values = star_inference(A, [], np.zeros((0, 9)), 3)
    top = np.argsort(-A, axis=1, kind="stable")[:, :3]
    assert np.array_equal(T, np.any(np.arange(9)[None, None, :] == top[:, :, None], axis=1))
    assert np.allclose(values, np.sort(A, axis=1)[:, -3:].sum(axis=1))
    T, values = star_inference(A, [], np.zeros((0, 9)), -1)
    assert np.array_equal(T, A > 0) and np.allclose(values, np.maximum(A, 0).sum(axis=1))


def test_single_label_and_extreme_k():
    T, v = star_inference(np.array([[3.0]]), [0], np.zeros((1, 1)), 1)
    assert T.tolist() == [[True]] and v[0] == 3.0
    A = np.array([[1.0, -2.0, 0.5]])
    assert star_inference(A, [1], np.array([[0.5, 0.0, -1.0]]), 0)[1][0] == 0.0
    T, v = star_inference(A, [1], np.array([[0.5, 0.0, -1.0]]), 3)
    assert T.all() and v[0] == pytest.approx(1.0 - 2.0 + 0.5 + 0.5 - 1.0)


def test_large_core_matches_enumeration():
    """A core of 9 labels among 11 (512 core states, Gray-code updates) against enumeration."""
    rng = np.random.default_rng(5)
    L, core = 11, np.arange(2, 11)
    for _ in range(5):
        a = rng.standard_normal(L)
        P = np.zeros((L, L))
        for c in core:
            for j in range(L):
                if j != c and P[c, j] == 0:
                    P[c, j] = P[j, c] = rng.standard_normal()
        for k in (1, 4, 7):
            _, value = star_inference(a[None], core, P[core], k)
            assert value[0] == pytest.approx(brute_inference(a, P, k)[0], rel=1e-12, abs=1e-12)


def test_infeasible_constraints_give_minus_infinity():
    fixed = np.array([[1, 1, 0]], dtype=np.int8)
    T, v = star_inference(np.zeros((1, 3)), [], np.zeros((0, 3)), 1, fixed=fixed)
    assert v[0] == -np.inf and not T.any()


@pytest.mark.parametrize("kwargs, match", [
    (dict(A=np.zeros((2, 0)), core=[], Fc=np.zeros((0, 0)), k=0), "at least one label"),
    (dict(A=np.zeros((1, 3)), core=[], Fc=np.zeros((0, 3)), k=4), "exceeds the number of labels"),
    (dict(A=np.array([[0.0, np.nan]]), core=[], Fc=np.zeros((0, 2)), k=1), "NaN"),
    (dict(A=np.zeros((1, 3)), core=[0, 0], Fc=np.zeros((2, 3)), k=1), "distinct"),
    (dict(A=np.zeros((1, 3)), core=[3], Fc=np.zeros((1, 3)), k=1), "distinct"),
    (dict(A=np.zeros((1, 3)), core=[0], Fc=np.zeros((2, 3)), k=1), "Fc must be"),
    (dict(A=np.zeros((1, 3)), core=[0, 1], Fc=np.array([[0.0, 1, 0], [2, 0, 0]]), k=1),
     "symmetric"),
    (dict(A=np.zeros((1, 3)), core=[], Fc=np.zeros((0, 3)), k=1.5), "integer"),
    (dict(A=np.zeros((1, 3)), core=[], Fc=np.zeros((0, 3)), k=1, fixed=np.full((1, 3), 2)),
     "fixed"),
    (dict(A=np.zeros((1, 25)), core=np.arange(MAX_CORE + 1), Fc=np.zeros((MAX_CORE + 1, 25)),
          k=1), "too large"),
])
def test_bad_input(kwargs, match):
    A, core, Fc, k = kwargs.pop("A"), kwargs.pop("core"), kwargs.pop("Fc"), kwargs.pop("k")
    with pytest.raises(ValueError, match=match):
        star_inference(A, core, Fc, k, **kwargs)
