"""RoIAlign in plain torch, and the map from VOC boxes to network-input coordinates.

:func:`roi_align` follows Mask R-CNN's RoIAlign (He et al. 2017) exactly as torchvision's
``roi_align(..., aligned=True)`` defines it: a box ``(x1, y1, x2, y2)`` in continuous input
coordinates is scaled by ``spatial_scale`` and shifted by half a cell, so that feature cell ``j``
has its centre at feature coordinate ``j`` (input coordinate ``(j + 0.5) / spatial_scale``). Each
of the ``out_h × out_w`` bins of the box averages ``gh × gw`` regularly spaced bilinear samples of
the feature map (``gh = ceil(box height / out_h)`` in cells when ``sampling_ratio <= 0``); a
sample more than one cell outside the map is zero, one within a cell of it is clamped to the edge.

Bilinear interpolation is separable and the samples of a bin form a grid, so bin ``(p, q)`` of a
box is ``Σ_yx A_y[p, y] · A_x[q, x] · F[:, y, x]`` with two small weight matrices (``A_y[p, y]`` =
the mean over the bin's sample rows of their bilinear weight on feature row ``y``). Pooling
thousands of boxes is then one matrix product per image — (boxes · bins) × cells times
cells × channels — with no per-box loop; the tests compare it with a slow twin that samples every
point by hand.
"""

from __future__ import annotations

import numpy as np
import torch

from .boxes import as_boxes

__all__ = ["roi_align", "voc_to_input_boxes"]

# entries of the (boxes · bins, feature cells) weight matrix built at a time
_BLOCK_ELEMENTS = 1 << 22


def voc_to_input_boxes(boxes, image_shape, input_shape):
    """VOC pixel boxes of an image → continuous coordinates of its resized copy.

    A VOC box ``(x1, y1, x2, y2)`` (1-based, inclusive) covers the continuous extent
    ``[x1 - 1, x2] × [y1 - 1, y2]`` of the ``W × H`` image; resizing the image to
    ``W' × H'`` scales that extent by ``W'/W`` and ``H'/H``.

    Parameters
    ----------
    boxes : array-like, shape (m, 4)
    image_shape : (int, int)
        ``(H, W)`` of the original image.
    input_shape : (int, int)
        ``(H', W')`` of the resized image.

    Returns
    -------
    ndarray of float64, shape (m, 4)
        ``(x1, y1, x2, y2)`` in continuous coordinates of the resized image (the whole image is
        ``(0, 0, W', H')``).
    """
    boxes = as_boxes(boxes)
    sy = input_shape[0] / image_shape[0]
    sx = input_shape[1] / image_shape[1]
    return np.column_stack([(boxes[:, 0] - 1.0) * sx, (boxes[:, 1] - 1.0) * sy,
                            boxes[:, 2] * sx, boxes[:, 3] * sy])


def _axis_weights(start, extent, n_bins, grid, length, dtype):
    """Pooling weights along one axis: (k, n_bins, length), row p = mean bilinear weight of bin p."""
    k = start.shape[0]
    n_samples = int(grid.max()) if k else 1
    bin_size = extent / n_bins
    sample = torch.arange(n_samples, dtype=dtype)
    # positions (k, n_bins, n_samples): bin p's samples at (p + (i + 0.5) / g) * bin_size past start
    pos = (start[:, None, None] + torch.arange(n_bins, dtype=dtype)[None, :, None] * bin_size[:, None, None]
           + (sample[None, None, :] + 0.5) * (bin_size / grid)[:, None, None])
    used = (sample[None, :] < grid[:, None])[:, None, :]
    inside = (pos >= -1.0) & (pos <= length)
    pos = pos.clamp(min=0.0)
    low = pos.floor().long()
    at_end = low >= length - 1
    low = torch.where(at_end, torch.full_like(low, length - 1), low)
    high = torch.where(at_end, low, low + 1)
    frac = torch.where(at_end, torch.zeros_like(pos), pos - low.to(dtype))
    keep = (inside & used).to(dtype) / grid[:, None, None]
    weights = torch.zeros(k, n_bins, length, dtype=dtype)
    weights.scatter_add_(2, low, (1.0 - frac) * keep)
    weights.scatter_add_(2, high, frac * keep)
    return weights


