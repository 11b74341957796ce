"""StructuredHinge against direct, slow computations of the hinge from its definition."""

import sys
from functools import partial
from pathlib import Path

import hypothesis.strategies as st
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings

import ssvm.problem.score_space as problem_module
from ssvm.losses import get_oracle
from ssvm.problem import StructuredHinge

sys.path.insert(0, str(Path(__file__).resolve().parent / "solvers"))
from solver_refs import (  # noqa: E402
    ap_constraints,
    brute_ap_oracle,
    tiny_ranking_problem,
    zero_one_oracle,
)


def direct_hinge(X, y, queries, w):
    """H_q(w) = max_R Δ(R) + w·(Ψ(R) − Ψ(R*)) by enumerating every ranking's joint feature."""
    return np.array([max(d + w @ p for d, p in ap_constraints(X[q], y[q])) for q in queries])


def direct_zero_one(X, y, queries, w):
    out = []
    for q in queries:
        ys = np.where(y[q], 1.0, -1.0)
        out.append(np.mean(np.maximum(0.0, 1.0 - ys * (X[q] @ w))))
    return np.array(out)


@pytest.mark.parametrize("seed", range(6))
def test_hinge_and_planes_match_direct_enumeration(seed):
    X, y, queries = tiny_ranking_problem(seed, n_queries=3, sizes=(4, 5, 6))
    rng = np.random.default_rng(seed)
    queries = [rng.permutation(q) for q in queries]  # rows of a query in any order
    prob = StructuredHinge(X, y, queries, brute_ap_oracle)
    for scale in (0.0, 1e-3, 1.0, 50.0):
        w = rng.normal(size=X.shape[1]) * scale
        Hq = direct_hinge(X, y, queries, w)
        delta, G = prob.planes(w)
        np.testing.assert_allclose(delta + G @ w, Hq, rtol=1e-12, atol=1e-12)
        H, g = prob.hinge(w)
        assert H == pytest.approx(Hq.mean(), abs=1e-12)
        np.testing.assert_allclose(g, G.mean(axis=0), atol=1e-12)
        assert prob.objective(w, 2.5) == pytest.approx(0.5 * w @ w + 2.5 * Hq.mean(), abs=1e-12)
        # a plane is a global lower bound, tight at w
        for _ in range(5):
            v = rng.normal(size=X.shape[1]) * 3
            assert np.all(delta + G @ v <= direct_hinge(X, y, queries, v) + 1e-12)
        # subsets of queries give the same rows
        sub = [2, 0]
        d2, G2 = prob.planes(w, sub)
        np.testing.assert_allclose(d2, delta[sub], atol=1e-12)
        np.testing.assert_allclose(G2, G[sub], atol=1e-12)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_dense_and_sparse_agree_with_zero_one_formula(fit_intercept):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 5)) * (rng.random((60, 5)) < 0.5)
    y = rng.random(60) < 0.3
    y[:2] = [True, False]
    queries = [np.arange(0, 25), np.arange(25, 60)]
    dense = StructuredHinge(X, y, queries, zero_one_oracle, fit_intercept=fit_intercept)
    csr = StructuredHinge(sp.csr_matrix(X), y, queries, zero_one_oracle,
                          fit_intercept=fit_intercept)
    assert dense.n_features == csr.n_features == 5 + fit_intercept
    Xi = np.hstack([X, np.ones((60, 1))]) if fit_intercept else X
    for _ in range(5):
        w = rng.normal(size=dense.n_features)
        direct = direct_zero_one(Xi, y, queries, w)
        for prob in (dense, csr):
            H, g = prob.hinge(w)
            assert H == pytest.approx(direct.mean(), abs=1e-12)
            delta, G = prob.planes(w)
            np.testing.assert_allclose(delta + G @ w, direct, atol=1e-12)
            np.testing.assert_allclose(prob.scores(w), Xi @ w, atol=1e-12)
            # finite-difference check of the subgradient where the hinge is smooth
            eps = 1e-7
            e = rng.normal(size=w.size)
            assert prob.hinge_value(w + eps * e) == pytest.approx(H + eps * g @ e, abs=1e-9)


def test_overlapping_and_unordered_queries():
    X, y, queries = tiny_ranking_problem(3, n_queries=2, sizes=(5, 5))
    queries = [queries[1], queries[0], np.concatenate([queries[0][:3], queries[1][:3]])]
    if not (0 < y[queries[2]].sum() < 6):
        y[queries[2][0]], y[queries[2][3]] = True, False
    prob = StructuredHinge(X, y, queries, brute_ap_oracle)
    w = np.array([0.3, -1.0, 0.5])
    delta, G = prob.planes(w)
    np.testing.assert_allclose(delta + G @ w, direct_hinge(X, y, queries, w), atol=1e-12)


