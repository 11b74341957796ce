"""One query over the blocks of a dask array (DaskGiantHinge): its kernels against slow twins,
its plane against the oracles on the whole query, the fit against in memory, bad input.

The test that no per-row array reaches the client of a LocalCluster is in test_dask_cluster.py.
"""

import math

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

from ssvm import RankSVM  # noqa: E402
from ssvm.losses import get_oracle  # noqa: E402
from ssvm.losses.oracle import GiantForm  # noqa: E402
from ssvm.problem import StructuredHinge  # noqa: E402
from ssvm.problem._giant_blocks import BlockRanking, block_samples, count_at_or_before, first_keys  # noqa: E402
from ssvm.problem.dask_gathered import DaskGatheredHinge  # noqa: E402
from ssvm.problem.dask_giant import DaskGiantHinge, giant_form  # noqa: E402
from ssvm.problem.dask_training import training_set  # noqa: E402


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(0, 40)), max_size=30, unique_by=lambda t: t[1]),
       st.lists(st.tuples(st.integers(-4, 4), st.integers(-1, 41)), max_size=10))
def test_count_at_or_before_against_comparisons(keys, queries):
    keys, queries = sorted(keys), sorted(queries)
    ms = np.array([k[0] for k in keys], dtype=float)
    rows = np.array([k[1] for k in keys], dtype=np.int64)
    qm = np.array([q[0] for q in queries], dtype=float)
    qr = np.array([q[1] for q in queries], dtype=np.int64)
    want = [sum(k <= q for k in keys) for q in queries]
    np.testing.assert_array_equal(count_at_or_before(ms, rows, qm, qr), want)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 80), st.sampled_from(["ties", "zeros", "huge", "tiny", "normal"]), st.integers(0, 2**31 - 1))
def test_block_ranking_orders_negatives_as_a_stable_sort(n, family, seed):
    """The block's negatives in the oracles' order, (-score, row) ascending (ties by row; -0.0
    ties with 0.0), as a stable argsort of -score: its slow, obvious twin."""
    rng = np.random.default_rng(seed)
    s = {"ties": np.round(rng.standard_normal(n), 1), "zeros": rng.choice([0.0, -0.0, 1.0], n),
         "huge": rng.choice([-1.0, 1.0], n) * 10.0 ** rng.integers(290, 308, n),
         "tiny": rng.choice([-1.0, 1.0], n) * 10.0 ** -rng.integers(300, 320, n),
         "normal": rng.standard_normal(n)}[family]
    relevant = rng.random(n) < 0.3
    ranking = BlockRanking(s, relevant, (2, 1000), 0.0)
    neg = np.flatnonzero(~relevant)
    want = neg[np.argsort(-s[neg], kind="stable")]
    np.testing.assert_array_equal(ranking.neg_local, want)
    np.testing.assert_array_equal(ranking.neg_rows, want + 1000)
    np.testing.assert_array_equal(ranking.neg_ms, -s[want])
    np.testing.assert_array_equal(ranking.pos_local, np.flatnonzero(relevant))


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 60), st.integers(0, 8), st.integers(1, 5), st.integers(0, 2**31 - 1))
def test_block_samples_inside_and_evenly_spaced(n, n_cuts, k, seed):
    rng = np.random.default_rng(seed)
    s = np.round(rng.standard_normal(n), 1)  # ties
    ranking = BlockRanking(s, rng.random(n) < 0.2, (3, 100), 0.0)
    keys = sorted(zip(ranking.neg_ms, ranking.neg_rows))
    if len(keys) < 2:
        return
    ends = sorted(rng.choice(len(keys), size=min(len(keys), 2 * n_cuts + 2), replace=False))
    lo, hi = [keys[a] for a in ends[0::2]], [keys[b] for b in ends[1::2]]
    lo = lo[:len(hi)]
    as_arrays = [(np.array([m for m, _ in e]), np.array([r for _, r in e], dtype=np.int64))
                 for e in (lo, hi)]
    interval, sm, sr = block_samples(ranking, *as_arrays, k)
    for i, (a, b) in enumerate(zip(lo, hi)):
        inside = [key for key in keys if a < key < b]
        got = [(m, r) for m, r, t in zip(sm, sr, interval) if t == i]
        assert set(got) <= set(inside)
        if len(inside) <= k:
            assert sorted(got) == inside
        else:
            assert len(got) == k
            cuts = [-1] + [inside.index(g) for g in sorted(got)] + [len(inside)]
            assert max(np.diff(cuts) - 1) <= -(-len(inside) // (k + 1))  # runs between samples


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 60), st.integers(1, 70), st.sampled_from(["ties", "zeros", "normal"]), st.integers(0, 2**31 - 1))
def test_first_keys_are_a_full_sort_cut_at_k(n, k, family, seed):
    """The k smallest keys (ma, negative, index) in key order: the first k of a full lexsort (-0.0
    ties with 0.0, so the label and then the index decide)."""
    rng = np.random.default_rng(seed)
    ma = {"ties": rng.integers(-2, 3, n).astype(float), "zeros": rng.choice([0.0, -0.0, 1.0], n),
          "normal": rng.standard_normal(n)}[family]
    negative = rng.random(n) < 0.6
    want = np.lexsort((np.arange(n), negative, ma))[:k]
    np.testing.assert_array_equal(first_keys(ma, negative, k), want)


