"""loss="recall_at_k": the shared top-k kernel against the exhaustive search over every top-k set, the upper
bound H ≥ Δ of the ranking by score, and the loss in the estimators, rank_hinge, RankHingeLoss and metrics."""

import numpy as np
import pytest
from losses_twins import random_query

from ssvm.losses import get_oracle, loss_augmented_inference, rank_hinge, ranking_loss
from ssvm.losses._classification_kernels import batch_loop, precision_at_k_into, recall_at_k_batch
from ssvm.losses.brute import recall_at_k_brute_oracle
from ssvm.losses.classification import precision_at_k_oracle, recall_at_k_oracle, recall_at_k_value


def recall_value(s, y, k):
    """1 − recall in the top k, written plainly: the k best rows by score (ties: the earlier row first)."""
    order = sorted(range(s.size), key=lambda i: (-s[i], i))
    k = min(k, s.size)
    return 1.0 - sum(bool(y[i]) for i in order[:k]) / min(int(y.sum()), k)


def bits(a):
    return np.asarray(a, dtype=np.float64).view(np.uint64)


def test_oracle_matches_exhaustive_search_and_bounds_the_ranking_loss():
    rng = np.random.default_rng(35)
    cases = {"P > k": 0, "P < k": 0, "P == k": 0, "k >= n": 0, "one positive": 0, "one negative": 0}
    for _ in range(4000):
        s, y = random_query(rng, n_max=9)
        k = int(rng.integers(1, s.size + 3))
        n_pos = int(y.sum())
        cases["P > k"] += n_pos > k
        cases["P < k"] += n_pos < k
        cases["P == k"] += n_pos == k
        cases["k >= n"] += k >= s.size
        cases["one positive"] += n_pos == 1
        cases["one negative"] += n_pos == s.size - 1
        c, delta = recall_at_k_oracle(s, y, k)
        c_b, delta_b = recall_at_k_brute_oracle(s, y, k)
        scale = max(1.0, float(np.abs(s).max()))
        h, h_b = delta + s @ c, delta_b + s @ c_b
        assert h == pytest.approx(h_b, abs=1e-12 * scale), (s, y, k)
        value = recall_at_k_value(s, y, k)
        assert value == recall_value(s, y, k) == ranking_loss(s, y, loss="recall_at_k", k=k)
        assert h >= value - 1e-12 * scale  # the upper bound, for P > k too
        assert 0.0 <= delta <= 1.0 and abs(c.sum()) <= 1e-12
        # the compiled kernel: the numpy oracle to the bit
        out = np.empty(s.size)
        assert precision_at_k_into(s, y, k, out, recall=True) == delta
        np.testing.assert_array_equal(bits(out), bits(c))
        # the loss-augmented set is precision@k's (one kernel, its own normaliser and offset)
        c_p, delta_p = precision_at_k_oracle(s, y, k)
        kk = min(k, s.size)
        m = min(n_pos, kk)
        np.testing.assert_allclose(c * m, c_p * kk, atol=1e-12)
        assert delta * m == pytest.approx(delta_p * kk - max(0, kk - n_pos), abs=1e-12)
    assert min(cases.values()) >= 200, cases


def test_brute_ties_and_exact_values():
    # all scores tied: the positives first, as many as fit (Δ = 0 unless a negative pays)
    s, y = np.zeros(5), np.array([False, True, False, True, True])
    for k in range(1, 7):
        c, delta = recall_at_k_oracle(s, y, k)
        c_b, delta_b = recall_at_k_brute_oracle(s, y, k)
        np.testing.assert_allclose(c, c_b, atol=1e-15)
        assert delta == pytest.approx(delta_b, abs=1e-15)
    # P = 3 > k = 2: the ranking [+, -, +, +] misses one of the 2 positives that fit, Δ = 1/2
    s, y = np.array([2.0, 1.5, 1.0, 0.0]), np.array([True, False, True, True])
    assert recall_at_k_value(s, y, 2) == 0.5
    c, delta = recall_at_k_oracle(s, y, 2)
    assert delta == 0.5 and delta + s @ c == pytest.approx(1.25)
    # k >= n: every row is in the top k, the loss is 0 and so is c
    c, delta = recall_at_k_oracle(s, y, 9)
    assert delta == 0.0 and not c.any()


