"""All three solvers reach the cutting plane's certified optimum of the same J on real data."""

import numpy as np
import pytest
from solver_refs import (
    breast_cancer,
    brute_ap_oracle,
    letor,
    tiny_ranking_problem,
    zero_one_oracle,
)

from ssvm.losses import get_oracle
from ssvm.problem import StructuredHinge
from ssvm.solvers import SOLVERS, cutting_plane


def bc_small_queries(seed=0, n_queries=12, size=7):
    """Breast-cancer samples split into small queries (brute force can check their AP oracle)."""
    X, y = breast_cancer()
    rng = np.random.default_rng(seed)
    pos, neg = rng.permutation(np.flatnonzero(y)), rng.permutation(np.flatnonzero(~y))
    queries = []
    for k in range(n_queries):
        n_pos = 1 + k % (size - 1)
        queries.append(np.concatenate([pos[k * size : k * size + n_pos],
                                       neg[k * size : k * size + size - n_pos]]))
    return X, y, queries


def tiny_random():
    return tiny_ranking_problem(11, n_queries=4, sizes=(5, 7, 6))


CASES = {
    # name: (data builder, oracle, C, fit_intercept)
    "tiny_brute_ap": (tiny_random, brute_ap_oracle, 2.0, False),
    "bc_small_queries_brute_ap": (bc_small_queries, brute_ap_oracle, 1.0, False),
    "bc_small_queries_ap": (bc_small_queries, get_oracle("ap"), 1.0, False),
    "bc_zero_one_intercept": (lambda: (*breast_cancer(), [np.arange(569)]), zero_one_oracle, 1.0,
                              True),
    "bc_ap": (lambda: (*breast_cancer(), [np.arange(569)]), get_oracle("ap"), 1.0, False),
    "letor_ap": (lambda: letor(max_queries=60), get_oracle("ap"), 1.0, False),
    "letor_ndcg": (lambda: letor(max_queries=60), get_oracle("ndcg"), 1.0, False),
    "letor_zero_one": (lambda: letor(max_queries=60), zero_one_oracle, 1.0, False),
}


@pytest.fixture(scope="module")
def optima():
    """Cutting-plane optimum (tol 1e-6, certified) per case, computed once."""
    cache = {}

    def get(name):
        if name not in cache:
            build, oracle, C, fit_intercept = CASES[name]
            X, y, queries = build()
            prob = StructuredHinge(X, y, queries, oracle, fit_intercept=fit_intercept)
            res = cutting_plane(prob, C, tol=1e-6, max_iter=3000)
            assert res.converged
            cache[name] = (prob, C, res)
        return cache[name]

    return get


@pytest.mark.parametrize("solver", ["pegasos", "frank_wolfe"])
@pytest.mark.parametrize("case", list(CASES))
def test_solvers_agree_with_certified_optimum(optima, case, solver):
    prob, C, ref = optima(case)
    lower = ref.history[-1]["dual"]  # certified: lower <= min J <= ref.objective
    assert ref.objective - lower <= 1e-6 * ref.objective
    res = SOLVERS[solver](prob, C, tol=5e-4, max_iter=20000, random_state=0)
    assert res.objective == pytest.approx(prob.objective(res.w, C), rel=1e-12)
    assert res.objective >= lower * (1 - 1e-12)
    assert res.objective <= ref.objective * (1 + 1e-3)
    assert res.converged
    # the solver's own certificate is valid: its dual never exceeds the certified optimum
    assert res.history[-1]["dual"] <= ref.objective * (1 + 1e-9)


def test_real_zero_one_oracle_gives_the_same_problem(optima):
    prob, C, ref = optima("bc_zero_one_intercept")
    X, y = breast_cancer()
    real = StructuredHinge(X, y, [np.arange(569)], get_oracle("zero_one"), fit_intercept=True)
    assert real.objective(ref.w, C) == pytest.approx(ref.objective, rel=1e-12)
    res = cutting_plane(real, C, tol=1e-6)
    assert res.objective == pytest.approx(ref.objective, rel=2e-6)
