"""Unit tests of the graded-relevance experiment helpers (``scripts/_graded.py``): the per-threshold
reference of the graded NDCG hinge, the LambdaLoss baseline written there, the paired differences."""

import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.fixture(scope="module")
def graded():
    sys.path.insert(0, str(SCRIPTS))
    import _graded

    yield _graded
    sys.path.remove(str(SCRIPTS))


def test_reference_decomposes_graded_ndcg_and_bounds_it(graded):
    from ssvm.losses import get_oracle, ranking_loss
    from ssvm.metrics import mean_ndcg

    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(2, 10))
        r = rng.integers(0, 5, n)
        if r.min() == r.max():
            continue
        s = rng.normal(size=n).round(1)  # ties
        for gain in ("exponential", "linear"):
            alpha = graded.threshold_weights(r, np.array([0]), np.array([n]), gain)[:, 0]
            loss = 1.0 - mean_ndcg(r, s, gains=gain)
            by_threshold = sum(alpha[t - 1] * ranking_loss(s, r >= t, "ndcg")
                               for t in range(1, r.max() + 1) if alpha[t - 1] > 0)
            assert by_threshold == pytest.approx(loss, abs=1e-12)
            c, delta = graded.graded_batch(s, r, np.array([0]), np.array([n]), gain, get_oracle("ndcg"))
            assert delta[0] + s @ c >= loss - 1e-12  # the hinge bounds the loss of the ranking by score


def test_reference_with_binary_labels_is_the_binary_hinge(graded):
    from ssvm.losses import rank_hinge

    rng = np.random.default_rng(1)
    qid = np.repeat(np.arange(20), 6)
    y = rng.integers(0, 2, qid.size)
    s = rng.normal(size=qid.size)
    scores = torch.tensor(s, requires_grad=True)
    value = graded.GradedReferenceLoss("exponential")(scores, y, qid)
    value.backward()
    expected, grad = rank_hinge(s, y, qid, loss="ndcg")
    assert value.item() == pytest.approx(expected, abs=1e-12)
    np.testing.assert_allclose(scores.grad.numpy(), grad, atol=1e-12)


def _lambda_loss_loop(s, r, mu=10.0):
    """NDCG-Loss2++ of one query written pair by pair from Wang et al.'s formulas."""
    order = np.argsort(-s, kind="stable")
    s, r = s[order], r[order]
    n = s.size
    D = np.log2(np.arange(1, n + 2) + 1.0)  # D[i-1] = log2(1 + i), position i
    idcg = np.sum((np.exp2(np.sort(r)[::-1]) - 1) / D[:n])
    G = (np.exp2(r) - 1) / idcg
    total = 0.0
    for i in range(n):
        for j in range(n):
            if r[i] > r[j]:
                d = abs(i - j)
                ndcg2 = abs(1 / D[d - 1] - 1 / D[d])
                lambdarank = abs(1 / D[i] - 1 / D[j])
                w = (mu * ndcg2 + lambdarank) * abs(G[i] - G[j])
                total += w * np.log2(1 + np.exp(-(s[i] - s[j])))
    return total


def test_lambda_loss_matches_a_pair_loop(graded):
    rng = np.random.default_rng(2)
    qid = np.repeat([5, 3, 9], [7, 4, 6])
    r = rng.integers(0, 5, qid.size).astype(float)
    r[qid == 9] = 2.0  # no pair: the query does not count
    s = rng.normal(size=qid.size)
    index, mask = graded.padded(qid)
    value = graded.pairwise_loss(torch.tensor(s), torch.tensor(r), index, mask)
    expected = np.mean([_lambda_loss_loop(s[qid == q], r[qid == q]) for q in (3, 5)])
    assert value.item() == pytest.approx(expected, rel=1e-10)


def test_paired_rows_difference_and_standard_error(graded):
    results = {"ref": [{"NDCG": 1.0, "NDCG@10": 1.0, "AP": 1.0}, {"NDCG": 3.0, "NDCG@10": 1.0, "AP": 1.0}],
               "other": [{"NDCG": 2.0, "NDCG@10": 1.0, "AP": 1.0}, {"NDCG": 6.0, "NDCG@10": 1.0, "AP": 1.0}]}
    rows = {r["model"]: r for r in graded.paired_rows(results, "ref")}
    assert rows["ref"]["NDCG"] == "2.00 ± 1.00" and rows["ref"]["ΔNDCG vs ref"] == "-"
    assert rows["other"]["ΔNDCG vs ref"] == "+2.00 ± 1.00"  # differences 1 and 3
