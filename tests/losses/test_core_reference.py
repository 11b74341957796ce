"""The compiled QS family (``ssvm.losses._core``) against the readable reference of the QS paper's
Algorithms 1–2 and Lemma 6 (``_core.reference``), bit for bit, on every path: the grid (default bins,
one bin, no thresholds, a few bins), the sort-and-walk path, the batched loops of both, graded NDCG with
binary grades, a user loss given by a sum table; the reference against the exhaustive oracle on tiny
queries; and the twins of the forms the port changed (NDCG's steps read from the 1/log2 table, the
ranking by score sorted by packed keys)."""

import numpy as np
import pytest
from losses_twins import random_query

from ssvm.losses import APLoss, NDCGLoss, QSLoss
from ssvm.losses._core import reference
from ssvm.losses._core.derivative import KINDS, Objective, inverse_log_table, py_best_rank, sum_table
from ssvm.losses._score_ranking import ranked_by_score
from ssvm.losses.brute import rank_brute_oracle
from ssvm.losses.graded import graded_ndcg_batch
from ssvm.losses.qs import _qs_on_path, qs_batch
from ssvm.losses.rank_losses import KIND_AP, KIND_NDCG_LOG2, KIND_SUM_TABLE

LOSSES = {"ap": APLoss(), "ndcg": NDCGLoss()}
GRID_PATHS = ({"walk": False}, {"n_bins": 1}, {"narrow": False}, {"n_bins": 3}, {"n_bins": 17})


class TableNDCG(QSLoss):
    """NDCG (log2) given as a sum table built from the closed form: a user loss of kind KIND_SUM_TABLE."""

    name = "table_ndcg"

    def kernel_spec(self, n_pos, n_neg):
        kind, table = NDCGLoss().kernel_spec(n_pos, n_neg)
        return KIND_SUM_TABLE, sum_table(kind, table, n_pos, n_neg)

    def value(self, counts):
        return NDCGLoss().value(counts)


def query(rng, n_max=300, n=None):
    """A query of ``n`` (else 2..n_max) rows: 0.5%..90% positives, separated or not, ties, extreme scales."""
    n = int(rng.integers(2, n_max + 1)) if n is None else n
    y = rng.random(n) < rng.choice([0.005, 0.02, 0.1, 0.4, 0.9])
    y[rng.integers(n)] = True
    y[(int(np.flatnonzero(y)[0]) + 1 + int(rng.integers(n - 1))) % n] = False
    s = rng.normal(size=n) + rng.choice([0.0, 1.0, 4.0]) * y
    if rng.random() < 0.3:
        s = np.round(s, 1)  # ties
    return s * 10.0 ** rng.uniform(-8, 8), y


def same(a, b):
    c_a, d_a = a
    c_b, d_b = b
    np.testing.assert_array_equal(c_a, c_b)
    assert d_a == d_b


def test_kinds_are_the_kernels():
    assert KINDS == {"ap": KIND_AP, "ndcg_log2": KIND_NDCG_LOG2, "sum_table": KIND_SUM_TABLE}


@pytest.mark.parametrize("loss", ["ap", "ndcg", "table_ndcg"])
def test_reference_equals_brute_force(loss):
    """The reference solves problem (5) exactly: its objective Δ + s·c is the exhaustive maximum."""
    loss_obj = TableNDCG() if loss == "table_ndcg" else LOSSES[loss]
    rng = np.random.default_rng(12)
    for _ in range(1500):
        s, y = random_query(rng, n_max=8)
        c_ref, d_ref = reference.qs_reference(s, y, loss_obj)
        c_b, d_b = rank_brute_oracle(s, y, loss_obj)
        assert d_ref + s @ c_ref == pytest.approx(d_b + s @ c_b, rel=1e-9, abs=1e-9 * max(1.0, np.abs(s).max()))


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_every_path_equals_the_reference(loss):
    """Thousands of queries: the default path, the walk and every grid variant give the reference's c
    and Δ bit for bit."""
    loss_obj = LOSSES[loss]
    rng = np.random.default_rng(2026 + len(loss))
    for _ in range(1000):
        s, y = query(rng)
        ref = reference.qs_reference(s, y, loss_obj)
        for path in ({}, {"walk": True}, *GRID_PATHS):
            same(_qs_on_path(s, y, loss_obj, **path), ref)


