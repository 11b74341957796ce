"""CNN window features: one forward pass per image, every window pooled from its feature map.

As in Fast R-CNN, the network sees each image once; each window is then RoIAligned
(:func:`ssvm.detection.roi.roi_align`) from the feature map into a fixed ``out_h × out_w`` grid of
cells, flattened to a fixed-length float32 vector, and L2-normalised. 2,000 windows per image cost
one matrix product on top of the forward pass, instead of 2,000 forward passes over crops.

:class:`CnnFeatures` is a window feature extractor like :class:`~ssvm.detection.HogColorFeatures`
(``f(image, boxes) -> (m, d)``), so :class:`~ssvm.detection.WindowStore` and
:func:`~ssvm.detection.extract_features` take it as is: with one job they use its
:meth:`CnnFeatures.iter_features` (images of one input size batched, a progress bar) in the main
process; with ``n_jobs > 1`` joblib workers call it image by image, each loading the default
network once and running torch on one thread (on a shared machine several single-threaded
processes are much faster than one multi-threaded torch, whose threads wait for each other).
"""

from __future__ import annotations

import functools

import numpy as np
import torch
from tqdm.auto import tqdm

from .backbones import IMAGENET_MEAN, IMAGENET_STD, STAGES, efficientnet_lite0, stage_offset
from .boxes import as_boxes
from .images import import_cv2, read_image
from .roi import check_output_size, roi_align, voc_to_input_boxes

__all__ = ["CnnFeatures"]

#: The default features: EfficientNet-Lite0's stage 5 (112 channels, stride 16) on inputs whose
#: longer side is 448 pixels, each window RoIAligned into 4 × 4 cells (1,792 numbers), the best of
#: the candidates ``scripts/exp_cnn_features.py`` compares on the training images.
DEFAULT_STAGE, DEFAULT_MAX_SIDE, DEFAULT_GRID = "stage5", 448, 4


def _positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _channel_triple(name, value):
    triple = tuple(float(v) for v in np.ravel(value))
    if len(triple) != 3 or not all(np.isfinite(triple)):
        raise ValueError(f"{name} must be three finite numbers (RGB), got {value!r}")
    return triple


