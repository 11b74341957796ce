"""Negatives set aside below every positive before the walk (``ssvm.losses._core.set_aside``), for AP and
NDCG: every one set aside is one that best_rank puts at P + 1 at its true order, the set-aside is
used where it should be (trained-like scores: nearly all negatives that rank last), and the oracle's
c and Δ with it are bit for bit the baselines' (yue / chakrabarti, the grid, the batch), on
separated, tied, huge, tiny and tight scores."""

import numpy as np
import pytest
from test_qs_walk import LOSSES, _exact

from ssvm.losses import get_oracle
from ssvm.losses._core import sorting as keys
from ssvm.losses._core.derivative import Objective, inverse_log_table
from ssvm.losses._core.derivative import py_best_rank as best_rank
from ssvm.losses._core.set_aside import LT_MONOTONE, Bound
from ssvm.losses._core.set_aside import py_sort_above_bottom as sort_above_bottom
from ssvm.losses._core.set_aside import py_sorted_bottom as sorted_bottom
from ssvm.losses._core.set_aside import py_split_bottom as split_bottom
from ssvm.losses._core.set_aside import py_steps_hold as steps_hold
from ssvm.losses._core.sort_walk import walk_oracle_core
from ssvm.losses._core.sorting import sorted_negatives
from ssvm.losses.rank_losses import KIND_AP


def _sorted_bottom(neg, shift, scores, bound, c):
    """:func:`sorted_bottom` as graded NDCG's levels call it: on the negatives' keys sorted and
    repaired first (in place, as the other cuts leave theirs)."""
    neg.sort()
    keys.py_repair(neg, scores, shift)
    return sorted_bottom(neg, shift, scores, bound, c)


HOWS = {"split": split_bottom, "sort_above": sort_above_bottom, "sorted": _sorted_bottom}


def _bound(sp, n_neg, loss, lt_size=None):
    """The walk's :class:`Bound` and best_rank's Objective for ``loss`` with these positives."""
    loss_obj = LOSSES[loss][0]
    kind, table = loss_obj.kernel_spec(sp.size, n_neg)
    table = np.asarray(table, dtype=float)
    lt = inverse_log_table(lt_size or sp.size + n_neg + 2)[:lt_size] if loss == "ndcg" else np.zeros(1)
    inv = 2.0 / (sp.size * n_neg)
    scale = table[0] if loss == "ndcg" else 0.0
    return Bound(sp, inv, kind, lt, scale), Objective(sp, inv, kind, table, sp.size)


def _split(s, y, how="split", loss="ap"):
    """``how`` (split_bottom, or sort_above_bottom: the batch's) on the query's packed keys:
    (negatives' indices set aside, their orders among all negatives, best_rank's Objective, the c
    it wrote); the keys kept by sort_above_bottom come sorted."""
    n_pos = int(y.sum())
    pos, neg, shift = keys.packed_keys(s, y, n_pos)
    neg = neg.copy()
    sp = keys.py_unpack(pos, s, shift)[0]
    bound, obj = _bound(sp, neg.size, loss)
    c = np.full(s.size, np.nan)
    kept = HOWS[how](neg, shift, s, bound, c)
    if how in ("sort_above", "sorted"):
        assert np.all(neg[:kept][:-1] < neg[:kept][1:])
    low = (1 << shift) - 1
    set_aside = np.setdiff1d(np.flatnonzero(~y), (neg[:kept] & np.uint64(low)).astype(np.int64))
    order = np.empty(s.size, np.int64)
    order[sorted_negatives(s, y)[1]] = np.arange(1, neg.size + 1)
    return set_aside, order[set_aside], obj, c


def _assert_all_below(s, y, how="split", loss="ap"):
    """Every negative set aside gets rank P + 1 from best_rank at its true order, and c = 0; the
    positives' c is untouched.  Returns how many were set aside."""
    set_aside, orders, obj, c = _split(s, y, how, loss)
    n_pos = int(y.sum())
    for i, j in zip(set_aside, orders):
        assert best_rank(s[i], j, 1, n_pos + 1, obj) == n_pos + 1
    assert np.all(c[set_aside] == 0.0)
    assert np.isnan(c[y]).all()
    return set_aside.size


