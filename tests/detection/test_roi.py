"""RoIAlign: the separable fast version against a slow twin that samples every point by hand."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ssvm.detection.roi import roi_align, voc_to_input_boxes  # noqa: E402


def bilinear(fmap, y, x):
    """Mask R-CNN / torchvision's bilinear sample of fmap (C, H, W) at (y, x), written out."""
    _, height, width = fmap.shape
    if y < -1.0 or y > height or x < -1.0 or x > width:
        return np.zeros(fmap.shape[0])
    y, x = max(y, 0.0), max(x, 0.0)
    y_low, x_low = math.floor(y), math.floor(x)
    if y_low >= height - 1:
        y_low = y_high = height - 1
        y = float(y_low)
    else:
        y_high = y_low + 1
    if x_low >= width - 1:
        x_low = x_high = width - 1
        x = float(x_low)
    else:
        x_high = x_low + 1
    ly, lx = y - y_low, x - x_low
    hy, hx = 1.0 - ly, 1.0 - lx
    return (hy * hx * fmap[:, y_low, x_low] + hy * lx * fmap[:, y_low, x_high]
            + ly * hx * fmap[:, y_high, x_low] + ly * lx * fmap[:, y_high, x_high])


def roi_align_slow(fmap, box, output_size, spatial_scale, sampling_ratio):
    """One box, every bin, every sample point, by hand (aligned=True)."""
    out_h, out_w = output_size
    x1, y1, x2, y2 = (v * spatial_scale - 0.5 for v in box)
    roi_w, roi_h = x2 - x1, y2 - y1
    bin_w, bin_h = roi_w / out_w, roi_h / out_h
    grid_h = sampling_ratio if sampling_ratio > 0 else max(1, math.ceil(roi_h / out_h))
    grid_w = sampling_ratio if sampling_ratio > 0 else max(1, math.ceil(roi_w / out_w))
    out = np.zeros((fmap.shape[0], out_h, out_w))
    for ph in range(out_h):
        for pw in range(out_w):
            total = np.zeros(fmap.shape[0])
            for iy in range(grid_h):
                y = y1 + ph * bin_h + (iy + 0.5) * bin_h / grid_h
                for ix in range(grid_w):
                    x = x1 + pw * bin_w + (ix + 0.5) * bin_w / grid_w
                    total += bilinear(fmap, y, x)
            out[:, ph, pw] = total / (grid_h * grid_w)
    return out


def random_boxes(rng, n, height, width, spatial_scale):
    """Boxes in input coordinates of a map (H, W) at ``spatial_scale``: every kind the tests need."""
    in_w, in_h = width / spatial_scale, height / spatial_scale
    cell = 1.0 / spatial_scale
    kinds = rng.integers(0, 6, size=n)
    boxes = np.empty((n, 4))
    for k, kind in enumerate(kinds):
        if kind == 0:  # anywhere inside
            x = np.sort(rng.uniform(0, in_w, 2))
            y = np.sort(rng.uniform(0, in_h, 2))
        elif kind == 1:  # touching the edges
            x = np.array([0.0, rng.uniform(0, in_w)]) if rng.random() < 0.5 else \
                np.array([rng.uniform(0, in_w), in_w])
            y = np.array([rng.uniform(0, in_h), in_h]) if rng.random() < 0.5 else \
                np.array([0.0, rng.uniform(0, in_h)])
        elif kind == 2:  # tiny: smaller than a feature cell
            x0, y0 = rng.uniform(0, in_w - cell / 2), rng.uniform(0, in_h - cell / 2)
            x = np.array([x0, x0 + rng.uniform(0.01, 0.5) * cell])
            y = np.array([y0, y0 + rng.uniform(0.01, 0.5) * cell])
        elif kind == 3:  # the whole input
            x, y = np.array([0.0, in_w]), np.array([0.0, in_h])
        elif kind == 4:  # sticking out of the map (zero-padding rule beyond one cell)
            x = np.sort(rng.uniform(-2 * cell, in_w + 2 * cell, 2))
            y = np.sort(rng.uniform(-2 * cell, in_h + 2 * cell, 2))
        else:  # integer cell boundaries (samples exactly on cells: floor/ceil ties)
            x = np.sort(rng.integers(0, width + 1, 2)) * cell
            y = np.sort(rng.integers(0, height + 1, 2)) * cell
        boxes[k] = [x[0], y[0], x[1], y[1]]
    return boxes


@pytest.mark.parametrize("output_size, sampling_ratio, spatial_scale", [
    ((1, 1), 0, 1.0), ((2, 2), 0, 1 / 8), ((3, 5), 0, 1 / 32), ((7, 7), 0, 0.5),
    ((2, 3), 1, 1 / 16), ((1, 1), 2, 1.0), ((4, 4), 3, 0.25),
])
def test_roi_align_matches_slow_twin(output_size, sampling_ratio, spatial_scale):
    rng = np.random.default_rng(hash((output_size, sampling_ratio)) % 2**32)
    n_images, channels, height, width = 3, 4, 6, 9
    fmap = torch.from_numpy(rng.normal(size=(n_images, channels, height, width)))
    n = 400
    boxes = random_boxes(rng, n, height, width, spatial_scale)
    box_image = rng.integers(0, n_images, size=n)
    fast = roi_align(fmap, boxes, output_size, spatial_scale=spatial_scale,
                     sampling_ratio=sampling_ratio, box_image=box_image).numpy()
    assert fast.shape == (n, channels) + output_size and fast.dtype == np.float64
    for k in range(n):
        slow = roi_align_slow(fmap[box_image[k]].numpy(), boxes[k], output_size, spatial_scale,
                              sampling_ratio)
        np.testing.assert_allclose(fast[k], slow, rtol=1e-12, atol=1e-12, err_msg=f"box {boxes[k]}")


