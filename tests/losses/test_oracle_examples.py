"""Worked examples of the paper, Remark 1, QS-suitability checks, user losses, the DP's two
directions, ranking_loss against scikit-learn, pickling of oracles."""

import pickle

import numpy as np
import pytest
from losses_twins import ap_loss, random_query
from sklearn.metrics import average_precision_score, ndcg_score

from ssvm.losses import (
    APLoss,
    NDCGLoss,
    QSLoss,
    ap_direct_loss_inference,
    check_qs_suitable,
    get_oracle,
    loss_augmented_inference,
    ranking_loss,
    supported_oracles,
)
from ssvm.losses._core.derivative import Objective
from ssvm.losses._core.derivative import py_best_rank as best_rank
from ssvm.losses.brute import rank_brute_oracle
from ssvm.losses.rank_losses import KIND_SUM_TABLE

# x1..x4 positive, x5..x8 negative, ranked (x1, x3, x8, x4, x5, x2, x6, x7): pattern + + − + − + − −
PAPER_SCORES = np.array([8.0, 3.0, 7.0, 5.0, 4.0, 2.0, 1.0, 6.0])
PAPER_Y = np.array([1, 1, 1, 1, 0, 0, 0, 0])


def test_paper_worked_example():
    assert ranking_loss(PAPER_SCORES, PAPER_Y, "ap") == pytest.approx(1 - (1 + 1 + 3 / 4 + 4 / 6) / 4)
    assert ranking_loss(PAPER_SCORES, PAPER_Y, "ap") == pytest.approx(0.146, abs=5e-4)
    assert ranking_loss(PAPER_SCORES, PAPER_Y, "ndcg") == pytest.approx(0.056, abs=5e-4)
    counts = np.array([0, 0, 1, 1, 2])  # negatives per interleaving rank 1..5
    assert APLoss().value(counts) == pytest.approx(0.1458333333)
    assert NDCGLoss().value(counts) == pytest.approx(0.0561338455)


def test_ranking_loss_against_sklearn():
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(2, 60))
        s = rng.normal(size=n)
        y = rng.random(n) < 0.3
        y[0], y[1] = True, False
        assert ranking_loss(s, y, "ap") == pytest.approx(1 - average_precision_score(y, s))
        assert ranking_loss(s, y, "ndcg") == pytest.approx(1 - ndcg_score(y[None].astype(float), s[None]))
        k = int(rng.integers(1, n + 3))
        top = np.argsort(-s)[:min(k, n)]
        assert ranking_loss(s, y, "precision_at_k", k=k) == pytest.approx(np.mean(~y[top]))
        assert ranking_loss(s, y, "zero_one") == pytest.approx(np.mean((s > 0) != y))


def test_zero_one_matches_hinge():
    rng = np.random.default_rng(1)
    s = rng.normal(size=50)
    y = rng.random(50) < 0.5
    c, delta = loss_augmented_inference(s, y, "zero_one")
    ypm = np.where(y, 1.0, -1.0)
    assert delta + s @ c == pytest.approx(np.mean(np.maximum(0, 1 - ypm * s)))
    assert delta == pytest.approx(np.mean(1 - ypm * s > 0))


def test_remark_1_chakrabarti_discount_breaks_monotonicity():
    """Negatives x1 (3ε), x2 (ε), positive x3 (5ε): with D(1)=D(2)=1 the per-negative optimum is
    opt_1 = 2 > opt_2 = 1 (Observation 4 fails); with the convex discount it is monotone."""
    eps = 1e-3
    sp = np.array([5 * eps])
    sn = np.array([3 * eps, eps])  # sorted: j = 1, 2
    inv = 2.0 / (1 * 2)
    for discount, monotone in (("chakrabarti", False), ("log2", True)):
        kind, table = NDCGLoss(discount).kernel_spec(1, 2)
        opt = [best_rank(sn[j - 1], j, 1, 2, Objective(sp, inv, kind, table, 1)) for j in (1, 2)]
        assert (opt[0] <= opt[1]) is monotone, (discount, opt)
    obj = Objective(sp, inv, *NDCGLoss("chakrabarti").kernel_spec(1, 2), 1)
    assert [best_rank(sn[j - 1], j, 1, 2, obj) for j in (1, 2)] == [2, 1]
    res = check_qs_suitable(NDCGLoss("chakrabarti"), 1, 2)
    assert not res and res.c2 and not res.c3
    assert res.counterexample["condition"] == "C3"
    assert res.counterexample["d_j+1(i)"] < res.counterexample["d_j(i)"]


@pytest.mark.parametrize("n_pos,n_neg", [(1, 1), (3, 4), (4, 4), (2, 9), (6, 30)])
def test_ap_and_ndcg_are_qs_suitable(n_pos, n_neg):
    for loss in (APLoss(), NDCGLoss()):
        res = check_qs_suitable(loss, n_pos, n_neg)
        assert res.suitable and res.counterexample is None and res.n_patterns > 0


class _BrokenDecomposition(QSLoss):
    """Claims the NDCG derivative but reports the AP value: (C2) must fail."""

    name = "broken"

    def kernel_spec(self, n_pos, n_neg):
        return NDCGLoss().kernel_spec(n_pos, n_neg)

    def value(self, counts):
        return APLoss().value(counts)


