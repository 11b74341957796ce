"""The label-ranking hinge against a brute-force twin, and the package's solvers on it."""

import numpy as np
import pytest
import scipy.sparse as sp
from label_ranking_twins import all_sets

from ssvm.label_ranking import LabelRankingHinge, StarLayout
from ssvm.label_ranking.problem import impute_targets
from ssvm.problem import ScoreSpaceProblem
from ssvm.solvers import SOLVERS


def _instance(rng, Q=10, L=5, d=3, core=(2, 0), sparse=False, fixed_k=None):
    X = rng.standard_normal((Q, d))
    Y = rng.random((Q, L)) < 0.4
    Y[:, 0], Y[:, 1] = True, False  # every sample has a relevant and an irrelevant label
    if fixed_k is None:
        k, T = Y.sum(axis=1), Y
    else:  # a minimal-loss set of size k: relevant labels first (by index), then irrelevant
        k = np.full(Q, fixed_k)
        order = np.argsort(~Y, axis=1, kind="stable")[:, :fixed_k]
        T = np.zeros_like(Y)
        np.put_along_axis(T, order, True, axis=1)
    layout = StarLayout(L, d, core)
    return LabelRankingHinge(sp.csr_matrix(X) if sparse else X, Y, T, k, layout), X, Y, T, k


def _psi(layout, x, t):
    t = np.asarray(t, dtype=float)
    return np.concatenate([np.outer(t, x).ravel(), t, layout.pair_products(t[None])[0]])


def brute_hinge(problem, X, Y, T, k, w):
    """Per-sample hinge and the Ψ-difference of a maximiser, by enumerating every set."""
    lay = problem.layout
    H, G = [], []
    for q in range(len(X)):
        best, arg = -np.inf, None
        for t in all_sets(Y.shape[1], int(k[q])):
            v = np.sum(t & ~Y[q]) / k[q] + w @ _psi(lay, X[q], t)
            if v > best:
                best, arg = v, t
        H.append(best - np.sum(T[q] & ~Y[q]) / k[q] - w @ _psi(lay, X[q], T[q]))
        G.append(_psi(lay, X[q], arg) - _psi(lay, X[q], T[q]))
    return np.array(H), np.array(G)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fixed_k", [None, 2])
def test_hinge_matches_brute_force(sparse, fixed_k):
    rng = np.random.default_rng(0)
    problem, X, Y, T, k = _instance(rng, sparse=sparse, fixed_k=fixed_k)
    for scale in (1e-3, 1.0, 1e3):
        w = scale * rng.standard_normal(problem.n_features)
        Hq, _ = brute_hinge(problem, X, Y, T, k, w)
        H, g = problem.hinge(w)
        assert H == pytest.approx(Hq.mean(), rel=1e-10, abs=1e-10)
        H_p, offset_p, g_p = problem.plane(w)
        assert H_p == H and np.array_equal(g_p, g)
        assert offset_p + w @ g_p == pytest.approx(H, rel=1e-10, abs=1e-10)
        assert problem.hinge_value(w) == pytest.approx(H, rel=1e-12, abs=1e-12)
        delta, G = problem.planes(w)
        assert np.allclose(delta + G @ w, Hq, rtol=1e-9, atol=1e-9)
        assert np.allclose(G.mean(axis=0), g)
        assert np.all(delta + G @ w >= -1e-9 * scale)  # H_q >= 0: the target attains min loss
        sub = [3, 0, 7]
        d_sub, G_sub = problem.planes(w, sub)
        assert np.allclose(d_sub, delta[sub]) and np.allclose(G_sub, G[sub])
        s = problem.stacked_scores(w)
        H_s, c, offset = problem.hinge_at_scores(s)
        assert H_s == pytest.approx(H) and offset + s @ c == pytest.approx(H)
        assert np.allclose(problem.coefficients_to_subgradient(c), g)
        assert problem.objective(w, 2.0) == pytest.approx(0.5 * w @ w + 2.0 * H)