def scores_problem(scores, y, loss, chunks, budget):
    """The giant hinge whose scores are ``w`` itself (X = I): its g is the coefficients c."""
    X = da.from_array(np.eye(scores.size), chunks=(chunks, scores.size))
    return DaskGiantHinge(X, y, get_oracle(loss, "auto"), budget=budget, block_bytes=0)  # the chunks as given


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 30), st.sampled_from(["ap", "ndcg", "zero_one", "precision_at_k"]), st.integers(1, 40),
       st.integers(1, 12), st.sampled_from(["normal", "ties", "huge", "tiny"]),
       st.integers(0, 2**31 - 1))
def test_coefficients_equal_the_oracle_on_the_whole_query(n, loss, chunks, budget, values, seed):
    rng = np.random.default_rng(seed)
    s = {"normal": rng.standard_normal(n), "ties": rng.integers(-2, 3, n).astype(float),
         "huge": rng.standard_normal(n) * 1e150, "tiny": rng.standard_normal(n) * 1e-150}[values]
    y = rng.random(n) < rng.choice([0.05, 0.3, 0.8])
    y[rng.integers(n)], y[rng.integers(n)] = True, False  # maybe one positive or one negative
    if y.all() or not y.any():
        y[0] = not y[0]
    with dask.config.set(scheduler="sync"):
        H, offset, c = scores_problem(s, y, loss, chunks, budget).plane(s)
    twin = "brute" if n <= 7 else "auto"
    want_c, want_delta = get_oracle(loss, twin)(s, y)
    np.testing.assert_allclose(c, want_c, rtol=1e-15, atol=0)  # brute sums in another order
    assert offset == pytest.approx(want_delta, rel=1e-14)
    assert H == pytest.approx(want_delta + s @ want_c, rel=1e-12, abs=1e-300)


class InProcess(DaskGiantHinge):
    """The same problem with numpy blocks and every pass called in this process (no scheduler):
    the selection checked on thousands of queries in seconds."""

    def __init__(self, X, y, oracle, chunks, budget):
        super().__init__(da.from_array(X, chunks=(chunks, X.shape[1])), y, oracle, budget=budget)
        bounds = self._bounds
        self.cluster.blocks = [(X[a:b], y[a:b], (k, int(a)))
                               for k, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))]

    def _compute(self, task, per_block, *shared, keep=False):
        self.n_passes += 1
        return [task(*args, *shared) for args in per_block]


def test_coefficients_on_thousands_of_queries_without_the_scheduler():
    rng = np.random.default_rng(17)
    oracles = {(loss, twin): get_oracle(loss, twin) for loss in ("ap", "ndcg")
               for twin in ("brute", "auto")}
    for trial in range(1000):
        n = int(rng.integers(2, 9 if trial % 4 == 0 else 60))
        s = [rng.standard_normal(n), rng.integers(-2, 3, n).astype(float),
             rng.standard_normal(n) * 1e150, rng.standard_normal(n) * 1e-150][trial % 4]
        y = rng.random(n) < rng.choice([0.05, 0.3, 0.8])
        y[rng.integers(n)], y[rng.integers(n)] = True, False
        if y.all() or not y.any():
            y[0] = not y[0]
        loss = ("ap", "ndcg")[trial % 2]
        twin = oracles[loss, "brute" if n <= 8 else "auto"]
        problem = InProcess(np.eye(n), y, twin, int(rng.integers(1, n + 1)),
                            int(rng.integers(1, 20)))
        _, offset, c = problem.plane(s)
        want_c, want_delta = twin(s, y)
        np.testing.assert_allclose(c, want_c, rtol=1e-15, atol=0, err_msg=f"trial {trial}")
        assert offset == pytest.approx(want_delta, rel=1e-14)