def test_ascending_queries_that_share_a_boundary_row_are_not_a_plain_slice():
    """Two ascending queries that share row 1 must be gathered (the row counted in both), not
    taken as one slice of rows: with ``>=`` in the layout's check row 1 would be counted once
    (H 0.7833, g [-1, 0.5, -1, 0.5])."""
    problem = StructuredHinge(np.eye(4), [1, 0, 1, 0], queries=[[0, 1], [1, 2, 3]], oracle=get_oracle("ap"))
    w = np.array([0.3, 0.5, -0.2, 0.1])
    H, offset, g = problem.plane(w)
    assert H == pytest.approx(1.2833333333333334, abs=1e-12)
    np.testing.assert_allclose(g, [-1.0, 1.5, -1.0, 0.5], atol=1e-12)
    assert problem.hinge_value(w) == pytest.approx(H, abs=1e-12)
    assert offset + w @ g == pytest.approx(H, abs=1e-12)
    np.testing.assert_allclose(problem.planes(w).G.mean(axis=0), g, atol=1e-12)


def test_relevance_grades_count_as_relevant_above_zero():
    """One relevance convention (y > 0) for the problem, the oracles' entry points and the estimators."""
    X, w = np.eye(4), np.array([0.3, 0.5, -0.2, 0.1])
    binary = StructuredHinge(X, [True, False, True, False], [np.arange(4)], get_oracle("ap"))
    for y in ([2, 0, 1, 0], [1, -1, 3.5, 0]):
        graded = StructuredHinge(X, y, [np.arange(4)], get_oracle("ap"))
        np.testing.assert_array_equal(graded.plane(w).g, binary.plane(w).g)
        assert graded.plane(w).H == binary.plane(w).H


def test_what_the_protocol_returns_is_named():
    from ssvm.problem import Plane, Planes, ScorePlane, ScoreSpaceProblem

    problem = StructuredHinge(np.eye(4), [1, 0, 1, 0], queries=[[0, 1], [2, 3]], oracle=get_oracle("ap"))
    w = np.array([0.3, 0.5, -0.2, 0.1])
    plane, planes = problem.plane(w), problem.planes(w)
    at_scores = problem.hinge_at_scores(problem.stacked_scores(w))
    assert isinstance(problem, ScoreSpaceProblem)
    assert isinstance(plane, Plane) and isinstance(planes, Planes) and isinstance(at_scores, ScorePlane)
    assert plane.H == at_scores.H and plane.offset == at_scores.offset
    np.testing.assert_array_equal(plane.g, problem.coefficients_to_subgradient(at_scores.c))
    assert planes.delta.shape == (2,) and planes.G.shape == (2, 4)


def test_parallel_oracle_calls_match_sequential(monkeypatch):
    X, y, queries = tiny_ranking_problem(4, n_queries=12, sizes=(5, 6, 7))
    w = np.array([1.0, -0.5, 0.25])
    seq = StructuredHinge(X, y, queries, brute_ap_oracle)
    monkeypatch.setattr(problem_module, "_MIN_PARALLEL_SAMPLES", 0)
    par = StructuredHinge(X, y, queries, partial(brute_ap_oracle), n_jobs=2)
    assert par.score_hinge._n_jobs(X.shape[0], len(queries)) == 2
    for a, b in zip(seq.planes(w), par.planes(w)):
        np.testing.assert_allclose(a, b, atol=1e-14)
    assert seq.hinge(w)[0] == pytest.approx(par.hinge(w)[0], abs=1e-14)
    assert par.n_oracle_calls == 2 * len(queries)


def test_real_ap_oracle_gives_the_brute_force_hinge():
    oracle = get_oracle("ap")
    for seed in range(5):
        X, y, queries = tiny_ranking_problem(seed, n_queries=3, sizes=(4, 6, 7))
        w = np.random.default_rng(seed).normal(size=3)
        a = StructuredHinge(X, y, queries, oracle).planes(w)
        b = StructuredHinge(X, y, queries, brute_ap_oracle).planes(w)
        np.testing.assert_allclose(a[0] + a[1] @ w, b[0] + b[1] @ w, atol=1e-12)


def test_timers_and_counters_accumulate():
    X, y, queries = tiny_ranking_problem(0)
    prob = StructuredHinge(X, y, queries, brute_ap_oracle)
    assert prob.oracle_seconds == 0.0 and prob.n_oracle_calls == 0
    prob.hinge(np.zeros(3))
    prob.planes(np.zeros(3), [1])
    assert prob.n_oracle_calls == 3
    assert prob.oracle_seconds > 0.0 and prob.matvec_seconds > 0.0


