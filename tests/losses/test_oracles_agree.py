"""All oracles agree exactly on medium queries (P up to 100, N up to 10⁴) and QS agrees with the
sorting baselines on large queries in both score regimes (every code path of the QS kernel)."""

import numpy as np
import pytest
from losses_twins import ranking_from_c

from ssvm.losses import NDCGLoss, get_oracle
from ssvm.losses.qs import qs_oracle


def _query(rng, n_pos, n_neg, mu_pos, mu_neg, ties=False):
    s = np.concatenate([rng.normal(mu_pos, 1, n_pos), rng.normal(mu_neg, 1, n_neg)])
    if ties:
        s = np.round(s * 4) / 4
    y = np.zeros(n_pos + n_neg, bool)
    y[:n_pos] = True
    p = rng.permutation(s.size)
    return s[p], y[p]


def _same(a, b):
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1] == b[1]


@pytest.mark.parametrize("seed", range(6))
def test_medium_queries_all_oracles(seed):
    rng = np.random.default_rng(seed)
    for case in range(4):
        n_pos = int(rng.integers(1, 101))
        n_neg = int(rng.integers(1, 10_001))
        mu_pos, mu_neg = [(1, 0), (2, -2), (0, 0), (0, 3)][case]
        s, y = _query(rng, n_pos, n_neg, mu_pos, mu_neg, ties=seed % 2 == 1)
        ref = get_oracle("ap", "yue")(s, y)
        for o in ("qs", "search", "auto"):
            _same(get_oracle("ap", o)(s, y), ref)
        c, d = get_oracle("ap", "dp")(s, y)
        assert d + s @ c == pytest.approx(ref[1] + s @ ref[0], rel=1e-12, abs=1e-12)
        if seed % 2 == 0:  # continuous scores: no near-ties, the DP returns the same ranking
            np.testing.assert_allclose(c, ref[0], atol=1e-15)
        ref_n = get_oracle("ndcg", "chakrabarti")(s, y)
        _same(get_oracle("ndcg", "qs")(s, y), ref_n)
        ranking_from_c(s, y, ref[0])  # c encodes a valid ranking


@pytest.mark.parametrize("regime", [(1.0, 0.0), (2.0, -2.0), (6.0, -6.0), (0.0, 2.0)])
@pytest.mark.parametrize("n_pos", [1, 7, 60])
def test_large_queries_qs_vs_baselines(regime, n_pos):
    rng = np.random.default_rng(n_pos)
    s, y = _query(rng, n_pos, 60_000, *regime)
    _same(get_oracle("ap", "qs")(s, y), get_oracle("ap", "search")(s, y))
    _same(get_oracle("ndcg", "qs")(s, y), get_oracle("ndcg", "chakrabarti")(s, y))


def test_large_query_with_many_ties():
    rng = np.random.default_rng(3)
    s, y = _query(rng, 40, 50_000, 1.0, 0.0)
    s = np.round(s * 8) / 8
    _same(get_oracle("ap", "qs")(s, y), get_oracle("ap", "search")(s, y))
    _same(get_oracle("ndcg", "qs")(s, y), get_oracle("ndcg", "chakrabarti")(s, y))


def test_qs_without_the_rank_one_shortcut_equals_with():
    """A loss whose derivative may be positive does not settle the negatives above every positive
    at rank 1 (its grid reaches the highest score); same answers otherwise."""

    class _NoBlocks(NDCGLoss):
        def nonincreasing(self, n_pos, n_neg):
            return False

    rng = np.random.default_rng(5)
    for regime in [(1.0, 0.0), (2.0, -2.0)]:
        s, y = _query(rng, 30, 20_000, *regime)
        _same(qs_oracle(s, y, _NoBlocks()), qs_oracle(s, y, NDCGLoss()))


def test_qs_keeps_its_work_memory_from_call_to_call_exact():
    """The compiled entries keep their work memory per thread between calls (``_work_memory.h``): a
    large query, then smaller ones, then a large one again (grid and walk paths, AP and NDCG), each
    exactly the sorting baselines' answer; the same in a second thread at the same time."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(11)
    shapes = [(60, 40_000), (3, 50), (900, 2_000), (1, 7), (30, 20_000), (400, 500)]  # grid and walk (P >= N/50)
    queries = [_query(rng, p, n, 1.0, 0.0, ties=k % 2 == 1) for k, (p, n) in enumerate(shapes)]

    def check(order):
        for k in order:
            s, y = queries[k]
            _same(get_oracle("ap", "qs")(s, y), get_oracle("ap", "search")(s, y))
            _same(get_oracle("ndcg", "qs")(s, y), get_oracle("ndcg", "chakrabarti")(s, y))
            starts, ends = np.array([0, s.size // 2]), np.array([s.size // 2, s.size])
            if all(y[a:b].any() and not y[a:b].all() for a, b in zip(starts, ends)):
                c, delta = get_oracle("ap", "qs").batch(s, y, starts, ends)
                for q, (a, b) in enumerate(zip(starts, ends)):
                    _same((c[a:b], delta[q]), get_oracle("ap", "qs")(s[a:b], y[a:b]))

    with ThreadPoolExecutor(2) as pool:
        for f in [pool.submit(check, range(len(shapes))), pool.submit(check, reversed(range(len(shapes))))]:
            f.result()
    check(range(len(shapes)))
