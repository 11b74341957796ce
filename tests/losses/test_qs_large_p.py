"""QS in the large-P regime (P ≈ N, P > N, P ≫ N) and on each of its paths (a coarse or a fine score
grid, narrow bins by thresholds or all open bins by Algorithm 2), compared exactly with the sorting
baselines (yue for AP, chakrabarti for NDCG)."""

import numpy as np
import pytest

from ssvm.losses import APLoss, NDCGLoss, get_oracle
from ssvm.losses.qs import _qs_on_path

_REF = {"ap": ("yue", APLoss()), "ndcg": ("chakrabarti", NDCGLoss())}


def _query(rng, n, frac_pos, shift, ties):
    y = rng.random(n) < frac_pos
    y[0], y[1] = True, False  # at least one of each
    s = rng.normal(size=n) + shift * y
    if ties:
        s = np.round(s * 4) / 4
    return s, y


def _check(s, y, loss, **paths):
    ref_name, loss_obj = _REF[loss]
    c_ref, d_ref = get_oracle(loss, ref_name)(s, y)
    c, d = _qs_on_path(s, y, loss_obj, **paths)
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
@pytest.mark.parametrize("paths", [dict(n_bins=1), dict(n_bins=7), dict(n_bins=1 << 18), dict(narrow=False),
                                   dict(n_bins=64, narrow=False)])
def test_every_path_exact(loss, n_pos, n_neg, paths):
    """One bin (plain Algorithm 2 on all negatives), a few bins (mostly open), very fine bins (mostly
    settled by the table), and open bins without thresholds all give the baseline's answer."""
    rng = np.random.default_rng(n_pos + n_neg)
    for mu in (1.0, 4.0):
        s = np.concatenate([rng.normal(mu, 1, n_pos), rng.normal(0, 1, n_neg)])
        y = np.zeros(s.size, bool)
        y[:n_pos] = True
        p = rng.permutation(s.size)
        s, y = s[p], y[p]
        _check(s, y, loss, **paths)
        _check(np.round(s * 2) / 2, y, loss, **paths)


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_extreme_scales_on_the_grid(loss):
    """The power-of-two grid stays exact for scores of any scale and offset: huge, tiny (down to
    subnormal products), far from zero with a small spread, and negatives just above or below a bin
    edge."""
    rng = np.random.default_rng(5)
    for scale, offset in [(1e-300, 0.0), (1e-12, 1.0), (1.0, 1e12), (1e150, 0.0), (1e-3, -1e6), (1.0, 0.0)]:
        for n_neg in (50, 5_000):
            s = offset + scale * np.concatenate([rng.normal(1, 1, 30), rng.normal(0, 1, n_neg)])
            y = np.zeros(s.size, bool)
            y[:30] = True
            _check(s, y, loss)
            _check(s, y, loss, n_bins=1 << 12)
    edges = np.ldexp(np.arange(-40, 40), -3)  # exact bin edges of a 2^-3 grid, and their neighbours
    s = np.concatenate([edges, np.nextafter(edges, -np.inf), np.nextafter(edges, np.inf), rng.normal(0, 2, 9)])
    y = np.zeros(s.size, bool)
    y[-9:] = True
    for n_bins in (8, 64, 640):
        _check(s, y, loss, n_bins=n_bins)


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
@pytest.mark.parametrize("order", ["ascending", "descending", "organ_pipe", "sawtooth"])
def test_adversarial_input_orders(loss, order):
    """Presorted and patterned inputs (the classic quickselect killers) through plain Algorithm 2
    (one bin), through the grid and (AP) through the sort-and-walk path give the baseline's answer."""
    rng = np.random.default_rng(3)
    n_pos, n_neg = 300, 30_000
    s = np.concatenate([rng.normal(0.5, 1, n_pos), rng.normal(0, 1, n_neg)])
    y = np.zeros(s.size, bool)
    y[:n_pos] = True
    idx = np.argsort(s, kind="stable")
    if order == "descending":
        idx = idx[::-1]
    elif order == "organ_pipe":
        idx = np.concatenate([idx[::2], idx[1::2][::-1]])
    elif order == "sawtooth":
        idx = idx.reshape(-1, 100).T.ravel()
    s, y = s[idx], y[idx]
    _check(s, y, loss, n_bins=1)
    _check(s, y, loss)
    if loss == "ap":  # and through the sort-and-walk path
        _check(s, y, loss, walk=True)
