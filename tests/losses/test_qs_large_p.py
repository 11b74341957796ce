"""QS in the large-P regime (P ≈ N, P > N, P ≫ N) and on its certification-failed fallback path,
compared exactly with the sorting baselines (yue for AP, chakrabarti for NDCG)."""

import numpy as np
import pytest

from ssvm.losses import APLoss, NDCGLoss, get_oracle
from ssvm.losses.qs import qs_oracle

_REF = {"ap": ("yue", APLoss()), "ndcg": ("chakrabarti", NDCGLoss())}


def _query(rng, n, frac_pos, shift, ties):
    y = rng.random(n) < frac_pos
    y[0], y[1] = True, False  # at least one of each
    s = rng.normal(size=n) + shift * y
    if ties:
        s = np.round(s * 4) / 4
    return s, y


def _check(s, y, loss, force_fallback=False):
    ref_name, loss_obj = _REF[loss]
    c_ref, d_ref = get_oracle(loss, ref_name)(s, y)
    c, d = qs_oracle(s, y, loss_obj, _force_fallback=force_fallback)
    np.testing.assert_array_equal(c, c_ref)
    assert d == d_ref


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
@pytest.mark.parametrize("frac_pos", [0.1, 0.5, 0.9, 0.99])
@pytest.mark.parametrize("shift", [0.0, 1.0, 3.0, -1.0])
def test_large_p_exact(loss, frac_pos, shift):
    rng = np.random.default_rng(int(100 * frac_pos) + int(10 * shift) + 1000)
    for ties in (False, True):
        s, y = _query(rng, 20_000, frac_pos, shift, ties)
        _check(s, y, loss)


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_p_much_larger_than_n(loss):
    rng = np.random.default_rng(7)
    for n_neg in (1, 2, 5, 40):
        n = 30_000
        y = np.ones(n, bool)
        y[rng.choice(n, n_neg, replace=False)] = False
        for shift in (0.0, 2.0):
            s = rng.normal(size=n) + shift * y
            _check(s, y, loss)
            _check(np.round(s), y, loss)


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_random_sizes_exact(loss):
    rng = np.random.default_rng(11)
    for _ in range(60):
        n = int(rng.integers(2, 4000))
        s, y = _query(rng, n, rng.choice([0.05, 0.3, 0.5, 0.8, 0.97]), rng.choice([0.0, 1.0, 3.0]), rng.random() < 0.3)
        _check(s, y, loss)


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
@pytest.mark.parametrize("n_pos,n_neg", [(3, 50_000), (40, 60_000), (500, 5_000), (5_000, 5_000), (8_000, 800)])
def test_certification_fallback_path(loss, n_pos, n_neg):
    """Every cut declared failed: the fallback (Algorithm 2 on whole blocks) gives the same answer."""
    rng = np.random.default_rng(n_pos + n_neg)
    for mu in (1.0, 4.0):
        s = np.concatenate([rng.normal(mu, 1, n_pos), rng.normal(0, 1, n_neg)])
        y = np.zeros(s.size, bool)
        y[:n_pos] = True
        p = rng.permutation(s.size)
        s, y = s[p], y[p]
        _check(s, y, loss, force_fallback=True)
        _check(np.round(s * 2) / 2, y, loss, force_fallback=True)


def test_fallback_flag_reaches_the_fallback():
    """The flag really changes the path: on a query where cuts exist, it must still be exact, and a
    query with cuts must exist (a block with a certified cut below some negatives)."""
    from ssvm.losses._rank_kernels import sorted_positives
    from ssvm.losses import qs as qs_mod

    rng = np.random.default_rng(0)
    s = np.concatenate([rng.normal(1, 1, 40), rng.normal(0, 1, 60_000)])
    y = np.zeros(s.size, bool)
    y[:40] = True
    sp, _ = sorted_positives(s, y)
    n_pos, n_neg = sp.size, s.size - sp.size
    inv = 2.0 / (n_pos * n_neg)
    c = np.zeros(s.size)
    block = np.empty(s.size, np.int32)
    size = np.zeros(n_pos + 2, np.int64)
    top = np.full(n_pos + 2, -np.inf)
    kind, table = APLoss().kernel_spec(n_pos, n_neg)
    qs_mod._block_pass(s, y, sp, inv, c, block, size, top)
    counts = np.zeros(n_pos + 1, np.int64)
    open_lo, hi_rank, offset, cut, n_open = qs_mod._open_blocks(s, y, block, size, top, True, sp, inv, kind,
                                                                 table, counts)
    has_cut = (open_lo > 0) & np.isfinite(cut)
    assert has_cut.any()
    n_ge = size.copy()
    n_ge[has_cut] = 0  # pretend nothing is above the cut: the certification is then evaluated
    failed = qs_mod._certify(open_lo, hi_rank, offset, size, cut, n_ge, True, sp, inv, kind, table)
    assert failed[has_cut].all()
    _check(s, y, "ap", force_fallback=True)