def check_output_size(output_size):
    """``output_size`` as a pair of positive ints, or a ValueError."""
    size = (output_size, output_size) if isinstance(output_size, (int, np.integer)) else tuple(output_size)
    if len(size) != 2 or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 1
                                 for v in size):
        raise ValueError(f"output_size must be a positive int or a pair of them, got {output_size!r}")
    return int(size[0]), int(size[1])


def roi_align(features, boxes, output_size, *, spatial_scale=1.0, sampling_ratio=0, box_image=None):
    """RoIAlign (Mask R-CNN, ``aligned=True``) of boxes on a batch of feature maps.

    Parameters
    ----------
    features : torch.Tensor, shape (N, C, H, W) or (C, H, W)
    boxes : array-like or torch.Tensor, shape (K, 4)
        ``(x1, y1, x2, y2)`` in continuous input coordinates (``x2 >= x1``, ``y2 >= y1``).
    output_size : int or (int, int)
        ``(out_h, out_w)`` bins per box.
    spatial_scale : float, default=1.0
        Feature cells per input unit (``1 / stride``).
    sampling_ratio : int, default=0
        Samples per bin along each axis; ``<= 0`` takes ``ceil(bin size in cells)`` per box
        (at least 1), as torchvision does.
    box_image : array-like of int, shape (K,), optional
        Index in the batch of each box's feature map (default: all 0).

    Returns
    -------
    torch.Tensor, shape (K, C, out_h, out_w)
        In the dtype of ``features``. Identical to torchvision's ``roi_align(aligned=True)`` up to
        rounding, except that a box of zero extent samples its point instead of returning 0.

    Raises
    ------
    ValueError
        On a wrong feature or box shape, non-finite boxes, ``x2 < x1``, a bad ``output_size`` or
        ``spatial_scale``, or a ``box_image`` out of range.
    """
    if not isinstance(features, torch.Tensor) or features.ndim not in (3, 4):
        raise ValueError("features must be a torch tensor of shape (N, C, H, W) or (C, H, W)")
    if features.ndim == 3:
        features = features[None]
    if not features.is_floating_point():
        raise ValueError(f"features must be floating point, got {features.dtype}")
    out_h, out_w = check_output_size(output_size)
    if not (np.isfinite(spatial_scale) and spatial_scale > 0):
        raise ValueError(f"spatial_scale must be positive and finite, got {spatial_scale!r}")
    boxes_np = as_boxes(boxes.detach().cpu().numpy() if isinstance(boxes, torch.Tensor) else boxes)
    n_images, channels, height, width = features.shape
    box_image = (np.zeros(len(boxes_np), dtype=np.int64) if box_image is None
                 else np.asarray(box_image, dtype=np.int64).reshape(-1))
    if box_image.shape != (len(boxes_np),) or (box_image.size and
                                               (box_image.min() < 0 or box_image.max() >= n_images)):
        raise ValueError(f"box_image must hold one index in [0, {n_images}) per box")
    dtype = features.dtype
    out = features.new_zeros((len(boxes_np), channels, out_h, out_w))
    scaled = torch.as_tensor(boxes_np * spatial_scale - 0.5, dtype=dtype)
    extent = (scaled[:, 2:] - scaled[:, :2]).clamp(min=0.0)  # (K, 2): width, height in cells
    if sampling_ratio > 0:
        grid = torch.full_like(extent, float(sampling_ratio))
    else:
        grid = torch.ceil(extent / torch.tensor([out_w, out_h], dtype=dtype)).clamp(min=1.0)
    block = max(1, _BLOCK_ELEMENTS // max(1, out_h * out_w * height * width))
    for n in range(n_images):
        rows = np.flatnonzero(box_image == n)
        flat = features[n].reshape(channels, height * width)
        for start in range(0, rows.size, block):
            idx = torch.as_tensor(rows[start:start + block])
            ay = _axis_weights(scaled[idx, 1], extent[idx, 1], out_h, grid[idx, 1], height, dtype)
            ax = _axis_weights(scaled[idx, 0], extent[idx, 0], out_w, grid[idx, 0], width, dtype)
            k = idx.numel()
            # weight of feature cell (y, x) in bin (p, q) of box i: ay[i, p, y] · ax[i, q, x]
            weights = (ay[:, :, None, :, None] * ax[:, None, :, None, :]).reshape(k * out_h * out_w, -1)
            pooled = weights @ flat.T  # (k · out_h · out_w, C)
            out[idx] = pooled.reshape(k, out_h, out_w, channels).permute(0, 3, 1, 2)
    return out