def _bad_oracle(scores, y):
    return np.zeros(scores.size + 1), 0.0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"X": np.full((4, 2), np.nan)}, "NaN"),
        ({"X": np.zeros(4)}, "2-D"),
        ({"y": np.array([True, False, True])}, "shape"),
        ({"y": np.array(["a", "b", "a", "b"])}, "numeric relevance grades"),
        ({"y": np.array([1.0, np.nan, 1.0, 0.0])}, "NaN"),
        ({"queries": []}, "at least one query"),
        ({"queries": [np.array([0, 1, 7])]}, "outside"),
        ({"queries": [np.array([0, 2])]}, "positive and one negative"),
        ({"queries": [np.array([0.0, 1.0])]}, "integer"),
        ({"oracle": "ap"}, "callable"),
    ],
)
def test_bad_input(kwargs, match):
    args = {
        "X": np.arange(8.0).reshape(4, 2),
        "y": np.array([True, False, True, False]),
        "queries": [np.arange(4)],
        "oracle": zero_one_oracle,
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        StructuredHinge(args["X"], args["y"], args["queries"], args["oracle"])


def test_bad_w_and_bad_oracle_output():
    X, y = np.arange(8.0).reshape(4, 2), np.array([True, False, True, False])
    prob = StructuredHinge(X, y, [np.arange(4)], zero_one_oracle)
    with pytest.raises(ValueError, match="shape"):
        prob.hinge(np.zeros(3))
    with pytest.raises(ValueError, match="query numbers"):
        prob.planes(np.zeros(2), [1])
    with pytest.raises(ValueError, match="oracle returned"):
        StructuredHinge(X, y, [np.arange(4)], _bad_oracle).hinge(np.zeros(2))


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(2, 6), min_size=1, max_size=3),
    n_pos_frac=st.floats(0.0, 1.0),
    duplicate_rows=st.booleans(),
    w_exp=st.integers(-6, 3),
    seed=st.integers(0, 2**31 - 1),
)
def test_hinge_matches_enumeration_hypothesis(sizes, n_pos_frac, duplicate_rows, w_exp, seed):
    """Single positives / single negatives, tied scores (duplicate rows), tiny to large w."""
    rng = np.random.default_rng(seed)
    n, d = sum(sizes), 2
    X = rng.normal(size=(n, d))
    if duplicate_rows:
        X[1::2] = X[::2][: n // 2]
    y = np.zeros(n, dtype=bool)
    queries, start = [], 0
    for m in sizes:
        n_pos = min(max(1, round(n_pos_frac * m)), m - 1)
        y[start : start + n_pos] = True
        queries.append(rng.permutation(np.arange(start, start + m)))
        start += m
    w = rng.normal(size=d) * 10.0**w_exp
    for fmt in (np.asarray, sp.csr_matrix):
        prob = StructuredHinge(fmt(X), y, queries, brute_ap_oracle)
        delta, G = prob.planes(w)
        np.testing.assert_allclose(delta + G @ w, direct_hinge(X, y, queries, w), rtol=1e-12,
                                   atol=1e-12)


@pytest.mark.parametrize("n_jobs", [None, 2])
@pytest.mark.parametrize("fmt", [np.asarray, sp.csr_matrix])
def test_row_ranges_with_gaps_match_compacted_problem(monkeypatch, n_jobs, fmt):
    """Queries as ascending row ranges with unused rows between them (a view of X is used)."""
    monkeypatch.setattr(problem_module, "_MIN_PARALLEL_SAMPLES", 0)
    X, y, queries = tiny_ranking_problem(12, n_queries=7, sizes=(5, 7, 6))
    rng = np.random.default_rng(12)
    gaps = rng.integers(0, 3, size=len(queries) + 1)
    rows, gapped_queries, start = [], [], 0
    for q, gap in zip(queries, gaps):
        filler = rng.normal(size=(gap, X.shape[1])) * 100
        rows.append((filler, np.zeros(gap, dtype=bool)))
        start += gap
        rows.append((X[q], y[q]))
        gapped_queries.append(np.arange(start, start + q.size))
        start += q.size
    Xg = np.vstack([r for r, _ in rows])
    yg = np.concatenate([t for _, t in rows])
    gapped = StructuredHinge(fmt(Xg), yg, gapped_queries, brute_ap_oracle, n_jobs=n_jobs)
    assert isinstance(gapped.score_hinge.rows, slice)  # a view of the rows, no copy
    compact = StructuredHinge(X, y, queries, brute_ap_oracle)
    w = rng.normal(size=X.shape[1])
    for a, b in zip(gapped.planes(w), compact.planes(w)):
        np.testing.assert_allclose(a, b, atol=1e-12)
    for a, b in zip(gapped.planes(w, [4, 1]), compact.planes(w, [4, 1])):
        np.testing.assert_allclose(a, b, atol=1e-12)
    Hg, gg = gapped.hinge(w)
    Hc, gc = compact.hinge(w)
    assert Hg == pytest.approx(Hc, abs=1e-12)
    np.testing.assert_allclose(gg, gc, atol=1e-12)
