"""OCAS's line search against an exact twin, and the score-space access it uses in StructuredHinge.

The twin minimises ``f(t) = q1 t + ½ q2 t² + C Σ_q max_i (a_qi + b_qi t)`` on ``[0, t_max]`` by
brute force: every pairwise crossing of a query's lines is a candidate breakpoint, between two
consecutive candidates every query's max is one line (read off at the midpoint), and the quadratic
is minimised on each such interval in closed form.
"""

import importlib

import numpy as np
import pytest
import scipy.sparse as sp
from solver_refs import _rankings, brute_ap_oracle, tiny_ranking_problem, zero_one_oracle

from ssvm.problem import StructuredHinge

# the module (``ssvm.solvers`` exports the function under the same name)
_cp = importlib.import_module("ssvm.solvers.cutting_plane")


def piecewise_h(lines, t):
    """``Σ_q max_i (a_qi + b_qi t)`` for ``lines = [(a_q, b_q), ...]``."""
    return sum(float(np.max(a + b * t)) for a, b in lines)


def exact_min(q1, q2, C, lines, t_max=1.0):
    """Brute-force minimiser of ``q1 t + ½ q2 t² + C h(t)`` on ``[0, t_max]`` (``q2 > 0``)."""
    cuts = [0.0, t_max]
    for a, b in lines:
        da, db = a[:, None] - a[None, :], b[None, :] - b[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = da / db
        cuts.extend(t[np.isfinite(t) & (t > 0) & (t < t_max)].tolist())
    cuts = np.unique(cuts)
    best_f, best_t = np.inf, 0.0
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        mid = 0.5 * (lo + hi)
        slope = sum(b[np.argmax(a + b * mid)] for a, b in lines)  # h is linear on [lo, hi]
        t = min(max(-(q1 + C * slope) / q2, lo), hi)
        f = q1 * t + 0.5 * q2 * t * t + C * piecewise_h(lines, t)
        if f < best_f:
            best_f, best_t = f, t
    return best_t, best_f


def search(q1, q2, C, lines, rtol=0.0, max_evals=500, t_max=1.0):
    """`_line_search` on ``h`` given by ``lines`` (payload: the t evaluated)."""

    def evaluate(t):
        g = sum(b[np.argmax(a + b * t)] for a, b in lines)  # slope of an active line
        return piecewise_h(lines, t), g, t

    h0 = piecewise_h(lines, 0.0)
    return _cp._line_search(q1, q2, C, h0, evaluate(0.0)[1], evaluate, t_max=t_max, rtol=rtol,
                            max_evals=max_evals)


def random_lines(rng, n_queries, n_lines, integer):
    out = []
    for _ in range(n_queries):
        if integer:  # many ties: equal slopes, several lines through one point
            a = rng.integers(-3, 4, n_lines).astype(float)
            b = rng.integers(-3, 4, n_lines).astype(float)
        else:
            a = rng.normal(size=n_lines) * rng.choice([1e-3, 1.0, 1e3])
            b = rng.normal(size=n_lines) * rng.choice([1e-3, 1.0, 1e3])
        out.append((a, b))
    return out


@pytest.mark.parametrize("seed", range(60))
def test_exact_line_search_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    t_max = [1.0, 0.25, 50.0][seed % 3]
    lines = random_lines(rng, int(rng.integers(1, 4)), int(rng.integers(1, 9)), seed % 2 == 0)
    q2 = float(rng.choice([1e-3, 1.0, 1e3])) * rng.uniform(0.5, 2)
    q1 = float(rng.normal()) * rng.choice([1e-2, 1.0, 1e2])
    C = float(rng.choice([0.1, 1.0, 10.0]))
    t_star, f_star = exact_min(q1, q2, C, lines, t_max)
    res = search(q1, q2, C, lines, t_max=t_max)
    assert 0.0 <= res.t <= t_max
    f0 = C * piecewise_h(lines, 0.0)
    scale = max(1.0, abs(f_star), abs(f0))
    assert res.f == pytest.approx(q1 * res.t + 0.5 * q2 * res.t**2 + C * piecewise_h(lines, res.t))
    assert res.f <= f0  # never worse than not moving
    assert res.lower <= f_star + 1e-9 * scale  # a valid lower bound
    assert res.f == pytest.approx(f_star, abs=1e-9 * scale)  # and exact
    # f is q2-strongly convex: ½ q2 (t − t*)² ≤ f(t) − f*
    assert 0.5 * q2 * (res.t - t_star) ** 2 <= (res.f - f_star) + 1e-9 * scale
    assert (res.payload is None) == (res.t == 0.0)
    assert res.payload is None or res.payload == res.t


@pytest.mark.parametrize("seed", range(10))
def test_inexact_line_search_is_certified(seed):
    rng = np.random.default_rng(100 + seed)
    lines = random_lines(rng, 3, 40, False)
    q1, q2, C = -abs(float(rng.normal())) * 10, 1.0, 1.0
    _, f_star = exact_min(q1, q2, C, lines, 100.0)
    f0 = C * piecewise_h(lines, 0.0)
    for rtol, max_evals in ((0.1, 500), (0.5, 500), (0.0, 2)):
        res = search(q1, q2, C, lines, rtol=rtol, max_evals=max_evals, t_max=100.0)
        assert res.n_evals <= max_evals
        assert res.lower <= f_star + 1e-9 * max(1.0, abs(f_star))
        assert res.f <= f0
        if max_evals == 500:
            assert res.f - res.lower <= rtol * (f0 - res.lower) + 1e-12 * abs(f0)


def test_line_search_does_not_move_uphill_or_on_a_point():
    lines = [(np.array([0.0, 1.0]), np.array([1.0, 2.0]))]  # h increasing from t = 0
    res = search(0.0, 1.0, 1.0, lines)
    assert res.t == 0.0 and res.n_evals == 0 and res.payload is None
    res = search(-1.0, 0.0, 1.0, [(np.zeros(1), np.zeros(1))])  # q2 = 0: the ray is a point
    assert res.t == 0.0 and res.n_evals == 0


def ray_lines(X, y, queries, s_b, ds):
    """The hinge along the ray as explicit lines: per query, every ranking's Δ + c·(s_b + t ds)."""
    Q = len(queries)
    out = []
    for q in queries:
        deltas, cs = _rankings(tuple(bool(v) for v in y[q]))
        out.append(((deltas + cs @ s_b[q]) / Q, (cs @ ds[q]) / Q))
    return out


@pytest.mark.parametrize("seed", range(8))
def test_line_search_on_a_structured_hinge(seed):
    """The solver's evaluation of the hinge along the ray (interpolated scores) against the twin."""
    X, y, queries = tiny_ranking_problem(seed, n_queries=3, sizes=(5, 6, 4))
    if seed % 2:
        X = np.round(X)  # tied scores
    prob = StructuredHinge(X, y, queries, brute_ap_oracle)
    rng = np.random.default_rng(seed)
    w_b, w_c = rng.normal(size=(2, X.shape[1])) * rng.choice([0.1, 1.0, 10.0])
    if seed % 4 == 1:
        w_b = np.round(w_b)
        w_c = w_b + np.round(rng.normal(size=X.shape[1]))
    C = 3.0
    b = _cp._Point(prob, C, w_b, prob.stacked_scores(w_b))
    d, ds = w_c - w_b, prob.stacked_scores(w_c) - b.s

    def evaluate(t):
        p = _cp._Point(prob, C, w_b + t * d, b.s + t * ds)
        return p.H, float(p.c @ ds), p

    res = _cp._line_search(float(w_b @ d), float(d @ d), C, b.H, float(b.c @ ds), evaluate,
                           rtol=0.0, max_evals=500)
    lines = ray_lines(X, y, queries, prob.stacked_scores(w_b), prob.stacked_scores(w_c)
                      - prob.stacked_scores(w_b))
    for t in (0.0, 0.3, 1.0, 2.5):  # the twin's h is the problem's hinge along the ray
        assert piecewise_h(lines, t) == pytest.approx(prob.hinge_value(w_b + t * d), abs=1e-12)
    t_star, f_star = exact_min(float(w_b @ d), float(d @ d), C, lines)
    J_star = 0.5 * w_b @ w_b + f_star
    J = b.J if res.payload is None else res.payload.J
    assert J == pytest.approx(J_star, abs=1e-9)
    assert J == pytest.approx(prob.objective(w_b + res.t * d, C), abs=1e-12)
    assert res.t == pytest.approx(t_star, abs=1e-6 * max(1.0, t_star))


# ---------------------------------------------------------------- StructuredHinge score access
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_hinge_at_scores_matches_hinge(sparse, fit_intercept):
    X, y, queries = tiny_ranking_problem(3, n_queries=3, sizes=(5, 7, 6))
    queries = [queries[2], queries[0]]  # not ascending: rows are copied, stacked
    rng = np.random.default_rng(0)
    prob = StructuredHinge(sp.csr_matrix(X) if sparse else X, y, queries, brute_ap_oracle,
                           fit_intercept=fit_intercept)
    for _ in range(5):
        w = rng.normal(size=prob.n_features)
        s = prob.stacked_scores(w)
        H, c, offset = prob.hinge_at_scores(s)
        H_ref, g_ref = prob.hinge(w)
        assert H == pytest.approx(H_ref, rel=1e-12, abs=1e-14)
        assert H == pytest.approx(offset + s @ c, rel=1e-12, abs=1e-14)
        np.testing.assert_allclose(prob.coefficients_to_subgradient(c), g_ref, rtol=1e-12,
                                   atol=1e-14)
        for _ in range(3):  # the plane lies below the hinge everywhere
            w2 = rng.normal(size=prob.n_features) * 3
            assert offset + prob.stacked_scores(w2) @ c <= prob.hinge_value(w2) + 1e-12


def test_score_access_counts_and_checks():
    X, y, queries = tiny_ranking_problem(4)
    prob = StructuredHinge(X, y, queries, zero_one_oracle)
    s = prob.stacked_scores(np.ones(X.shape[1]))
    calls = prob.n_oracle_calls
    prob.hinge_at_scores(s)
    assert prob.n_oracle_calls == calls + len(queries)
    with pytest.raises(ValueError, match="s must have shape"):
        prob.hinge_at_scores(s[:-1])
    with pytest.raises(ValueError, match="c must have shape"):
        prob.coefficients_to_subgradient(np.zeros(s.size + 1))
    with pytest.raises(ValueError, match="w must have shape"):
        prob.stacked_scores(np.ones(X.shape[1] + 1))
