"""The cutting plane's warm start: the bundle it accepts (check_bundle), and what it keeps of it."""

import numpy as np
import pytest
from solver_refs import brute_ap_oracle, tiny_ranking_problem

from ssvm.problem import StructuredHinge
from ssvm.solvers import cutting_plane
from ssvm.solvers._warm import Bundle, check_bundle

D = 3  # features


def _planes(k, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=k), rng.normal(size=(k, D))


@pytest.mark.parametrize("planes", [5, (1.0, 2.0, 3.0), "ab c"])
def test_what_is_not_a_pair_is_refused(planes):
    with pytest.raises(ValueError, match=r"planes must be a Bundle or a pair \(b, A\) of arrays of shapes \(K,\) "
                       r"and \(K, 3\)"):
        check_bundle(planes, D, 10)


@pytest.mark.parametrize("b, A", [
    (np.zeros((2, 1)), np.zeros((2, D))),  # b not 1-D
    (np.float64(0.5), np.zeros((1, D))),  # b a scalar
    (np.zeros(2), np.zeros((2, D - 1))),  # too few features
    (np.zeros(2), np.zeros((2, D + 1))),  # too many
    (np.zeros(2), np.zeros((1, D))),  # fewer rows than offsets
    (np.zeros(2), np.zeros((3, D))),  # more
    (np.zeros(2), np.zeros(2 * D)),  # A flat
])
def test_shapes_that_disagree_are_refused(b, A):
    with pytest.raises(ValueError, match=r"planes \(b, A\) must have shapes \(K,\) and \(K, 3\)"):
        check_bundle((b, A), D, 10)


@pytest.mark.parametrize("where", ["b", "A"])
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_a_non_finite_offset_or_coefficient_is_refused(where, value):
    b, A = _planes(3)
    (b if where == "b" else A)[1] = value
    with pytest.raises(ValueError, match="planes contain NaN or infinity"):
        check_bundle((b, A), D, 10)


@pytest.mark.parametrize("w, H, k", [(np.zeros(D), None, 2), (None, 0.5, 2), (np.zeros(D), 0.5, 0)])
def test_a_point_needs_its_value_and_its_plane(w, H, k):
    b, A = _planes(k)
    with pytest.raises(ValueError, match=r"a Bundle's point needs w, H\(w\) and its plane \(the last one\) together"):
        check_bundle(Bundle(b, A, w, H), D, 10)


@pytest.mark.parametrize("k", [0, 1, 4])
def test_planes_without_a_point_are_accepted_and_kept(k):
    b, A = _planes(k)
    for planes in ((b, A), Bundle(b, A), (list(b), A.tolist()))[:3 if k else 2]:  # [] has no row width
        bundle = check_bundle(planes, D, 10)
        np.testing.assert_array_equal(bundle.b, b)
        np.testing.assert_array_equal(bundle.A, A.reshape(k, D))
        assert bundle.w is None and bundle.H is None


@pytest.mark.parametrize("room", [1, 2, 5, 6, 9])
def test_the_newest_planes_are_kept_with_the_point(room):
    b, A = _planes(6)
    w = np.ones(D)
    bundle = check_bundle(Bundle(b, A, w, 2), D, room)
    keep = min(room, 6)
    np.testing.assert_array_equal(bundle.b, b[-keep:])
    np.testing.assert_array_equal(bundle.A, A[-keep:])
    assert bundle.H == 2.0 and type(bundle.H) is float and bundle.w is w


def test_a_solve_from_more_planes_than_its_capacity_keeps_the_newest():
    X, y, queries = tiny_ranking_problem(1, n_queries=3, sizes=(5, 6, 4))
    problem = StructuredHinge(X, y, queries, brute_ap_oracle)
    first = cutting_plane(problem, 1.0, tol=1e-8, ocas=False)
    assert first.planes.b.size > 4
    again = cutting_plane(problem, 1.0, tol=1e-8, ocas=False, planes=first.planes, capacity=4, max_iter=1)
    # room for capacity - 1 = 3 planes: the newest, the last one the point's, which is the first cut
    np.testing.assert_array_equal(again.planes.b[:-1], first.planes.b[-3:])
    assert again.history[-1]["oracle_passes"] == 0


@pytest.mark.parametrize("ocas", [False, True])
def test_a_warm_solve_at_another_C_evaluates_every_later_point(ocas):
    """The bundle's H is known at its point only: each later round's point runs the oracles, so the
    objective returned is J at the returned w, and the solve reaches the cold optimum."""
    X, y, queries = tiny_ranking_problem(2, n_queries=3, sizes=(5, 6, 4))
    problem = StructuredHinge(X, y, queries, brute_ap_oracle)
    first = cutting_plane(problem, 0.1, tol=1e-8, ocas=ocas)
    for C in (1.0, 10.0):
        warm = cutting_plane(problem, C, tol=1e-8, ocas=ocas, planes=first.planes)
        cold = cutting_plane(problem, C, tol=1e-8, ocas=ocas)
        assert warm.n_iter > 1 and warm.converged
        assert warm.objective == pytest.approx(problem.objective(warm.w, C), rel=1e-12)
        assert warm.objective == pytest.approx(cold.objective, rel=1e-6)
        if not ocas:  # one point a round: the start's oracle pass is saved, every later one is paid
            assert warm.history[-1]["oracle_passes"] == warm.n_iter - 1