def test_precision_at_k_on_thousands_of_queries_without_the_scheduler():
    """Every k (below, at and above the query's size), ties at the k-th augmented score inside
    and across blocks, one-row blocks: the coefficients and loss of the oracle on the whole query,
    bit for bit (the brute force over every top-k set on the smallest queries)."""
    rng = np.random.default_rng(19)
    for trial in range(1500):
        n = int(rng.integers(2, 8 if trial % 4 == 0 else 50))
        s = [rng.standard_normal(n), rng.integers(-2, 3, n).astype(float), rng.choice([0.0, -0.0, -1.0], n),
             rng.standard_normal(n) * 1e150][trial % 4]
        y = rng.random(n) < rng.choice([0.05, 0.3, 0.8])
        y[rng.integers(n)], y[rng.integers(n)] = True, False
        if y.all() or not y.any():
            y[0] = not y[0]
        k = int(rng.integers(1, n + 3))
        twin = get_oracle("precision_at_k", "brute" if n < 8 else "auto", k=k)
        problem = InProcess(np.eye(n), y, get_oracle("precision_at_k", k=k), int(rng.integers(1, n + 1)), 1)
        _, offset, c = problem.plane(s)
        want_c, want_delta = twin(s, y)
        np.testing.assert_array_equal(c, want_c, err_msg=f"trial {trial}")
        assert offset == want_delta
        assert problem.n_passes == 3


def test_one_positive_one_negative_single_rows_and_few_blocks():
    for s, y in [([0.3, 0.1], [True, False]), ([0.1, 0.3], [True, False]),
                 ([1.0, 2.0, 0.5], [False, True, False]), ([2.0, 2.0, 2.0, 2.0], [1, 0, 1, 0])]:
        s, y = np.array(s), np.array(y, dtype=bool)
        for loss in ("ap", "ndcg"):
            for chunks in (1, s.size):
                _, offset, c = scores_problem(s, y, loss, chunks, 1).plane(s)
                want_c, want_delta = get_oracle(loss, "brute")(s, y)
                np.testing.assert_allclose(c, want_c, rtol=1e-15, atol=0)
                assert offset == pytest.approx(want_delta, rel=1e-14)


