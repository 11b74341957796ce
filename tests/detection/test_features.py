"""Window features: HOG + HSV histogram against direct computations, crops, plug-in extractors."""

import numpy as np
import pytest
from sklearn.datasets import load_sample_image

from ssvm.detection import CropFeatures, HogColorFeatures, crop_windows, extract_features
from ssvm.detection.hog import batch_hog
from ssvm.detection.images import as_rgb_image

cv2 = pytest.importorskip("cv2")


@pytest.fixture(scope="module")
def image():
    return cv2.resize(load_sample_image("china.jpg"), (120, 80), interpolation=cv2.INTER_AREA)


BOXES = np.array([[1, 1, 120, 80], [10, 5, 40, 60], [50, 20, 50, 20], [100, 70, 130, 95],
                  [3.4, 7.6, 20.5, 30.2]], dtype=float)


def test_crop_windows_matches_slicing(image):
    crops = crop_windows(image, BOXES[:2], (16, 12))
    assert crops.shape == (2, 16, 12, 3) and crops.dtype == np.uint8
    # box (10, 5, 40, 60) is rows 5..60 and columns 10..40, 1-based inclusive
    manual = cv2.resize(image[4:60, 9:40], (12, 16), interpolation=cv2.INTER_AREA)
    np.testing.assert_array_equal(crops[1], manual)
    single = crop_windows(image, BOXES[2:3], (4, 4))  # a one-pixel window
    np.testing.assert_array_equal(single[0], np.broadcast_to(image[19, 49], (4, 4, 3)))
    outside = crop_windows(image, BOXES[3:4], (4, 4))  # clipped to the image
    manual = cv2.resize(image[69:80, 99:120], (4, 4), interpolation=cv2.INTER_AREA)
    np.testing.assert_array_equal(outside[0], manual)


def slow_hsv_histogram(crop, bins):
    hsv = cv2.cvtColor(crop, cv2.COLOR_RGB2HSV).reshape(-1, 3)
    edges = [np.linspace(0, 180, bins[0] + 1), np.linspace(0, 256, bins[1] + 1),
             np.linspace(0, 256, bins[2] + 1)]
    hist = np.zeros(bins)
    for h, s, v in hsv:
        idx = tuple(min(int(np.searchsorted(e, x, side="right")) - 1, n - 1)
                    for e, x, n in zip(edges, (h, s, v), bins))
        hist[idx] += 1
    return hist.ravel()


@pytest.mark.parametrize("bins", [(8, 3, 3), (5, 2, 7)])
def test_hsv_histograms_match_slow_twin(image, bins):
    extractor = HogColorFeatures(hsv_bins=bins)
    crops = crop_windows(image, BOXES, (8, 8))
    hists = extractor.hsv_histograms(crops)
    for crop, hist in zip(crops, hists):
        np.testing.assert_array_equal(hist, slow_hsv_histogram(crop, bins))


def test_default_features_are_hog_and_colour(image):
    extractor = HogColorFeatures()
    features = extractor(image, BOXES)
    assert features.shape == (5, extractor.n_features) == (5, 324 + 72)
    assert features.dtype == np.float32
    # unit norm; the one-pixel window (row 2) is flat: zero HOG part, norm 1/sqrt(2)
    np.testing.assert_allclose(np.linalg.norm(features, axis=1),
                               [1, 1, 1 / np.sqrt(2), 1, 1], rtol=1e-5)
    crops = crop_windows(image, BOXES, (32, 32))
    for crop, row in zip(crops, features):
        grey = cv2.cvtColor(crop, cv2.COLOR_RGB2GRAY)
        hog = batch_hog(grey[None], 9, 8, 2)[0]
        if np.linalg.norm(hog) > 0:
            np.testing.assert_allclose(row[:324], hog / np.linalg.norm(hog) / np.sqrt(2), atol=1e-6)
        colour = extractor.hsv_histograms(crop[None])[0]
        np.testing.assert_allclose(row[324:], colour / np.linalg.norm(colour) / np.sqrt(2), atol=1e-6)


def test_large_images_are_shrunk_consistently(image):
    big = np.repeat(np.repeat(image, 2, axis=0), 2, axis=1)
    boxes = BOXES[:3]  # integer boxes: the continuous extents scale exactly
    big_boxes = np.column_stack([2 * (boxes[:, 0] - 1) + 1, 2 * (boxes[:, 1] - 1) + 1,
                                 2 * boxes[:, 2], 2 * boxes[:, 3]])
    small_features = HogColorFeatures()(image, boxes)
    big_features = HogColorFeatures(max_image_side=120)(big, big_boxes)
    np.testing.assert_array_equal(big_features, small_features)


def mean_colour(crops):
    return crops.reshape(len(crops), -1, 3).mean(axis=1)


def test_crop_features_plug_in(image):
    extractor = CropFeatures(mean_colour, size=(10, 10), batch_size=2)
    features = extractor(image, BOXES)
    expected = mean_colour(crop_windows(image, BOXES, (10, 10)))
    np.testing.assert_array_equal(features, expected)
    # extract_features runs any such callable, in parallel too
    images = [image, image[::-1].copy()]
    windows = [BOXES[:2], BOXES[1:]]
    sequential = extract_features(images, windows, extractor)
    parallel = extract_features(images, windows, extractor, n_jobs=2)
    for s, p, im, w in zip(sequential, parallel, images, windows):
        assert s.dtype == np.float32
        np.testing.assert_array_equal(s, p)
        np.testing.assert_allclose(s, mean_colour(crop_windows(im, w, (10, 10))), rtol=1e-6)
    default = extract_features(images[:1], windows[:1])
    np.testing.assert_array_equal(default[0], HogColorFeatures()(image, BOXES[:2]))


def test_bad_extractor_and_parameters(image):
    with pytest.raises(ValueError, match=r"image 0: extractor returned shape \(3,\)"):
        extract_features([image], [BOXES[:2]], lambda im, b: np.zeros(3))
    with pytest.raises(ValueError, match="non-finite"):
        extract_features([image], [BOXES[:1]], lambda im, b: np.full((1, 2), np.nan))
    with pytest.raises(ValueError, match="2 images but 1 window arrays"):
        extract_features([image, image], [BOXES])
    with pytest.raises(ValueError, match="multiple of pixels_per_cell"):
        HogColorFeatures(window_size=30)
    with pytest.raises(ValueError, match="hsv_bins"):
        HogColorFeatures(hsv_bins=(8, 0, 3))


def test_image_conversion():
    grey = np.arange(12, dtype=np.uint8).reshape(3, 4)
    np.testing.assert_array_equal(as_rgb_image(grey)[:, :, 2], grey)
    rgba = np.zeros((2, 2, 4), np.uint8)
    assert as_rgb_image(rgba).shape == (2, 2, 3)
    np.testing.assert_array_equal(as_rgb_image(np.ones((2, 2, 3))), 255)
    for bad, message in [(np.ones((2, 2, 3)) * 2, r"\[0, 1\]"), (np.full((2, 2), 300), r"\[0, 255\]"),
                         (np.zeros((2, 2, 2)), "shape"), (np.zeros((0, 3, 3)), "empty")]:
        with pytest.raises(ValueError, match=message):
            as_rgb_image(bad)
