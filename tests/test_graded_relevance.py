"""Graded NDCG through every entry point: rank_hinge, the direct loss, ssvm.nn, RankSVM — against
per-threshold references, finite differences, and today's binary results with 0/1 labels."""

import warnings

import numpy as np
import pytest

from ssvm import RankSVM
from ssvm.exceptions import DegenerateQueriesWarning
from ssvm.losses import NDCGLoss, direct_loss_gradient, get_oracle, rank_hinge, ranking_loss
from ssvm.losses._score_ranking import ranked_by_score
from ssvm.losses.brute import rank_brute_oracle
from ssvm.losses.graded import graded_ndcg_value, level_weights
from ssvm.metrics import mean_ndcg

GAINS = ("exponential", "linear", "binary")


def batch(rng, n_queries=6, n_max=9):
    """Scores, grades 0..4 and qid, rows of a query scattered; one query with all grades equal."""
    sizes = rng.integers(2, n_max + 1, n_queries)
    qid = rng.permutation(np.repeat(np.arange(n_queries), sizes))
    grades = rng.integers(0, 5, qid.size)
    grades[qid == 0] = 2  # all equal: skipped
    for q in range(1, n_queries):
        rows = np.flatnonzero(qid == q)
        if grades[rows].min() == grades[rows].max():
            grades[rows[0]] = (grades[rows[0]] + 1) % 5
    scores = rng.normal(size=qid.size) if rng.random() < 0.7 else rng.integers(-2, 3, qid.size).astype(float)
    return scores, grades, qid


def reference_hinge(scores, grades, qid, gain):
    """Mean over the queries with two distinct grades of Σ_t α_t H_t (exhaustive binary oracles)."""
    value, grad, used = 0.0, np.zeros(scores.size), 0
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)
        g, s = grades[rows], scores[rows]
        if g.min() == g.max():
            continue
        used += 1
        levels, alpha = level_weights(g, gain)
        for v, a in zip(levels[1:], alpha[1:]):
            if a:
                c, d = rank_brute_oracle(s, g >= v, NDCGLoss())
                value += a * (d + s @ c)
                grad[rows] += a * c
    return value / used, grad / used


@pytest.mark.parametrize("gain", ["exponential", "linear"])
def test_rank_hinge_matches_the_reference_and_skips_equal_grades(gain):
    rng = np.random.default_rng(0)
    for _ in range(60):
        scores, grades, qid = batch(rng)
        value, grad = rank_hinge(scores, grades, qid, loss="ndcg", gain=gain)
        ref_value, ref_grad = reference_hinge(scores, grades, qid, gain)
        assert value == pytest.approx(ref_value, rel=1e-10, abs=1e-12)
        np.testing.assert_allclose(grad, ref_grad, rtol=1e-9, atol=1e-12)
        assert np.all(grad[qid == 0] == 0.0)
        # an upper bound of the mean graded loss of the ranking by score
        losses = [1.0 - graded_ndcg_value(scores[qid == q], grades[qid == q], gain) for q in range(1, 6)]
        assert value >= np.mean(losses) - 1e-12


@pytest.mark.parametrize("gain", GAINS)
def test_zero_one_labels_give_todays_results_bit_for_bit(gain):
    rng = np.random.default_rng(1)
    for _ in range(20):
        n = int(rng.integers(20, 400))
        scores, y, qid = rng.normal(size=n), rng.random(n) < 0.3, rng.integers(0, 6, n)
        binary = rank_hinge(scores, y, qid, loss="ndcg", gain="binary")
        value, grad = rank_hinge(scores, y.astype(int), qid, loss="ndcg", gain=gain)
        assert value == binary[0] and np.array_equal(grad, binary[1])
        for direction in ("positive", "perceptron"):
            d_bin = direct_loss_gradient(scores, y, qid, loss="ndcg", direction=direction, gain="binary")
            d = direct_loss_gradient(scores, y.astype(int), qid, loss="ndcg", direction=direction, gain=gain)
            assert d[0] == d_bin[0] and np.array_equal(d[1], d_bin[1])
        s = scores[:30]
        yy = y[:30].copy()
        yy[:2] = True, False
        assert ranking_loss(s, yy.astype(int), "ndcg", gain=gain) == ranking_loss(s, yy, "ndcg", gain="binary")


def test_ranksvm_with_zero_one_labels_is_the_same_model_for_every_gain():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(120, 4))
    y = (X[:, 0] + rng.normal(size=120) > 0.5).astype(int)
    qid = np.repeat(np.arange(8), 15)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateQueriesWarning)
        coefs = [RankSVM(loss="ndcg", gain=g, C=1.0).fit(X, y, qid=qid).coef_ for g in GAINS]
    assert np.array_equal(coefs[0], coefs[1]) and np.array_equal(coefs[0], coefs[2])


