"""The dedicated capped-simplex QP solver against cvxpy and against the KKT conditions."""

import itertools

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from ssvm.solvers.qp import CvxpyDualQP, dual_value, solve_capped_simplex_qp


def random_qp(rng, trial):
    """Random dual QPs, many of them degenerate (duplicate planes, low rank, zero Gram, b ≤ 0)."""
    K = int(rng.integers(1, 13))
    d = int(rng.integers(1, 15))
    A = rng.normal(size=(K, d)) * 10.0 ** rng.uniform(-3, 1)
    kind = trial % 6
    if kind == 1 and K > 1:  # duplicated planes
        A[K // 2 :] = A[: K - K // 2]
    elif kind == 2:  # rank one
        A = rng.normal(size=(K, 1)) @ rng.normal(size=(1, d))
    elif kind == 3:  # all planes equal to zero slope
        A[:] = 0.0
    b = rng.normal(size=K) * 10.0 ** rng.uniform(-2, 1)
    if kind == 4:
        b = -np.abs(b)  # optimum at alpha = 0
    elif kind == 5:
        b = np.abs(b)
        if K > 2:
            b[1] = b[0]  # ties
    C = float(rng.choice([0.01, 0.3, 1.0, 7.0, 100.0]))  # few values: one cvxpy problem each
    return A @ A.T, b, C


def assert_kkt(M, b, C, alpha, tol):
    """KKT of max b@a − ½aᵀMa over {a ≥ 0, Σa ≤ C}: with g = b − Ma and μ ≥ 0 the multiplier of
    Σa ≤ C: g_i ≤ μ everywhere, g_i = μ where a_i > 0, μ = 0 unless Σa = C."""
    assert np.all(alpha >= 0) and alpha.sum() <= C * (1 + 1e-12)
    g = b - M @ alpha
    scale = max(1.0, np.abs(b).max(), C * np.abs(np.diag(M)).max())
    mu = max(g.max(), 0.0)
    if alpha.sum() < C * (1 - 1e-9):
        assert mu <= tol * scale
    support = alpha > 1e-12 * C
    assert np.all(np.abs(g[support] - mu) <= tol * scale)


def test_matches_cvxpy_on_random_qps():
    rng = np.random.default_rng(0)
    cvx = {}
    worst = 0.0
    for trial in range(300):
        M, b, C = random_qp(rng, trial)
        alpha, _ = solve_capped_simplex_qp(M, b, C)
        if C not in cvx:
            cvx[C] = CvxpyDualQP(12, C)
        ref = cvx[C].solve(M, b)
        f, f_ref = dual_value(M, b, alpha), dual_value(M, b, ref)
        # both are feasible; ours is the exact maximiser, so never worse than cvxpy's
        assert f >= f_ref - 1e-12 * max(1.0, abs(f))
        assert abs(f - f_ref) <= 1e-8 * max(1.0, abs(f))
        worst = max(worst, abs(f - f_ref) / max(1.0, abs(f)))
        assert_kkt(M, b, C, alpha, 1e-9)
    assert worst < 1e-8


def test_warm_start_gives_same_value():
    rng = np.random.default_rng(1)
    for trial in range(60):
        M, b, C = random_qp(rng, trial)
        cold, _ = solve_capped_simplex_qp(M, b, C)
        start = rng.random(b.size) * C
        warm, _ = solve_capped_simplex_qp(M, b, C, start)
        assert dual_value(M, b, warm) == pytest.approx(dual_value(M, b, cold),
                                                       abs=1e-10 * max(1, C))


def test_known_solutions():
    # one plane: max b a − ½ m a² on [0, C]
    alpha, _ = solve_capped_simplex_qp(np.array([[2.0]]), np.array([1.0]), 10.0)
    assert alpha == pytest.approx([0.5])
    alpha, _ = solve_capped_simplex_qp(np.array([[2.0]]), np.array([1.0]), 0.1)
    assert alpha == pytest.approx([0.1])
    alpha, _ = solve_capped_simplex_qp(np.array([[2.0]]), np.array([-1.0]), 1.0)
    assert alpha == pytest.approx([0.0])
    # zero Gram: all mass on the best positive b
    alpha, _ = solve_capped_simplex_qp(np.zeros((3, 3)), np.array([0.2, 0.5, -1.0]), 2.0)
    assert alpha == pytest.approx([0.0, 2.0, 0.0])
    # orthogonal unit planes, equal b: symmetric split under the cap
    alpha, _ = solve_capped_simplex_qp(np.eye(2), np.array([1.0, 1.0]), 1.0)
    assert alpha == pytest.approx([0.5, 0.5])


def test_empty_and_bad_input():
    alpha, it = solve_capped_simplex_qp(np.zeros((0, 0)), np.zeros(0), 1.0)
    assert alpha.shape == (0,)
    with pytest.raises(ValueError, match="must be"):
        solve_capped_simplex_qp(np.eye(2), np.zeros(3), 1.0)
    with pytest.raises(ValueError, match="C must be"):
        solve_capped_simplex_qp(np.eye(2), np.zeros(2), 0.0)
    with pytest.raises(ValueError, match="finite"):
        solve_capped_simplex_qp(np.eye(2), np.array([np.nan, 1.0]), 1.0)
    with pytest.raises(ValueError, match="capacity"):
        CvxpyDualQP(2, 1.0).solve(np.eye(3), np.zeros(3))


def test_cvxpy_problem_is_dpp():
    qp = CvxpyDualQP(5, 3.0)
    assert qp.problem.is_dpp()


def brute_force_qp(M, b, C):
    """Best, over every face of the lifted simplex, of the face's affine-hull minimiser (lstsq).

    An extreme point of the optimal set is the unique minimiser over the affine hull of the face
    whose relative interior holds it, so enumerating faces finds the optimum.
    """
    K = b.size
    Q = np.zeros((K + 1, K + 1))
    Q[:K, :K] = M
    q = np.concatenate([b, [0.0]])
    best = -np.inf
    for mask in itertools.product([False, True], repeat=K + 1):
        S = np.flatnonzero(mask)
        if S.size == 0:
            continue
        m = S.size
        kkt = np.zeros((m + 1, m + 1))
        kkt[:m, :m] = Q[np.ix_(S, S)]
        kkt[:m, m] = -1.0
        kkt[m, :m] = 1.0
        rhs = np.concatenate([q[S], [C]])
        sol = np.linalg.lstsq(kkt, rhs, rcond=None)[0]
        for _ in range(2):  # iterative refinement
            sol += np.linalg.lstsq(kkt, rhs - kkt @ sol, rcond=None)[0]
        if np.linalg.norm(kkt @ sol - rhs) > 1e-9 * max(1.0, np.linalg.norm(rhs)):
            continue
        x = np.zeros(K + 1)
        x[S] = sol[:m]
        if x.min() < -1e-12 * C:
            continue
        best = max(best, dual_value(M, b, np.clip(x[:K], 0, None)))
    return best


@settings(max_examples=150, deadline=None)
@given(
    K=st.integers(1, 6),
    d=st.integers(1, 4),
    # scales up to C²·max(M) ~ 1e8: beyond that the objective itself is rounding noise
    a_exp=st.integers(-3, 2),
    b_exp=st.integers(-3, 3),
    c_exp=st.integers(-2, 2),
    duplicate=st.booleans(),
    seed=st.integers(0, 2**31 - 1),
)
def test_matches_face_enumeration(K, d, a_exp, b_exp, c_exp, duplicate, seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(K, d)) * 10.0**a_exp
    if duplicate and K > 1:
        A[-1] = A[0]
    b = np.round(rng.normal(size=K), 1) * 10.0**b_exp  # rounding creates ties
    C = 10.0**c_exp
    M = A @ A.T
    alpha, _ = solve_capped_simplex_qp(M, b, C)
    f = dual_value(M, b, alpha)
    f_brute = brute_force_qp(M, b, C)
    assert np.all(alpha >= 0) and alpha.sum() <= C * (1 + 1e-12)
    # αᵀMα is evaluated with rounding errors of order eps·C²·max(M): the objective's own scale
    scale = max(1.0, C * np.abs(b).max(), C * C * np.abs(M).max())
    assert f == pytest.approx(f_brute, rel=1e-9, abs=1e-13 * scale)
