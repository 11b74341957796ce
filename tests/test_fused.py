"""The fused training round (ssvm.problem._fused) against the two-pass round it replaces; its
oracles' time (ssvm.problem._ticks) charged to ``oracle_seconds`` and ``n_oracle_calls`` as the
two-pass round charges them, and split from ``fused_seconds`` without counting twice (checked for
being there and adding up, and against a second clock over the same interval; never for speed)."""

import json
import os
import subprocess
import sys

import numba
import numpy as np
import pytest
import scipy.sparse as sp

import ssvm.problem._fused as fused_module
from ssvm.losses import QSLoss, get_oracle
from ssvm.losses._classification_kernels import precision_at_k_batch, precision_at_k_into, zero_one_into
from ssvm.losses.classification import precision_at_k_oracle, zero_one_oracle
from ssvm.problem import ScoreHinge, StructuredHinge
from ssvm.problem._fused import FusedRound, fused_plane, oracle_form
from ssvm.problem._ticks import COUNTER_WORKS
from ssvm.solvers import cutting_plane

LOSSES = ("ap", "ndcg", "zero_one", "precision_at_k")


def oracle_of(loss, **params):
    """The loss's "auto" oracle; NDCG with binary gains (the graded default has no fused form)."""
    return get_oracle(loss, **({"gain": "binary"} if loss == "ndcg" else {}), **params)


def ranking_data(seed, n_queries=30, sizes=(2, 60), d=5, frac=0.2):
    """Queries of random sizes (some with many positives: the walk; some few: the grid)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(sizes[0], sizes[1] + 1, n_queries)
    qid = np.repeat(np.arange(n_queries), sizes)
    n = qid.size
    y = rng.random(n) < rng.uniform(0.02, 0.6, n_queries)[qid]
    X = rng.normal(size=(n, d))
    X[y] += 0.5
    X[rng.random(n) < 0.1] = X[0]  # rows that tie
    queries = [np.flatnonzero(qid == q) for q in range(n_queries)]
    queries = [q for q in queries if y[q].any() and not y[q].all()]
    return X, y, queries


def assert_same_plane(a, b, rtol=1e-12):
    H_a, off_a, g_a = a
    H_b, off_b, g_b = b
    scale = max(1.0, abs(H_b), np.abs(g_b).max())
    assert abs(H_a - H_b) <= rtol * scale
    assert off_a == pytest.approx(off_b, rel=1e-13, abs=1e-15)
    np.testing.assert_allclose(g_a, g_b, rtol=0, atol=rtol * scale)


def both_planes(X, y, queries, loss, w, fit_intercept=False, **params):
    fused = StructuredHinge(X, y, queries, oracle_of(loss, **params), fit_intercept=fit_intercept)
    plain = StructuredHinge(X, y, queries, oracle_of(loss, **params), fit_intercept=fit_intercept, fused=False)
    out = fused.plane(w), plain.plane(w)
    assert fused._fused.supported and fused.fused_seconds > 0 and plain.fused_seconds == 0
    return out


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of a few rows and chunks of a few blocks: the parallel loop on small problems (by
    default they run as one chunk in the calling thread)."""
    monkeypatch.setattr(fused_module, "_BLOCK_BYTES", 200)
    monkeypatch.setattr(fused_module, "_PARALLEL_BYTES", 1000)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("layout", ["float64", "float32", "csr64", "csr32"])
def test_fused_plane_equals_two_pass(loss, layout, small_blocks):
    for seed in range(4):
        X, y, queries = ranking_data(seed)
        X = in_layout(X, layout)
        for w, fit_intercept in weight_cases(X.shape[1], seed):
            assert_same_plane(*both_planes(X, y, queries, loss, w, fit_intercept))


def in_layout(X, layout):
    """``X`` as float64 / float32, dense or CSR (small entries dropped)."""
    X = X.astype(np.float32 if layout.endswith("32") else np.float64)
    if layout.startswith("csr"):
        X[np.abs(X) < 0.7] = 0.0
        X = sp.csr_matrix(X)
    return X


def weight_cases(d, seed):
    """``(w, fit_intercept)``: w of scale 0 (every score tied), tiny, unit and large."""
    rng = np.random.default_rng(seed)
    for fit_intercept in (False, True):
        for scale in (0.0, 1e-3, 1.0, 30.0):
            yield rng.normal(size=d + fit_intercept) * scale, fit_intercept


