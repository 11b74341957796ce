"""Batch HOG against a slow per-pixel twin and against scikit-image."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssvm.detection.hog import batch_hog, hog_length


def slow_hog(image, orientations, cell, block, eps=1e-5):
    """One image, written out with loops (scikit-image's definition, in float64)."""
    image = image.astype(float)
    height, width = image.shape
    cells_row, cells_col = height // cell, width // cell
    hist = np.zeros((cells_row, cells_col, orientations))
    for r in range(cells_row * cell):
        for c in range(cells_col * cell):
            gr = image[r + 1, c] - image[r - 1, c] if 0 < r < height - 1 else 0.0
            gc = image[r, c + 1] - image[r, c - 1] if 0 < c < width - 1 else 0.0
            angle = np.rad2deg(np.arctan2(gr, gc)) % 180
            width_bin = 180.0 / orientations
            for o in range(orientations):
                if width_bin * o <= angle < width_bin * (o + 1):
                    hist[r // cell, c // cell, o] += np.hypot(gc, gr) / cell**2
    out = []
    for br in range(cells_row - block + 1):
        for bc in range(cells_col - block + 1):
            b = hist[br : br + block, bc : bc + block, :]
            b = b / np.sqrt(np.sum(b**2) + eps**2)
            b = np.minimum(b, 0.2)
            b = b / np.sqrt(np.sum(b**2) + eps**2)
            out.append(b.ravel())
    return np.concatenate(out)


shapes = st.tuples(st.integers(1, 6), st.integers(1, 3), st.integers(1, 10)).flatmap(
    lambda t: st.tuples(st.just(t[0]), st.just(t[1]), st.just(t[2]),
                        st.integers(t[0] * t[1], t[0] * t[1] + 7),
                        st.integers(t[0] * t[1], t[0] * t[1] + 7))
)


@settings(max_examples=40, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2**31 - 1), kind=st.sampled_from(["random", "few", "flat"]))
def test_matches_slow_twin(shape, seed, kind):
    cell, block, orientations, height, width = shape
    rng = np.random.default_rng(seed)
    if kind == "random":
        images = rng.integers(0, 256, (2, height, width))
    elif kind == "few":  # many equal gradients: orientations exactly on bin edges (0°, 45°, 90°)
        images = rng.integers(0, 2, (2, height, width)) * 100
    else:
        images = np.full((2, height, width), 9)
    got = batch_hog(images.astype(np.uint8), orientations, cell, block)
    assert got.shape == (2, hog_length(height, width, orientations, cell, block))
    for image, row in zip(images, got):
        np.testing.assert_allclose(row, slow_hog(image, orientations, cell, block), rtol=1e-12,
                                   atol=1e-14)


@settings(max_examples=25, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2**31 - 1))
def test_matches_scikit_image(shape, seed):
    feature = pytest.importorskip("skimage.feature")
    cell, block, orientations, height, width = shape
    images = np.random.default_rng(seed).integers(0, 256, (2, height, width)).astype(np.uint8)
    got = batch_hog(images, orientations, cell, block)
    for image, row in zip(images, got):
        expected = feature.hog(image, orientations=orientations, pixels_per_cell=(cell, cell),
                               cells_per_block=(block, block), block_norm="L2-Hys")
        # scikit-image accumulates cell histograms in single precision
        np.testing.assert_allclose(row, expected, atol=1e-6)


def test_bad_input():
    with pytest.raises(ValueError, match=r"shape \(m, height, width\)"):
        batch_hog(np.zeros((8, 8)))
    with pytest.raises(ValueError, match="hold no block"):
        batch_hog(np.zeros((1, 8, 20)), pixels_per_cell=8, cells_per_block=2)
    with pytest.raises(ValueError, match="orientations must be a positive integer"):
        batch_hog(np.zeros((1, 16, 16)), orientations=0)
    assert hog_length(8, 20, 9, 8, 2) == 0
