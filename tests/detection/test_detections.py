"""nms_per_image: NMS of many images' scored windows, against a per-image loop over nms."""

import numpy as np
import pytest

from ssvm.detection import nms, nms_per_image


def random_windows(rng, sizes):
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    xy = rng.integers(0, 40, size=(offsets[-1], 2))
    boxes = np.hstack((xy, xy + rng.integers(5, 30, size=(offsets[-1], 2)))).astype(float)
    scores = rng.integers(-3, 4, size=offsets[-1]).astype(float)  # ties
    return scores, boxes, offsets


@pytest.mark.parametrize("seed", range(20))
def test_matches_nms_image_by_image_for_stacked_and_listed_boxes(seed):
    rng = np.random.default_rng(seed)
    scores, boxes, offsets = random_windows(rng, rng.integers(1, 9, size=5))
    per_image = [boxes[a:b] for a, b in zip(offsets[:-1], offsets[1:])]
    for max_per_image in (None, 1, 2):
        for given in (boxes, per_image):
            detections = nms_per_image(scores, given, offsets, 0.3, max_per_image)
            assert len(detections) == len(per_image)
            for (kept_boxes, kept_scores), a, b in zip(detections, offsets[:-1], offsets[1:]):
                keep = nms(boxes[a:b], scores[a:b], 0.3)[:max_per_image]
                np.testing.assert_array_equal(kept_boxes, boxes[a:b][keep])
                np.testing.assert_array_equal(kept_scores, scores[a:b][keep])
                assert np.all(np.diff(kept_scores) <= 0)


def test_bad_input():
    scores, boxes, offsets = random_windows(np.random.default_rng(0), [2, 3])
    with pytest.raises(ValueError, match="iou_threshold"):
        nms_per_image(scores, boxes, offsets, iou_threshold=1.5)
    with pytest.raises(ValueError, match="max_per_image"):
        nms_per_image(scores, boxes, offsets, max_per_image=0)
    with pytest.raises(ValueError, match="boxes holds 1 images"):
        nms_per_image(scores, [boxes], offsets)
    with pytest.raises(ValueError, match=r"shape \(5, 4\)"):
        nms_per_image(scores, boxes[:4], offsets)
