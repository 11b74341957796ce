"""The F1 and PRBEP oracles (SVM^perf's contingency-table losses) against the exhaustive search over every
labelling, and the upper bound H ≥ Δ of the prediction."""

import numpy as np
import pytest
from losses_twins import random_query

from ssvm.losses import loss_augmented_inference, ranking_loss
from ssvm.losses.brute import f1_brute_oracle, prbep_brute_oracle
from ssvm.losses.contingency import f1_batch, f1_oracle, f1_value, prbep_batch, prbep_oracle, prbep_value


def scan(s, y, prbep):
    """Joachims' O(PN) scan over the contingency tables (a, b), written plainly."""
    n, n_pos, n_neg = s.size, int(y.sum()), int((~y).sum())
    sp, sn = np.sort(s[y])[::-1], np.sort(s[~y])[::-1]
    best = -np.inf
    for a in range(n_pos + 1):
        for b in range(n_neg + 1):
            if prbep and a + b != n_pos:
                continue
            loss = 1 - a / n_pos if prbep else (1.0 if a == 0 else 1 - 2 * a / (n_pos + a + b))
            best = max(best, loss + (sn[:b].sum() - sp[a:].sum()) / n)
    return best


@pytest.mark.parametrize("prbep", [False, True])
def test_oracles_match_exhaustive_search_and_scan(prbep):
    oracle, brute, value = (prbep_oracle, prbep_brute_oracle, prbep_value) if prbep else (f1_oracle, f1_brute_oracle,
                                                                                            f1_value)
    rng = np.random.default_rng(0 + prbep)
    for _ in range(2500):
        s, y = random_query(rng, n_max=9)
        c, delta = oracle(s, y)
        c_b, delta_b = brute(s, y)
        scale = max(1.0, float(np.abs(s).max()))
        h, h_b = delta + s @ c, delta_b + s @ c_b
        assert h == pytest.approx(h_b, abs=1e-12 * scale)
        assert h == pytest.approx(scan(s, y, prbep), abs=1e-12 * scale)
        assert np.all(np.isin(np.round(c * 2 * s.size), [-2.0, 0.0, 2.0]))  # c = (ȳ − y) / (2n)
        ypm = np.where(y, 1.0, -1.0)
        assert np.all(np.sign(c) * ypm <= 0)
        # the prediction: score > 0 (F1); the P best (PRBEP), both maximise s·Ψ over the outputs
        assert h >= value(s, y) - 1e-12 * scale
        assert ranking_loss(s, y, loss="prbep" if prbep else "f1") == value(s, y)


def test_batch_and_a_large_query():
    rng = np.random.default_rng(3)
    sizes = [2, 9, 6000, 30]
    s = np.concatenate([rng.normal(size=m) for m in sizes])
    y = rng.random(s.size) < 0.3
    ends = np.cumsum(sizes)
    starts = ends - sizes
    y[starts] = True
    y[ends - 1] = False
    for batch, one, prbep in ((f1_batch, f1_oracle, False), (prbep_batch, prbep_oracle, True)):
        c, delta = batch(s, y, starts, ends)
        for q, (a, b) in enumerate(zip(starts, ends)):
            c_q, d_q = one(s[a:b], y[a:b])
            np.testing.assert_array_equal(c[a:b], c_q)
            assert delta[q] == d_q
        a, b = starts[3], ends[3]
        assert delta[3] + s[a:b] @ c[a:b] == pytest.approx(scan(s[a:b], y[a:b], prbep), abs=1e-12)
    c, d = loss_augmented_inference(s[:9], y[:9], loss="f1", oracle="brute")
    assert d + s[:9] @ c == pytest.approx(scan(s[:9], y[:9], False))


def test_f1_and_prbep_fit():
    from ssvm import RankSVM
    from ssvm.losses import rank_hinge
    from ssvm.metrics import ranking_score

    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 3))
    qid = np.repeat(np.arange(10), 20)
    y = X @ np.array([1.0, -0.5, 0.2]) + rng.normal(size=200) > 0.8
    for loss in ("f1", "prbep"):
        model = RankSVM(loss=loss, C=3.0, tol=1e-7).fit(X, y, qid=qid)
        w, b = model.coef_[0], model.intercept_[0]
        s = X @ w + b
        if loss == "f1":  # the intercept is learnt, regularised (as zero_one's)
            J = 0.5 * (w @ w + b * b) + 3.0 * rank_hinge(s, y, qid=qid, loss=loss)[0]
        else:
            J = 0.5 * w @ w + 3.0 * rank_hinge(X @ w, y, qid=qid, loss=loss)[0]
        assert model.objective_ == pytest.approx(J, rel=1e-9)
        value = np.mean([1 - (f1_value if loss == "f1" else prbep_value)(s[qid == q], y[qid == q])
                         for q in range(10) if 0 < y[qid == q].sum() < 20])
        assert model.score(X, y, qid=qid) == pytest.approx(value) == ranking_score(y, s, qid=qid, loss=loss)


def _brute_direct(s, y, prbep, eps, direction):
    """(Δ of the output by score, the direct-loss gradient) of one query over every labelling written plainly:
    R_w labels score > 0 (F1) or the P best-scored rows, ties by index (PRBEP) as +1; R_dir maximises
    F + ε Δ; c = (ȳ − y) / (2n) in ±1 labels."""
    n, n_pos = s.size, int(y.sum())

    def loss(labels):
        a, wrong = int(np.sum(labels & y)), int(np.sum(labels != y))
        if prbep:
            return 1 - a / n_pos
        return 1.0 if a == 0 else 1 - 2 * a / (2 * a + wrong)

    def psi(labels):
        return (labels.astype(float) - y) / n

    if prbep:
        w = np.zeros(n, bool)
        w[np.argsort(-s, kind="stable")[:n_pos]] = True
    else:
        w = s > 0
    if direction == "perceptron":
        return loss(w), psi(w)
    values = []
    for bits in range(2 ** n):
        labels = ((bits >> np.arange(n)) & 1).astype(bool)
        if not prbep or labels.sum() == n_pos:
            values.append((s @ psi(labels) + eps * loss(labels), psi(labels)))
    values.sort(key=lambda v: -v[0])
    unique = len(values) == 1 or values[0][0] - values[1][0] > 1e-9
    return loss(w), (values[0][1] - psi(w)) / eps if unique else None


@pytest.mark.parametrize("prbep", [False, True])
@pytest.mark.parametrize("direction", ["positive", "perceptron"])
def test_direct_loss_matches_exhaustive_search(prbep, direction):
    from ssvm.losses import direct_loss_gradient

    loss = "prbep" if prbep else "f1"
    rng = np.random.default_rng(7 + prbep)
    checked = 0
    for _ in range(600):
        s, y = random_query(rng, n_max=8)
        eps = float(rng.choice([0.05, 0.5, 2.0]))
        task, grad = direct_loss_gradient(s, y, loss=loss, epsilon=eps, direction=direction)
        task_b, grad_b = _brute_direct(s, y, prbep, eps, direction)
        assert task == pytest.approx(task_b, rel=1e-12, abs=1e-15)
        if grad_b is not None:  # a unique maximiser (ties between labellings are the oracle's rule)
            np.testing.assert_allclose(grad, grad_b, rtol=1e-9, atol=1e-12 / eps)
            checked += 1
    assert checked > 300