@pytest.mark.parametrize("loss", LOSSES)
def test_fit_with_fused_round_equals_two_pass_fit(loss):
    X, y, queries = ranking_data(7, n_queries=40, sizes=(20, 120), d=8)
    results = []
    for fused in (True, False):
        problem = StructuredHinge(X, y, queries, oracle_of(loss), fit_intercept=(loss == "zero_one"), fused=fused)
        results.append(cutting_plane(problem, 10.0, tol=1e-6, max_iter=300))
    a, b = results
    assert a.n_iter == b.n_iter
    np.testing.assert_allclose(a.w, b.w, rtol=0, atol=1e-10)
    np.testing.assert_allclose([r["primal"] for r in a.history], [r["primal"] for r in b.history],
                               rtol=1e-10, atol=1e-10)


def test_skipped_queries_gaps_and_large_queries_run_apart(small_blocks):
    """Queries not in row order, rows between queries, and a QS query above the batch limit."""
    rng = np.random.default_rng(3)
    n = 10000
    X = rng.normal(size=(n, 4))
    y = rng.random(n) < 0.1
    ranges = [(0, 50), (60, 200), (200, 5200), (5300, 5340), (5340, 10000)]  # gaps at 50, 5200
    queries = [np.arange(a, b) for a, b in ranges]
    w = rng.normal(size=4)
    for loss in LOSSES:
        assert_same_plane(*both_planes(X, y, queries, loss, w))
        # gathered (non-range) queries: the stacked rows are a copy, in query order
        assert_same_plane(*both_planes(X, y, [queries[3], queries[0], queries[1]], loss, w))
    hinge = ScoreHinge(y, queries, get_oracle("ap"))
    fused = FusedRound(X[hinge.rows], hinge, False)
    assert fused.apart.tolist() == [2, 4]  # the QS queries of more than 4096 rows


def test_integer_features_above_float32_precision():
    """16777217 = 2^24 + 1 is exact in float64, not in float32: the plane must see it exactly."""
    X = np.array([[0], [16777217], [1], [0]])
    y = np.array([1, 0, 1, 0])
    queries = [np.array([0, 1]), np.array([2, 3])]
    for loss in LOSSES:
        a, b = both_planes(X, y, queries, loss, np.array([1e-7]))
        assert_same_plane(a, b)
        exact = StructuredHinge(X.astype(np.float64), y, queries, oracle_of(loss), fused=False).plane(np.array([1e-7]))
        assert a[2][0] == pytest.approx(exact[2][0], rel=1e-15)
    # 0-1: every row violated, c = (-1/2, 1/2) per query, Q = 2: g = (16777217 - 1) / 4 (float32: ...75)
    assert StructuredHinge(X, y, queries, get_oracle("zero_one")).plane(np.array([1e-7]))[2][0] == 4194304.0


@pytest.mark.parametrize("loss", LOSSES)
def test_smallest_problem_and_one_query_over_all_rows(loss):
    X = np.array([[1.0, -2.0], [0.5, 3.0]])
    y = np.array([True, False])
    w = np.array([0.3, -0.1])
    assert_same_plane(*both_planes(X, y, [np.arange(2)], loss, w))
    rng = np.random.default_rng(1)
    X = rng.normal(size=(6000, 3))
    y = rng.random(6000) < 0.05
    assert_same_plane(*both_planes(X, y, [np.arange(6000)], loss, rng.normal(size=3)))


