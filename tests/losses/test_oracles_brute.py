"""Every exact oracle against the exhaustive oracle on thousands of tiny random queries."""

from itertools import combinations

import numpy as np
import pytest
from losses_twins import ap_loss, ndcg_loss, permutation_values, random_query

from ssvm.losses import LOSS_NAMES, get_oracle, supported_oracles
from ssvm.losses.brute import _rank_objective
from ssvm.losses.rank_losses import APLoss, NDCGLoss

N_CASES = 1500
# losses whose exhaustive oracle breaks ties by the fast one's documented rule (precision@k: positives
# first, then by index; 0-1: fewest flips), so c is compared at ties too
TIE_RULED = ("zero_one", "precision_at_k")


def _all_values(scores, y, loss, k):
    """Objective of every candidate output (for the uniqueness of the optimum)."""
    if loss in ("ap", "ndcg"):
        c, delta, _ = _rank_objective(scores, y, (APLoss() if loss == "ap" else NDCGLoss()).value)
        return c @ scores + delta
    n = scores.size
    if loss == "zero_one":
        ypm = np.where(y, 1.0, -1.0)
        flips = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(bool)
        return flips.sum(1) / n + (np.where(flips, -ypm, ypm) - ypm) @ scores / (2 * n)
    vals = []
    for s in combinations(range(n), k):
        s = list(s)
        vals.append((np.count_nonzero(~y[s]) + scores[s].sum()) / k)
    return np.array(vals)  # up to the constant −s·t*/k


# the losses whose every output _all_values enumerates; the others have their own twin files
# (test_pairwise, test_mrr, test_contingency, test_ndcg_at_k)
@pytest.mark.parametrize("loss", LOSS_NAMES[:4])
def test_oracles_equal_brute(loss):
    rng = np.random.default_rng(12345 + LOSS_NAMES.index(loss))
    oracles = [o for o in supported_oracles(loss) if o != "brute"]
    n_unique = 0
    for _ in range(N_CASES):
        scores, y = random_query(rng)
        params = {"k": int(rng.integers(1, scores.size + 2))} if loss == "precision_at_k" else {}
        cb, db = get_oracle(loss, "brute", **params)(scores, y)
        vb = db + scores @ cb
        vals = _all_values(scores, y, loss, min(params.get("k", 1), scores.size))
        scale = max(1.0, float(np.abs(scores).max()))
        unique = np.count_nonzero(vals >= vals.max() - 1e-9 * scale) == 1
        n_unique += unique
        for oracle in oracles:
            c, d = get_oracle(loss, oracle, **params)(scores, y)
            assert c.shape == scores.shape and c.dtype == np.float64
            v = d + scores @ c
            assert v == pytest.approx(vb, rel=1e-9, abs=1e-9 * scale), (loss, oracle, scores, y)
            if unique or loss in TIE_RULED:
                np.testing.assert_allclose(c, cb, rtol=0, atol=1e-12 * max(1.0, np.abs(cb).max()))
                assert d == pytest.approx(db, abs=1e-12)
    assert n_unique > N_CASES // 2  # the comparison of c is not vacuous


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_brute_equals_permutation_search(loss):
    """The ± pattern brute force agrees with a search over all permutations (n ≤ 6)."""
    rng = np.random.default_rng(7)
    loss_fn = ap_loss if loss == "ap" else ndcg_loss
    for _ in range(40):
        scores, y = random_query(rng, n_max=6)
        cb, db = get_oracle(loss, "brute")(scores, y)
        best = permutation_values(scores, y, loss_fn).max()
        assert db + scores @ cb == pytest.approx(best, rel=1e-9, abs=1e-9 * max(1, np.abs(scores).max()))


def test_exact_ties_pick_highest_rank():
    """Dyadic exact tie (P=1, N=4, s⁺ − s⁻ = 1): ranks 1 and 2 tie for the top negative; every
    oracle puts it below the positive (the largest rank), as the paper's opt_j."""
    scores = np.array([1.0, 0.0, -10.0, -10.0, -10.0])
    y = np.array([True, False, False, False, False])
    results = {o: get_oracle("ap", o)(scores, y) for o in supported_oracles("ap")}
    for o, (c, d) in results.items():
        assert c[1] == 0.0 and d == 0.0, o  # rank 2 = below the positive, no loss
    # the tie is real: moving it above the positive gives the same objective
    c_up = np.array([-0.5, 0.5, 0.0, 0.0, 0.0])
    assert 0.5 + scores @ c_up == results["qs"][1] + scores @ results["qs"][0]