def test_plane_with_features_and_intercept_equals_in_memory():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((3000, 4)).astype(np.float32)
    y = rng.random(3000) < 0.1
    for loss in ("ap", "ndcg", "precision_at_k", "zero_one"):
        oracle = get_oracle(loss, "auto")
        dsk = DaskGiantHinge(da.from_array(X, chunks=(700, 4)), y, oracle, fit_intercept=True,
                             budget=16)
        mem = StructuredHinge(X, y, [np.arange(3000)], oracle, fit_intercept=True)
        w = rng.standard_normal(5)
        for got, want in zip(dsk.plane(w), mem.plane(w)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
        delta, G = dsk.planes(w, [0, 0])
        _, offset, g = dsk.plane(w)
        np.testing.assert_array_equal(delta, [offset, offset])
        np.testing.assert_array_equal(G, [g, g])
        assert dsk.planes(w, [])[1].shape == (0, 5)
    assert dsk.n_rounds == dsk.n_passes == 3  # 0-1: one pass a round


@pytest.mark.parametrize("loss", ["ap", "ndcg", "zero_one", "precision_at_k"])
def test_fit_without_queries_equals_in_memory(loss):
    rng = np.random.default_rng(4)
    X = rng.standard_normal((1500, 5))
    labels = (X[:, 0] + X[:, 1] + rng.standard_normal(1500) > 1.5).astype(int)
    mem = RankSVM(loss=loss, C=10.0).fit(X, labels)
    dsk = RankSVM(loss=loss, C=10.0).fit(da.from_array(X, chunks=(400, 5)), labels)
    assert dsk.n_iter_ == mem.n_iter_
    np.testing.assert_allclose(dsk.coef_, mem.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(dsk.intercept_, mem.intercept_, rtol=1e-8, atol=1e-10)


def test_which_losses_and_bad_input():
    assert giant_form(get_oracle("ap", "yue")) == GiantForm("ranked", loss=get_oracle("ap").params["loss"])
    assert giant_form(get_oracle("zero_one")) == GiantForm("per_row")
    assert giant_form(get_oracle("precision_at_k", k=3)) == GiantForm("top_k", k=3)
    assert giant_form(get_oracle("precision_at_k", "brute", k=3)) == GiantForm("top_k", k=3)  # the loss's form
    assert giant_form(get_oracle("mrr")) is None  # no giant form: the gathered hinge

    def mine(s, y):
        return np.zeros_like(s), 0.0

    assert giant_form(mine) is None
    X = da.from_array(np.ones((10, 2)), chunks=(5, 2))
    y = np.arange(10) < 3
    with pytest.raises(ValueError, match="AP, NDCG .*, 0-1 and precision@k oracles only; use DaskGatheredHinge"):
        DaskGiantHinge(X, y, mine)
    with pytest.raises(ValueError, match="needs a relevant and an irrelevant row"):
        DaskGiantHinge(X, np.ones(10, bool), get_oracle("ap"))
    with pytest.raises(ValueError, match="budget must be a positive integer"):
        DaskGiantHinge(X, y, get_oracle("ap"), budget=0)
    for oracle, kind in [(mine, DaskGatheredHinge), (get_oracle("precision_at_k"), DaskGiantHinge),
                         (get_oracle("ndcg"), DaskGiantHinge)]:
        data = training_set(X, y, qid=None, group=None, oracle=oracle,
                            fit_intercept=False, solver="cutting_plane")
        assert type(data.problems[0]) is kind


def test_one_vs_rest_on_dask_labels_equals_in_memory():
    """Three string classes in a dask y (chunks unlike X's): the classes are found on the blocks,
    each task's target is ``y == class`` on the blocks; the model is the in-memory one."""
    rng = np.random.default_rng(6)
    X = rng.standard_normal((900, 3))
    y = np.array(["b", "a", "c"])[np.argmax(X + 0.5 * rng.standard_normal((900, 3)), axis=1)]
    mem = RankSVM(C=1.0).fit(X, y)
    dsk = RankSVM(C=1.0).fit(da.from_array(X, chunks=(200, 3)), da.from_array(y, chunks=70))
    np.testing.assert_array_equal(dsk.classes_, mem.classes_)
    assert dsk.n_iter_ == mem.n_iter_
    np.testing.assert_allclose(dsk.coef_, mem.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(dsk.intercept_, mem.intercept_, rtol=1e-8, atol=1e-10)


def test_dask_labels_are_checked_on_the_blocks():
    """Labels that stay on the blocks get the in-memory fit's errors; grades count y > 0 as
    relevant, as a bool y does."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((40, 2))
    Xd = da.from_array(X, chunks=(10, 2))
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        RankSVM().fit(Xd, da.from_array(np.linspace(0.0, 1.0, 40), chunks=15))
    with pytest.raises(ValueError, match="only one class"):
        RankSVM().fit(Xd, da.ones(40, chunks=15))
    with pytest.raises(ValueError, match=r"y has shape \(39,\) but X has 40 rows"):
        RankSVM().fit(Xd, da.zeros(39, chunks=15))
    grades = rng.integers(0, 3, 40).astype(float)
    oracle = get_oracle("ap", "auto")
    w = rng.standard_normal(2)
    for got, want in zip(DaskGiantHinge(Xd, da.from_array(grades, chunks=15), oracle).plane(w),
                         DaskGiantHinge(Xd, grades > 0, oracle).plane(w)):
        np.testing.assert_array_equal(got, want)
    grades[33] = np.nan
    with pytest.raises(ValueError, match="y contains NaN or infinity"):
        DaskGiantHinge(Xd, da.from_array(grades, chunks=15), oracle)
    with pytest.raises(ValueError, match="needs a relevant and an irrelevant row"):
        DaskGiantHinge(Xd, da.zeros(40, chunks=15), oracle)
    with pytest.raises(ValueError, match="y has 39 entries but X has 40 rows"):
        DaskGiantHinge(Xd, da.zeros(39, chunks=15), oracle)


def test_a_loss_the_blocks_cannot_split_brings_its_targets_to_the_client():
    """A user's oracle (the gathered hinge, whose oracle runs on the client) gets each task's
    labels there, computed once from a dask y."""

    def mine(s, y):
        return np.zeros_like(s), 0.0

    y = np.arange(10) % 3
    data = training_set(da.from_array(np.ones((10, 2)), chunks=(5, 2)), da.from_array(y, chunks=4), qid=None,
                        group=None, oracle=mine, fit_intercept=False, solver="cutting_plane")
    assert all(type(p) is DaskGatheredHinge for p in data.problems)
    for target, c in zip(data.targets, data.classes):
        assert isinstance(target, np.ndarray)
        np.testing.assert_array_equal(target, y == c)


def test_small_blocks_are_joined_and_the_plane_stays_the_same():
    """Every selection pass is a task per block: small chunks are joined by default (about two
    blocks per worker thread), with the same plane as the chunks as given."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((4000, 3))
    y = rng.random(4000) < 0.05
    Xd = da.from_array(X, chunks=(250, 3))
    oracle = get_oracle("ap", "auto")
    joined = DaskGiantHinge(Xd, y, oracle)
    kept = DaskGiantHinge(Xd, y, oracle, block_bytes=0)
    threads = dask.system.CPU_COUNT
    assert kept.n_blocks == 16 and threads <= joined.n_blocks <= 2 * threads < 16
    w = rng.standard_normal(3)
    for got, want in zip(joined.plane(w), kept.plane(w)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="block_bytes must be a number of bytes >= 0"):
        DaskGiantHinge(Xd, y, oracle, block_bytes=-1)


def twin_best_rank(s, j, lo, hi, sp, loss_obj, n_neg):
    """The largest argmax of f_j over ranks lo..hi, in Python: the running difference of
    _core.derivative.best_rank, one step at a time (NDCG by its closed form)."""
    kind, table = loss_obj.kernel_spec(sp.size, n_neg)
    inv = 2.0 / (sp.size * n_neg)
    best, diff = lo, 0.0
    for k in range(lo, hi):
        if kind == 0:  # AP
            m = float(k + j)
            step = -k / (sp.size * (m - 1.0) * m)
        else:
            step = (1.0 / math.log2(1.0 + float(k + j)) - 1.0 / math.log2(float(k + j))) * table[0]
        diff += (sp[k - 1] - s) * inv + step
        if diff >= 0.0:
            best, diff = k + 1, 0.0
    return best


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 30), st.integers(1, 200), st.sampled_from(["ap", "ndcg"]), st.sampled_from([1.0, 1e-3, 1e6]),
       st.integers(0, 2**31 - 1))
def test_ranks_at_against_each_negatives_own_scan(n_pos, n_neg, loss, scale, seed):
    """Divide and conquer (ranks_at) gives every negative the rank of its own full scan."""
    from ssvm.losses import APLoss, NDCGLoss
    from ssvm.problem._giant_query import ranks_at

    rng = np.random.default_rng(seed)
    loss_obj = APLoss() if loss == "ap" else NDCGLoss()
    sp = np.sort(np.round(rng.normal(size=n_pos) * 3, 1))[::-1] * scale
    sn = np.sort(np.round(rng.normal(size=n_neg) * 3, 1))[::-1] * scale  # ties among and across
    pick = np.unique(rng.integers(0, n_neg, size=int(rng.integers(1, n_neg + 1))))
    kind, table = loss_obj.kernel_spec(n_pos, n_neg)
    j = pick + 1
    got = ranks_at(-sn[pick], j, np.ones_like(j), np.full_like(j, n_pos + 1), np.ascontiguousarray(sp), kind,
                   np.asarray(table, dtype=np.float64), 2.0 / (n_pos * n_neg))
    want = [twin_best_rank(sn[t], t + 1, 1, n_pos + 1, sp, loss_obj, n_neg) for t in pick]
    np.testing.assert_array_equal(got, want)


def test_zero_one_rows_exactly_on_the_margin_are_not_violations():
    """A row with ``y s = 1`` has hinge 0 and no subgradient term, on the blocks as in memory."""
    X = np.array([[1.0], [-1.0], [0.2], [-3.0]])  # at w = 1: two rows on the margin, one inside it
    y = np.array([True, False, True, False])
    oracle = get_oracle("zero_one")
    dsk = DaskGiantHinge(da.from_array(X, chunks=(2, 1)), y, oracle, block_bytes=0)
    mem = StructuredHinge(X, y, [np.arange(4)], oracle)
    w = np.array([1.0])
    H, offset, g = mem.plane(w)
    assert (H, offset, g[0]) == pytest.approx((0.2, 0.25, -0.05))  # only row 2: (1 - 0.2) / 4
    for got, want in zip(dsk.plane(w), mem.plane(w)):
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)
