"""The score-space half of the problem (ScoreHinge) against a direct loop over queries, and the
problem protocol's seams (the plane, check_input, the line search's requirement)."""

import sys
from pathlib import Path

import numpy as np
import pytest

from ssvm.losses import get_oracle
from ssvm.problem import Problem, ScoreHinge, StructuredHinge
from ssvm.solvers import SOLVERS

sys.path.insert(0, str(Path(__file__).resolve().parent / "solvers"))
from solver_refs import brute_ap_oracle, tiny_ranking_problem  # noqa: E402


def direct_score_hinge(s, y, queries, oracle):
    """(1/Q) Σ_q [delta_q + s_q @ c_q] and ∂/∂s in row order, one oracle call per query."""
    H, grad = 0.0, np.zeros(s.shape[0])
    for q in queries:
        c, delta = oracle(s[q], y[q])
        H += delta + s[q] @ c
        grad[q] += c
    return H / len(queries), grad / len(queries)


@pytest.mark.parametrize("loss", ["ap", "ndcg", "zero_one", "precision_at_k"])
@pytest.mark.parametrize("layout", ["ranges", "ranges_with_gaps", "shuffled"])
def test_score_hinge_equals_a_loop_over_queries(loss, layout):
    rng = np.random.default_rng(3)
    n = 200
    y = rng.random(n) < 0.3
    cuts = np.sort(rng.choice(np.arange(5, n - 5), size=9, replace=False))
    queries = [q for q in np.split(np.arange(n), cuts) if 0 < y[q].sum() < q.size]
    if layout == "ranges_with_gaps":
        queries = [q[1:] for q in queries if 0 < y[q[1:]].sum() < q.size - 1]
    elif layout == "shuffled":
        perm = rng.permutation(n)
        queries = [np.sort(perm[q]) for q in queries]
        y = y[np.argsort(perm)]
    s = np.round(rng.normal(size=n), 1)  # ties
    oracle = get_oracle(loss)
    hinge = ScoreHinge(y, queries, oracle)
    H, c, offset = hinge(hinge.stack(s))
    H_ref, grad_ref = direct_score_hinge(s, y, queries, oracle)
    assert H == pytest.approx(H_ref, rel=1e-12, abs=1e-15)
    np.testing.assert_allclose(hinge.unstack(c), grad_ref, rtol=1e-12, atol=1e-15)
    assert offset + hinge.stack(s) @ c == pytest.approx(H, rel=1e-12, abs=1e-15)
    assert (layout == "shuffled") != isinstance(hinge.rows, slice)


def test_score_hinge_is_what_structured_hinge_calls():
    X, y, queries = tiny_ranking_problem(1, n_queries=4, sizes=(5, 6, 7))
    w = np.array([0.3, -1.0, 2.0])
    prob = StructuredHinge(X, y, queries, brute_ap_oracle)
    H, offset, g = prob.plane(w)
    H2, c, offset2 = prob.score_hinge(prob.score_hinge.stack(X @ w))
    assert (H, offset) == pytest.approx((H2, offset2), rel=1e-13)
    np.testing.assert_allclose(g, prob.score_hinge.stack(X).T @ c, rtol=1e-12, atol=1e-15)


def test_check_input_false_builds_the_same_problem():
    X, y, queries = tiny_ranking_problem(2, n_queries=3, sizes=(5, 6))
    w = np.array([1.0, 0.5, -0.25])
    checked = StructuredHinge(X, y, queries, brute_ap_oracle, fit_intercept=True)
    trusted = StructuredHinge(X, y.astype(bool), tuple(np.asarray(q, dtype=np.int64) for q in queries),
                              brute_ap_oracle, fit_intercept=True, check_input=False)
    for a, b in zip(checked.plane(np.append(w, 0.1)), trusted.plane(np.append(w, 0.1))):
        np.testing.assert_array_equal(a, b)


def test_score_hinge_rejects_bad_queries_and_oracles():
    y = np.array([1, 0, 1, 0])
    with pytest.raises(ValueError, match="positive and one negative"):
        ScoreHinge(y, [np.array([0, 2])], brute_ap_oracle)
    with pytest.raises(ValueError, match="outside"):
        ScoreHinge(y, [np.array([0, 9])], brute_ap_oracle)
    with pytest.raises(ValueError, match="callable"):
        ScoreHinge(y, [np.arange(4)], "qs")


class _PlaneOnly(Problem):
    """A problem that offers only the protocol's two methods (as a dask or label problem does)."""

    def __init__(self, inner):
        self.inner = inner
        self.n_features, self.n_queries = inner.n_features, inner.n_queries

    def plane(self, w):
        return self.inner.plane(w)

    def planes(self, w, queries=None):
        return self.inner.planes(w, queries)


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_every_solver_runs_on_the_bare_protocol(solver):
    X, y, queries = tiny_ranking_problem(5, n_queries=4, sizes=(6, 7))
    full = StructuredHinge(X, y, queries, brute_ap_oracle)
    bare = SOLVERS[solver](_PlaneOnly(full), 2.0, tol=1e-6, max_iter=300, random_state=0)
    ref = SOLVERS[solver](full, 2.0, tol=1e-6, max_iter=300, random_state=0)
    np.testing.assert_allclose(bare.w, ref.w, rtol=1e-12, atol=1e-14)


def test_line_search_needs_score_space_access():
    X, y, queries = tiny_ranking_problem(5, n_queries=2, sizes=(6,))
    bare = _PlaneOnly(StructuredHinge(X, y, queries, brute_ap_oracle))
    with pytest.raises(ValueError, match="line_search=True needs the score-space access"):
        SOLVERS["cutting_plane"](bare, 1.0, line_search=True)
