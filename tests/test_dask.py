"""RankSVM on dask arrays (local schedulers): the same fit as in memory, block alignment, errors.

The LocalCluster tests (workers lost, warm start, joblib on dask) are in test_dask_cluster.py.
"""

import warnings

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

from ssvm import RankSVM  # noqa: E402
from ssvm.losses import get_oracle  # noqa: E402
from ssvm.problem import StructuredHinge  # noqa: E402
from ssvm.problem._dask_blocks import aligned_chunks, merged_chunks, qid_runs  # noqa: E402
from ssvm.problem.dask_gathered import DaskGatheredHinge  # noqa: E402
from ssvm.problem.dask_space import DaskStructuredHinge  # noqa: E402
from ssvm.solvers import SOLVERS  # noqa: E402


@pytest.fixture(autouse=True)
def blocks_as_given():
    """Most tests here are about block boundaries and errors naming blocks: chunks are not
    joined into larger blocks (test_small_chunks_are_joined tests the joining)."""
    with dask.config.set({"array.chunk-size": 0}):
        yield


def ranking_data(seed=0, n_queries=60, d=6, dtype=np.float64):
    """Consecutive queries of 5..40 rows, graded relevance, one query without a positive."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(5, 41, size=n_queries)
    qid = np.repeat(rng.permutation(10 * n_queries)[:n_queries], sizes)  # ids in any order
    n = qid.shape[0]
    y = (rng.random(n) < 0.25) * rng.integers(1, 4, size=n)
    y[qid == qid[0]] = 0  # a degenerate query, skipped with a warning
    X = rng.standard_normal((n, d))
    X[y > 0] += 0.4
    return X.astype(dtype), y, qid


def fit_both(X, y, qid, chunks, *, y_dask=False, qid_dask=False, **params):
    params = {"C": 10.0, **params}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        mem = RankSVM(**params).fit(X, y, qid=qid)
        Xd = da.from_array(X, chunks=(chunks, X.shape[1]))
        yd = da.from_array(y, chunks=97) if y_dask else y
        qd = da.from_array(qid, chunks=131) if qid_dask else qid
        dsk = RankSVM(**params).fit(Xd, yd, qid=qd)
    return mem, dsk


def assert_same_fit(mem, dsk, rtol=1e-10):
    assert dsk.n_iter_ == mem.n_iter_
    np.testing.assert_allclose(dsk.coef_, mem.coef_, rtol=rtol, atol=rtol * np.abs(mem.coef_).max())
    np.testing.assert_allclose(dsk.intercept_, mem.intercept_, rtol=rtol)
    assert dsk.objective_ == pytest.approx(mem.objective_, rel=rtol)
    assert dsk.n_queries_ == mem.n_queries_ and dsk.n_skipped_queries_ == mem.n_skipped_queries_
    primal = [[r["primal"] for r in m.history_] for m in (mem, dsk)]
    np.testing.assert_allclose(primal[1], primal[0], rtol=rtol)


@pytest.mark.parametrize("loss", ["ap", "ndcg", "zero_one", "precision_at_k"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_same_iterates_as_in_memory(loss, dtype):
    X, y, qid = ranking_data(1, dtype=dtype)
    gain = {"gain": "binary"} if loss == "ndcg" else {}  # graded NDCG does not run on dask (below)
    mem, dsk = fit_both(X, y, qid, chunks=173, loss=loss, **gain)  # boundaries inside queries
    assert_same_fit(mem, dsk)


def test_graded_ndcg_on_dask_says_what_to_pass():
    X, y, qid = ranking_data(1)
    with pytest.raises(ValueError, match="does not run on dask arrays yet; pass gain='binary'"):
        RankSVM(loss="ndcg").fit(da.from_array(X, chunks=(173, X.shape[1])), y, qid=qid)


@pytest.mark.parametrize("scheduler", ["threads", "sync"])
@pytest.mark.parametrize("y_dask, qid_dask", [(True, False), (False, True), (True, True)])
def test_same_fit_with_dask_labels_and_schedulers(scheduler, y_dask, qid_dask):
    X, y, qid = ranking_data(2)
    with dask.config.set(scheduler=scheduler):
        mem, dsk = fit_both(X, y, qid, chunks=250, y_dask=y_dask, qid_dask=qid_dask)
    assert_same_fit(mem, dsk)
    np.testing.assert_allclose(dsk.decision_function(X), mem.decision_function(X), rtol=1e-10)


def test_group_and_line_search_and_plain_cutting_plane():
    X, y, qid = ranking_data(3)
    group = np.diff(np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True]))
    Xd = da.from_array(X, chunks=(300, X.shape[1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        a = RankSVM(C=5.0).fit(Xd, y, group=group)
        b = RankSVM(C=5.0).fit(X, y, qid=qid)
        assert_same_fit(b, a)
        mem, dsk = fit_both(X, y, qid, 300, solver_params={"ocas": False})
        assert_same_fit(mem, dsk)
        with pytest.raises(ValueError, match="line_search=True needs the score-space access"):
            RankSVM(solver_params={"line_search": True}).fit(Xd, y, qid=qid)


def test_pegasos_same_iterates_and_frank_wolfe_refused():
    X, y, qid = ranking_data(4, n_queries=30)
    mem, dsk = fit_both(X, y, qid, 200, solver="pegasos", random_state=0, max_iter=300)
    np.testing.assert_allclose(dsk.coef_, mem.coef_, rtol=1e-10)
    with pytest.raises(ValueError, match="frank_wolfe.*needs in-memory data"):
        RankSVM(solver="frank_wolfe").fit(da.from_array(X, chunks=(200, 6)), y, qid=qid)


def test_warm_start_continues_from_the_stopped_fit():
    X, y, qid = ranking_data(5)
    Xd = da.from_array(X, chunks=(300, X.shape[1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = RankSVM(C=10.0).fit(Xd, y, qid=qid)
        part = RankSVM(C=10.0, max_iter=3, warm_start=True).fit(Xd, y, qid=qid)
        J3 = part.objective_
        part.set_params(max_iter=None).fit(Xd, y, qid=qid)
    assert part.history_[0]["primal"] == pytest.approx(J3, rel=1e-12)  # started at the stop
    assert part.objective_ <= full.objective_ * (1 + 1e-3)
    assert full.objective_ <= part.objective_ * (1 + 1e-3)


def test_planes_match_in_memory():
    X, y, qid = ranking_data(6, n_queries=25)
    relevant = y > 0
    oracle = get_oracle("ap", "auto")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        dsk = DaskStructuredHinge(da.from_array(X, chunks=(120, 6)), y, qid, oracle)
    runs = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    queries = [np.arange(a, b) for a, b in zip(runs, np.r_[runs[1:], len(qid)])]
    queries = [q for q in queries if 0 < relevant[q].sum() < q.size]
    mem = StructuredHinge(X, relevant, queries, oracle)
    assert dsk.n_queries == mem.n_queries and dsk.n_blocks > 1
    w = np.random.default_rng(0).standard_normal(6)
    for got, want in zip(dsk.plane(w), mem.plane(w)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    for subset in (None, [3, 0, 17, 3], [], [mem.n_queries - 1]):
        for got, want in zip(dsk.planes(w, subset), mem.planes(w, subset)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert dsk.n_rounds == 4 and dsk.result_bytes > 0 and dsk.matvec_seconds > 0  # [] runs none
    with pytest.raises(ValueError, match="query numbers"):
        dsk.planes(w, [mem.n_queries])


# ---------------------------------------------------------------- queries that span blocks


@pytest.mark.parametrize("loss", ["ap", "zero_one"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_classification_without_queries_same_as_in_memory(loss, n_classes):
    rng = np.random.default_rng(9)
    X = rng.standard_normal((900, 5))
    labels = np.argmax(X[:, :n_classes] + 0.8 * rng.standard_normal((900, n_classes)), axis=1)
    mem = RankSVM(loss=loss, C=10.0).fit(X, labels)
    dsk = RankSVM(loss=loss, C=10.0).fit(da.from_array(X, chunks=(200, 5)),
                                         da.from_array(labels, chunks=300))
    np.testing.assert_array_equal(dsk.classes_, mem.classes_)
    np.testing.assert_allclose(dsk.coef_, mem.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dsk.intercept_, mem.intercept_, rtol=1e-10, atol=1e-12)
    assert dsk.n_iter_ == mem.n_iter_


def test_gathered_rows_extra_and_queries_match_in_memory():
    rng = np.random.default_rng(10)
    X = rng.standard_normal((500, 4))
    extra = rng.standard_normal((30, 4))
    rows = np.sort(rng.choice(500, size=300, replace=False))
    Z = np.vstack([X[rows], extra])
    y = rng.random(Z.shape[0]) < 0.2
    y[:2], y[-2:] = [True, False], [True, False]
    queries = [np.arange(0, 100), np.arange(100, 330)]
    queries = [q for q in queries if 0 < y[q].sum() < q.size]
    oracle = get_oracle("ap", "auto")
    for fit_intercept in (False, True):
        dsk = DaskGatheredHinge(da.from_array(X, chunks=(64, 4)), y, oracle, rows=rows,
                                extra=extra, queries=queries, fit_intercept=fit_intercept)
        mem = StructuredHinge(Z, y, queries, oracle, fit_intercept=fit_intercept)
        w = rng.standard_normal(dsk.n_features)
        np.testing.assert_allclose(dsk.scores(w)[:300], mem.scores(w)[:300], rtol=1e-13)
        for got, want in zip(dsk.plane(w), mem.plane(w)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="per-query planes .* need in-memory data"):
        dsk.planes(w)
    one = DaskGatheredHinge(da.from_array(X, chunks=(64, 4)), y[:300], oracle, rows=rows)
    delta, G = one.planes(w[:4], [0])
    _, offset, g = one.plane(w[:4])
    assert delta[0] == offset and np.array_equal(G[0], g)
    with pytest.raises(ValueError, match="rows must be ascending, distinct"):
        DaskGatheredHinge(da.from_array(X, chunks=(64, 4)), y, oracle, rows=rows[::-1])
    with pytest.raises(ValueError, match="extra must have 4 columns"):
        DaskGatheredHinge(da.from_array(X, chunks=(64, 4)), y, oracle, rows=rows, extra=extra[:, :3])


def test_gathered_non_finite_names_block():
    X = np.random.default_rng(11).standard_normal((300, 3))
    X[130, 2] = np.inf
    y = np.arange(300) % 5 == 0
    with pytest.raises(ValueError, match=r"X holds NaN or infinity in block 1 \(rows 100:200\), "
                                         r"first at row 130"):
        RankSVM().fit(da.from_array(X, chunks=(100, 3)), y)


# ---------------------------------------------------------------- block alignment


def aligned_by_hand(sizes, chunks):
    """Each boundary moved back to the first row of the query holding it, by a loop; None if
    two boundaries meet."""
    starts = np.cumsum([0] + list(sizes[:-1]))
    out = [0]
    for b in np.cumsum(chunks)[:-1]:
        start = max(s for s in starts if s <= b)
        if start <= out[-1]:
            return None
        out.append(start)
    out.append(sum(sizes))
    return tuple(np.diff(out))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(1, 12), min_size=1, max_size=30), st.data())
def test_aligned_chunks_against_a_loop(sizes, data):
    n = sum(sizes)
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, n - 1)), max_size=8)) - {n})
    chunks = tuple(np.diff([0, *cuts, n]))
    qid = np.repeat(np.arange(len(sizes)) * 7 % 1009, sizes)
    bounds = np.cumsum((0,) + chunks)
    runs = [qid_runs(qid[a:b], b - a, (k, a)) for k, (a, b) in enumerate(zip(bounds, bounds[1:]))]
    want = aligned_by_hand(sizes, chunks)
    if want is None:
        with pytest.raises(ValueError, match="does not fit in block .* of X"):
            aligned_chunks(runs, chunks)
    else:
        assert aligned_chunks(runs, chunks) == want


def test_one_query_per_block_is_kept_and_too_large_query_named():
    X, y, qid = ranking_data(7, n_queries=4)
    sizes = np.diff(np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True]))
    chunks = tuple(int(s) for s in sizes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        problem = DaskStructuredHinge(da.from_array(X, chunks=(chunks, 6)), y, qid,
                                      get_oracle("ap", "auto"))
    assert problem.chunks == chunks and problem.n_blocks == 3  # the first query is skipped
    big = int(sizes.max())
    with pytest.raises(ValueError, match=rf"has {big} rows .* does not fit in block \d+ of X "
                                         rf"\(\d+ rows\).*at least as large as the largest "
                                         rf"query \({big} rows\)"):
        DaskStructuredHinge(da.from_array(X, chunks=(big - 1, 6)), y, qid, get_oracle("ap", "auto"))


# ---------------------------------------------------------------- errors naming the block


@pytest.fixture
def small():
    X, y, qid = ranking_data(8, n_queries=20)
    return X, y, qid


def dask_fit(X, y, qid, chunks=100, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        Xd = X if isinstance(X, da.Array) else da.from_array(X, chunks=(chunks, X.shape[1]))
        return RankSVM(max_iter=5, **params).fit(Xd, y, qid=qid)


def block_of(row, chunks):
    return int(np.searchsorted(np.cumsum(chunks), row, side="right"))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_X_names_block_and_row(small, bad):
    X, y, qid = small
    row = int(np.flatnonzero(qid == qid[-1])[0]) + 1  # in the last query, which is kept
    X = X.copy()
    X[row, 2] = bad
    Xd = da.from_array(X, chunks=(100, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        chunks = DaskStructuredHinge(da.from_array(np.zeros_like(X), chunks=(100, 6)), y, qid,
                                     get_oracle("ap", "auto")).chunks
    k = block_of(row, chunks)
    with pytest.raises(ValueError, match=rf"X holds NaN or infinity in block {k} \(rows "
                                         rf"\d+:\d+\), first at row {row}$"):
        dask_fit(Xd, y, qid)


def test_overflowing_scores_named(small):
    X, y, qid = small
    X = X * 1e300
    with np.errstate(all="ignore"), pytest.raises(ValueError,
                                                  match=r"scores X @ w overflow in block \d+"):
        dask_fit(X, y, qid, C=1e10)


def test_bad_labels_named(small):
    X, y, qid = small
    rel = y.astype(float)
    rel[150] = np.nan
    with pytest.raises(ValueError, match=r"y holds NaN or infinity in block 1 \(rows \d+:\d+\), "
                                         r"first at row 150"):
        dask_fit(X, da.from_array(rel, chunks=50), qid)
    q = qid.astype(float)
    q[5] = np.nan
    with pytest.raises(ValueError, match=r"qid holds NaN or infinity in block 0 \(rows 0:100\), "
                                         r"first at row 5"):
        dask_fit(X, y, q)
    with pytest.raises(ValueError, match="y must hold numeric relevance"):
        dask_fit(X, y.astype(str), qid)


def test_non_consecutive_queries(small):
    X, y, qid = small
    runs = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    q = qid.copy()
    q[runs[1]], q[runs[2]] = q[runs[2]], q[runs[1]]  # query 2 now also has a row before query 1
    with pytest.raises(ValueError, match=rf"rows of query {qid[runs[2]]} are not consecutive "
                                         rf"\(rows {runs[1]} to \d+ of block 0 \(rows 0:{len(q)}\), "
                                         r"interleaved .* sort them by qid"):
        dask_fit(X, y, q, chunks=len(q))
    q = qid.copy()
    q[-5:] = qid[0]  # the first query again, in the last block
    with pytest.raises(ValueError, match=r"rows of query .* not consecutive \(they start at rows "
                                         rf"0 and {len(q) - 5}\)"):
        dask_fit(X, y, q)


def test_mismatched_lengths(small):
    X, y, qid = small
    with pytest.raises(ValueError, match=f"y has {len(y) - 1} entries but X has {len(y)} rows"):
        dask_fit(X, y[:-1], qid)
    with pytest.raises(ValueError, match=f"qid has {len(y) + 1} entries but X has {len(y)} rows"):
        dask_fit(X, y, np.r_[qid, qid[-1]])
    # a dask X whose declared chunks do not match what its blocks hold
    parts = [dask.delayed(lambda a: a)(X[:100]), dask.delayed(lambda a: a[:-1])(X[100:])]
    lying = da.concatenate([da.from_delayed(parts[0], (100, 6), X.dtype),
                            da.from_delayed(parts[1], (len(X) - 100, 6), X.dtype)])
    q = np.r_[np.zeros(100, int), np.ones(len(X) - 100, int)]  # one query per declared block
    with pytest.raises(ValueError, match=rf"block 1 of X \(from row 100\) holds {len(X) - 101} "
                                         rf"rows but its chunk says {len(X) - 100}"):
        dask_fit(lying, y, q)
    lying_q = da.concatenate([da.from_delayed(dask.delayed(lambda a: a[:-1])(qid[:100]), (100,),
                                              qid.dtype), da.from_array(qid[100:])])
    with pytest.raises(ValueError, match=r"qid's block 0 \(rows 0:100\) holds 99 ids; its chunk "
                                         r"says 100"):
        dask_fit(X, y, lying_q)


def test_bad_dask_X_and_arguments(small):
    X, y, qid = small
    Xd = da.from_array(X, chunks=(100, 6))
    with pytest.raises(ValueError, match="unknown chunk sizes.*compute_chunk_sizes"):
        dask_fit(Xd[Xd[:, 0] > -10], y, qid)
    with pytest.raises(ValueError, match="X must hold real numbers"):
        dask_fit(Xd.astype(complex), y, qid)
    with pytest.raises(ValueError, match="X must be 2-D"):
        DaskStructuredHinge(Xd[:, 0], y, qid, get_oracle("ap", "auto"))
    with pytest.raises(ValueError, match="only one class"):
        RankSVM().fit(Xd, np.ones(len(y)))
    with pytest.raises(ValueError, match=rf"y has shape \({len(y) - 1},\) but X has {len(y)} rows"):
        RankSVM().fit(Xd, y[1:] > 0)
    with pytest.raises(ValueError, match="not both"):
        RankSVM().fit(Xd, y, qid=qid, group=[len(y)])
    with pytest.raises(ValueError, match="All 1 queries are degenerate"):
        dask_fit(X, np.zeros_like(y), np.zeros_like(qid), chunks=len(y))


def test_integer_X_and_column_chunks(small):
    X, y, qid = small
    Xi = np.round(X * 4).astype(np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        mem = RankSVM(C=3.0).fit(Xi.astype(float), y, qid=qid)
        dsk = RankSVM(C=3.0).fit(da.from_array(Xi, chunks=(64, 2)), y, qid=qid)
    assert_same_fit(mem, dsk)


def test_every_solver_is_handled():
    assert set(SOLVERS) == {"cutting_plane", "pegasos", "frank_wolfe"}  # revisit if one is added


def test_counters_count_each_round_once():
    X, y, qid = ranking_data(12, n_queries=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        problem = DaskStructuredHinge(da.from_array(X, chunks=(150, 6)), y, qid,
                                      get_oracle("ap", "auto"))
    for k in range(1, 4):  # the blocks' hinges live on: each round adds its own calls only
        problem.plane(np.full(6, float(k)))
        assert problem.n_oracle_calls == k * problem.n_queries and problem.n_rounds == k
    problem.planes(np.ones(6), [0, 2])
    assert problem.n_oracle_calls == 3 * problem.n_queries + 2


def test_fused_block_tasks_charge_their_oracles():
    """The block task's fused round times its oracles (``oracle_seconds`` was 0 on the fused
    path): the part inside the fused rounds is reported apart, so the parts add up once."""
    X, y, qid = ranking_data(13, n_queries=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        problem = DaskStructuredHinge(da.from_array(X, chunks=(150, 6)), y, qid, get_oracle("ap", "auto"))
    for k in range(1, 3):
        problem.plane(np.full(6, float(k)))
    assert problem.fused_seconds > 0 and problem.matvec_seconds == 0  # only fused rounds ran
    assert problem.n_oracle_calls == 2 * problem.n_queries
    assert problem.oracle_seconds > 0 and problem.fused_oracle_seconds == pytest.approx(problem.oracle_seconds)
    problem.planes(np.ones(6), [0, 2])  # the two-pass path: oracle time outside fused rounds
    assert problem.oracle_seconds > problem.fused_oracle_seconds


# ---------------------------------------------------------------- bugs a mutation audit planted


def test_planes_skip_a_block_without_a_trained_query():
    """Query numbers count the blocks with a trained query only: the middle block (a query
    without a negative) holds none, so query 1 is the last block's."""
    X = np.array([[1.0], [0.0], [1.0], [2.0], [0.5], [0.2]])
    qid, y = np.array([0, 0, 1, 1, 2, 2]), np.array([1, 0, 1, 1, 0, 1])
    oracle = get_oracle("ap", "auto")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        dsk = DaskStructuredHinge(da.from_array(X, chunks=(2, 1)), y, qid, oracle)
    mem = StructuredHinge(X, y > 0, [np.arange(0, 2), np.arange(4, 6)], oracle)
    assert dsk.n_blocks == 2 and dsk.n_skipped_queries == 1
    w = np.array([1.0])
    for subset in (None, [1], [1, 0]):
        delta, G = dsk.planes(w, subset)
        want = mem.planes(w, subset)
        np.testing.assert_array_equal(delta, want[0])
        np.testing.assert_array_equal(G, want[1])
    delta, G = dsk.planes(w)
    np.testing.assert_allclose(delta, [0.0, 0.5], atol=1e-15)
    np.testing.assert_allclose(G, [[0.0], [0.6]], atol=1e-15)


