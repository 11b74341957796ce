"""The common solver interface: history, callback, warm start, reproducibility, bad arguments."""

import sys

import numpy as np
import pytest
from solver_refs import brute_ap_oracle, tiny_ranking_problem

from ssvm.problem import StructuredHinge
from ssvm.solvers import SOLVERS, SolverResult, cutting_plane, frank_wolfe, pegasos

COMMON_KEYS = {"iteration", "primal", "dual", "gap", "seconds", "oracle_seconds", "matvec_seconds", "fused_seconds",
               "fused_oracle_seconds"}


@pytest.fixture(scope="module")
def prob():
    X, y, queries = tiny_ranking_problem(21, n_queries=5, sizes=(5, 6, 7))
    return StructuredHinge(X, y, queries, brute_ap_oracle)


@pytest.fixture(scope="module")
def optimum(prob):
    return cutting_plane(prob, 2.0, tol=1e-9, max_iter=1000)


def test_registry():
    assert SOLVERS == {"cutting_plane": cutting_plane, "pegasos": pegasos,
                       "frank_wolfe": frank_wolfe}


@pytest.mark.parametrize("name", list(SOLVERS))
def test_history_records(prob, optimum, name):
    res = SOLVERS[name](prob, 2.0, tol=1e-3, max_iter=5000, random_state=0)
    assert isinstance(res, SolverResult) and res.converged
    assert res.history and all(COMMON_KEYS <= set(r) for r in res.history)
    its = [r["iteration"] for r in res.history]
    assert its == sorted(set(its)) and its[-1] == res.n_iter
    secs = [r["seconds"] for r in res.history]
    assert np.all(np.diff(secs) >= 0)
    assert all(r["oracle_seconds"] >= 0 and r["matvec_seconds"] >= 0 for r in res.history)
    assert np.all(np.diff([r["primal"] for r in res.history]) <= 0)  # best J so far
    assert np.all(np.diff([r["dual"] for r in res.history]) >= 0)   # best bound so far
    J_star = optimum.objective
    for r in res.history:
        assert r["dual"] <= J_star * (1 + 1e-9) and r["primal"] >= J_star * (1 - 1e-9)
        assert r["gap"] == pytest.approx(r["primal"] - r["dual"])
    assert res.history[-1]["gap"] <= 1e-3 * res.history[-1]["primal"]
    assert res.objective == res.history[-1]["primal"]


@pytest.mark.parametrize("name", list(SOLVERS))
def test_callback_stops(prob, name):
    seen = []

    def stop_at_second(record):
        seen.append(record)
        return len(seen) == 2

    res = SOLVERS[name](prob, 2.0, tol=0.0, max_iter=10_000, callback=stop_at_second,
                        random_state=0)
    assert len(seen) == 2 and len(res.history) == 2 and not res.converged
    assert res.history == seen
    assert res.objective == pytest.approx(prob.objective(res.w, 2.0), rel=1e-12)


@pytest.mark.parametrize("name", list(SOLVERS))
def test_max_iter_reached_is_not_converged(prob, name):
    res = SOLVERS[name](prob, 2.0, tol=0.0, max_iter=3, random_state=0)
    assert not res.converged and res.n_iter == 3


@pytest.mark.parametrize("name", list(SOLVERS))
def test_warm_start_from_the_optimum(prob, optimum, name):
    cold = SOLVERS[name](prob, 2.0, tol=1e-3, max_iter=5000, random_state=0)
    calls = prob.n_oracle_calls
    warm = SOLVERS[name](prob, 2.0, tol=1e-3, max_iter=5000, w0=optimum.w, random_state=0)
    warm_calls = prob.n_oracle_calls - calls
    assert warm.converged
    assert warm.objective <= optimum.objective * (1 + 1e-3)
    assert warm_calls <= cold.history[-1]["iteration"] * prob.n_queries * 2 + 2 * prob.n_queries
    if name == "cutting_plane":
        assert warm.n_iter <= cold.n_iter
        assert warm.history[0]["primal"] == pytest.approx(optimum.objective, rel=1e-12)