def test_a_sum_table_loss_equals_the_reference():
    """A user loss given by its table takes the grid (every variant) and agrees with the reference; the
    table is the closed form's, so the answer is NDCG's too."""
    rng = np.random.default_rng(7)
    for _ in range(500):
        s, y = query(rng, n_max=150)
        ref = reference.qs_reference(s, y, TableNDCG())
        for path in ({}, *GRID_PATHS):
            same(_qs_on_path(s, y, TableNDCG(), **path), ref)
        c, d = _qs_on_path(s, y, NDCGLoss())
        np.testing.assert_array_equal(c, ref[0])


def _stacked(rng, n_queries, n_max):
    sizes = rng.integers(2, n_max + 1, n_queries)
    ends = np.cumsum(sizes)
    starts = ends - sizes
    s = np.empty(ends[-1])
    y = np.empty(ends[-1], dtype=bool)
    for a, b in zip(starts, ends):
        s[a:b], y[a:b] = query(rng, n=int(b - a))
    return s, y, starts, ends


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_batched_loops_equal_the_reference(loss):
    """qs_batch's compiled loops (the walk's and the grid's, queries mixed) and graded NDCG with 0/1
    grades: the reference on each query."""
    rng = np.random.default_rng(5 + len(loss))
    for _ in range(40):
        s, y, starts, ends = _stacked(rng, int(rng.integers(1, 40)), 300)
        c, delta = qs_batch(s, y, starts, ends, LOSSES[loss])
        for k, (a, b) in enumerate(zip(starts, ends)):
            same((c[a:b], delta[k]), reference.qs_reference(s[a:b], y[a:b], LOSSES[loss]))
        if loss == "ndcg":
            c_g, d_g = graded_ndcg_batch(s, y.astype(np.int64), starts, ends)
            np.testing.assert_array_equal(c_g, c)
            np.testing.assert_array_equal(d_g, delta)


def test_best_rank_from_the_log_table_is_the_computed_one():
    """NDCG's steps read from the kept 1/log2 table (the walk's form) give best_rank's answer bit for bit,
    on ranges that end at near-ties."""
    rng = np.random.default_rng(3)
    lt = inverse_log_table(5000)
    for _ in range(3000):
        n_pos = int(rng.integers(1, 60))
        n_neg = int(rng.integers(1, 4000))
        sp = np.sort(rng.normal(size=n_pos))[::-1] * 10.0 ** rng.uniform(-6, 2)
        kind, table = NDCGLoss().kernel_spec(n_pos, n_neg)
        obj = Objective(sp, 2.0 / (n_pos * n_neg), kind, table, n_pos)
        j = int(rng.integers(1, n_neg + 1))
        lo = int(rng.integers(1, n_pos + 1))
        hi = int(rng.integers(lo, n_pos + 2))
        s = sp[min(hi, n_pos) - 1] + rng.normal() * 1e-3 * abs(sp).max()
        assert py_best_rank(s, j, lo, hi, obj, lt) == py_best_rank(s, j, lo, hi, obj)


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_ranking_by_score_of_small_queries_is_the_stable_order(loss):
    """The compiled loop of ranked_by_score (packed keys, bucket sort): the ranking by a stable argsort of
    −score (ties and signed zeros by index), its Lemma 6 coefficients and Δ, bit for bit."""
    rng = np.random.default_rng(17)
    for _ in range(60):
        s, y, starts, ends = _stacked(rng, int(rng.integers(1, 30)), 200)
        s[rng.random(s.size) < 0.2] = rng.choice([0.0, -0.0])
        c, delta = ranked_by_score(s, y, starts, ends, LOSSES[loss])
        for k, (a, b) in enumerate(zip(starts, ends)):
            s_q, y_q = s[a:b], y[a:b]
            order = np.argsort(-s_q, kind="stable")
            ranked = y_q[order]
            pos_sorted = order[ranked]
            neg = order[~ranked]
            opt = dict(zip(neg.tolist(), (1 + np.cumsum(ranked)[~ranked]).tolist()))  # 1 + positives above
            c_ref, counts = reference.lemma6(opt, pos_sorted.tolist(), neg.tolist(), b - a)
            np.testing.assert_array_equal(c[a:b], c_ref)
            assert delta[k] == reference.pattern_loss(LOSSES[loss].kind, counts)