class CnnFeatures:
    """Window features pooled from a CNN's feature map (RoIAlign), computed once per image.

    Each image is resized so that its longer side is ``max_side`` pixels and both sides are
    multiples of the backbone's stride (the shorter one rounded, so the aspect ratio changes by at
    most half a stride), normalised with ``mean`` / ``std``, and passed through ``backbone`` once.
    Every window is mapped to feature coordinates (:func:`~ssvm.detection.roi.voc_to_input_boxes`,
    the backbone's ``offset``, ``1 / stride``), RoIAligned into ``output_size`` cells, flattened
    (cell-major: the channels of cell (0, 0), then of cell (0, 1), ...), and L2-normalised.

    Parameters
    ----------
    backbone : torch.nn.Module, optional
        Maps a float32 batch ``(N, 3, H, W)`` (sides multiples of ``stride``) to a feature map
        ``(N, C, H / stride, W / stride)``. Default: the ImageNet EfficientNet-Lite0 cut at
        :data:`DEFAULT_STAGE` (:func:`~ssvm.detection.backbones.efficientnet_lite0`), loaded on
        first use in each process.
    stride : int, optional
        Input pixels per feature cell; default ``backbone.stride``.
    offset : float, optional
        Input pixels by which the centre of feature cell ``j`` lies past ``(j + ½)·stride``;
        default ``backbone.offset`` if it has one, else 0.
    mean, std : three floats, optional
        RGB normalisation on the 0-1 scale; default ``backbone.mean`` / ``backbone.std`` if present,
        else ImageNet's.
    max_side : int, default=448
        Longer side of the network input, a multiple of ``stride``.
    output_size : int or (int, int), default=4
        RoIAlign cells per window; the vector has ``C · out_h · out_w`` entries.
    sampling_ratio : int, default=0
        Bilinear samples per cell and axis; 0 = ``ceil(cell size in feature cells)`` per window.
    normalize : bool, default=True
        Scale each window's vector to unit L2 norm (an all-zero vector stays zero).
    batch_size : int, default=1
        Images of equal input size per forward pass in :meth:`iter_features`.
    verbose : int, default=1
        0 turns :meth:`iter_features`'s progress bar off.

    Raises
    ------
    ValueError
        On a backbone that is not a torch module, a missing or bad stride, or bad parameters.
    """

    def __init__(self, backbone=None, *, stride=None, offset=None, mean=None, std=None,
                 max_side=DEFAULT_MAX_SIDE, output_size=DEFAULT_GRID, sampling_ratio=0, normalize=True,
                 batch_size=1, verbose=1):
        if backbone is not None and not isinstance(backbone, torch.nn.Module):
            raise ValueError(f"backbone must be a torch.nn.Module, got {type(backbone).__name__}")
        default = backbone is None
        if stride is None:
            stride = STAGES[DEFAULT_STAGE][2] if default else getattr(backbone, "stride", None)
            if stride is None:
                raise ValueError("give the backbone's stride (input pixels per feature-map cell): "
                                 "CnnFeatures(module, stride=...)")
        self.backbone = backbone
        self.stride = _positive_int("stride", stride)
        if offset is None:
            offset = (stage_offset(DEFAULT_STAGE) if default
                      else getattr(backbone, "offset", 0.0))
        if isinstance(offset, bool) or not isinstance(offset, (int, float, np.integer, np.floating)) \
                or not np.isfinite(offset):
            raise ValueError(f"offset must be a finite number of input pixels, got {offset!r}")
        self.offset = float(offset)
        self.mean = _channel_triple("mean", getattr(backbone, "mean", IMAGENET_MEAN) if mean is None else mean)
        self.std = _channel_triple("std", getattr(backbone, "std", IMAGENET_STD) if std is None else std)
        if min(self.std) <= 0:
            raise ValueError(f"std must be positive, got {self.std}")
        self.max_side = _positive_int("max_side", max_side)
        if self.max_side % self.stride:
            raise ValueError(f"max_side={max_side} must be a multiple of the stride {self.stride}")
        self.output_size = check_output_size(output_size)
        if isinstance(sampling_ratio, bool) or not isinstance(sampling_ratio, (int, np.integer)):
            raise ValueError(f"sampling_ratio must be an integer, got {sampling_ratio!r}")
        self.sampling_ratio = int(sampling_ratio)
        self.normalize = bool(normalize)
        self.batch_size = _positive_int("batch_size", batch_size)
        self.verbose = verbose

    # ------------------------------------------------------------------ description
    def __repr__(self):
        backbone = f"efficientnet_lite0(stage={DEFAULT_STAGE!r})" if self.backbone is None \
            else repr(self.backbone)
        return (f"CnnFeatures(backbone={backbone}, stride={self.stride}, offset={self.offset:g}, "
                f"mean={self.mean}, std={self.std}, max_side={self.max_side}, "
                f"output_size={self.output_size}, sampling_ratio={self.sampling_ratio}, "
                f"normalize={self.normalize})")

    @property
    def module(self):
        """The backbone module in eval mode (the default network: loaded once per process)."""
        return (_default_backbone() if self.backbone is None else self.backbone).eval()

    @property
    def n_features(self):
        """Length of a window's vector (None if the backbone does not state ``out_channels``)."""
        channels = STAGES[DEFAULT_STAGE][1] if self.backbone is None \
            else getattr(self.backbone, "out_channels", None)
        return None if channels is None else int(channels) * self.output_size[0] * self.output_size[1]

    # ------------------------------------------------------------------ steps
    def input_shape(self, height, width):
        """Network input ``(H', W')`` for a ``height × width`` image: longer side ``max_side``."""
        scale = self.max_side / max(height, width)
        return tuple(max(self.stride, round(side * scale / self.stride) * self.stride)
                     for side in (height, width))

    def preprocess(self, image):
        """An image (path or array) → normalised float32 tensor (3, H', W') of :meth:`input_shape`."""
        cv2 = import_cv2()
        image = read_image(image)
        height, width = image.shape[:2]
        size = self.input_shape(height, width)
        shrink = size[0] * size[1] < height * width
        resized = cv2.resize(image, (size[1], size[0]),
                             interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)
        x = (resized.astype(np.float32) / 255.0 - np.float32(self.mean)) / np.float32(self.std)
        return torch.from_numpy(np.ascontiguousarray(x.transpose(2, 0, 1)))

    def feature_maps(self, batch):
        """Backbone output for a batch (N, 3, H', W'), checked to be (N, C, H'/stride, W'/stride)."""
        with torch.inference_mode():
            maps = self.module(batch)
        n, _, height, width = batch.shape
        expected = (n, height // self.stride, width // self.stride)
        if not isinstance(maps, torch.Tensor) or maps.ndim != 4 or \
                (maps.shape[0], maps.shape[2], maps.shape[3]) != expected:
            got = tuple(maps.shape) if isinstance(maps, torch.Tensor) else type(maps).__name__
            raise ValueError(
                f"backbone returned {got} for input {tuple(batch.shape)}; expected a tensor "
                f"(N, C, H/stride, W/stride) = ({expected[0]}, C, {expected[1]}, {expected[2]}) "
                f"with stride={self.stride}: check the stride given to CnnFeatures")
        if not maps.is_floating_point():
            raise ValueError(f"backbone returned a {maps.dtype} feature map; expected floating point")
        return maps

    def pool(self, feature_map, boxes, image_shape, input_shape):
        """Window vectors (m, d) float32 from one image's feature map (C, h, w)."""
        feature_map = feature_map.float()
        shifted = voc_to_input_boxes(boxes, image_shape, input_shape) - self.offset
        pooled = roi_align(feature_map, shifted, self.output_size, spatial_scale=1.0 / self.stride,
                           sampling_ratio=self.sampling_ratio)
        vectors = pooled.permute(0, 2, 3, 1).reshape(len(boxes), -1)
        if self.normalize:
            vectors = vectors / vectors.norm(dim=1, keepdim=True).clamp(min=1e-12)
        vectors = vectors.numpy()
        if not np.isfinite(vectors).all():
            raise ValueError("the backbone's feature map has non-finite values")
        return vectors.astype(np.float32, copy=False)

    # ------------------------------------------------------------------ extraction
    def __call__(self, image, boxes):
        """Features of the windows of one image.

        Parameters
        ----------
        image : str, path-like or ndarray
            A file path or an RGB / greyscale array.
        boxes : array-like, shape (m, 4)
            Windows in the image's VOC pixel coordinates, inside the image.

        Returns
        -------
        ndarray of float32, shape (m, n_features)
        """
        image = read_image(image)
        boxes = _checked_boxes(boxes, image.shape)
        x = self.preprocess(image)
        maps = self.feature_maps(x[None])
        return self.pool(maps[0], boxes, image.shape[:2], tuple(x.shape[1:]))

    def iter_features(self, images, windows):
        """Features of many images' windows, batching images of equal input size.

        Images are read ``4 × batch_size`` at a time, grouped by :meth:`input_shape`, and passed
        through the network ``batch_size`` at a time.

        Parameters
        ----------
        images : sequence of str, path-like or ndarray
        windows : sequence of array-like, shape (m_i, 4)

        Yields
        ------
        index : int
            Position of the image in ``images`` (images of a group come out together, so not
            necessarily in order).
        features : ndarray of float32, shape (m_i, n_features)
        """
        images, windows = list(images), list(windows)
        if len(images) != len(windows):
            raise ValueError(f"{len(images)} images but {len(windows)} window arrays")
        chunk = 4 * self.batch_size
        with tqdm(total=len(images), desc="CNN features", unit="img", disable=not self.verbose) as bar:
            for start in range(0, len(images), chunk):
                groups = {}
                for i in range(start, min(start + chunk, len(images))):
                    rgb = read_image(images[i])
                    try:
                        boxes = _checked_boxes(windows[i], rgb.shape)
                    except ValueError as exc:
                        raise ValueError(f"image {i}: {exc}") from None
                    x = self.preprocess(rgb)
                    groups.setdefault(tuple(x.shape[1:]), []).append((i, rgb.shape[:2], boxes, x))
                for shape, members in groups.items():
                    for b in range(0, len(members), self.batch_size):
                        part = members[b:b + self.batch_size]
                        maps = self.feature_maps(torch.stack([m[3] for m in part]))
                        for (i, image_shape, boxes, _), fmap in zip(part, maps):
                            yield i, self.pool(fmap, boxes, image_shape, shape)
                            bar.update(1)


@functools.lru_cache(maxsize=1)
def _default_backbone():
    """The default network, loaded on first use in each process (workers get no pickled weights)."""
    return efficientnet_lite0(DEFAULT_STAGE)


def _checked_boxes(boxes, image_shape):
    """Boxes as float64 (m, 4), each inside the ``H × W`` image (VOC: 1 <= x1 <= x2 <= W)."""
    boxes = as_boxes(boxes)
    height, width = image_shape[:2]
    tol = 1e-6 * max(height, width)
    outside = np.flatnonzero((boxes[:, 0] < 1 - tol) | (boxes[:, 1] < 1 - tol)
                             | (boxes[:, 2] > width + tol) | (boxes[:, 3] > height + tol))
    if outside.size:
        raise ValueError(
            f"boxes[{outside[0]}] = {boxes[outside[0]].tolist()} is not inside the {width} x {height} "
            f"image (VOC boxes need 1 <= x1 <= x2 <= {width}, 1 <= y1 <= y2 <= {height}); clip them")
    return boxes