def test_no_block_in_the_loop_and_fused_plane_function():
    """Every query run apart (no block for the compiled loop), and the module function."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(5000, 3))
    y = rng.random(5000) < 0.2
    hinge = ScoreHinge(y, [np.arange(5000)], oracle_of("ndcg"))
    w = rng.normal(size=3)
    fused = FusedRound(X, hinge, False)
    assert fused.block_cuts.tolist() == [0] and fused.apart.tolist() == [0]
    plain = StructuredHinge(X, y, [np.arange(5000)], oracle_of("ndcg"), fused=False).plane(w)
    assert_same_plane(fused_plane(X, hinge, w), plain)


def test_oracles_without_compiled_form_fall_back():
    class Linear(QSLoss):  # a QS loss without compiled_batch
        def kernel_spec(self, n_pos, n_neg):
            return 2, np.linspace(0.0, -1.0 / n_pos, n_pos + n_neg + 1)

        def value(self, counts):
            return 0.0

    X, y, queries = ranking_data(4)
    w = np.random.default_rng(4).normal(size=X.shape[1])
    plain = StructuredHinge(X, y, queries, get_oracle("ap"), fused=False).plane(w)
    for oracle in (zero_one_oracle, get_oracle(Linear()), get_oracle("ap", "yue")):
        hinge = ScoreHinge(y, queries, oracle)
        assert not FusedRound(X[hinge.rows], hinge, False).supported
        assert fused_plane(X[hinge.rows], hinge, w) is None
        problem = StructuredHinge(X, y, queries, oracle)
        out = problem.plane(w)
        assert problem.fused_seconds == 0.0
        assert_same_plane(out, StructuredHinge(X, y, queries, oracle, fused=False).plane(w))
    assert_same_plane(StructuredHinge(X, y, queries, get_oracle("ap", "yue")).plane(w), plain)
    # graded NDCG through a per-level combination of another binary oracle has no compiled form
    assert oracle_form(get_oracle("ndcg", "chakrabarti", gain="exponential")) is None


def test_result_does_not_depend_on_the_threads(small_blocks):
    X, y, queries = ranking_data(5, n_queries=60)
    w = np.random.default_rng(5).normal(size=X.shape[1])
    problem = StructuredHinge(X, y, queries, get_oracle("ap"))
    problem.plane(w)
    assert problem._fused.chunk_cuts.size > 3  # several chunks: the parallel loop
    assert_same_on_one_and_two_threads(problem, w)


def assert_same_on_one_and_two_threads(problem, w):
    """The plane at ``w`` is the same, bit for bit, on one and two numba threads."""
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = problem.plane(w)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = problem.plane(w)
    finally:
        numba.set_num_threads(before)
    assert one[0] == two[0] and one[1] == two[1] and np.array_equal(one[2], two[2])


def test_compiled_classification_kernels_equal_numpy_oracles():
    """Bit for bit, on thousands of small random queries with ties, one positive, one negative."""
    rng = np.random.default_rng(0)
    for _ in range(3000):
        n = int(rng.integers(2, 12))
        s = rng.integers(-3, 4, n) * rng.choice([0.5, 1.0, 1e-9, 1e9])
        y = np.zeros(n, dtype=bool)
        y[rng.permutation(n)[:rng.integers(1, n)]] = True  # 1 .. n-1 positives
        c = np.empty(n)
        c_ref, d_ref = zero_one_oracle(s, y)
        assert zero_one_into(s, y, c) == d_ref and np.array_equal(c, c_ref)
        k = int(rng.integers(1, n + 3))
        c_ref, d_ref = precision_at_k_oracle(s, y, k)
        assert precision_at_k_into(s, y, k, c) == d_ref, (s, y, k)
        assert np.array_equal(c, c_ref), (s, y, k)


def test_precision_at_k_batch_equals_the_oracle_per_query():
    rng = np.random.default_rng(1)
    s = np.round(rng.normal(size=400), 1)
    y = rng.random(400) < 0.3
    starts, ends = np.array([0, 30, 100, 250]), np.array([20, 100, 240, 400])
    c, delta = precision_at_k_batch(s, y, starts, ends, k=7)
    assert np.all(c[20:30] == 0) and np.all(c[240:250] == 0)
    for q, (a, b) in enumerate(zip(starts, ends)):
        c_ref, d_ref = precision_at_k_oracle(s[a:b], y[a:b], 7)
        assert np.array_equal(c[a:b], c_ref) and delta[q] == d_ref
    assert get_oracle("precision_at_k", k=7).batched is precision_at_k_batch


def graded_data(seed, n_queries=30, sizes=(2, 60), d=5, top=4):
    """Queries of random sizes with grades 0..top (some queries with two grades only, some ties)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(sizes[0], sizes[1] + 1, n_queries)
    qid = np.repeat(np.arange(n_queries), sizes)
    tops = rng.integers(1, top + 1, n_queries)[qid]
    grades = np.floor(rng.random(qid.size) * (tops + 1)).astype(np.int64)
    X = rng.normal(size=(qid.size, d))
    X += 0.3 * grades[:, None]
    X[rng.random(qid.size) < 0.1] = X[0]  # rows that tie
    queries = [np.flatnonzero(qid == q) for q in range(n_queries)]
    return X, grades, [q for q in queries if np.unique(grades[q]).size > 1]


