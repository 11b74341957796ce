"""NDCG@k's exact oracle (a DP over the top-k region) against the exhaustive search over ± patterns and the
O(PN) chain DP; the graded form's threshold decomposition against the graded NDCG@k of rankings."""

import numpy as np
import pytest
from losses_twins import psi_coefficients, random_query

from ssvm.losses import loss_augmented_inference, ranking_loss
from ssvm.losses.brute import ndcg_at_k_brute_oracle
from ssvm.losses.graded import graded_ndcg_value
from ssvm.losses.ndcg_at_k import (
    graded_ndcg_at_k_batch,
    graded_ndcg_at_k_oracle,
    level_alphas_at_k,
    ndcg_at_k_batch,
    ndcg_at_k_by_score,
    ndcg_at_k_oracle,
)


def chain_dp(s, y, k):
    """max over non-decreasing m_i (negatives above the i-th positive) of Σ_i T(i, m_i) − [i + m_i ≤ k] D/IDCG,
    minus the same at the true ranking, plus 1: the hinge H, by an O(PN) DP with prefix maxima."""
    sp, sn = np.sort(s[y])[::-1], np.sort(s[~y])[::-1]
    P, N = sp.size, sn.size
    kk = min(k, P + N)
    idcg = sum(1 / np.log2(1 + i) for i in range(1, min(kk, P) + 1))
    prefix = np.concatenate([[0.0], np.cumsum(sn)])

    def term(i, m):  # 0-based positive i with m negatives above
        t = ((N - 2 * m) * sp[i] + 2 * prefix[m] - prefix[N]) / (P * N)
        return t - (1 / np.log2(2 + i + m) / idcg if i + 1 + m <= kk else 0.0)

    best = np.array([term(0, m) for m in range(N + 1)])
    for i in range(1, P):
        best = np.maximum.accumulate(best) + np.array([term(i, m) for m in range(N + 1)])
    truth = sum(term(i, 0) for i in range(P))
    return best.max() - truth  # 1 + Σ terms is Δ + s·Ψ; the truth's is s·Ψ(R*) (its Δ is 0)


def test_binary_matches_exhaustive_search_and_chain_dp():
    rng = np.random.default_rng(0)
    for _ in range(2500):
        s, y = random_query(rng, n_max=9)
        k = int(rng.integers(1, 8))
        c, delta = ndcg_at_k_oracle(s, y, k)
        c_b, delta_b = ndcg_at_k_brute_oracle(s, y, k)
        scale = max(1.0, float(np.abs(s).max()))
        h = delta + s @ c
        assert h == pytest.approx(delta_b + s @ c_b, abs=1e-12 * scale)
        assert h == pytest.approx(chain_dp(s, y, k), abs=1e-12 * scale)
        assert 0.0 <= delta <= 1.0 + 1e-15
        assert h >= ranking_loss(s, y, loss="ndcg_at_k", k=k) - 1e-12 * scale  # the upper bound


def test_larger_queries_match_the_chain_dp():
    rng = np.random.default_rng(1)
    for _ in range(200):
        n = int(rng.integers(2, 80))
        s = rng.normal(size=n)
        y = rng.random(n) < rng.uniform(0.05, 0.6)
        y[0], y[-1] = True, False
        k = int(rng.integers(1, 15))
        c, delta = ndcg_at_k_oracle(s, y, k)
        assert delta + s @ c == pytest.approx(chain_dp(s, y, k), abs=1e-11)


def test_graded_decomposition_and_oracle():
    rng = np.random.default_rng(2)
    for _ in range(300):
        n = int(rng.integers(2, 8))
        g = rng.integers(0, 4, n)
        if g.min() == g.max():
            continue
        k = int(rng.integers(1, 6))
        s = rng.normal(size=n)
        for gain in ("exponential", "linear"):
            levels, alpha = level_alphas_at_k(g, gain, k)
            assert alpha.sum() == pytest.approx(1.0) if levels[0] == 0 else alpha.sum() <= 1 + 1e-12
            for order in (np.argsort(-s, kind="stable"), rng.permutation(n)):
                ranked = np.empty(n)
                ranked[order] = -np.arange(n, dtype=float)  # scores realising the ranking
                binary = sum(alpha[t] * (1 - graded_ndcg_value(ranked, (g >= levels[t]).astype(int), "binary", k))
                             for t in range(1, levels.size))
                assert 1 - graded_ndcg_value(ranked, g, gain, k) == pytest.approx(binary, abs=1e-12)
            c, d = graded_ndcg_at_k_oracle(s, g, gain, k)
            c_b, d_b = graded_ndcg_at_k_oracle(s, g, gain, k, binary=ndcg_at_k_brute_oracle)
            assert d + s @ c == pytest.approx(d_b + s @ c_b, abs=1e-12)
            assert d + s @ c >= ranking_loss(s, g, loss="ndcg_at_k", k=k, gain=gain) - 1e-12
            c_r, d_r = loss_augmented_inference(s, g, loss="ndcg_at_k", k=k, gain=gain)
            np.testing.assert_array_equal(c_r, c)


