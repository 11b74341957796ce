"""rank_hinge and direct_loss_gradient (score space) against slow twins: StructuredHinge, finite
differences, brute force over ± patterns / labellings, and Song et al.'s Theorem 1 on a smoothed
example."""

from itertools import combinations
from math import erf, sqrt

import numpy as np
import pytest
from losses_twins import ap_loss, ndcg_loss, psi_coefficients, random_query

from ssvm._queries import queries_from_qid
from ssvm.losses import direct_loss_gradient, get_oracle, rank_hinge
from ssvm.problem import StructuredHinge

RANK_LOSS_FNS = {"ap": ap_loss, "ndcg": ndcg_loss,
                 "ndcg_at_k": lambda order, y: ndcg_loss(order, y, lambda i: (i <= 2) / np.log2(1.0 + i))}
LOSS_PARAMS = {"ndcg_at_k": {"k": 2}}  # a cut-off inside the tiny queries
N_BRUTE = 1200


def _batch(rng, n_queries, n_max=7):
    """Tiny queries (ties, one positive, one negative, scales 1e-6..1e6) shuffled together with a
    qid, plus sometimes a query without a negative (to be skipped)."""
    parts = [random_query(rng, n_max) for _ in range(n_queries)]
    if rng.random() < 0.3:
        parts.append((rng.normal(size=3), np.ones(3, bool)))
    scores = np.concatenate([s for s, _ in parts])
    y = np.concatenate([yy for _, yy in parts])
    qid = np.repeat(np.arange(len(parts)) * 7 + 3, [s.size for s, _ in parts])
    perm = rng.permutation(scores.size)
    return scores[perm], y[perm], qid[perm]


def _informative(y, qid):
    return [q for q in queries_from_qid(qid, y.size) if 0 < y[q].sum() < q.size]


# ---------------------------------------------------------------- the hinge


@pytest.mark.parametrize("loss", ["ap", "ndcg", "zero_one", "precision_at_k"])
def test_rank_hinge_equals_structured_hinge(loss):
    rng = np.random.default_rng(1)
    for _ in range(20):
        n, d = int(rng.integers(20, 200)), 4
        X = rng.normal(size=(n, d))
        w = rng.normal(size=d)
        y = rng.random(n) < 0.3
        qid = rng.integers(0, 6, n)
        queries = _informative(y, qid)
        if not queries:
            continue
        value, grad = rank_hinge(X @ w, y, qid=qid, loss=loss)
        H, offset, g = StructuredHinge(X, y, queries, get_oracle(loss)).plane(w)
        assert value == pytest.approx(H, rel=1e-12, abs=1e-14)
        np.testing.assert_allclose(X.T @ grad, g, rtol=1e-10, atol=1e-12)
        skipped = np.setdiff1d(np.arange(n), np.concatenate(queries))
        assert np.all(grad[skipped] == 0)


@pytest.mark.parametrize("loss", ["ap", "ndcg", "zero_one"])
def test_rank_hinge_gradient_matches_central_differences(loss):
    rng = np.random.default_rng(2)
    h = 1e-6
    for _ in range(30):
        n = int(rng.integers(4, 40))
        s = rng.normal(size=n)  # no ties
        y = rng.random(n) < 0.4
        y[:2] = [True, False]
        qid = rng.integers(0, 2, n)
        qid[:2] = 0
        value, grad = rank_hinge(s, y, qid=qid, loss=loss)
        fd = np.empty(n)
        for i in range(n):
            e = np.zeros(n)
            e[i] = h
            fd[i] = (rank_hinge(s + e, y, qid, loss)[0] - rank_hinge(s - e, y, qid, loss)[0]) / (2 * h)
        np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-7)


def test_rank_hinge_oracles_agree_and_keep_float32():
    rng = np.random.default_rng(3)
    s = rng.normal(size=500).astype(np.float32)
    y = rng.random(500) < 0.1
    ref_value, ref_grad = rank_hinge(s, y, oracle="qs")
    for oracle in ("yue", "search", "dp"):
        value, grad = rank_hinge(s, y, oracle=oracle)
        assert value == pytest.approx(ref_value, rel=1e-12)
        np.testing.assert_array_equal(grad, ref_grad)
    assert ref_grad.dtype == np.float32
    assert rank_hinge(s.astype(np.float64), y)[1].dtype == np.float64
    assert rank_hinge(np.arange(4), [0, 1, 0, 1])[1].dtype == np.float64


