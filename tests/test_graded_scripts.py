"""Unit tests of the graded-relevance experiment helpers (``scripts/_graded.py``): the LambdaLoss
baseline written there and the paired differences."""

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