def _exact_both(s, y, loss="ap"):
    """:func:`_exact` (one query: numpy's sort, split_bottom), and the batch's compiled loop
    (sort_above_bottom) on the query alone, against the sorting baseline, bit for bit."""
    _exact(s, y, loss)
    if s.size <= 4096:
        c, delta = get_oracle(loss).batch(s, y, np.array([0]), np.array([s.size]))
        c_ref, d_ref = get_oracle(loss, LOSSES[loss][1])(s, y)
        np.testing.assert_array_equal(c, c_ref)
        assert delta[0] == d_ref


def _separated(rng, n, frac_pos, gap, scale=1.0, offset=0.0):
    y = rng.random(n) < frac_pos
    y[0], y[1] = True, False
    return offset + scale * (rng.normal(size=n) + gap * y), y


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
@pytest.mark.parametrize("how", list(HOWS))
@pytest.mark.parametrize("gap", [0.0, 1.0, 3.0, 8.0])
@pytest.mark.parametrize("frac_pos", [0.03, 0.2, 0.6])
def test_set_aside_negatives_rank_last(gap, frac_pos, how, loss):
    """Hundreds of queries of 2..400 rows: each negative set aside is last by best_rank; with a
    clear gap nearly all negatives that the baseline puts last (c = 0) are set aside (the cut is
    tight)."""
    rng = np.random.default_rng(int(10 * gap + 100 * frac_pos))
    used = last = 0
    for _ in range(200):
        s, y = _separated(rng, int(rng.integers(2, 400)), frac_pos, gap, scale=10.0 ** rng.uniform(-3, 3))
        if rng.random() < 0.3:
            s = np.round(s)  # ties
        used += _assert_all_below(s, y, how, loss)
        last += np.count_nonzero(get_oracle(loss, LOSSES[loss][1])(s, y)[0][~y] == 0.0)
    if gap >= 3.0:
        assert used >= 0.85 * last > 0  # small queries (<= 32 negatives) are sorted whole


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_oracle_with_set_aside_is_bit_for_bit_the_baselines(loss):
    """Separated scores (most negatives set aside) at scales 1e-300..1e300, ties, one positive,
    integer scores: the walk (with the set-aside), the baseline and the grid agree bit for bit."""
    rng = np.random.default_rng(3)
    for scale, offset in [(1.0, 0.0), (1e-300, 0.0), (1e-12, 1.0), (1e150, 0.0), (1e-3, -1e6), (1.0, 1e12)]:
        for n, frac_pos in ((3_000, 0.05), (20_000, 0.3), (500, 0.9)):
            s, y = _separated(rng, n, frac_pos, 4.0, scale, offset)
            _exact_both(s, y, loss)
            if offset == 0.0:
                _exact_both(np.round(s / scale) * scale, y, loss)  # ties
    y = np.zeros(5_000, bool)
    y[7] = True
    s = rng.normal(size=y.size) - 5.0 * ~y
    assert _assert_all_below(s, y, loss=loss) > 0
    _exact_both(s, y, loss)


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_all_negatives_set_aside(loss):
    """Every negative far below: none left to sort or walk; c, Δ and the ± pattern as the baselines
    give them."""
    s = np.concatenate([np.arange(100.0, 110.0), -5000.0 - np.arange(1000.0)])
    y = np.arange(s.size) < 10
    for how in HOWS:
        assert _split(s, y, how, loss)[0].size == 1000
    _exact_both(s, y, loss)
    if loss == "ap":
        counts = walk_oracle_core(s, y, 10, np.empty(s.size), KIND_AP, np.zeros(1))
        np.testing.assert_array_equal(counts, [0] * 10 + [1000])  # the ± pattern counts them last


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_the_batch_sets_aside_as_the_single_query_does(loss):
    """Oracle.batch over many small separated queries (the compiled loop) equals the baseline on
    each, bit for bit."""
    rng = np.random.default_rng(11)
    sizes = rng.integers(20, 1_000, 300)
    ends = np.cumsum(sizes)
    starts = ends - sizes
    y = rng.random(ends[-1]) < 0.1
    y[starts], y[ends - 1] = True, False
    s = rng.normal(size=y.size) + 3.0 * y
    c, delta = get_oracle(loss).batch(s, y, starts, ends)
    for q, (a, b) in enumerate(zip(starts, ends)):
        c_one, d_one = get_oracle(loss, LOSSES[loss][1])(s[a:b], y[a:b])
        np.testing.assert_array_equal(c[a:b], c_one)
        assert delta[q] == d_one


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_the_certificate_is_tight_at_the_last_positive(loss):
    """The certificate at order j0 holds at θ and fails one ulp above it, where the binding step is
    the last one (no later step to make up for it): best_rank puts a negative at θ, order j0, last,
    and one a little higher not; at order j0 − 1 (one fewer negative above) θ fails.  A cut that
    counted a negative too many above the set-aside ones would certify a wrong rank."""
    n_pos, n_neg = 6, 206
    sp = 100.0 - 30.0 * np.arange(n_pos)  # spread: the bound binds at k = P
    bound, obj = _bound(sp, n_neg, loss)
    for j0 in (1, 6, 50):
        theta = _tight_theta(bound, j0)
        above = np.nextafter(theta, np.inf)
        assert steps_hold(bound, theta, j0) and not steps_hold(bound, above, j0)
        assert best_rank(theta, j0, 1, n_pos + 1, obj) == n_pos + 1
        assert best_rank(above + 1e-7, j0, 1, n_pos + 1, obj) < n_pos + 1
        if j0 > 1:
            assert not steps_hold(bound, theta, j0 - 1)


