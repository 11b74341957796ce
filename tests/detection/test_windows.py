"""Selective search windows: coordinates, whole-image window, cap, determinism, disk cache."""

import sys

import numpy as np
import pytest
from sklearn.datasets import load_sample_image

from ssvm.detection import selective_search, selective_search_many


@pytest.fixture(scope="module")
def small_images(cv2):
    """Two real photographs shipped with scikit-learn, downscaled to about 100 px."""
    return [cv2.resize(load_sample_image(name), (96, 64), interpolation=cv2.INTER_AREA)
            for name in ("china.jpg", "flower.jpg")]


def test_windows_are_valid_boxes_of_the_image(small_images):
    image = small_images[0]
    boxes = selective_search(image, working_size=96, max_windows=60, min_size=4)
    assert boxes.dtype == np.float64 and boxes.ndim == 2 and boxes.shape[1] == 4
    assert 10 < len(boxes) <= 60
    np.testing.assert_array_equal(boxes[0], [1, 1, 96, 64])  # whole image first
    assert (boxes[:, :2] >= 1).all() and (boxes[:, 2] <= 96).all() and (boxes[:, 3] <= 64).all()
    assert (boxes[:, 2] >= boxes[:, 0]).all() and (boxes[:, 3] >= boxes[:, 1]).all()
    assert np.unique(boxes, axis=0).shape[0] == len(boxes)
    # reproducible, including which windows survive the cap
    np.testing.assert_array_equal(boxes, selective_search(image, working_size=96, max_windows=60,
                                                          min_size=4))
    np.testing.assert_array_equal(selective_search(image, max_windows=1), [[1, 1, 96, 64]])
    grey = selective_search(image.mean(axis=2).astype(np.uint8), working_size=96, max_windows=20)
    np.testing.assert_array_equal(grey[0], [1, 1, 96, 64])


@pytest.mark.parametrize("mode", ["single", "quality"])
def test_other_modes(small_images, mode):
    boxes = selective_search(small_images[0], mode=mode, working_size=64, max_windows=30)
    np.testing.assert_array_equal(boxes[0], [1, 1, 96, 64])
    assert 1 < len(boxes) <= 30


def test_boxes_map_back_to_original_coordinates(small_images):
    small = small_images[1]
    big = np.repeat(np.repeat(small, 2, axis=0), 2, axis=1)  # area-downscaling gives `small` back
    at_small = selective_search(small, working_size=96, max_windows=80, min_size=4)
    at_big = selective_search(big, working_size=96, max_windows=80, min_size=4)
    # each working pixel covers 2x2 original pixels: continuous extents double
    expected = np.column_stack([2 * (at_small[:, 0] - 1) + 1, 2 * (at_small[:, 1] - 1) + 1,
                                2 * at_small[:, 2], 2 * at_small[:, 3]])
    np.testing.assert_array_equal(at_big, expected)


def test_cache_and_parallel(tmp_path, small_images):
    params = dict(working_size=64, max_windows=30)
    ids = ["a", "b"]
    first = selective_search_many(small_images, image_ids=ids, cache_dir=tmp_path, **params)
    files = sorted(p.name for p in tmp_path.glob("*.npy"))
    assert len(files) == 2 and files[0].startswith("a-") and files[1].startswith("b-")
    # the cache is what is read back: plant a marker in it
    marker = np.array([[1.0, 1.0, 2.0, 2.0]])
    np.save(tmp_path / files[0], marker)
    again = selective_search_many(small_images, image_ids=ids, cache_dir=tmp_path, **params)
    np.testing.assert_array_equal(again[0], marker)
    np.testing.assert_array_equal(again[1], first[1])
    # other parameters → other cache files
    selective_search_many(small_images, image_ids=ids, cache_dir=tmp_path, working_size=48)
    assert len(list(tmp_path.glob("*.npy"))) == 4
    parallel = selective_search_many(small_images, n_jobs=2, **params)
    for x, y in zip(parallel, first):
        np.testing.assert_array_equal(x, y)


def test_image_files_and_ids(tmp_path, small_images, cv2):
    path = tmp_path / "photo.png"
    cv2.imwrite(str(path), small_images[0][:, :, ::-1])
    cached = selective_search_many([path], cache_dir=tmp_path / "cache", max_windows=10)
    assert next((tmp_path / "cache").glob("*.npy")).name.startswith("photo-")
    np.testing.assert_array_equal(cached[0], selective_search(small_images[0], max_windows=10))
    with pytest.raises(ValueError, match=r"nope\.jpg: cannot read image"):
        selective_search(tmp_path / "nope.jpg")


@pytest.mark.parametrize(
    "kwargs, message",
    [({"mode": "slow"}, "mode must be one of"), ({"working_size": 8}, "working_size"),
     ({"max_windows": 0}, "max_windows"), ({"min_size": 1.5}, "min_size")],
)
def test_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        selective_search(np.zeros((10, 10, 3), np.uint8), **kwargs)


def test_bad_ids():
    with pytest.raises(ValueError, match="unique"):
        selective_search_many([np.zeros((5, 5))] * 2, image_ids=["x", "x"])
    with pytest.raises(ValueError, match="1 image_ids for 2 images"):
        selective_search_many([np.zeros((5, 5))] * 2, image_ids=["x"])


def test_missing_opencv_message(monkeypatch):
    monkeypatch.setitem(sys.modules, "cv2", None)
    with pytest.raises(ImportError, match=r'pip install "ssvm\[detection\]"'):
        selective_search(np.zeros((10, 10, 3), np.uint8))
