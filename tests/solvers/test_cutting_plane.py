"""The cutting plane against the full primal QP solved directly, its certificates, and LinearSVC.

Every test runs the plain method (planes at the model's minimiser), OCAS's cut rule (the default)
and OCAS with its line search.
"""

import cvxpy as cp
import hypothesis.strategies as st
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from sklearn.svm import LinearSVC
from solver_refs import (
    ap_constraints,
    breast_cancer,
    brute_ap_oracle,
    letor,
    tiny_ranking_problem,
    zero_one_oracle,
)

from ssvm.losses import get_oracle
from ssvm.problem import StructuredHinge
from ssvm.solvers import cutting_plane

MODES = {"plain": {"ocas": False}, "ocas": {}, "ocas_line_search": {"line_search": True}}
mode_param = pytest.mark.parametrize("mode", list(MODES))


def full_primal(X, y, queries, C):
    """min ½‖w‖² + C/Q Σ ξ_q  s.t.  ξ_q ≥ Δ(R) + w·(Ψ(R) − Ψ(R*)) for every ranking R (cvxpy)."""
    w = cp.Variable(X.shape[1])
    xi = cp.Variable(len(queries))
    cons = []
    for k, q in enumerate(queries):
        planes = ap_constraints(X[q], y[q])
        D = np.array([d for d, _ in planes])
        Psi = np.array([p for _, p in planes])
        cons.append(xi[k] >= D + Psi @ w)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + C / len(queries) * cp.sum(xi)), cons)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return prob.value, w.value


_FULL_PRIMAL = {}


def tiny_full_primal(seed, C):
    """The tiny problem of ``seed`` and its optimum (solved once per module)."""
    X, y, queries = tiny_ranking_problem(seed, n_queries=3, sizes=(5, 6, 4))
    if (seed, C) not in _FULL_PRIMAL:
        _FULL_PRIMAL[seed, C] = full_primal(X, y, queries, C)
    return X, y, queries, *_FULL_PRIMAL[seed, C]


@mode_param
@pytest.mark.parametrize(
    "seed, C, qp",
    [(0, 1.0, "auto"), (1, 10.0, "auto"), (2, 0.1, "auto"), (3, 100.0, "auto"),
     (0, 1.0, "cvxpy"), (1, 10.0, "cvxpy"), (2, 0.1, "cvxpy")],
)
def test_matches_direct_solve_of_full_primal(seed, C, qp, mode):
    X, y, queries, J_star, w_star = tiny_full_primal(seed, C)
    prob = StructuredHinge(X, y, queries, brute_ap_oracle)
    res = cutting_plane(prob, C, tol=1e-9, max_iter=500, qp=qp, **MODES[mode])
    assert res.converged
    assert res.objective == pytest.approx(J_star, rel=1e-7, abs=1e-9)
    assert res.objective == pytest.approx(prob.objective(res.w, C), rel=1e-12)
    # J is 1-strongly convex: ½‖w − w*‖² ≤ J(w) − J*
    assert 0.5 * np.sum((res.w - w_star) ** 2) <= abs(res.objective - J_star) + 1e-7
    # certificates bracket the true optimum throughout
    for rec in res.history:
        assert rec["dual"] <= J_star + 1e-7 * max(1, J_star)
        assert rec["primal"] >= J_star - 1e-7 * max(1, J_star)


@mode_param
def test_history_is_monotone_and_certified(mode):
    X, y, queries = tiny_ranking_problem(5, n_queries=4, sizes=(6, 7))
    prob = StructuredHinge(X, y, queries, brute_ap_oracle)
    res = cutting_plane(prob, 3.0, tol=1e-8, max_iter=500, **MODES[mode])
    primal = np.array([r["primal"] for r in res.history])
    dual = np.array([r["dual"] for r in res.history])
    gap = np.array([r["gap"] for r in res.history])
    assert np.all(np.diff(primal) <= 0) and np.all(np.diff(dual) >= 0)
    np.testing.assert_allclose(gap, primal - dual)
    assert np.all(gap >= -1e-12)
    assert gap[-1] <= 1e-8 * primal[-1]
    assert not any(g <= 1e-8 * p for g, p in zip(gap[:-1], primal[:-1]))  # stopped at the first
    assert [r["iteration"] for r in res.history] == list(range(1, res.n_iter + 1))
    for key in ("seconds", "oracle_seconds", "matvec_seconds", "qp_seconds", "n_planes"):
        assert all(r[key] >= 0 for r in res.history)
    assert np.all(np.diff([r["seconds"] for r in res.history]) >= 0)
    # full oracle passes: one per round, plus the line searches' (each query's oracle per pass)
    passes = np.array([r["oracle_passes"] for r in res.history])
    assert prob.n_oracle_calls == passes[-1] * len(queries)
    if mode == "ocas_line_search":
        assert np.all(np.diff(passes) >= 1)
    else:
        np.testing.assert_array_equal(passes, np.arange(1, res.n_iter + 1))