def graded_problem(X, grades, queries, gain="exponential", **kwargs):
    """The graded hinge as RankSVM builds it: the grades themselves, checked by the estimator
    (``check_input=True`` would reduce them to ``y > 0``)."""
    return StructuredHinge(X, grades, queries, get_oracle("ndcg", gain=gain), check_input=False, **kwargs)


def both_graded_planes(X, grades, queries, w, gain, fit_intercept=False):
    fused = graded_problem(X, grades, queries, gain, fit_intercept=fit_intercept)
    plain = graded_problem(X, grades, queries, gain, fit_intercept=fit_intercept, fused=False)
    out = fused.plane(w), plain.plane(w)
    assert fused._fused.supported and fused.fused_seconds > 0 and plain.fused_seconds == 0
    return out


@pytest.mark.parametrize("gain", ["exponential", "linear"])
@pytest.mark.parametrize("layout", ["float64", "float32", "csr64", "csr32"])
def test_graded_ndcg_fused_plane_equals_two_pass(gain, layout, small_blocks):
    assert oracle_form(get_oracle("ndcg", gain=gain))[0] == fused_module.MODE_GRADED
    assert oracle_form(get_oracle("ndcg", gain="binary"))[0] == fused_module.MODE_QS  # y > 0: binary QS
    for seed in range(4):
        X, grades, queries = graded_data(seed)
        X = in_layout(X, layout)
        for w, fit_intercept in weight_cases(X.shape[1], seed):
            assert_same_plane(*both_graded_planes(X, grades, queries, w, gain, fit_intercept))


def test_graded_ndcg_fused_gaps_large_queries_and_threads(small_blocks):
    """Rows between queries, queries out of row order, one above the batch limit (run apart), and
    the same numbers on 1 and 2 threads; the gain reaches the kernel (linear differs)."""
    rng = np.random.default_rng(8)
    n = 9500
    X = rng.normal(size=(n, 4))
    grades = rng.integers(0, 5, n)
    ranges = [(0, 40), (50, 300), (300, 4800), (4900, 4940), (4940, 9500)]
    queries = [np.arange(a, b) for a, b in ranges]
    w = rng.normal(size=4)
    for gain in ("exponential", "linear"):
        assert_same_plane(*both_graded_planes(X, grades, queries, w, gain))
        assert_same_plane(*both_graded_planes(X, grades, [queries[3], queries[0], queries[1]], w, gain))
    hinge = ScoreHinge(grades, queries, get_oracle("ndcg", gain="exponential"), check_input=False)
    assert FusedRound(X[hinge.rows], hinge, False).apart.tolist() == [2, 4]
    exp_plane = both_graded_planes(X, grades, queries[:2], w, "exponential")[0]
    lin_plane = both_graded_planes(X, grades, queries[:2], w, "linear")[0]
    assert abs(exp_plane[0] - lin_plane[0]) > 1e-6
    problem = graded_problem(X, grades, queries[:2] + queries[3:4])
    problem.plane(w)
    assert problem._fused.chunk_cuts.size > 2
    assert_same_on_one_and_two_threads(problem, w)


def test_graded_ndcg_fit_with_fused_round_equals_two_pass_fit():
    X, grades, queries = graded_data(9, n_queries=40, sizes=(20, 120), d=8)
    results = []
    for fused in (True, False):
        problem = graded_problem(X, grades, queries, fused=fused)
        results.append(cutting_plane(problem, 10.0, tol=1e-6, max_iter=300))
    a, b = results
    assert a.n_iter == b.n_iter
    np.testing.assert_allclose(a.w, b.w, rtol=0, atol=1e-10)


needs_counter = pytest.mark.skipif(not COUNTER_WORKS, reason="the cycle counter is read on x86-64 only")


