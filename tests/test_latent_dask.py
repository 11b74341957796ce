"""LatentRankSVM with its window features in a dask array or a zarr store (the negatives out of
core): the same model as in memory, and no copy of the negatives in the process."""

import tracemalloc
import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
zarr = pytest.importorskip("zarr")

from ssvm import LatentRankSVM  # noqa: E402
from ssvm.latent.bags import as_bags  # noqa: E402
from ssvm.latent.convex import ConvexBound  # noqa: E402
from ssvm.losses import get_oracle  # noqa: E402
from ssvm.problem.dask_gathered import DaskGatheredHinge  # noqa: E402


def window_data(seed=0, n_images=40, d=6, dtype=np.float64):
    """Bags of 3..12 windows; positive images hide one shifted window."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 13, size=n_images)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    features = rng.standard_normal((offsets[-1], d))
    y = np.arange(n_images) % 3 == 0
    direction = rng.standard_normal(d)
    for i in np.flatnonzero(y):
        features[offsets[i] + rng.integers(sizes[i])] += 1.5 * direction
    return features.astype(dtype), offsets, y


@pytest.mark.parametrize("loss, negatives", [("ap", "best"), ("ap", "all"), ("zero_one", "all"),
                                             ("ndcg", "best")])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dask_features_give_the_in_memory_model(loss, negatives, dtype):
    features, offsets, y = window_data(1, dtype=dtype)
    params = {"loss": loss, "negatives": negatives, "C": 10.0, "max_cccp_iter": 4}
    if dtype == np.float32:
        # float32 products (dask keeps them) can move the cutting plane's stop by one iteration, a
        # difference within its tolerance that a later start of init="auto" carries into J (ndcg,
        # best: 2e-4); the float64 case checks the starts, this one the float32 path of one start
        params["init"] = "mean"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mem = LatentRankSVM(**params).fit(features, y, offsets=offsets)
        dsk = LatentRankSVM(**params).fit(da.from_array(features, chunks=(37, None)), y,
                                          offsets=offsets)
    np.testing.assert_allclose(dsk.coef_, mem.coef_, rtol=1e-9, atol=1e-12)
    assert dsk.intercept_ == pytest.approx(mem.intercept_, rel=1e-9, abs=1e-12)
    np.testing.assert_array_equal(dsk.latent_windows_, mem.latent_windows_)
    np.testing.assert_allclose(dsk.history_, mem.history_, rtol=1e-9)
    assert dsk.lai_calls_ == mem.lai_calls_


def test_the_bound_keeps_the_negatives_out_of_core():
    features, offsets, y = window_data(2)
    oracle = get_oracle("ap", "auto")
    dask_bound = ConvexBound(as_bags(da.from_array(features, chunks=(50, None)), offsets, 64), y,
                             oracle, "all", False, None)
    mem_bound = ConvexBound(as_bags(features, offsets, 64), y, oracle, "all", False, None)
    assert dask_bound.X is None
    w = np.random.default_rng(0).standard_normal(features.shape[1])
    imputed = mem_bound.impute(w)
    np.testing.assert_array_equal(dask_bound.impute(w), imputed)
    problem = dask_bound.problem(imputed)
    assert isinstance(problem, DaskGatheredHinge)
    for got, want in zip(problem.plane(w), mem_bound.problem(imputed).plane(w)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_zarr_store_fit_does_not_hold_the_windows(tmp_path):
    rng = np.random.default_rng(3)
    n_images, d = 200, 200
    sizes = rng.integers(200, 800, size=n_images)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    y = np.arange(n_images) % 10 == 0
    store = zarr.create_array(store=str(tmp_path / "windows.zarr"), shape=(offsets[-1], d),
                              chunks=(2_000, d), dtype=np.float32)
    for a in range(0, offsets[-1], 20_000):  # written block by block
        b = min(a + 20_000, offsets[-1])
        store[a:b] = rng.standard_normal((b - a, d), dtype=np.float32)
    features = da.from_zarr(str(tmp_path / "windows.zarr"))
    # the positives' windows are read 4096 at a time; hinge_scale=1: this measures memory, and on
    # these random windows (N/P about 2,000) the margin scale's C makes the solver take far longer
    model = LatentRankSVM(negatives="all", C=1.0, max_cccp_iter=1, init=np.ones(d), hinge_scale=1.0,
                          chunk_rows=4096)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k = int(np.searchsorted(offsets, 10_000, "right")) - 1  # the images in 10,000 rows
        model.fit(features[:offsets[k]], y[:k], offsets=offsets[:k + 1])  # compiled, warm
        tracemalloc.start()
        model.fit(features, y, offsets=offsets)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    nbytes = offsets[-1] * d * 4
    # a few blocks in flight and vectors of one number per window (1/100 of a window's 800
    # bytes each); the in-memory bound would hold the negatives as float64 (twice nbytes)
    assert peak < nbytes / 3, (peak, nbytes)
    assert model.n_iter_ >= 1 and np.all(np.isfinite(model.coef_))


def test_non_finite_window_named_with_its_block():
    features, offsets, y = window_data(4)
    negative_row = offsets[1] + 1  # image 1 is negative
    features[negative_row, 3] = np.nan
    with pytest.raises(ValueError, match=rf"X holds NaN or infinity in block \d+ .*first at row "
                                         rf"{negative_row}|window features contain NaN"):
        LatentRankSVM(init=np.ones(6)).fit(da.from_array(features, chunks=(50, None)), y,
                                           offsets=offsets)