@pytest.mark.parametrize("gain", ["exponential", "linear"])
def test_direct_loss_positive_is_the_alpha_sum_of_binary_directions(gain):
    """Σ_t α_t (1/ε)[Ψ_t(R_dir,t) − Ψ_t(R_w)], R_dir,t the exhaustive loss-augmented ranking at s/ε."""
    rng = np.random.default_rng(3)
    eps = 0.5
    for _ in range(40):
        scores, grades, qid = batch(rng, n_queries=4, n_max=7)
        task, grad = direct_loss_gradient(scores, grades, qid, loss="ndcg", epsilon=eps, gain=gain)
        ref, losses = np.zeros(scores.size), []
        for q in range(1, 4):
            rows = np.flatnonzero(qid == q)
            g, s = grades[rows], scores[rows]
            levels, alpha = level_weights(g, gain)
            for v, a in zip(levels[1:], alpha[1:]):
                if a:
                    c_dir, _ = rank_brute_oracle(s / eps, g >= v, NDCGLoss())
                    c_w, _ = ranked_by_score(s, g >= v, np.array([0]), np.array([s.size]), NDCGLoss())
                    ref[rows] += a * (c_dir - c_w) / eps
            losses.append(1.0 - graded_ndcg_value(s, g, gain))
        np.testing.assert_allclose(grad, ref / 3, rtol=1e-9, atol=1e-12)
        assert task == pytest.approx(np.mean(losses), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("gain", ["exponential", "linear"])
def test_hinge_gradient_matches_finite_differences(gain):
    rng = np.random.default_rng(4)
    scores = rng.normal(size=40)
    grades = rng.integers(0, 5, 40)
    qid = np.repeat(np.arange(4), 10)
    value, grad = rank_hinge(scores, grades, qid, loss="ndcg", gain=gain)
    h = 1e-7
    fd = [(rank_hinge(scores + h * e, grades, qid, loss="ndcg", gain=gain)[0]
           - rank_hinge(scores - h * e, grades, qid, loss="ndcg", gain=gain)[0]) / (2 * h) for e in np.eye(40)]
    np.testing.assert_allclose(fd, grad, atol=1e-6)


def test_torch_losses_take_the_gain():
    torch = pytest.importorskip("torch")
    from ssvm.nn import DirectRankLoss, RankHingeLoss

    rng = np.random.default_rng(5)
    scores, grades = rng.normal(size=30), rng.integers(0, 5, 30)
    qid = np.repeat(np.arange(3), 10)
    x = torch.tensor(scores, requires_grad=True)
    module = RankHingeLoss("ndcg", gain="linear")
    loss = module(x, torch.tensor(grades), torch.tensor(qid))
    loss.backward()
    value, grad = rank_hinge(scores, grades, qid, loss="ndcg", gain="linear")
    assert loss.item() == value and np.array_equal(x.grad.numpy(), grad)
    assert repr(module) == "RankHingeLoss(loss='ndcg', oracle='auto', gain='linear')"
    h = 1e-6  # finite differences through the module
    for i in range(0, 30, 7):
        e = torch.zeros(30, dtype=torch.float64)
        e[i] = h
        up = module(torch.tensor(scores) + e, torch.tensor(grades), torch.tensor(qid)).item()
        down = module(torch.tensor(scores) - e, torch.tensor(grades), torch.tensor(qid)).item()
        assert (up - down) / (2 * h) == pytest.approx(grad[i], abs=1e-6)
    y = torch.tensor(scores, requires_grad=True)
    direct = DirectRankLoss("ndcg", epsilon=0.3, gain="exponential")(y, torch.tensor(grades), torch.tensor(qid))
    direct.backward()
    task, dgrad = direct_loss_gradient(scores, grades, qid, loss="ndcg", epsilon=0.3)
    assert direct.item() == task and np.array_equal(y.grad.numpy(), dgrad)


def test_ranksvm_trains_and_scores_graded_ndcg():
    from ssvm.datasets import load_letor_sample

    X, rel, qid = load_letor_sample("train")
    rows = np.isin(qid, np.unique(qid)[:60])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateQueriesWarning)
        model = RankSVM(loss="ndcg", C=1.0, tol=1e-2).fit(X[rows], rel[rows], qid=qid[rows])
        binary = RankSVM(loss="ndcg", gain="binary", C=1.0, tol=1e-2).fit(X[rows], rel[rows], qid=qid[rows])
    assert model.n_queries_ > binary.n_queries_  # queries without grade 0 still have two grades
    scores = model.decision_function(X[rows])
    assert model.score(X[rows], rel[rows], qid=qid[rows]) == mean_ndcg(rel[rows], scores, qid=qid[rows])
    assert model.oracle == "auto" and get_oracle("ndcg", gain=model.gain).graded


@pytest.mark.parametrize("y, match", [(np.array([0, 1, -1, 2] * 5), "5 of 20 rows with negative"),
                                      (np.array([0, 0.5, 1, 2] * 5), "5 of 20 rows with non-integer"),
                                      (np.array([0, np.nan, 1, 2] * 5), "5 of 20 rows with NaN")])
def test_bad_grades_are_refused_everywhere(y, match):
    X = np.random.default_rng(6).normal(size=(20, 3))
    qid = np.repeat(np.arange(4), 5)
    with pytest.raises(ValueError, match=match):
        rank_hinge(X[:, 0], y, qid, loss="ndcg")
    with pytest.raises(ValueError, match=match):
        direct_loss_gradient(X[:, 0], y, qid, loss="ndcg")
    if not np.isnan(y).any():  # NaN is refused by the estimator's own input check first
        with pytest.raises(ValueError, match=match):
            RankSVM(loss="ndcg").fit(X, y, qid=qid)
    rank_hinge(X[:, 0], y if not np.isnan(y).any() else np.nan_to_num(y), qid, loss="ap")  # AP: y > 0