def _tight_theta(bound, j0):
    """The largest score at which every step holds at order ``j0``."""
    lo, hi = bound.sp[-1] - 1e6, bound.sp[-1]
    while np.nextafter(lo, np.inf) < hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if steps_hold(bound, mid, j0) else (lo, mid)
    return lo


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_the_cut_counts_the_negatives_above_it(loss):
    """Five negatives above the positives, then one at θ for order 6 (none between it and the lowest
    positive), then the rest far below: it is set aside at order exactly 6, and c, Δ are exact; one
    ulp higher it is kept."""
    n_pos, m0, n_rest = 6, 5, 200
    sp = 100.0 - 30.0 * np.arange(n_pos)
    theta = _tight_theta(_bound(sp, m0 + 1 + n_rest, loss)[0], m0 + 1)
    s = np.concatenate([sp, sp[0] + 1.0 + np.arange(m0), [theta], theta - 1e4 - np.arange(n_rest)])
    y = np.arange(s.size) < n_pos
    for how in HOWS:
        set_aside, orders, *_ = _split(s, y, how, loss)
        assert n_pos + m0 in set_aside and orders.min() == m0 + 1
    _exact_both(s, y, loss)
    s[n_pos + m0] = np.nextafter(theta, np.inf)  # now it must be kept: it is not last
    for how in HOWS:
        assert n_pos + m0 not in _split(s, y, how, loss)[0]
    _exact_both(s, y, loss)


def test_the_kept_log_table_differences_never_fall():
    """NDCG's certificate needs lt[m + 1] − lt[m] (computed) non-decreasing in m, entry by entry,
    up to ``LT_MONOTONE`` entries (the largest query that sets negatives aside for NDCG)."""
    lt = inverse_log_table(LT_MONOTONE)
    assert lt.size >= LT_MONOTONE
    d = lt[3:LT_MONOTONE] - lt[2:LT_MONOTONE - 1]  # m = 2 .. LT_MONOTONE - 2
    assert np.all(d[1:] >= d[:-1])


