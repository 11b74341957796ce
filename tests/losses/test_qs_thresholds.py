"""QS's narrow bins decide a negative's rank by comparing its score with the rank thresholds θ_r
(rank ≥ r + 1 iff s ≤ θ_r), and hand the scores within a rounding margin of a θ to the exact scan.
Random and dyadic scores almost never land within a few ulps of a θ, so these queries put them
there on purpose: negatives at, or a few ulps beside, the threshold of their order — and QS (the
grid, one threshold per bin; the walk) must give the sorting baselines' answer bit for bit.

A few ulps matter where θ = sp + d / inv is rounded at a coarser ulp than its own (sp and d / inv
larger than θ, or in other binades): there the comparison s <= θ and the exact step disagree for
about one placement in twenty; with the margin set to 0 (a planted bug) these tests fail."""

import numpy as np
import pytest

from ssvm.losses import APLoss, NDCGLoss, get_oracle
from ssvm.losses.qs import _qs_on_path
from ssvm.losses.suitability import derivative_matrix

LOSSES = {"ap": (APLoss(), "yue"), "ndcg": (NDCGLoss(), "chakrabarti")}


def threshold_query(rng, loss_obj, n_pos, gap, scale, offset):
    """Positives ``gap`` · ``scale`` apart (far more than a loss step); in the gap below positive r
    (r = 1..P − 1) one negative at θ_r(j) ± up to 3 ulps (j its order), where ranks r and r + 1
    tie, and one filler in the middle of the gap.  θ_r(j) = sp[r − 1] + d_j(r) / inv, computed as
    the kernels compute it."""
    sp = offset + scale * (-gap * np.arange(n_pos) + rng.uniform(-0.1, 0.1, n_pos))
    n_neg = 2 * (n_pos - 1)
    kind, table = loss_obj.kernel_spec(n_pos, n_neg)
    d = derivative_matrix(kind, np.asarray(table, dtype=np.float64), n_pos, n_neg)  # d[j − 1, r − 1] = d_j(r)
    inv = 2.0 / (n_pos * n_neg)
    sn = np.empty(n_neg)
    for r in range(1, n_pos):
        j = 2 * r - 1  # the threshold negative of gap r comes after the two negatives of each gap above
        s = sp[r - 1] + d[j - 1, r - 1] / inv
        for _ in range(abs(step := int(rng.integers(-3, 4)))):
            s = np.nextafter(s, np.inf if step > 0 else -np.inf)
        sn[j - 1] = s
        sn[j] = (sp[r - 1] + sp[r]) / 2  # the filler, well below the threshold
    assert np.all(np.diff(sn) < 0), "the negatives' order is the one the thresholds were computed for"
    scores = np.concatenate([sp, sn])
    y = np.arange(scores.size) < n_pos
    p = rng.permutation(scores.size)
    return scores[p], y[p]


def boundary_query(rng, loss, n_pos, n_neg, scale):
    """Random scores; then each negative, from the top, moved to θ_{r−1}(j) or θ_r(j) (r its
    optimal rank, j its order) ± up to 3 ulps, unless that would change the negatives' order."""
    loss_obj, ref = LOSSES[loss]
    y = np.arange(n_pos + n_neg) < n_pos
    s = scale * (rng.normal(size=y.size) + rng.choice([0.0, 1.0]) * y)
    kind, table = loss_obj.kernel_spec(n_pos, n_neg)
    d = derivative_matrix(kind, np.asarray(table, dtype=np.float64), n_pos, n_neg)
    inv = 2.0 / (n_pos * n_neg)
    sp = np.sort(s[y])[::-1]
    order = np.flatnonzero(~y)[np.argsort(-s[~y], kind="stable")]
    c, _ = get_oracle(loss, ref)(s, y)
    for t, i in enumerate(order):
        j = t + 1
        r = int(round(n_pos + 1 - c[i] * n_pos * n_neg / 2))  # its optimal rank (Lemma 6)
        rr = int(rng.choice([q for q in (r - 1, r) if 1 <= q <= n_pos]))
        v = sp[rr - 1] + d[j - 1, rr - 1] / inv  # between ranks rr and rr + 1
        k = int(rng.integers(-3, 4))
        for _ in range(abs(k)):
            v = np.nextafter(v, np.inf if k > 0 else -np.inf)
        above = s[order[t - 1]] if t > 0 else np.inf
        below = s[order[t + 1]] if t + 1 < order.size else -np.inf
        if below < v < above:
            s[i] = v
    p = rng.permutation(y.size)
    return s[p], y[p]


def _same_as_the_baseline(loss, scores, y, case):
    loss_obj, ref = LOSSES[loss]
    c_ref, d_ref = get_oracle(loss, ref)(scores, y)
    for path in ({"walk": False}, {"walk": True}):
        c, d = _qs_on_path(scores, y, loss_obj, **path)
        np.testing.assert_array_equal(c, c_ref, err_msg=f"{loss} case {case} {path}")
        assert d == d_ref


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_negatives_at_the_boundaries_of_their_ranks(loss):
    rng = np.random.default_rng(31)
    for case in range(400):
        n_pos = int(rng.integers(2, 60))
        scores, y = boundary_query(rng, loss, n_pos, int(rng.integers(2, 2 * n_pos)),
                                   float(rng.choice([0.01, 1.0, 100.0])))
        _same_as_the_baseline(loss, scores, y, case)


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_negatives_at_their_thresholds(loss):
    loss_obj = LOSSES[loss][0]
    rng = np.random.default_rng(2025)
    for case in range(300):
        n_pos = int(rng.integers(2, 40))
        scale = float(rng.choice([1.0, 7.0, 1e3]))  # the gaps stay wider than the loss terms (about P)
        offset = float(rng.choice([0.0, 3.0, -1e3, 1e6]))
        scores, y = threshold_query(rng, loss_obj, n_pos, gap=float(4 * n_pos), scale=scale, offset=offset)
        _same_as_the_baseline(loss, scores, y, case)