FIRST_CALIBRATION = """
import json, time
from ssvm.problem._ticks import seconds_per_tick, ticks
factors = [seconds_per_tick()]  # the first calibration, in a cold cache: ticks compiles first
ratios = []
for wait in (0.01, 0.05):
    t0, c0 = time.perf_counter(), ticks()
    time.sleep(wait)
    c1, t1 = ticks(), time.perf_counter()
    factors.append(seconds_per_tick())
    ratios.append([(c1 - c0) * f / (t1 - t0) for f in (factors[0], factors[-1])])
print(json.dumps(ratios))
"""


@needs_counter
def test_ticks_measure_what_perf_counter_measures(tmp_path):
    """The same interval by both clocks (a sleep: the counter runs while the thread waits), with
    the first factor of a fresh process (numba compiling the clock) and a later one."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", FIRST_CALIBRATION], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for ratio in json.loads(proc.stdout):
        assert ratio == pytest.approx([1.0, 1.0], rel=0.02)


def fit(loss, fused, **data):
    X, y, queries = ranking_data(8, **data)
    problem = StructuredHinge(X, y, queries, oracle_of(loss), fit_intercept=(loss == "zero_one"), fused=fused)
    return problem, cutting_plane(problem, 10.0, tol=1e-6, max_iter=300)


@needs_counter
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("chunks", ["one", "several"])
def test_a_fused_fit_charges_its_oracles(loss, chunks, monkeypatch):
    """``oracle_seconds`` and ``n_oracle_calls`` of a fused fit are there (in the calling thread
    and in numba's threads), the calls as many as the two-pass fit's, the iterates the same; every
    history record splits its time without counting the fused oracles twice."""
    if chunks == "several":
        monkeypatch.setattr(fused_module, "_BLOCK_BYTES", 2000)
        monkeypatch.setattr(fused_module, "_PARALLEL_BYTES", 10000)
    data = {"n_queries": 80, "sizes": (50, 250), "d": 6}
    problem, result = fit(loss, True, **data)
    plain, plain_result = fit(loss, False, **data)
    n_chunks = problem._fused.chunk_cuts.size - 1
    assert (n_chunks == 1) == (chunks == "one")
    np.testing.assert_allclose(result.w, plain_result.w, rtol=0, atol=1e-10)
    assert result.n_iter == plain_result.n_iter and problem.n_oracle_calls == plain.n_oracle_calls
    assert problem.n_oracle_calls >= result.n_iter * problem.n_queries
    assert problem.fused_oracle_seconds > 0 and problem.oracle_seconds >= problem.fused_oracle_seconds
    assert plain.oracle_seconds > 0 and plain.fused_oracle_seconds == 0
    last = result.history[-1]
    assert last["oracle_seconds"] == problem.oracle_seconds  # the recorder started at zero
    assert last["fused_oracle_seconds"] == problem.fused_oracle_seconds
    for before, rec in zip([None] + result.history[:-1], result.history):
        assert 0 <= rec["fused_oracle_seconds"] <= rec["oracle_seconds"]
        if n_chunks == 1:  # CPU-seconds are wall seconds: the parts fit in the time
            assert rec["fused_oracle_seconds"] <= rec["fused_seconds"]
            parts = rec["matvec_seconds"] + rec["fused_seconds"] + rec["oracle_seconds"] - rec["fused_oracle_seconds"]
            assert parts <= rec["seconds"]
        if before is not None:
            assert rec["fused_oracle_seconds"] >= before["fused_oracle_seconds"]


def test_oracles_of_queries_run_apart_are_charged_too():
    """A QS query above the batch kernels' limit runs after the loop, timed by ``perf_counter``
    (on every CPU); the round charges one call per query, as the two-pass round."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(6000, 3))
    y = rng.random(6000) < 0.1
    queries = [np.arange(6000)]
    fused = StructuredHinge(X, y, queries, oracle_of("ap"))
    plain = StructuredHinge(X, y, queries, oracle_of("ap"), fused=False)
    w = rng.normal(size=3)
    for problem in (fused, plain):
        problem.plane(w)
        problem.plane(2 * w)
    assert fused._fused.apart.tolist() == [0]
    assert fused.n_oracle_calls == plain.n_oracle_calls == 2
    assert fused.oracle_seconds > 0 and fused.fused_oracle_seconds == fused.oracle_seconds
    assert fused.oracle_seconds <= fused.fused_seconds