@mode_param
@pytest.mark.parametrize("capacity, prune_after, tol", [(2, 1, 1e-3), (3, 2, 1e-4), (6, 1, 1e-6)])
def test_small_working_set_still_reaches_the_optimum(capacity, prune_after, tol, mode):
    X, y, queries = tiny_ranking_problem(6, n_queries=3, sizes=(6, 7, 5))
    prob = StructuredHinge(X, y, queries, brute_ap_oracle)
    ref = cutting_plane(prob, 5.0, tol=1e-9, max_iter=2000, ocas=False)
    res = cutting_plane(prob, 5.0, tol=tol, max_iter=5000, capacity=capacity,
                        prune_after=prune_after, **MODES[mode])
    assert res.converged
    assert max(r["n_planes"] for r in res.history) <= capacity
    assert ref.objective * (1 - 1e-9) <= res.objective <= ref.objective * (1 + tol)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # asserted below
@mode_param
@pytest.mark.parametrize("C", [0.1, 10.0])
def test_zero_one_with_intercept_matches_linear_svc(C, mode):
    X, y = breast_cancer()
    n = X.shape[0]
    prob = StructuredHinge(X, y, [np.arange(n)], zero_one_oracle, fit_intercept=True)
    res = cutting_plane(prob, C, tol=1e-9, max_iter=2000, **MODES[mode])
    assert res.converged
    svc = LinearSVC(loss="hinge", C=C / n, intercept_scaling=1, fit_intercept=True, tol=1e-12,
                    max_iter=1_000_000, random_state=0).fit(X, y)  # liblinear shuffles
    w_svc = np.concatenate([svc.coef_.ravel(), svc.intercept_])
    J_svc = prob.objective(w_svc, C)
    # both minimise J: the certified optimum is not above LinearSVC's, and they agree
    assert res.objective <= J_svc * (1 + 1e-9)
    assert res.objective == pytest.approx(J_svc, rel=1e-6)
    # and the formula is LinearSVC's own primal: ½‖[w, b]‖² + (C/n) Σ hinge
    margins = np.where(y, 1, -1) * (X @ svc.coef_.ravel() + svc.intercept_[0])
    J_direct = 0.5 * w_svc @ w_svc + C / n * np.maximum(0, 1 - margins).sum()
    assert J_svc == pytest.approx(J_direct, rel=1e-12)


def test_bad_arguments():
    X, y, queries = tiny_ranking_problem(0)
    prob = StructuredHinge(X, y, queries, brute_ap_oracle)
    with pytest.raises(ValueError, match="qp"):
        cutting_plane(prob, 1.0, qp="gurobi")
    with pytest.raises(ValueError, match="capacity"):
        cutting_plane(prob, 1.0, capacity=1)
    with pytest.raises(ValueError, match="prune_after"):
        cutting_plane(prob, 1.0, prune_after=0)
    with pytest.raises(ValueError, match="ocas"):
        cutting_plane(prob, 1.0, ocas="yes")
    with pytest.raises(ValueError, match="line_search"):
        cutting_plane(prob, 1.0, line_search=1)
    with pytest.raises(ValueError, match="needs ocas"):
        cutting_plane(prob, 1.0, ocas=False, line_search=True)
    for mu in (0.0, 1.5, -0.1, np.nan, "0.1"):
        with pytest.raises(ValueError, match="mu"):
            cutting_plane(prob, 1.0, mu=mu)


@mode_param
def test_dense_and_sparse_input_and_qp_aliases_agree(mode):
    X, y, queries = tiny_ranking_problem(7, n_queries=3, sizes=(6, 7))
    X[np.abs(X) < 0.5] = 0.0
    dense = StructuredHinge(X, y, queries, brute_ap_oracle, fit_intercept=True)
    csr = StructuredHinge(sp.csr_matrix(X), y, queries, brute_ap_oracle, fit_intercept=True)
    a = cutting_plane(dense, 2.0, tol=1e-8, **MODES[mode])
    b = cutting_plane(csr, 2.0, tol=1e-8, **MODES[mode])
    c = cutting_plane(dense, 2.0, tol=1e-8, qp="active_set", **MODES[mode])
    np.testing.assert_array_equal(a.w, c.w)
    assert a.n_iter == c.n_iter
    # rounding differs between dense and sparse products: the same optimum, maybe a round apart
    assert abs(a.n_iter - b.n_iter) <= (0 if mode == "plain" else 1)
    np.testing.assert_allclose(a.w, b.w, atol=1e-4)
    assert a.objective == pytest.approx(b.objective, rel=1e-8)