def test_subgradient_inequality():
    rng = np.random.default_rng(1)
    problem, *_ = _instance(rng, Q=15, L=6, core=(1, 4, 5))
    for _ in range(200):
        w, w2 = rng.standard_normal((2, problem.n_features)) * rng.uniform(0.01, 10)
        H, g = problem.hinge(w)
        assert problem.hinge_value(w2) >= H + g @ (w2 - w) - 1e-9


def test_layout_pairs_and_matrix():
    lay = StarLayout(4, 2, [2, 0])
    assert lay.pairs.tolist() == [[2, 0], [2, 1], [2, 3], [0, 1], [0, 3]]
    assert lay.n_features == 4 * 3 + 5
    P = lay.pairwise_matrix(np.arange(1.0, 6.0))
    assert np.array_equal(P, P.T) and P[1, 3] == 0 and P[0, 2] == 1 and P[3, 0] == 5
    t = np.array([[1, 1, 1, 0]], dtype=bool)
    assert lay.pair_products(t) @ np.arange(1.0, 6.0) == pytest.approx(0.5 * t[0] @ P @ t[0])


def test_shape_and_target_checks():
    rng = np.random.default_rng(0)
    problem, X, Y, T, k = _instance(rng)
    with pytest.raises(ValueError, match="exactly k"):
        LabelRankingHinge(X, Y, T, k + 1, problem.layout)
    with pytest.raises(ValueError, match="agree in shape"):
        LabelRankingHinge(X[:, :2], Y, T, k, problem.layout)
    with pytest.raises(ValueError, match="w must have shape"):
        problem.hinge(np.zeros(3))
    with pytest.raises(ValueError, match="query numbers"):
        problem.planes(np.zeros(problem.n_features), [99])


def test_solvers_agree():
    """Every solver of the package minimises the same J on this problem."""
    rng = np.random.default_rng(2)
    problem, *_ = _instance(rng, Q=30, L=5, d=4, core=(1,))
    ref = SOLVERS["cutting_plane"](problem, 1.0, tol=1e-6, max_iter=500)
    assert ref.converged
    plain = SOLVERS["cutting_plane"](problem, 1.0, tol=1e-6, max_iter=500, ocas=False)
    assert plain.objective == pytest.approx(ref.objective, rel=2e-6)
    fw = SOLVERS["frank_wolfe"](problem, 1.0, tol=1e-4, max_iter=2000, random_state=0)
    assert fw.objective == pytest.approx(ref.objective, rel=2e-4)
    peg = SOLVERS["pegasos"](problem, 1.0, tol=1e-2, max_iter=20000, random_state=0)
    assert ref.objective * (1 - 1e-9) <= peg.objective <= ref.objective * 1.02
    assert problem.objective(ref.w, 1.0) == pytest.approx(ref.objective)


def test_line_search_and_protocol():
    rng = np.random.default_rng(3)
    problem, *_ = _instance(rng, Q=25, L=5, d=4, core=(2,))
    assert isinstance(problem, ScoreSpaceProblem)
    ref = SOLVERS["cutting_plane"](problem, 1.0, tol=1e-6, max_iter=500)
    ls = SOLVERS["cutting_plane"](problem, 1.0, tol=1e-6, max_iter=500, line_search=True)
    assert ls.converged and ls.objective == pytest.approx(ref.objective, rel=2e-6)


def test_impute_targets_is_the_best_minimal_loss_set():
    rng = np.random.default_rng(4)
    for k in (1, 2, 3):
        problem, X, Y, _, _ = _instance(rng, Q=12, L=5, core=(1, 3), fixed_k=k)
        w = rng.standard_normal(problem.n_features)
        T = impute_targets(problem.layout, w, X, Y, k)
        for q in range(len(X)):
            sets = list(all_sets(5, k))
            min_loss = min(np.sum(t & ~Y[q]) for t in sets)
            best = max(w @ _psi(problem.layout, X[q], t) for t in sets
                       if np.sum(t & ~Y[q]) == min_loss)
            assert np.sum(T[q] & ~Y[q]) == min_loss and T[q].sum() == k
            assert w @ _psi(problem.layout, X[q], T[q]) == pytest.approx(best)