def test_integer_X_above_2_to_the_24_is_float64():
    """16777217 = 2²⁴ + 1 has no float32: integer X must become float64, as in memory."""
    X = np.array([[0], [16777217], [1], [0]])
    y, qid = np.array([1, 0, 1, 0]), np.array([0, 0, 1, 1])
    oracle = get_oracle("ap", "auto")
    dsk = DaskStructuredHinge(da.from_array(X, chunks=(2, 1)), y, qid, oracle)
    mem = StructuredHinge(X.astype(np.float64), y > 0, [np.arange(2), np.arange(2, 4)], oracle)
    w = np.zeros(1)
    for got, want in zip(dsk.plane(w), mem.plane(w)):
        np.testing.assert_array_equal(got, want)
    assert dsk.plane(w)[2][0] == 16777217 - 1  # in float32, 16777216 - 1
    assert dsk.X.dtype == np.float64


@pytest.mark.parametrize("loss", ["ap", "ndcg", "zero_one", "precision_at_k"])
def test_fused_block_task_with_skipped_queries_single_rows_and_empty_blocks(loss):
    """The block task's fused round reads the block's trained range of rows (a skipped query
    before it), a block of one row, and empty blocks; integer X above 2²⁴ as float64."""
    X = np.array([[1, 0], [0, 2], [16777217, 1], [0, 3], [2, 2], [5, 1], [1, 1], [0, 0], [3, 1]])
    qid = np.array([0, 0, 1, 1, 2, 2, 3, 3, 4])
    y = np.array([1, 1, 1, 0, 0, 0, 0, 1, 1])  # queries 0 and 2 skipped, query 4 a single row
    oracle = get_oracle(loss, "auto", **({"gain": "binary"} if loss == "ndcg" else {}))
    chunks = ((0, 4, 0, 4, 1), (2,))  # empty blocks; blocks start with a skipped query
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        dsk = DaskStructuredHinge(da.from_array(X, chunks=chunks), y, qid, oracle)
    mem = StructuredHinge(X.astype(np.float64), y > 0, [np.arange(2, 4), np.arange(6, 8)], oracle)
    assert dsk.chunks == (4, 4, 1) and dsk.n_blocks == 2
    for w in (np.array([1e-7, -1.0]), np.array([0.0, 0.5]), np.zeros(2)):
        for got, want in zip(dsk.plane(w), mem.plane(w)):
            np.testing.assert_allclose(got, want, rtol=1e-15)
    assert dsk.fused_seconds > 0 and dsk.matvec_seconds == 0  # the fused round ran


