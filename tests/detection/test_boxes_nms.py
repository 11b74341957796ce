"""IoU and greedy NMS against slow, obviously-correct pure-Python twins."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssvm.detection import box_areas, iou, nms


def slow_iou(a, b):
    """VOC inclusive-pixel IoU of two boxes, written out."""
    ix = min(a[2], b[2]) - max(a[0], b[0]) + 1
    iy = min(a[3], b[3]) - max(a[1], b[1]) + 1
    inter = max(ix, 0.0) * max(iy, 0.0)
    area_a = (a[2] - a[0] + 1) * (a[3] - a[1] + 1)
    area_b = (b[2] - b[0] + 1) * (b[3] - b[1] + 1)
    return inter / (area_a + area_b - inter)


def slow_nms(boxes, scores, threshold):
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    suppressed, keep = set(), []
    for pos, i in enumerate(order):
        if i in suppressed:
            continue
        keep.append(i)
        for j in order[pos + 1 :]:
            if slow_iou(boxes[i], boxes[j]) > threshold:
                suppressed.add(j)
    return keep


def random_boxes(rng, n, scale, grid):
    if grid:  # small integer grid: many identical, touching and nested boxes
        xy = rng.integers(1, 6, size=(n, 2)).astype(float)
        wh = rng.integers(0, 4, size=(n, 2)).astype(float)
    else:
        xy = rng.uniform(0, 100, size=(n, 2))
        wh = rng.uniform(0, 50, size=(n, 2))
    return np.hstack([xy, xy + wh]) * scale


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 12), m=st.integers(0, 12), seed=st.integers(0, 2**31 - 1),
       grid=st.booleans(), scale=st.sampled_from([1e-3, 1.0, 1e6]))
def test_iou_matches_slow_twin(n, m, seed, grid, scale):
    rng = np.random.default_rng(seed)
    a, b = random_boxes(rng, n, scale, grid), random_boxes(rng, m, scale, grid)
    expected = np.array([[slow_iou(x, y) for y in b] for x in a]).reshape(n, m)
    got = iou(a, b)
    assert got.shape == (n, m)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
    assert ((got >= 0) & (got <= 1)).all()


@settings(max_examples=80, deadline=None)
@given(n=st.integers(0, 15), seed=st.integers(0, 2**31 - 1), grid=st.booleans(),
       ties=st.booleans(), threshold=st.sampled_from([0.0, 0.3, 0.5, 0.7, 1.0]))
def test_nms_matches_slow_twin(n, seed, grid, ties, threshold):
    rng = np.random.default_rng(seed)
    boxes = random_boxes(rng, n, 1.0, grid)
    scores = rng.integers(0, 3, n).astype(float) if ties else rng.normal(size=n)
    keep = nms(boxes, scores, threshold)
    assert keep.dtype == np.int64
    assert keep.tolist() == slow_nms(boxes, scores, threshold)


def test_iou_and_nms_small_cases():
    box = [1, 1, 10, 10]
    assert iou([box], [box])[0, 0] == 1.0
    # a one-pixel box has area 1; touching boxes (x2 = 10, x1 = 11) do not overlap
    np.testing.assert_array_equal(box_areas([[3, 3, 3, 3], box]), [1, 100])
    assert iou([box], [[11, 1, 20, 10]])[0, 0] == 0.0
    assert iou([box], [[1, 1, 10, 20]])[0, 0] == 0.5
    boxes = [[1, 1, 10, 10], [2, 1, 11, 10], [30, 30, 40, 40], [1, 1, 10, 10]]
    assert nms(boxes, [0.5, 0.9, 0.1, 0.9], 0.3).tolist() == [1, 2]
    assert nms(boxes, [1, 1, 1, 1], 0.3).tolist() == [0, 2]  # ties: lower index first
    assert nms(boxes, [1, 1, 1, 1], 1.0).tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: iou([[1, 2, 3]], [[1, 1, 2, 2]]), r"boxes_a must have shape \(n, 4\)"),
        (lambda: iou([[3, 1, 2, 2]], [[1, 1, 2, 2]]), r"boxes_a\[0\] .* x2 < x1"),
        (lambda: iou([[1, 1, 2, np.nan]], [[1, 1, 2, 2]]), "non-finite"),
        (lambda: nms([[1, 1, 2, 2]], [1, 2]), r"scores must have shape \(1,\)"),
        (lambda: nms([[1, 1, 2, 2]], [np.inf]), "non-finite"),
        (lambda: nms([[1, 1, 2, 2]], [1], 1.5), r"iou_threshold must be in \[0, 1\]"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()
