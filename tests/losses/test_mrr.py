"""The MRR oracle (enumeration over n₁) against the exhaustive search over every ± pattern, and MRR's
QS decomposition δ_j(r) = [r = 1] / (j (j + 1)) against its value."""

import numpy as np
import pytest
from losses_twins import random_query

from ssvm.losses import loss_augmented_inference, ranking_loss
from ssvm.losses.brute import rank_brute_oracle, rank_patterns
from ssvm.losses.mrr import MRRLoss, mrr_batch, mrr_oracle

MRR = MRRLoss()


def reciprocal_rank_loss(s, y):
    """1 − 1/(rank of the first relevant row) of the ranking by (−score, index)."""
    order = sorted(range(s.size), key=lambda i: (-s[i], i))
    return 1.0 - 1.0 / (1 + [bool(y[i]) for i in order].index(True))


def test_oracle_matches_exhaustive_search():
    rng = np.random.default_rng(0)
    exact = 0
    for _ in range(3000):
        s, y = random_query(rng, n_max=9)
        c, delta = mrr_oracle(s, y)
        c_b, delta_b = rank_brute_oracle(s, y, MRR)
        scale = max(1.0, float(np.abs(s).max()))
        assert delta + s @ c == pytest.approx(delta_b + s @ c_b, abs=1e-12 * scale)
        if np.all(s == np.round(s * 4) / 4) and np.abs(s).max() <= 1:  # dyadic: the same output, tie rule too
            np.testing.assert_allclose(c, c_b, rtol=0, atol=1e-15)
            assert delta == pytest.approx(delta_b, abs=1e-15)
            exact += 1
        hinge = delta + s @ c  # the upper bound H ≥ Δ(ranking by score)
        assert hinge >= reciprocal_rank_loss(s, y) - 1e-12 * scale
        assert ranking_loss(s, y, loss="mrr") == pytest.approx(reciprocal_rank_loss(s, y), abs=1e-15)
    assert exact > 200


def test_qs_decomposition_and_conditions():
    """Σ_j δ_j(r_j) is the value of every ± pattern (C2), and d_j(1) = −δ_j(1) rises with j (C3)."""
    for n_pos in range(1, 5):
        for n_neg in range(1, 6):
            pos_at, neg_at = rank_patterns(n_pos, n_neg)
            ranks = 1 + (pos_at[:, :, None] < neg_at[:, None, :]).sum(axis=1)
            counts = np.stack([(ranks == r).sum(axis=1) for r in range(1, n_pos + 2)], axis=1)
            terms = MRR.delta_terms(n_neg)
            summed = np.where(ranks == 1, terms[None, :], 0.0).sum(axis=1)
            np.testing.assert_allclose(summed, MRR.value(counts), rtol=1e-14)
    assert np.all(np.diff(-MRR.delta_terms(50)) > 0)


def test_batch_large_query_and_entry_points():
    rng = np.random.default_rng(1)
    sizes = [2, 9, 5000, 30]
    s = np.concatenate([rng.integers(-30, 30, m) / 16.0 for m in sizes])
    y = rng.random(s.size) < 0.2
    ends = np.cumsum(sizes)
    starts = ends - sizes
    y[starts] = True
    y[ends - 1] = False
    c, delta = mrr_batch(s, y, starts, ends)
    for q, (a, b) in enumerate(zip(starts, ends)):
        c_q, d_q = mrr_oracle(s[a:b], y[a:b])
        np.testing.assert_array_equal(c[a:b], c_q)
        assert delta[q] == d_q
    a, b = starts[2], ends[2]  # the large query (radix sort) against the enumeration written with numpy
    sq, yq = s[a:b], y[a:b]
    sp, sn = np.sort(sq[yq])[::-1], np.sort(sq[~yq])[::-1]
    P, N = sp.size, sn.size
    values = [n1 / (n1 + 1) + (np.sum(sn[:n1, None] - sp[None, :]) + np.sum(sp[0] - sn[n1:])
                               + np.abs(sp[1:, None] - sn[None, n1:]).sum()) / (P * N) for n1 in range(N + 1)]
    assert delta[2] + sq @ c[a:b] == pytest.approx(max(values) - (sp.sum() * N - sn.sum() * P) / (P * N), abs=1e-9)
    c1, d1 = loss_augmented_inference(s[:2], y[:2], loss="mrr")
    assert d1 == mrr_oracle(s[:2], y[:2])[1]
    with pytest.raises(ValueError, match="no negative"):
        loss_augmented_inference(np.zeros(3), [1, 1, 1], loss="mrr")


def test_fit_score_and_functional_layers():
    from ssvm import RankSVM
    from ssvm.losses import direct_loss_gradient, rank_hinge
    from ssvm.metrics import ranking_score

    rng = np.random.default_rng(2)
    X = rng.normal(size=(160, 3))
    qid = np.repeat(np.arange(8), 20)
    y = X @ np.array([1.0, -0.5, 0.2]) + rng.normal(size=160) > 1.0
    model = RankSVM(loss="mrr", C=2.0, tol=1e-7).fit(X, y, qid=qid)

    def J(w):
        return 0.5 * w @ w + 2.0 * rank_hinge(X @ w, y, qid=qid, loss="mrr")[0]

    assert model.objective_ == pytest.approx(J(model.coef_[0]), rel=1e-9)
    for _ in range(20):
        assert J(model.coef_[0] + rng.normal(scale=0.05, size=3)) >= model.objective_ - 1e-5
    s = model.decision_function(X)
    rr = np.mean([1 - reciprocal_rank_loss(s[qid == q], y[qid == q]) for q in range(8)
                  if 0 < y[qid == q].sum() < 20])
    assert model.score(X, y, qid=qid) == pytest.approx(rr) == ranking_score(y, s, qid=qid, loss="mrr")
    task, grad = direct_loss_gradient(s, y, qid=qid, loss="mrr", direction="positive")
    assert task == pytest.approx(1 - rr) and grad.shape == s.shape