def test_default_is_ocas_and_mu_one_is_close_to_plain():
    X, y, queries = tiny_ranking_problem(8, n_queries=3, sizes=(6, 5))
    prob = StructuredHinge(X, y, queries, brute_ap_oracle)
    default = cutting_plane(prob, 2.0, tol=1e-6)
    ocas = cutting_plane(prob, 2.0, tol=1e-6, ocas=True, line_search=False, mu=0.1)
    np.testing.assert_array_equal(default.w, ocas.w)
    # mu = 1 cuts at the model's minimiser, as the plain method does (scores interpolated)
    plain = cutting_plane(prob, 2.0, tol=1e-6, ocas=False)
    mu_one = cutting_plane(prob, 2.0, tol=1e-6, mu=1.0)
    assert [r["primal"] for r in mu_one.history] == pytest.approx(
        [r["primal"] for r in plain.history], rel=1e-9)
    assert mu_one.n_iter == plain.n_iter


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_modes_reach_the_same_certified_optimum_on_letor(loss):
    X, y, queries = letor(max_queries=40)
    prob = StructuredHinge(X, y, queries, get_oracle(loss))
    runs = {mode: cutting_plane(prob, 10.0, tol=1e-5, max_iter=3000, **kw)
            for mode, kw in MODES.items()}
    for res in runs.values():
        assert res.converged
        assert res.objective == pytest.approx(prob.objective(res.w, 10.0), rel=1e-10)
    for a in runs.values():  # every run's J lies within every run's certificate
        for b in runs.values():
            assert b.history[-1]["dual"] <= a.objective * (1 + 1e-12)
            assert a.objective <= b.objective * (1 + 1e-5)


@settings(max_examples=8, deadline=None)
@given(
    sizes=st.lists(st.integers(2, 6), min_size=1, max_size=3),
    C_exp=st.integers(-2, 2),
    d=st.integers(1, 4),
    seed=st.integers(0, 2**31 - 1),
    mu=st.sampled_from([0.05, 0.1, 0.5, 1.0]),
)
def test_matches_full_primal_hypothesis(sizes, C_exp, d, seed, mu):
    X, y, queries = tiny_ranking_problem(seed, n_queries=len(sizes), d=d, sizes=tuple(sizes))
    C = 10.0**C_exp
    J_star, _ = full_primal(X, y, queries, C)
    prob = StructuredHinge(X, y, queries, brute_ap_oracle)
    for kw in ({"ocas": False}, {"mu": mu}, {"mu": mu, "line_search": True}):
        res = cutting_plane(prob, C, tol=1e-9, max_iter=2000, **kw)
        assert res.converged
        assert res.objective == pytest.approx(J_star, rel=1e-7, abs=1e-9)


@pytest.mark.parametrize("ocas", [True, False])
def test_warm_planes_at_another_start_evaluate_that_start(ocas):
    """The bundle's known H belongs to its own point: started elsewhere, the solve runs the oracles
    there (so it cannot stop on a certificate it does not have)."""
    X, y, queries = tiny_ranking_problem(0, n_queries=3, sizes=(5, 6, 4))
    problem = StructuredHinge(X, y, queries, brute_ap_oracle)
    first = cutting_plane(problem, 1.0, ocas=ocas)
    zeros = np.zeros(problem.n_features)
    again = cutting_plane(problem, 1.0, w0=zeros, planes=first.planes, max_iter=1, ocas=ocas)
    np.testing.assert_array_equal(again.w, zeros)
    assert again.objective == pytest.approx(problem.objective(zeros, 1.0), rel=1e-12)
    assert again.history[-1]["oracle_passes"] == 1
    for C in (0.3, 1.0, 3.0):  # and a full solve from there reaches the cold optimum
        warm = cutting_plane(problem, C, tol=1e-6, w0=zeros, planes=first.planes, ocas=ocas)
        cold = cutting_plane(problem, C, tol=1e-6, ocas=ocas)
        assert warm.converged and warm.objective == pytest.approx(problem.objective(warm.w, C), rel=1e-12)
        assert abs(warm.objective - cold.objective) <= 1e-6 * cold.objective