def joined_by_hand(chunks, max_rows, min_blocks):
    cap = max(1, min(max_rows, -(-sum(chunks) // min_blocks)))
    out = []
    for size in chunks:
        if out and out[-1] + size <= cap:
            out[-1] += size
        else:
            out.append(size)
    return tuple(out)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(1, 50), min_size=1, max_size=20), st.integers(0, 200),
       st.integers(1, 6))
def test_merged_chunks_against_a_loop(chunks, max_rows, min_blocks):
    got = merged_chunks(tuple(chunks), max_rows, min_blocks)
    assert got == joined_by_hand(chunks, max(max_rows, 1), min_blocks)
    assert sum(got) == sum(chunks)
    bounds = set(np.cumsum(chunks))
    assert set(np.cumsum(got)) <= bounds  # only joined, never split


def test_small_chunks_are_joined_into_fewer_tasks():
    X, y, qid = ranking_data(16)
    oracle = get_oracle("ap", "auto")
    Xd = da.from_array(X, chunks=(60, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        kept = DaskStructuredHinge(Xd, y, qid, oracle)
        with dask.config.set({"array.chunk-size": "128MiB"}):
            joined = DaskStructuredHinge(Xd, y, qid, oracle)  # the default
        capped = DaskStructuredHinge(Xd, y, qid, oracle, block_bytes=200 * 6 * 8)
    threads = dask.system.CPU_COUNT  # a block per thread at least, each over half the rows/threads
    assert threads <= len(joined.chunks) <= 2 * threads < len(kept.chunks)
    assert max(capped.chunks) <= 200 < max(joined.chunks)
    w = np.random.default_rng(1).standard_normal(6)
    for problem in (joined, capped):
        for got, want in zip(problem.plane(w), kept.plane(w)):
            np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ValueError, match="block_bytes must be a number of bytes >= 0"):
        DaskStructuredHinge(Xd, y, qid, oracle, block_bytes=-1)


def test_default_block_bytes_up_to_the_chunk_size_or_1_gib_persisted():
    from ssvm.problem._dask_blocks import default_block_bytes

    mib = 1 << 20
    with dask.config.set({"array.chunk-size": "128MiB"}):
        assert default_block_bytes() == 1 << 30  # persisted (joined once): at most 1 GiB
        # read from their source every round (out of core), joined blocks are a copy every round
        assert default_block_bytes(persisted=False) == 128 * mib
    with dask.config.set({"array.chunk-size": "2GiB"}):
        assert default_block_bytes() == 2 << 30  # a configured chunk size above the cap wins
    assert default_block_bytes() == default_block_bytes(False) == 0  # chunk size 0 (this module's fixture)


def balanced_by_hand(n_rows, n_blocks, starts):
    """Each cut at the allowed row nearest to k n / n_blocks (the lower one on a tie), by a loop."""
    allowed = range(1, n_rows) if starts is None else [s for s in starts if s > 0]
    cuts = set()
    for k in range(1, n_blocks):
        target = n_rows * k / n_blocks
        best = None
        for a in allowed:
            if best is None or abs(a - target) < abs(best - target) or \
                    (abs(a - target) == abs(best - target) and a < best):
                best = a
        if best is not None:
            cuts.add(best)
    bounds = sorted(cuts | {0, n_rows})
    return tuple(b - a for a, b in zip(bounds, bounds[1:]))


@settings(max_examples=500, deadline=None)
@given(st.integers(1, 300), st.integers(1, 9), st.one_of(st.none(), st.sets(st.integers(1, 299), max_size=30)),
       st.booleans())
def test_balanced_chunks_against_a_loop(n_rows, n_blocks, inner, odd):
    from ssvm.problem._dask_blocks import balanced_chunks

    starts = None if inner is None else [0] + sorted(s for s in inner if s < n_rows)
    if odd and starts is None:  # without allowed rows a cut may fall at any row, e.g. 2.5 -> 2
        n_rows += 1
    got = balanced_chunks(n_rows, n_blocks, starts)
    assert got == balanced_by_hand(n_rows, n_blocks, starts)
    assert sum(got) == n_rows and min(got) > 0
    if starts is not None:
        assert set(np.cumsum(got)[:-1]) <= set(starts)  # cut only where a query starts
    else:
        assert len(got) == min(n_blocks, n_rows) and max(got) - min(got) <= 1


@settings(max_examples=500, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=4), st.data())
def test_block_homes_gives_every_thread_its_share_with_the_fewest_moves(threads, data):
    """Each worker ends with at most its threads times ceil(blocks / threads) blocks; a block
    moves only off a worker above that share or off a worker that is gone (None, "lost"), and no
    fewer moves could do (each worker keeps min(its blocks, its share))."""
    from ssvm.problem._dask_blocks import block_homes

    nthreads = {f"w{i}": t for i, t in enumerate(threads)}
    owners = data.draw(st.lists(st.sampled_from([*nthreads, None, "lost"]), min_size=1, max_size=12))
    homes = block_homes(owners, nthreads)
    share = -(-len(owners) // sum(threads))
    assert set(homes) <= set(nthreads)
    assert all(homes.count(w) <= t * share for w, t in nthreads.items())
    kept = sum(min(owners.count(w), t * share) for w, t in nthreads.items())
    assert sum(h == o for h, o in zip(homes, owners)) == kept
    assert homes == block_homes(owners, dict(reversed(nthreads.items())))  # not the dict's order


def test_block_homes_fills_the_emptiest_worker_first():
    from ssvm.problem._dask_blocks import block_homes

    assert block_homes(["a", "a", "a", "a"], {"a": 1, "b": 1}) == ["a", "a", "b", "b"]
    assert block_homes(["a"] * 3, {"a": 1, "b": 2}) == ["a", "b", "b"]
    assert block_homes([None, None, None], {"b": 1, "a": 1}) == ["a", "b", "a"]


def test_persisted_default_blocks_a_multiple_of_the_threads_within_the_cap(monkeypatch):
    """Above the cap (1 GiB; here 1,000 bytes: 125 rows of 8 bytes), as many blocks as the threads
    times the blocks each needs, of equal rows; not persisted, the chunks as they come, joined."""
    from ssvm.problem import _dask_blocks
    from ssvm.problem.dask_space import joined_chunks

    monkeypatch.setattr(_dask_blocks, "_MAX_DEFAULT_BLOCK", 1000)
    threads = dask.system.CPU_COUNT
    with dask.config.set({"array.chunk-size": 8}):
        got = joined_chunks((100,) * 10, 8, None, True)
        assert len(got) == threads * -(-1000 // (threads * 125)) and max(got) - min(got) <= 1
        assert max(got) <= 125
        assert joined_chunks((100,) * 10, 8, None, False) == (100,) * 10  # 8 bytes: one row, kept


def test_persisted_default_blocks_one_per_thread_of_equal_rows_between_queries():
    """Persisted by default, the blocks are as many as the threads, of about equal rows, cut where a
    query starts (here: chunks of 30 rows, queries of 1..30 rows): not the chunks joined as they
    come, which may leave a thread a block more than another. The blocks as given (0) serve as the
    reference plane."""
    rng = np.random.default_rng(2)
    sizes = rng.integers(1, 31, size=60)
    qid = np.repeat(np.arange(sizes.size), sizes)
    n = qid.size
    y = rng.random(n) < 0.3
    X = rng.standard_normal((n, 4))
    threads = dask.system.CPU_COUNT
    oracle = get_oracle("ap", "auto")
    with warnings.catch_warnings(), dask.config.set({"array.chunk-size": "128MiB"}):
        warnings.simplefilter("ignore", UserWarning)
        dsk = DaskStructuredHinge(da.from_array(X, chunks=(30, 4)), y, qid, oracle, persist=True)
        kept = DaskStructuredHinge(da.from_array(X, chunks=(30, 4)), y, qid, oracle, persist=True, block_bytes=0)
        small = DaskStructuredHinge(da.from_array(X, chunks=(10, 4)), y, qid, oracle, persist=True)
    assert small.chunks == dsk.chunks  # chunks smaller than a query: no need to align them first
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    assert len(dsk.chunks) == threads and set(np.cumsum(dsk.chunks)[:-1]) <= set(starts)
    assert max(dsk.chunks) - min(dsk.chunks) <= 2 * sizes.max()
    w = rng.standard_normal(4)
    for got, want in zip(dsk.plane(w), kept.plane(w)):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_block_task_runs_its_fused_round_on_one_thread(monkeypatch):
    """dask runs a task per worker thread: a block's fused round takes one OpenMP thread (unless
    OMP_NUM_THREADS is set in the environment), the caller's limit is restored after."""
    import ssvm.problem._fused as fused_module
    from ssvm._threads import effective_n_threads
    from ssvm.problem._dask_blocks import task_threads

    seen = []
    plane = fused_module.FusedRound.plane

    def spy(self, w):
        seen.append(effective_n_threads())
        return plane(self, w)

    monkeypatch.setattr(fused_module.FusedRound, "plane", spy)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    X, y, qid = ranking_data(17)
    Xd = da.from_array(X, chunks=(60, 6))
    before = effective_n_threads()
    with warnings.catch_warnings(), dask.config.set(scheduler="synchronous"):
        warnings.simplefilter("ignore", UserWarning)
        DaskStructuredHinge(Xd, y, qid, get_oracle("ap", "auto")).plane(np.ones(6))
    assert seen and set(seen) == {1}
    assert effective_n_threads() == before
    monkeypatch.setenv("OMP_NUM_THREADS", "2")  # the worker's environment asks for threads: kept
    with task_threads():
        assert effective_n_threads() == before