def test_relevance_codings_agree():
    s = np.array([0.5, 2.0, -1.0, 0.3, 0.0])
    ref = rank_hinge(s, np.array([0, 1, 0, 1, 0], bool))
    for y in ([0, 1, 0, 1, 0], [-1, 1, -1, 1, -1], [0, 3, 0, 1, 0], [0.0, 0.5, 0.0, 2.0, 0.0]):
        value, grad = rank_hinge(s, y)
        assert value == ref[0]
        np.testing.assert_array_equal(grad, ref[1])


# ---------------------------------------------------------------- direct loss: brute force


def _brute_rank_direct(scores, y, loss, eps, direction):
    """(Δ(R_w), gradient) of one query from every ± pattern, Ψ from the pairwise definition."""
    loss_fn = RANK_LOSS_FNS[loss]
    by_score = np.argsort(-scores, kind="stable")
    pos = by_score[y[by_score]]
    neg = by_score[~y[by_score]]
    n = scores.size
    psi_w = psi_coefficients(by_score, y)
    if direction == "perceptron":
        return loss_fn(by_score, y), psi_w
    sign = 1.0 if direction == "positive" else -1.0
    best = None
    for at in combinations(range(n), pos.size):
        is_pos = np.zeros(n, bool)
        is_pos[list(at)] = True
        order = np.empty(n, int)
        order[is_pos] = pos
        order[~is_pos] = neg
        psi = psi_coefficients(order, y)
        value = scores @ psi + sign * eps * loss_fn(order, y)
        neg_ranks = np.cumsum(is_pos)[~is_pos][::-1]  # tie rule: negatives as low as possible
        key = (value, tuple(neg_ranks))
        if best is None or value > best[0][0] + 1e-12 * max(1.0, abs(value)) or (
                abs(value - best[0][0]) <= 1e-12 * max(1.0, abs(value)) and key[1] > best[0][1]):
            best = (key, psi)
    return loss_fn(by_score, y), sign * (best[1] - psi_w) / eps


def _brute_zero_one_direct(scores, y, eps, direction):
    """The same for 0-1 over every labelling ŷ (ties: fewest flips)."""
    n = scores.size
    ypm = np.where(y, 1.0, -1.0)
    y_w = np.where(scores > 0, 1.0, -1.0)
    psi_w = (y_w - ypm) / (2 * n)
    task = np.mean(y_w != ypm)
    if direction == "perceptron":
        return task, psi_w
    sign = 1.0 if direction == "positive" else -1.0
    best = None
    for bits in range(2 ** n):
        flips = ((bits >> np.arange(n)) & 1).astype(bool)
        yhat = np.where(flips, -ypm, ypm)
        psi = (yhat - ypm) / (2 * n)
        value = scores @ psi + sign * eps * flips.mean()
        if best is None or value > best[0] + 1e-12 * max(1.0, abs(value)) or (
                abs(value - best[0]) <= 1e-12 * max(1.0, abs(value)) and flips.sum() < best[1]):
            best = (value, flips.sum(), psi)
    return task, sign * (best[2] - psi_w) / eps


