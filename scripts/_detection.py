"""Shared pieces of the detection scripts: window-feature views, window labels, ground-truth box
features, and the evaluation of per-window scores (``train_latent_detection.py``,
``exp_detection_losses.py``).

A :class:`ssvm.detection.WindowStore` holds appearance features only; the window geometry
(:func:`ssvm.detection.features.window_geometry`) is appended lazily by :class:`FeatureView` with a
scale that validation chooses, so one store serves every geometry scale.
"""

from __future__ import annotations

import numpy as np

__all__ = ["FeatureView", "box_geometry", "evaluate_scores", "max_iou", "proposal_recall", "store_geometry",
           "view"]


class FeatureView:
    """Rows of a (memory-mapped) 2-D array with extra in-memory columns, read only when indexed.

    ``view[key]`` is ``hstack([array[rows[key]], extra[rows[key]]])``: a lazy subset of images and
    the windows' scaled geometry, without copying the store.

    Parameters
    ----------
    array : array-like of shape (n, d)
    rows : ndarray of int, optional
        Rows of ``array`` in the view (default all).
    extra : ndarray of shape (n, k), optional
        Columns appended to every row (indexed like ``array``).
    """

    def __init__(self, array, rows=None, extra=None):
        self.array = array
        self.rows = np.arange(array.shape[0]) if rows is None else np.asarray(rows, dtype=np.int64)
        self.extra = extra

    @property
    def shape(self):
        return (self.rows.size, self.array.shape[1] + (0 if self.extra is None else self.extra.shape[1]))

    def __getitem__(self, key):
        rows = self.rows[key]
        if isinstance(key, slice) and rows.size and rows[-1] - rows[0] == rows.size - 1:
            part = np.asarray(self.array[rows[0]:rows[-1] + 1])  # contiguous: a plain slice
        else:
            part = np.asarray(self.array[rows])
        if self.extra is None:
            return part
        return np.hstack([part, self.extra[rows].astype(part.dtype)])


def store_geometry(store):
    """Geometry of every window of a store relative to its image (row 0 of a bag is the whole image).

    Returns
    -------
    ndarray of float64, shape (n_windows, 5)
    """
    from ssvm.detection.features import window_geometry

    out = np.empty((store.n_windows, 5))
    for i in range(store.n_images):
        start, stop = store.offsets[i], store.offsets[i + 1]
        width, height = store.boxes[start, 2], store.boxes[start, 3]
        out[start:stop] = window_geometry(store.boxes[start:stop], int(height), int(width))
    return out


def box_geometry(boxes, sizes):
    """Geometry of boxes given with their image's (height, width), one row each."""
    from ssvm.detection.features import window_geometry

    return np.vstack([window_geometry(b[None, :], int(h), int(w)) for b, (h, w) in zip(boxes, sizes)]) \
        if len(boxes) else np.empty((0, 5))


def view(store_features, geometry, scale, rows=None):
    """A :class:`FeatureView` of a store's windows with ``scale`` x geometry (none when 0)."""
    return FeatureView(store_features, rows, scale * geometry if scale > 0 else None)


def max_iou(store, dataset, name, include_difficult=True):
    """Per window of a store, its largest IoU with a box of class ``name`` (by default difficult
    boxes too).

    Returns
    -------
    ndarray of float64, shape (n_windows,)
        0 for the windows of images without a box of the class.
    """
    from ssvm.detection import iou

    boxes, difficult = dataset.class_boxes(name)
    out = np.zeros(store.n_windows)
    for i in range(store.n_images):
        gt = boxes[i] if include_difficult else boxes[i][~difficult[i]]
        if len(gt):
            start, stop = store.offsets[i], store.offsets[i + 1]
            out[start:stop] = iou(store.boxes[start:stop], gt).max(axis=1)
    return out


def evaluate_scores(detections, dataset, name, images=None):
    """Area and 11-point VOC detection AP, and image-level AP, of per-image detections of a class.

    Parameters
    ----------
    detections : list of (boxes, scores)
        Per image (after NMS), e.g. from :func:`ssvm.detection.nms_per_image`.
    dataset : ssvm.datasets.VOCDataset
    name : str
    images : ndarray of int, optional
        The dataset's images the detections belong to (default all).

    Returns
    -------
    (float, float, float)
        Area AP, 11-point AP, image-level AP (images ranked by their best detection; NaN without a
        positive image).
    """
    from ssvm.detection import evaluate_detections
    from ssvm.metrics import mean_average_precision

    gt_boxes, gt_difficult = dataset.class_boxes(name)
    labels = dataset.image_labels(name)
    if images is not None:
        gt_boxes, gt_difficult = [gt_boxes[i] for i in images], [gt_difficult[i] for i in images]
        labels = labels[images]
    area = evaluate_detections(detections, gt_boxes, gt_difficult, 0.5, use_07_metric=False).ap
    eleven = evaluate_detections(detections, gt_boxes, gt_difficult, 0.5, use_07_metric=True).ap
    best = np.array([scores.max() if len(scores) else -np.inf for _, scores in detections])
    image_ap = mean_average_precision(labels, best) if labels.any() else float("nan")
    return area, eleven, image_ap


def proposal_recall(store, dataset, name):
    """Share of the non-difficult boxes of class ``name`` that a window of the store overlaps by
    IoU >= 0.5 (the ceiling of CorLoc and of detection recall); NaN without such a box."""
    from ssvm.detection import iou

    boxes, difficult = dataset.class_boxes(name)
    hits, total = 0, 0
    for i in range(store.n_images):
        gt = boxes[i][~difficult[i]]
        if len(gt):
            windows = store.boxes[store.offsets[i]:store.offsets[i + 1]]
            hits += int((iou(gt, windows).max(axis=1) >= 0.5).sum())
            total += len(gt)
    return hits / total if total else float("nan")