def test_batches():
    rng = np.random.default_rng(3)
    sizes = [3, 50, 5000, 9]
    s = np.concatenate([rng.normal(size=m) for m in sizes])
    g = rng.integers(0, 3, s.size)
    ends = np.cumsum(sizes)
    starts = ends - sizes
    g[starts], g[ends - 1] = 2, 0
    c, delta = ndcg_at_k_batch(s, g > 0, starts, ends, 10)
    c_g, delta_g = graded_ndcg_at_k_batch(s, g, starts, ends, "exponential", 10)
    for q, (a, b) in enumerate(zip(starts, ends)):
        c_q, d_q = ndcg_at_k_oracle(s[a:b], g[a:b] > 0, 10)
        np.testing.assert_array_equal(c[a:b], c_q)
        assert delta[q] == d_q
        c_q, d_q = graded_ndcg_at_k_oracle(s[a:b], g[a:b], "exponential", 10)
        np.testing.assert_array_equal(c_g[a:b], c_q)
    a, b = starts[1], ends[1]
    assert delta[1] + s[a:b] @ c[a:b] == pytest.approx(chain_dp(s[a:b], g[a:b] > 0, 10), abs=1e-11)


def test_fit_and_score():
    from ssvm import RankSVM
    from ssvm.losses import rank_hinge
    from ssvm.metrics import ndcg_at_k

    rng = np.random.default_rng(4)
    X = rng.normal(size=(240, 3))
    qid = np.repeat(np.arange(8), 30)
    g = np.clip(np.round(X @ np.array([1.0, -0.5, 0.2]) + rng.normal(size=240)), 0, 3).astype(int)
    model = RankSVM(loss="ndcg_at_k", k=5, C=2.0, tol=1e-7).fit(X, g, qid=qid)
    w = model.coef_[0]
    J = 0.5 * w @ w + 2.0 * rank_hinge(X @ w, g, qid=qid, loss="ndcg_at_k", k=5)[0]
    assert model.objective_ == pytest.approx(J, rel=1e-9)
    assert model.score(X, g, qid=qid) == pytest.approx(ndcg_at_k(g, X @ w, k=5, qid=qid))


def test_graded_ranking_by_score_is_the_levels_sum_from_the_pairwise_definition():
    """The direct loss's R_w for graded NDCG@k: Σ_t α_t Ψ_t(R_w) − Ψ_t(R*) from the pairwise definition of
    each level's joint feature, with α_t from IDCG@k's sums written out, and Δ the graded NDCG@k of the
    ranking by score (graded_ndcg_value)."""
    rng = np.random.default_rng(11)
    for _ in range(300):
        n = int(rng.integers(2, 9))
        grades = rng.integers(0, 4, size=n)
        if grades.min() == grades.max():
            continue
        s = np.round(rng.normal(size=n), 1)  # ties: the ranking by score breaks them by index
        k, gain = int(rng.integers(1, 5)), str(rng.choice(["exponential", "linear"]))
        order = np.argsort(-s, kind="stable")
        g = 2.0 ** grades - 1 if gain == "exponential" else grades.astype(float)
        discount = 1 / np.log2(np.arange(2, n + 2))
        ideal = (np.sort(g)[::-1] * discount)[:k].sum()
        expect = np.zeros(n)
        levels = np.unique(grades)
        gv = 2.0 ** levels - 1 if gain == "exponential" else levels.astype(float)
        for t in range(1, levels.size):
            above = grades >= levels[t]
            alpha = (gv[t] - gv[t - 1]) * discount[:min(k, int(above.sum()))].sum() / ideal
            expect += alpha * psi_coefficients(order, above)
        c, delta = ndcg_at_k_by_score(s, grades, np.array([0]), np.array([n]), k=k, gain=gain)
        np.testing.assert_allclose(c, expect, rtol=1e-12, atol=1e-14)
        assert delta[0] == pytest.approx(1 - graded_ndcg_value(s, grades, gain, k), rel=1e-12, abs=1e-14)