class CubicDiscountNDCG(QSLoss):
    """A user loss: NDCG with the convex discount D(i) = 1/i² (a table on i + j)."""

    name = "ndcg_cubic"

    def _d(self, i):
        return 1.0 / np.asarray(i, dtype=float) ** 2

    def kernel_spec(self, n_pos, n_neg):
        m = np.arange(n_pos + n_neg + 1, dtype=float)
        table = np.zeros(n_pos + n_neg + 1)
        norm = self._d(np.arange(1, n_pos + 1)).sum()
        table[2:] = (self._d(m[2:]) - self._d(m[2:] - 1)) / norm
        return KIND_SUM_TABLE, table

    def value(self, counts):
        counts = np.asarray(counts)
        n_pos = counts.shape[-1] - 1
        ind = np.arange(1, n_pos + 1) + np.cumsum(counts[..., :n_pos], axis=-1)
        return 1.0 - self._d(ind).sum(-1) / self._d(np.arange(1, n_pos + 1)).sum()


def test_check_reports_c2_counterexample():
    res = check_qs_suitable(_BrokenDecomposition(), 2, 3)
    assert not res.c2
    assert set(res.counterexample) == {"condition", "pattern", "sum_delta", "value"}
    assert len(res.counterexample["pattern"]) == 5


def test_user_loss_through_the_one_qs_kernel():
    loss = CubicDiscountNDCG()
    assert check_qs_suitable(loss, 3, 5)
    assert supported_oracles(loss) == ("auto", "qs", "brute")
    rng = np.random.default_rng(4)
    for _ in range(300):
        s, y = random_query(rng)
        cb, db = loss_augmented_inference(s, y, loss=loss, oracle="brute")
        c, d = loss_augmented_inference(s, y, loss=loss, oracle="qs")
        assert d + s @ c == pytest.approx(db + s @ cb, rel=1e-9, abs=1e-9 * max(1, np.abs(s).max()))
    f = pickle.loads(pickle.dumps(get_oracle(loss)))
    np.testing.assert_array_equal(f(s, y)[0], get_oracle(loss, "qs")(s, y)[0])


@pytest.mark.parametrize("loss", ["ap", "ndcg", "zero_one", "precision_at_k"])
def test_oracles_pickle(loss):
    s = np.array([0.3, -1.0, 2.0, 0.1])
    y = np.array([True, False, False, True])
    for oracle in supported_oracles(loss):
        f = get_oracle(loss, oracle)
        g = pickle.loads(pickle.dumps(f))
        np.testing.assert_array_equal(f(s, y)[0], g(s, y)[0])


def test_direct_loss_both_directions_against_brute():
    rng = np.random.default_rng(11)
    n_unique = 0
    for _ in range(800):
        s, y = random_query(rng)
        eps = float(rng.choice([0.0, 0.1, 1.0, 5.0]))
        for direction in (1, -1):
            c, d = ap_direct_loss_inference(s, y, epsilon=eps, direction=direction)
            cb, db = rank_brute_oracle(s, y, APLoss(), direction * eps)
            v, vb = s @ c + direction * eps * d, s @ cb + direction * eps * db
            assert v == pytest.approx(vb, rel=1e-9, abs=1e-9 * max(1, np.abs(s).max()))
            if np.array_equal(c, cb) or np.allclose(c, cb, atol=1e-12):
                n_unique += 1
    assert n_unique > 1200


def test_direct_loss_directions_order_the_loss():
    """The loss-diminished ranking never has a larger AP loss than the loss-augmented one, and
    with ε = 1, direction +1 is the structured-hinge oracle."""
    rng = np.random.default_rng(2)
    s = rng.normal(size=300)
    y = rng.random(300) < 0.2
    _, d_plus = ap_direct_loss_inference(s, y, epsilon=0.5, direction=1)
    _, d_minus = ap_direct_loss_inference(s, y, epsilon=0.5, direction=-1)
    assert d_minus <= ranking_loss(s, y) + 1e-12 <= d_plus + 2e-12
    c, d = ap_direct_loss_inference(s, y)
    cq, dq = loss_augmented_inference(s, y, "ap", "qs")
    np.testing.assert_allclose(c, cq, atol=1e-15)
    assert d == dq
    # ε = 0, direction −1: the ranking by score itself
    _, d0 = ap_direct_loss_inference(s, y, epsilon=0.0, direction=-1)
    assert d0 == pytest.approx(ap_loss(np.argsort(-s, kind="stable"), y.astype(bool)))


def test_precision_at_k_ground_truth_and_ties():
    s = np.array([1.0, 1.0, 0.0, 0.0, 2.0])
    y = np.array([True, False, True, False, False])
    c, d = loss_augmented_inference(s, y, "precision_at_k", k=2)
    # augmented scores a = s + [negative] = [1, 2, 0, 1, 3]: the two negatives 4 and 1 are taken
    assert d == 1.0
    np.testing.assert_allclose(c * 2, np.array([0, 1, 0, 0, 1]) - np.array([1, 0, 1, 0, 0]))
    c, d = loss_augmented_inference(s, y, "precision_at_k", k=50)  # k clipped to n
    assert d == pytest.approx(3 / 5) and abs(c.sum()) < 1e-15


# a walk step of exactly 0 counted as lost made QS loop forever here (pytest's timeout, 600 s, ends such a loop)
@pytest.mark.parametrize("oracle", supported_oracles("ap"))
def test_a_zero_score_next_to_a_positive_one_returns(oracle):
    scores, y = np.array([0.25, 0.0]), np.array([True, False])
    c, delta = get_oracle("ap", oracle)(scores, y)
    # swapping the pair gains exactly what it costs (0.5 = 2 · 0.25): a walk step of exactly 0
    brute_c, brute_delta = rank_brute_oracle(scores, y, loss=APLoss())
    np.testing.assert_allclose(c, brute_c, atol=1e-12)
    assert delta == pytest.approx(brute_delta, abs=1e-12)