@pytest.mark.parametrize("loss,direction", [
    ("ap", "positive"), ("ap", "negative"), ("ap", "perceptron"), ("ndcg", "positive"),
    ("ndcg", "perceptron"), ("zero_one", "positive"), ("zero_one", "negative"), ("zero_one", "perceptron"),
    ("ndcg_at_k", "positive"), ("ndcg_at_k", "perceptron"),
])
def test_direct_loss_equals_brute_force(loss, direction):
    rng = np.random.default_rng(4)
    for _ in range(N_BRUTE // 3):
        scores, y, qid = _batch(rng, int(rng.integers(1, 4)), n_max=6 if loss == "zero_one" else 7)
        eps = float(rng.choice([2.0 ** -3, 0.25, 1.0, 4.0, rng.lognormal(-1.0, 1.5)]))
        task, grad = direct_loss_gradient(scores, y, qid, loss=loss, epsilon=eps, direction=direction,
                                          **LOSS_PARAMS.get(loss, {}))
        queries = _informative(y, qid)
        tasks, expect = [], np.zeros(scores.size)
        for q in queries:
            if loss == "zero_one":
                t, g = _brute_zero_one_direct(scores[q], y[q], eps, direction)
            else:
                t, g = _brute_rank_direct(scores[q], y[q], loss, eps, direction)
            tasks.append(t)
            expect[q] = g / len(queries)
        assert task == pytest.approx(np.mean(tasks), rel=1e-12, abs=1e-15)
        np.testing.assert_allclose(grad, expect, rtol=1e-9, atol=1e-9 * np.abs(expect).max(initial=1.0))


# ---------------------------------------------------------------- Song et al.'s Theorem 1


def _phi_cdf(t):
    return 0.5 * (1.0 + erf(t / sqrt(2.0))) if np.isfinite(t) else float(t > 0)


def _expected_task_loss(s, u, y, loss):
    """E_t Δ(R*, R_w(s + t u)), t ~ N(0, 1), exactly: the ranking (labelling) is constant between
    the t where two scores cross (a score crosses 0)."""
    if loss == "zero_one":
        cuts = [-s[i] / u[i] for i in range(s.size)]
    else:
        cuts = [(s[j] - s[i]) / (u[i] - u[j]) for i in range(s.size) for j in range(i)]
    edges = [-np.inf] + sorted(cuts) + [np.inf]
    total = 0.0
    for a, b in zip(edges[:-1], edges[1:]):
        mid = b - 1.0 if a == -np.inf else a + 1.0 if b == np.inf else (a + b) / 2
        v = s + mid * u
        if loss == "zero_one":
            task = np.mean((v > 0) != y)
        else:
            task = RANK_LOSS_FNS[loss](np.argsort(-v, kind="stable"), y)
        total += task * (_phi_cdf(b) - _phi_cdf(a))
    return total


def _expected_direct_gradient(s, u, y, loss, eps, direction, m=40_001, t_max=6.0):
    """E_t of the direct-loss gradient at s + t u by the midpoint rule, every t one query of a
    single batched call."""
    h = 2 * t_max / m
    t = -t_max + h * (np.arange(m) + 0.5)
    scores = (s[None, :] + t[:, None] * u[None, :]).ravel()
    qid = np.repeat(np.arange(m), s.size)
    _, grad = direct_loss_gradient(scores, np.tile(y, m), qid, loss=loss, epsilon=eps, direction=direction)
    weights = np.exp(-t ** 2 / 2) / sqrt(2 * np.pi) * h
    return m * (weights[:, None] * grad.reshape(m, s.size)).sum(axis=0)  # grad is averaged over m queries


@pytest.mark.parametrize("loss,direction", [("ap", "positive"), ("ap", "negative"), ("ndcg", "positive"),
                                            ("zero_one", "positive"), ("zero_one", "negative")])
def test_theorem_1_direct_gradient_approaches_the_expected_loss_slope(loss, direction):
    """Song et al.'s Theorem 1, checked numerically: with the scores smoothed along a direction u,
    ± (1/ε) E[Ψ(R_dir) − Ψ(R_w)] tends to ∇ E[Δ(R*, R_w)] (central differences of the exact
    expectation) as ε shrinks."""
    s = np.array([0.3, -0.2, 0.1, 0.5])
    y = np.array([True, False, False, True]) if loss != "zero_one" else np.array([True, False, True, False])
    u = np.array([1.0, -0.7, 0.4, -1.3])
    h = 1e-5
    slope = np.array([(_expected_task_loss(s + h * e, u, y, loss) - _expected_task_loss(s - h * e, u, y, loss))
                      / (2 * h) for e in np.eye(s.size)])
    assert np.abs(slope).max() > 0.02  # a real slope to match
    errors = []
    for eps in (0.8, 0.2, 0.05):  # the midpoint rule's own error is about 1% here
        g = _expected_direct_gradient(s, u, y, loss, eps, direction)
        errors.append(np.abs(g - slope).max() / np.abs(slope).max())
    assert errors[-1] < 0.04, errors
    assert errors[-1] < errors[0] / 4, errors


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("call", [rank_hinge, direct_loss_gradient])
def test_clear_errors(call):
    s = np.array([0.5, 0.2, -0.1, 0.4])
    y = np.array([1, 0, 0, 1])
    with pytest.raises(ValueError, match="NaN or infinite"):
        call(np.array([0.5, np.nan, -0.1, 0.4]), y)
    with pytest.raises(ValueError, match="1-D"):
        call(s[:, None], y)
    with pytest.raises(ValueError, match=r"one relevance grade per row \(4\)"):
        call(s, y[:3])
    with pytest.raises(ValueError, match="qid has 3 entries"):
        call(s, y, qid=[0, 0, 1])
    with pytest.raises(ValueError, match="real numbers"):
        call(np.array(["a", "b", "c", "d"]), y)
    with pytest.raises(ValueError, match="degenerate"):
        call(s, [0, 0, 0, 0])
    with pytest.raises(ValueError, match="degenerate"):
        call(s, [1, 0, 0, 1], qid=[0, 1, 2, 3])  # every query has one row
    with pytest.raises(ValueError, match="empty"):
        call(np.zeros(0), np.zeros(0))
    with pytest.raises(ValueError, match="NaN"):
        call(s, np.array([1.0, np.nan, 0.0, 1.0]))


def test_direct_loss_parameter_errors():
    s = np.array([0.5, 0.2, -0.1, 0.4])
    y = np.array([1, 0, 0, 1])
    for eps in (0.0, -0.1, np.nan, np.inf, "0.1", True):
        with pytest.raises(ValueError, match="epsilon"):
            direct_loss_gradient(s, y, epsilon=eps)
    with pytest.raises(ValueError, match="direction"):
        direct_loss_gradient(s, y, direction="up")
    with pytest.raises(ValueError, match="no 'negative' direction"):
        direct_loss_gradient(s, y, loss="ndcg", direction="negative")
    with pytest.raises(ValueError, match="supports loss"):
        direct_loss_gradient(s, y, loss="precision_at_k")
    with pytest.raises(ValueError, match="overflows"):
        direct_loss_gradient(np.array([1e308, 0.0]), [1, 0], epsilon=1e-3)


def test_rank_hinge_parameter_errors():
    s = np.array([0.5, 0.2, -0.1, 0.4])
    with pytest.raises(ValueError, match="unknown loss"):
        rank_hinge(s, [1, 0, 0, 1], loss="auc")
    with pytest.raises(ValueError, match="does not support"):
        rank_hinge(s, [1, 0, 0, 1], loss="ndcg", oracle="yue")
    value, _ = rank_hinge(s, [1, 0, 0, 1], loss="precision_at_k", k=1)
    assert value >= 0


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_ranking_by_score_of_large_queries(loss):
    """Queries above the compiled loop's size take numpy's packed-key sort: the perceptron gradient
    (Ψ(R_w) − Ψ(R*)) and Δ(R_w) against the ranking by a stable argsort, ties included."""
    rng = np.random.default_rng(5)
    sizes = [9000, 30, 5000]
    scores = np.round(rng.normal(size=sum(sizes)), 2)  # many ties
    scores[:50] = 0.0
    scores[50:100] = -0.0
    y = rng.random(scores.size) < 0.2
    qid = np.repeat(np.arange(3), sizes)
    task, grad = direct_loss_gradient(scores, y, qid, loss=loss, direction="perceptron")
    expect, tasks = np.zeros(scores.size), []
    for q in queries_from_qid(qid, scores.size):
        s, yq = scores[q], y[q]
        order = np.argsort(-s, kind="stable")
        ranked = yq[order]
        n_pos, n_neg = ranked.sum(), (~ranked).sum()
        c = np.empty(q.size)
        c[order[ranked]] = -2.0 * np.cumsum(~ranked)[ranked] / (n_pos * n_neg)  # negatives above
        c[order[~ranked]] = 2.0 * (n_pos - np.cumsum(ranked)[~ranked]) / (n_pos * n_neg)  # positives below
        expect[q] = c / 3
        tasks.append(RANK_LOSS_FNS[loss](order, yq))
    np.testing.assert_allclose(grad, expect, rtol=1e-12, atol=1e-18)
    assert task == pytest.approx(np.mean(tasks), rel=1e-11)


def test_docstring_examples():
    import doctest

    import ssvm.functional

    result = doctest.testmod(ssvm.functional, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
