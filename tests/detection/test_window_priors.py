"""Localisation priors of weakly supervised detection: minimum window area, window geometry features."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_sample_image

from ssvm.detection import HogColorFeatures, selective_search, selective_search_many
from ssvm.detection.features import GEOMETRY_COLUMNS, WithGeometry, window_geometry
from ssvm.detection.windows import relative_areas


@pytest.fixture(scope="module")
def image(cv2):
    """A real photograph shipped with scikit-learn, downscaled to 120 x 80."""
    return cv2.resize(load_sample_image("china.jpg"), (120, 80), interpolation=cv2.INTER_AREA)


@st.composite
def image_and_boxes(draw):
    height = draw(st.integers(1, 3000))
    width = draw(st.integers(1, 3000))
    m = draw(st.integers(0, 12))
    boxes = []
    for _ in range(m):
        x1, x2 = sorted(draw(st.floats(1, width, allow_nan=False)) for _ in range(2))
        y1, y2 = sorted(draw(st.floats(1, height, allow_nan=False)) for _ in range(2))
        boxes.append((x1, y1, x2, y2))
    return height, width, np.array(boxes, dtype=np.float64).reshape(-1, 4)


def slow_geometry(box, height, width):
    x1, y1, x2, y2 = box
    bw, bh = x2 - x1 + 1, y2 - y1 + 1
    area = bw * bh / (height * width)
    aspect = min(2.0, max(-2.0, math.log(bw / bh))) / 2
    return [math.sqrt(area), area, aspect, (x1 + x2) / 2 / width - 0.5, (y1 + y2) / 2 / height - 0.5]


@settings(max_examples=60, deadline=None)
@given(image_and_boxes())
def test_relative_areas_and_geometry_match_slow_twins(case):
    height, width, boxes = case
    expected = np.array([slow_geometry(b, height, width) for b in boxes]).reshape(-1, 5)
    got = window_geometry(boxes, height, width)
    assert got.shape == (boxes.shape[0], len(GEOMETRY_COLUMNS))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(relative_areas(boxes, height, width), expected[:, 1], rtol=1e-12)


def test_whole_image_geometry():
    np.testing.assert_allclose(window_geometry([[1, 1, 40, 20]], 20, 40),
                               [[1, 1, math.log(2) / 2, 1 / 80, 1 / 40]], rtol=1e-12)
    assert relative_areas([[1, 1, 40, 20], [1, 1, 20, 10]], 20, 40).tolist() == [1.0, 0.25]
    with pytest.raises(ValueError, match="height and width"):
        window_geometry([[1, 1, 2, 2]], 0, 5)


def test_with_geometry_appends_scaled_geometry(image):
    inner = HogColorFeatures(window_size=16)
    boxes = np.array([[1, 1, 120, 80], [10, 5, 60, 70], [30, 30, 31, 40]], dtype=np.float64)
    wrapped = WithGeometry(inner, scale=2.5)
    features = wrapped(image, boxes)
    assert features.dtype == np.float32 and features.shape == (3, inner.n_features + 5)
    assert wrapped.n_features == inner.n_features + 5
    np.testing.assert_array_equal(features[:, :inner.n_features], inner(image, boxes))
    np.testing.assert_allclose(features[:, inner.n_features:], 2.5 * window_geometry(boxes, 80, 120),
                               rtol=1e-6, atol=1e-7)
    assert repr(wrapped) == f"WithGeometry({inner!r}, scale=2.5)"  # stable: the store's cache key
    assert WithGeometry(lambda image, boxes: np.zeros((len(boxes), 2))).n_features is None
    for bad in (0, -1.0, float("nan"), True, "3"):
        with pytest.raises(ValueError, match="scale"):
            WithGeometry(inner, scale=bad)
    with pytest.raises(ValueError, match="callable"):
        WithGeometry("not an extractor")


def test_min_area_filters_before_the_cap(image, tmp_path):
    params = dict(working_size=120, min_size=2)
    everything = selective_search(image, max_windows=10_000, **params)
    areas = relative_areas(everything, 80, 120)
    for min_area in (0.02, 0.1, 0.3):
        large = selective_search(image, max_windows=10_000, min_area=min_area, **params)
        expected = np.concatenate([everything[:1], everything[1:][areas[1:] >= min_area]])
        np.testing.assert_array_equal(large, expected)  # same order: filtering, no re-ranking
        assert (relative_areas(large[1:], 80, 120) >= min_area).all()
        capped = selective_search(image, max_windows=5, min_area=min_area, **params)
        np.testing.assert_array_equal(capped, expected[:5])
    assert 1 < len(selective_search(image, max_windows=10_000, min_area=0.3, **params)) < len(everything)
    # the disk cache tells the settings apart and matches direct calls
    for min_area in (0.0, 0.1):
        cached = selective_search_many([image], image_ids=["a"], cache_dir=tmp_path, max_windows=40,
                                       min_area=min_area, **params)[0]
        np.testing.assert_array_equal(cached, selective_search(image, max_windows=40, min_area=min_area,
                                                               **params))
    assert len(list(tmp_path.glob("a-*.npy"))) == 2


@pytest.mark.parametrize("min_area", [-0.1, 1.0, True, "0.1", float("nan")])
def test_bad_min_area(image, min_area):
    with pytest.raises(ValueError, match="min_area"):
        selective_search(image, min_area=min_area)
    with pytest.raises(ValueError, match="min_area"):
        selective_search_many([image], min_area=min_area)