@pytest.mark.parametrize("name", ["pegasos", "frank_wolfe"])
def test_random_state_reproducible(prob, name):
    a = SOLVERS[name](prob, 2.0, tol=0.0, max_iter=7, random_state=3)
    b = SOLVERS[name](prob, 2.0, tol=0.0, max_iter=7, random_state=3)
    np.testing.assert_array_equal(a.w, b.w)


def test_pegasos_batch_sizes_and_single_query():
    X, y, queries = tiny_ranking_problem(3, n_queries=1, sizes=(7,), d=2)
    one = StructuredHinge(X, y, queries, brute_ap_oracle)
    ref = cutting_plane(one, 1.0, tol=1e-9)
    res = pegasos(one, 1.0, tol=1e-3, max_iter=20000)
    assert res.converged and res.objective <= ref.objective * (1 + 1e-3)
    X, y, queries = tiny_ranking_problem(9, n_queries=6, sizes=(5, 6))
    many = StructuredHinge(X, y, queries, brute_ap_oracle)
    ref = cutting_plane(many, 1.0, tol=1e-9)
    for batch_size in (1, 4, 6, 100):
        res = pegasos(many, 1.0, tol=1e-3, max_iter=50000, batch_size=batch_size, random_state=0)
        assert res.converged and res.objective <= ref.objective * (1 + 1e-3)


def test_frank_wolfe_single_query_is_batch_fw():
    X, y, queries = tiny_ranking_problem(4, n_queries=1, sizes=(7,), d=2)
    one = StructuredHinge(X, y, queries, brute_ap_oracle)
    ref = cutting_plane(one, 1.0, tol=1e-9)
    for atoms in (2, 3, 200):
        calls = one.n_oracle_calls
        res = frank_wolfe(one, 1.0, tol=1e-3, max_iter=20000, atoms=atoms)
        assert res.converged and res.objective <= ref.objective * (1 + 1e-3)
        assert one.n_oracle_calls - calls == res.n_iter  # one full pass per iteration
    with pytest.raises(ValueError, match="atoms"):
        frank_wolfe(one, 1.0, atoms=1)


@pytest.mark.parametrize("name", list(SOLVERS))
@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"C": 0.0}, "C must be"),
        ({"C": -1.0}, "C must be"),
        ({"C": np.inf}, "C must be"),
        ({"tol": -1e-3}, "tol must be"),
        ({"max_iter": 0}, "max_iter must be"),
        ({"max_iter": 2.5}, "max_iter must be"),
        ({"w0": np.zeros(5)}, "w0 must have shape"),
        ({"w0": np.array([np.nan, 0.0, 0.0])}, "w0 contains"),
        ({"callback": "print"}, "callback must be"),
    ],
)
def test_bad_arguments(prob, name, kwargs, match):
    args = {"C": 1.0}
    args.update(kwargs)
    C = args.pop("C")
    with pytest.raises(ValueError, match=match):
        SOLVERS[name](prob, C, **args)


def test_solver_specific_bad_arguments(prob):
    with pytest.raises(ValueError, match="batch_size"):
        pegasos(prob, 1.0, batch_size=0)
    with pytest.raises(ValueError, match="check_every"):
        pegasos(prob, 1.0, check_every=0)
    with pytest.raises(ValueError, match="check_every"):
        frank_wolfe(prob, 1.0, check_every=0)


def test_pegasos_certificate_without_block_dual(prob, optimum, monkeypatch):
    """Large Q·d: only the check planes certify; the bound stays valid and training still stops."""
    monkeypatch.setattr(sys.modules["ssvm.solvers.pegasos"], "_MAX_PLANE_STORE", 0)
    res = pegasos(prob, 2.0, tol=1e-2, max_iter=20000, random_state=0)
    assert res.converged
    assert res.objective <= optimum.objective * (1 + 1e-2)
    assert all(r["dual"] <= optimum.objective * (1 + 1e-9) for r in res.history)