@pytest.mark.parametrize("how", list(HOWS))
def test_nothing_is_set_aside_when_not_allowed_or_worth_it(how):
    """Nothing is set aside when fewer than 1/16 of the negatives would be (where the cut costs
    passes over the keys: not for keys already sorted, whose cut is a bisection), or for NDCG when
    the query is larger than the log table the certificate was checked on."""
    rng = np.random.default_rng(4)
    s = rng.normal(size=2_000)
    y = rng.random(s.size) < 0.2
    s[~y & (np.arange(s.size) < 40)] -= 100.0  # a few far below: under 1/16 of the negatives
    if how == "sorted":  # every one far below, and the lowest of the others that the certificate covers
        assert np.count_nonzero(s < -50.0) <= _assert_all_below(s, y, how) < 0.1 * np.count_nonzero(~y)
    else:
        assert _split(s, y, how)[0].size == 0
    _exact_both(s, y)
    s = np.concatenate([np.arange(100.0, 110.0), -5000.0 - np.arange(1000.0)])
    y = np.arange(s.size) < 10
    pos, neg, shift = keys.packed_keys(s, y, 10)
    sp = keys.py_unpack(pos, s, shift)[0]
    for lt_size, kept in ((s.size + 2, 0), (s.size + 1, 1000)):  # a table one entry short: no set-aside
        bound = _bound(sp, 1000, "ndcg", lt_size)[0]
        assert HOWS[how](neg.copy(), shift, s, bound, np.empty(s.size)) == kept


def test_subnormal_spread_is_not_binned():
    """Scores a few subnormals apart: 64 bins over them would need a scale past the floats (and an
    index out of the bins); the split gives up before it bins anything (it keeps every key)."""
    checked = split_bottom
    s = np.concatenate([np.full(10, 6e-323), np.full(500, 5e-324), np.zeros(500)])
    y = np.arange(s.size) < 10
    pos, neg, shift = keys.packed_keys(s, y, 10)
    bound = _bound(keys.py_unpack(pos, s, shift)[0], neg.size, "ap")[0]
    assert checked(neg.copy(), shift, s, bound, np.empty(s.size)) == neg.size
    _exact_both(s, y)


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_the_sorted_cut_is_the_first_position_that_holds(loss):
    """sorted_bottom's bisection finds exactly the first position m whose certificate (score of
    the m-th negative, order m + 1) holds, as a scan from the front finds it."""
    rng = np.random.default_rng(9)
    for _ in range(300):
        s, y = _separated(rng, int(rng.integers(2, 300)), rng.uniform(0.02, 0.6), rng.uniform(0, 6))
        if rng.random() < 0.3:
            s = np.round(s, 1)
        n_pos = int(y.sum())
        pos, neg, shift = keys.packed_keys(s, y, n_pos)
        neg = np.sort(neg)
        keys.py_repair(neg, s, shift)
        bound = _bound(keys.py_unpack(pos, s, shift)[0], neg.size, loss)[0]
        low = np.uint64((1 << shift) - 1)
        first = next((m for m in range(neg.size) if steps_hold(bound, s[int(neg[m] & low)], m + 1)), neg.size)
        assert sorted_bottom(neg, shift, s, bound, np.zeros(s.size)) == first


@pytest.mark.parametrize("gain", ["exponential", "linear"])
def test_graded_levels_set_aside_and_stay_exact(gain):
    """Graded NDCG's levels with the set-aside (one sort, a cut and a walk per level), on
    trained-like scores where most negatives of every level rank last: bit for bit the sum over
    the levels of the binary QS batch oracle (whose cut is the bucket sort's) — and the exhaustive
    per-threshold oracle on tiny queries."""
    from ssvm.losses.graded import combine_levels, graded_ndcg_batch
    from ssvm.losses.qs import qs_batch

    ndcg = LOSSES["ndcg"][0]
    rng = np.random.default_rng(11)
    for trial in range(40):
        sizes = rng.choice([2, 6, 40, 300, 2000], int(rng.integers(1, 12)))
        ends = np.cumsum(sizes)
        starts = ends - sizes
        r = rng.choice(5, ends[-1], p=[0.5, 0.3, 0.12, 0.06, 0.02])
        r[starts], r[ends - 1] = 3, 0
        s = 2.0 * r + rng.normal(size=r.size) * rng.choice([0.05, 0.5, 1.0])
        if trial % 3 == 0:
            s = np.round(s, 1)  # ties
        c, delta = graded_ndcg_batch(s, r, starts, ends, gain)
        c2, d2 = combine_levels(lambda *a: qs_batch(*a, ndcg), s, r, starts, ends, gain)  # noqa: B023
        assert np.array_equal(c, c2) and np.array_equal(delta, d2)
