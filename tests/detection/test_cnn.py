"""CNN window features: box-to-feature-map geometry, the store, progress bars, bad input."""

import math
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("cv2")

from ssvm.detection import CnnFeatures, WindowStore, extract_features  # noqa: E402


class CoordinateBackbone(torch.nn.Module):
    """Feature map of stride ``stride`` whose channels are the x and y (input pixels) of each
    cell's centre, ``(j + ½)·stride + offset``, then ``extra`` channels of the mean input."""

    def __init__(self, stride=8, offset=0.0, extra=0):
        super().__init__()
        self.stride, self.offset, self.extra = stride, offset, extra
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        n, _, height, width = x.shape
        s = self.stride
        ys = (torch.arange(height // s, dtype=x.dtype) + 0.5) * s + self.offset
        xs = (torch.arange(width // s, dtype=x.dtype) + 0.5) * s + self.offset
        grid_x = xs[None, :].expand(height // s, width // s)
        grid_y = ys[:, None].expand(height // s, width // s)
        coords = torch.stack([grid_x, grid_y])[None].expand(n, 2, height // s, width // s)
        pooled = torch.nn.functional.avg_pool2d(x, s)  # (n, 3, h, w): depends on the image
        return torch.cat([coords] + [pooled.mean(1, keepdim=True)] * self.extra, dim=1)


def image_boxes(rng, height, width, n):
    """Random VOC boxes inside a height x width image: interior, at edges, tiny, whole image."""
    boxes = []
    for k in range(n):
        kind = k % 4
        if kind == 0:
            x = np.sort(rng.uniform(1, width, 2))
            y = np.sort(rng.uniform(1, height, 2))
        elif kind == 1:  # touching two or more edges
            x = np.array([1.0, rng.uniform(1, width)]) if rng.random() < 0.5 \
                else np.array([rng.uniform(1, width), width])
            y = np.array([rng.uniform(1, height), height]) if rng.random() < 0.5 \
                else np.array([1.0, rng.uniform(1, height)])
        elif kind == 2:  # a few pixels: smaller than one feature cell
            x0, y0 = rng.integers(1, width - 2), rng.integers(1, height - 2)
            x = np.array([x0, x0 + rng.integers(0, 3)], dtype=float)
            y = np.array([y0, y0 + rng.integers(0, 3)], dtype=float)
        else:
            x, y = np.array([1.0, width]), np.array([1.0, height])
        boxes.append([x[0], y[0], x[1], y[1]])
    return np.array(boxes)


def expected_centre(lo, hi, scale, stride, offset, n_cells):
    """Mean of the clamped sample positions of a 1-bin RoIAlign of a coordinate ramp, by hand.

    ``lo, hi``: the VOC extent ``x1 - 1, x2`` in image pixels; ``scale``: input / image size.
    """
    u1 = (lo * scale - offset) / stride - 0.5
    u2 = (hi * scale - offset) / stride - 0.5
    n = max(1, math.ceil(u2 - u1))
    samples = [u1 + (i + 0.5) * (u2 - u1) / n for i in range(n)]
    return np.mean([(min(max(u, 0.0), n_cells - 1) + 0.5) * stride + offset for u in samples])


@pytest.mark.parametrize("shape, stride, offset", [((123, 200), 8, 0.0), ((301, 97), 16, 7.5),
                                                    ((64, 64), 32, 15.5)])
def test_boxes_map_to_feature_coordinates(shape, stride, offset):
    height, width = shape
    rng = np.random.default_rng(stride)
    image = rng.integers(0, 256, size=(height, width, 3), dtype=np.uint8)
    extractor = CnnFeatures(CoordinateBackbone(stride, offset), max_side=6 * stride, output_size=1,
                            normalize=False)
    in_h, in_w = extractor.input_shape(height, width)
    assert max(in_h, in_w) == 6 * stride and in_h % stride == 0 and in_w % stride == 0
    boxes = image_boxes(rng, height, width, 200)
    got = extractor(image, boxes)
    assert got.shape == (200, 2) and got.dtype == np.float32
    sx, sy = in_w / width, in_h / height
    for k, (x1, y1, x2, y2) in enumerate(boxes):
        want_x = expected_centre(x1 - 1, x2, sx, stride, offset, in_w // stride)
        want_y = expected_centre(y1 - 1, y2, sy, stride, offset, in_h // stride)
        np.testing.assert_allclose(got[k], [want_x, want_y], rtol=1e-5, atol=1e-3, err_msg=str(boxes[k]))
    # boxes whose extent lies between the first and last cell centres have no clamped sample:
    # the pooled value is the box centre itself, ((x1 - 1) + x2) / 2 in input pixels
    lo = stride / 2 + offset
    inner = (((boxes[:, 0] - 1) * sx >= lo) & (boxes[:, 2] * sx <= in_w - stride / 2 + offset)
             & ((boxes[:, 1] - 1) * sy >= lo) & (boxes[:, 3] * sy <= in_h - stride / 2 + offset))
    assert inner.sum() >= 10
    centres = np.column_stack([(boxes[:, 0] - 1 + boxes[:, 2]) / 2 * sx,
                               (boxes[:, 1] - 1 + boxes[:, 3]) / 2 * sy])
    np.testing.assert_allclose(got[inner], centres[inner], rtol=1e-5, atol=1e-3)


def make_images(rng, shapes):
    return [rng.integers(0, 256, size=(*s, 3), dtype=np.uint8) for s in shapes]


def test_store_round_trip_batches_and_resume(tmp_path):
    rng = np.random.default_rng(0)
    shapes = [(60, 80), (120, 160), (80, 60), (45, 60), (90, 120)]  # 4:3 ones share an input size
    images = make_images(rng, shapes)
    windows = [image_boxes(rng, h, w, 7) for h, w in shapes]
    backbone = CoordinateBackbone(8, 3.5, extra=3)
    single = CnnFeatures(backbone, max_side=64, output_size=(2, 3), verbose=0)
    direct = [single(im, w) for im, w in zip(images, windows)]
    assert direct[0].shape == (7, 5 * 6) and single.n_features is None
    np.testing.assert_allclose(np.linalg.norm(direct[0], axis=1), 1.0, rtol=1e-6)
    batched = CnnFeatures(backbone, max_side=64, output_size=(2, 3), batch_size=4, verbose=0)
    out = dict(batched.iter_features(images, windows))
    assert sorted(out) == list(range(5))
    calls = backbone.calls
    for i in range(5):
        np.testing.assert_allclose(out[i], direct[i], rtol=1e-6, atol=1e-7)
    store = WindowStore.build(tmp_path / "s", images, windows, batched)
    assert store.features.dtype == np.float32 and store.n_features == 30
    reopened = WindowStore.open(tmp_path / "s")
    for i in range(5):
        np.testing.assert_allclose(reopened.image_features(i), direct[i], rtol=1e-6, atol=1e-7)
        assert reopened.image_features(i).dtype == np.float32
    # a probe of the feature size (image 0, kept), then one pass per input size for the other four:
    # (120, 160), (45, 60), (90, 120) share the 48 x 64 input, (80, 60) has 64 x 48
    assert backbone.calls - calls == 1 + 2
    calls = backbone.calls
    WindowStore.build(tmp_path / "s", images, windows, batched)  # complete: nothing recomputed
    assert backbone.calls == calls
    # two joblib workers, image by image
    parallel = WindowStore.build(tmp_path / "p", images, windows, batched, n_jobs=2)
    np.testing.assert_allclose(np.asarray(parallel.features), np.asarray(reopened.features),
                               rtol=1e-6, atol=1e-7)
    listed = extract_features(images, windows, batched)
    for i in range(5):
        np.testing.assert_allclose(listed[i], direct[i], rtol=1e-6, atol=1e-7)


def test_progress_bar_follows_verbose(capsys):
    rng = np.random.default_rng(1)
    images = make_images(rng, [(40, 40), (40, 40)])
    windows = [image_boxes(rng, 40, 40, 3) for _ in images]
    for verbose in (0, 1):
        extractor = CnnFeatures(CoordinateBackbone(8), max_side=32, verbose=verbose)
        assert len(list(extractor.iter_features(images, windows))) == 2
        err = capsys.readouterr().err
        assert ("CNN features" in err) == bool(verbose)


class WrongShape(torch.nn.Module):
    stride = 8

    def __init__(self, result):
        super().__init__()
        self.result = result

    def forward(self, x):
        n, _, h, w = x.shape
        if self.result == "tuple":
            return (torch.zeros(n, 2, h // 8, w // 8),)
        if self.result == "integer":
            return torch.zeros(n, 2, h // 8, w // 8, dtype=torch.int64)
        if self.result == "3d":
            return torch.zeros(2, h // 8, w // 8)
        return torch.zeros(n, 2, h // 8 + 1, w // 8)


def test_bad_input(tmp_path):
    image = np.zeros((40, 50, 3), dtype=np.uint8)
    ok = CnnFeatures(CoordinateBackbone(8), max_side=32, verbose=0)
    for boxes, match in [([[0, 1, 10, 10]], "not inside the 50 x 40 image"),
                         ([[1, 1, 51, 10]], "not inside"), ([[1, 1, 10, 40.5]], "not inside"),
                         ([[5, 1, 4, 10]], "x2 < x1"), ([[1, 1, np.nan, 10]], "non-finite"),
                         ([[1, 1, 10]], r"shape \(n, 4\)")]:
        with pytest.raises(ValueError, match=match):
            ok(image, boxes)
    with pytest.raises(ValueError, match="image 1: boxes"):
        list(ok.iter_features([image, image], [[[1, 1, 5, 5]], [[1, 1, 60, 5]]]))
    with pytest.raises(ValueError, match="2 images but 1 window arrays"):
        list(ok.iter_features([image, image], [[[1, 1, 5, 5]]]))
    for bad, match in [(np.zeros((2, 40, 50, 3)), "image must have shape"),
                       (np.zeros((0, 50, 3)), "image is empty"), (np.full((40, 50, 3), 2.0), r"\[0, 1\]"),
                       (tmp_path / "missing.jpg", "cannot read image")]:
        with pytest.raises(ValueError, match=match):
            ok(bad, [[1, 1, 5, 5]])
    for result in ("shape", "tuple", "3d"):
        with pytest.raises(ValueError, match="backbone returned .* expected a tensor"):
            CnnFeatures(WrongShape(result), max_side=32)(image, [[1, 1, 5, 5]])
    with pytest.raises(ValueError, match="floating point"):
        CnnFeatures(WrongShape("integer"), max_side=32)(image, [[1, 1, 5, 5]])
    with pytest.raises(ValueError, match="backbone must be a torch.nn.Module"):
        CnnFeatures(lambda x: x)
    with pytest.raises(ValueError, match="give the backbone's stride"):
        CnnFeatures(torch.nn.Identity())
    with pytest.raises(ValueError, match="must be a multiple of the stride 8"):
        CnnFeatures(CoordinateBackbone(8), max_side=30)
    for kwargs, match in [({"output_size": 0}, "output_size"), ({"batch_size": 0}, "batch_size"),
                          ({"std": (1, 0, 1)}, "std must be positive"), ({"mean": (1, 2)}, "mean must be"),
                          ({"stride": 2.5}, "stride must be"), ({"offset": np.inf}, "offset must be a finite"),
                          ({"offset": "1"}, "offset must be a finite"),
                          ({"sampling_ratio": 1.5}, "sampling_ratio")]:
        with pytest.raises(ValueError, match=match):
            CnnFeatures(CoordinateBackbone(8), **{"max_side": 32, **kwargs})


def test_default_extractor_description_and_pickle():
    extractor = CnnFeatures(verbose=0)
    assert extractor.n_features == 112 * 16 and extractor.stride == 16 and extractor.offset == 7.5
    assert extractor.output_size == (4, 4) and extractor.max_side == 448
    assert repr(extractor).startswith("CnnFeatures(backbone=efficientnet_lite0(stage='stage5'), stride=16")
    assert len(pickle.dumps(extractor)) < 2000  # the weights are loaded in each process, not pickled
    clone = pickle.loads(pickle.dumps(extractor))
    assert repr(clone) == repr(extractor)