def test_batch_is_the_oracle_per_query_to_the_bit():
    rng = np.random.default_rng(7)
    sizes = rng.integers(2, 300, 50)
    ends = np.cumsum(sizes) + np.arange(sizes.size)  # a row between queries: left at 0
    starts = ends - sizes
    s = np.round(rng.normal(size=int(ends[-1]) + 1), 1)
    y = rng.random(s.size) < 0.3
    y[starts], y[ends - 1] = True, False
    for k in (1, 5, 40):
        c, delta = recall_at_k_batch(s, y, starts, ends, k)
        c2, delta2 = batch_loop(s, y, starts, ends, k, recall=True)
        np.testing.assert_array_equal(bits(c), bits(c2))
        for q, (a, b) in enumerate(zip(starts, ends)):
            c_ref, d_ref = recall_at_k_oracle(s[a:b], y[a:b], k)
            np.testing.assert_array_equal(bits(c[a:b]), bits(c_ref))
            assert delta[q] == d_ref
    assert get_oracle("recall_at_k", k=5).batched is recall_at_k_batch
    c, d = loss_augmented_inference(s[:9], y[:9], loss="recall_at_k", k=3, oracle="brute")
    c_ref, d_ref = recall_at_k_oracle(s[:9], y[:9], 3)
    assert d + s[:9] @ c == pytest.approx(d_ref + s[:9] @ c_ref)


def test_recall_at_k_fit_score_and_torch():
    torch = pytest.importorskip("torch")
    from ssvm import RankSVM
    from ssvm.metrics import ranking_score
    from ssvm.model_selection import RankSVMCV
    from ssvm.nn import RankHingeLoss

    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 3))
    qid = np.repeat(np.arange(10), 30)
    y = X @ np.array([1.0, -0.5, 0.2]) + rng.normal(size=300) > 0.5
    model = RankSVM(loss="recall_at_k", k=5, C=3.0, tol=1e-7).fit(X, y, qid=qid)
    s = model.decision_function(X)
    J = 0.5 * model.coef_[0] @ model.coef_[0] + 3.0 * rank_hinge(s, y, qid=qid, loss="recall_at_k", k=5)[0]
    assert model.objective_ == pytest.approx(J, rel=1e-9)
    value = np.mean([1 - recall_value(s[qid == q], y[qid == q], 5) for q in range(10)
                     if 0 < y[qid == q].sum() < 30])
    assert model.score(X, y, qid=qid) == pytest.approx(value)
    assert ranking_score(y, s, qid=qid, loss="recall_at_k", k=5) == pytest.approx(value)
    assert model.score(X, y, qid=qid) > ranking_score(y, -s, qid=qid, loss="recall_at_k", k=5)
    # the torch loss is rank_hinge's value, and its gradient X.T c
    t = torch.tensor(s, requires_grad=True)
    loss = RankHingeLoss("recall_at_k", k=5)(t, torch.from_numpy(y), torch.from_numpy(qid))
    loss.backward()
    value_np, grad = rank_hinge(s, y, qid=qid, loss="recall_at_k", k=5)
    assert float(loss.detach()) == pytest.approx(value_np)
    np.testing.assert_allclose(t.grad.numpy(), grad, atol=1e-15)
    cv = RankSVMCV(loss="recall_at_k", k=5, Cs=[0.1, 1.0], cv=2).fit(X, y, qid=qid)
    assert cv.C_ in (0.1, 1.0)


def svm_perf_rec_at_k_hinge(s, y, k):
    """SVM^perf's Rec@k hinge, from its rule: max over labellings with a + b <= k of Δ = 1 − a/P plus
    (1/(2n)) Σ (ȳ − y) s (its label scaling, as ssvm.losses.contingency states it)."""
    from itertools import product

    n, n_pos = s.size, int(y.sum())
    ypm = np.where(y, 1.0, -1.0)
    best = -np.inf
    for labels in product((-1.0, 1.0), repeat=n):
        ybar = np.array(labels)
        if np.count_nonzero(ybar > 0) > k:
            continue
        a = np.count_nonzero((ybar > 0) & y)
        best = max(best, 1.0 - a / n_pos + (ybar - ypm) @ s / (2 * n))
    return best


def test_svm_perf_rule_breaks_the_upper_bound_when_p_exceeds_k_and_this_loss_does_not():
    s, y = np.array([5.0, 5.0, 5.0, -5.0]), np.array([True, True, True, False])  # P = 3 > k = 1
    # SVM^perf's prediction (its argmax of ȳ·s over the same labellings) labels one positive: Δ = 1 − 1/3
    assert svm_perf_rec_at_k_hinge(s, y, 1) < 0.0 < 2.0 / 3.0
    c, delta = recall_at_k_oracle(s, y, 1)
    assert delta + s @ c >= recall_at_k_value(s, y, 1) == 0.0
    s = np.array([-1.0, 2.0, 0.5, 1.0])  # the negative second: one of the 2 positives that fit is missed
    c, delta = recall_at_k_oracle(s, y, 2)
    assert delta + s @ c >= recall_at_k_value(s, y, 2) == 0.5