def test_roi_align_float32_single_map_and_one_cell_maps():
    rng = np.random.default_rng(5)
    for height, width in ((1, 1), (1, 5), (4, 1), (5, 7)):
        fmap = rng.normal(size=(2, height, width))
        boxes = random_boxes(rng, 60, height, width, 0.5)
        fast = roi_align(torch.from_numpy(fmap).float(), boxes, 2, spatial_scale=0.5)
        assert fast.dtype == torch.float32
        for k in range(len(boxes)):
            np.testing.assert_allclose(fast[k].numpy(), roi_align_slow(fmap, boxes[k], (2, 2), 0.5, 0),
                                       rtol=1e-5, atol=1e-5)


def test_roi_align_of_a_ramp_is_the_bin_centre():
    """Independent of the twin: bilinear sampling of a linear ramp is exact, so each bin's value
    is its centre in feature coordinates, ``(x1 + (p + ½)·bin) · scale − ½``."""
    height, width, scale = 12, 16, 1 / 8
    ys, xs = np.meshgrid(np.arange(height, dtype=float), np.arange(width, dtype=float), indexing="ij")
    fmap = torch.from_numpy(np.stack([xs, ys]))
    rng = np.random.default_rng(1)
    # inside the part of the map where no sample is clamped: [0.5, W - 1.5] cells
    x1 = rng.uniform(8, 60, 200)
    y1 = rng.uniform(8, 40, 200)
    boxes = np.column_stack([x1, y1, x1 + rng.uniform(1, 50, 200), y1 + rng.uniform(1, 40, 200)])
    out = roi_align(fmap, boxes, (3, 4), spatial_scale=scale).numpy()
    bin_w = (boxes[:, 2] - boxes[:, 0]) / 4
    bin_h = (boxes[:, 3] - boxes[:, 1]) / 3
    want_x = (boxes[:, [0]] + (np.arange(4) + 0.5) * bin_w[:, None]) * scale - 0.5
    want_y = (boxes[:, [1]] + (np.arange(3) + 0.5) * bin_h[:, None]) * scale - 0.5
    np.testing.assert_allclose(out[:, 0], np.broadcast_to(want_x[:, None, :], (200, 3, 4)), atol=1e-12)
    np.testing.assert_allclose(out[:, 1], np.broadcast_to(want_y[:, :, None], (200, 3, 4)), atol=1e-12)


def test_voc_to_input_boxes():
    boxes = np.array([[1, 1, 200, 100], [1, 1, 1, 1], [50.5, 20, 60, 30]])
    got = voc_to_input_boxes(boxes, (100, 200), (64, 96))
    sx, sy = 96 / 200, 64 / 100
    np.testing.assert_allclose(got[0], [0, 0, 96, 64])  # whole image -> whole input
    np.testing.assert_allclose(got[1], [0, 0, sx, sy])  # one pixel -> one scaled pixel
    np.testing.assert_allclose(got[2], [49.5 * sx, 19 * sy, 60 * sx, 30 * sy])


def test_roi_align_bad_input():
    fmap = torch.zeros(1, 2, 4, 4)
    with pytest.raises(ValueError, match="features must be a torch tensor"):
        roi_align(np.zeros((2, 4, 4)), [[0, 0, 1, 1]], 1)
    with pytest.raises(ValueError, match="floating point"):
        roi_align(torch.zeros(2, 4, 4, dtype=torch.int64), [[0, 0, 1, 1]], 1)
    with pytest.raises(ValueError, match="output_size"):
        roi_align(fmap, [[0, 0, 1, 1]], 0)
    with pytest.raises(ValueError, match="output_size"):
        roi_align(fmap, [[0, 0, 1, 1]], (2, 2, 2))
    with pytest.raises(ValueError, match="spatial_scale"):
        roi_align(fmap, [[0, 0, 1, 1]], 1, spatial_scale=0)
    with pytest.raises(ValueError, match=r"x2 < x1"):
        roi_align(fmap, [[2, 0, 1, 1]], 1)
    with pytest.raises(ValueError, match="non-finite"):
        roi_align(fmap, [[0, 0, np.nan, 1]], 1)
    with pytest.raises(ValueError, match=r"shape \(n, 4\)"):
        roi_align(fmap, [[0, 0, 1]], 1)
    with pytest.raises(ValueError, match="box_image"):
        roi_align(fmap, [[0, 0, 1, 1]], 1, box_image=[1])


def test_roi_align_samples_on_the_border_rule():
    """A sample within one cell outside the map takes the edge value; beyond that it is zero."""
    fmap = torch.arange(1.0, 6.0, dtype=torch.float64).reshape(1, 1, 5)  # values 1..5 along x
    # one bin, one sample at the box centre (feature coordinate = centre - 0.5 at scale 1)
    def at(x):
        box = [[x + 0.5 - 0.25, 0.5, x + 0.5 + 0.25, 0.5]]
        return roi_align(fmap, box, 1, sampling_ratio=1).item()
    assert at(5.0) == 5.0 and at(-1.0) == 1.0  # exactly on the limits: clamped to the edge
    assert at(5.0 + 1e-9) == 0.0 and at(-1.0 - 1e-9) == 0.0
    assert at(4.5) == 5.0 and at(-0.5) == 1.0
    assert at(2.25) == pytest.approx(3.25)
