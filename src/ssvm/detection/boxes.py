"""Box geometry: intersection over union and greedy non-maximum suppression.

Boxes are ``(x1, y1, x2, y2)`` in VOC pixel convention: 1-based, both ends inclusive, so a box
spans ``x2 - x1 + 1`` pixels horizontally (as in the VOC devkit's evaluation code).
"""

from __future__ import annotations

import numpy as np

__all__ = ["as_boxes", "box_areas", "iou", "nms"]


def as_boxes(boxes, name="boxes"):
    """Validate boxes → float64 array of shape (n, 4).

    Parameters
    ----------
    boxes : array-like, shape (n, 4)
    name : str
        Used in error messages.

    Returns
    -------
    ndarray of float64, shape (n, 4)

    Raises
    ------
    ValueError
        If the shape is wrong, a coordinate is not finite, or ``x2 < x1`` / ``y2 < y1``.
    """
    boxes = np.asarray(boxes, dtype=np.float64)
    if boxes.ndim == 1 and boxes.size == 0:
        boxes = boxes.reshape(0, 4)
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise ValueError(f"{name} must have shape (n, 4), got {boxes.shape}")
    if not np.isfinite(boxes).all():
        raise ValueError(f"{name} contain non-finite coordinates")
    bad = np.flatnonzero((boxes[:, 2] < boxes[:, 0]) | (boxes[:, 3] < boxes[:, 1]))
    if bad.size:
        raise ValueError(f"{name}[{bad[0]}] = {boxes[bad[0]].tolist()} has x2 < x1 or y2 < y1")
    return boxes


def box_areas(boxes):
    """Areas of boxes in pixels, ``(x2 - x1 + 1) * (y2 - y1 + 1)``.

    Parameters
    ----------
    boxes : array-like, shape (n, 4)

    Returns
    -------
    ndarray of float64, shape (n,)
    """
    boxes = as_boxes(boxes)
    return (boxes[:, 2] - boxes[:, 0] + 1.0) * (boxes[:, 3] - boxes[:, 1] + 1.0)


def _iou_unchecked(a, b):
    """Pairwise IoU of already validated float arrays a (n, 4) and b (m, 4)."""
    iw = np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0]) + 1.0
    ih = np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1]) + 1.0
    inter = np.clip(iw, 0.0, None) * np.clip(ih, 0.0, None)
    area_a = (a[:, 2] - a[:, 0] + 1.0) * (a[:, 3] - a[:, 1] + 1.0)
    area_b = (b[:, 2] - b[:, 0] + 1.0) * (b[:, 3] - b[:, 1] + 1.0)
    return inter / (area_a[:, None] + area_b[None, :] - inter)


def iou(boxes_a, boxes_b):
    """Pairwise intersection over union.

    Parameters
    ----------
    boxes_a : array-like, shape (n, 4)
    boxes_b : array-like, shape (m, 4)

    Returns
    -------
    ndarray of float64, shape (n, m)
        ``|a ∩ b| / |a ∪ b|`` with VOC inclusive pixel areas (a one-pixel box has area 1).
    """
    return _iou_unchecked(as_boxes(boxes_a, "boxes_a"), as_boxes(boxes_b, "boxes_b"))


def nms(boxes, scores, iou_threshold=0.3):
    """Greedy non-maximum suppression.

    Repeatedly keeps the highest-scoring remaining box and discards every remaining box whose IoU
    with it exceeds ``iou_threshold``. Equal scores are taken in index order, so the result is
    deterministic.

    Parameters
    ----------
    boxes : array-like, shape (n, 4)
    scores : array-like, shape (n,)
    iou_threshold : float, default=0.3
        Boxes overlapping a kept box by more than this are suppressed (0.3 is the usual value for
        detection with windows, as in Felzenszwalb et al. / the VOC baselines).

    Returns
    -------
    keep : ndarray of int64
        Indices of the kept boxes, by decreasing score.

    Raises
    ------
    ValueError
        On mismatched lengths, non-finite scores, or a threshold outside [0, 1].
    """
    boxes = as_boxes(boxes)
    scores = np.asarray(scores, dtype=np.float64)
    if scores.shape != (boxes.shape[0],):
        raise ValueError(f"scores must have shape ({boxes.shape[0]},), got {scores.shape}")
    if not np.isfinite(scores).all():
        raise ValueError("scores contain non-finite values")
    if not 0.0 <= iou_threshold <= 1.0:
        raise ValueError(f"iou_threshold must be in [0, 1], got {iou_threshold}")
    order = np.argsort(-scores, kind="stable")
    keep = []
    while order.size:
        best = order[0]
        keep.append(best)
        rest = order[1:]
        overlap = _iou_unchecked(boxes[best : best + 1], boxes[rest])[0]
        order = rest[overlap <= iou_threshold]
    return np.asarray(keep, dtype=np.int64)
