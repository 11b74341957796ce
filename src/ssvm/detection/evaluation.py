"""PASCAL VOC detection average precision (the devkit's rules, both the 2007 11-point and area AP)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .boxes import _iou_unchecked, as_boxes

__all__ = ["DetectionEvaluation", "voc_ap", "evaluate_detections"]


def voc_ap(recall, precision, use_07_metric=False):
    """Average precision from a precision–recall curve, as the VOC devkit computes it.

    Parameters
    ----------
    recall : array-like, shape (k,)
        Non-decreasing recall after each ranked detection.
    precision : array-like, shape (k,)
        Precision after each ranked detection.
    use_07_metric : bool, default=False
        True: the VOC 2007 11-point AP, the mean over t ∈ {0, 0.1, …, 1} of the largest precision
        at recall ≥ t (0 when recall never reaches t). False: the area under the precision envelope
        (VOC 2010 onwards), Σ (r_{i+1} − r_i) · max_{j ≥ i+1} p_j over the points where recall changes.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the arrays differ in shape, are not 1-D, hold values outside [0, 1], or recall decreases.
    """
    recall = np.asarray(recall, dtype=np.float64)
    precision = np.asarray(precision, dtype=np.float64)
    if recall.ndim != 1 or recall.shape != precision.shape:
        raise ValueError(
            f"recall and precision must be 1-D of equal length, got {recall.shape} and {precision.shape}"
        )
    for name, values in (("recall", recall), ("precision", precision)):
        if not (np.isfinite(values).all() and (values >= 0).all() and (values <= 1).all()):
            raise ValueError(f"{name} values must lie in [0, 1]")
    if (np.diff(recall) < 0).any():
        raise ValueError("recall must be non-decreasing")
    if use_07_metric:
        ap = 0.0
        # the devkit's thresholds np.arange(0., 1.1, 0.1), i.e. k * 0.1 in floating point
        for t in np.arange(11) * 0.1:
            reached = recall >= t
            ap += (precision[reached].max() if reached.any() else 0.0) / 11.0
        return float(ap)
    mrec = np.concatenate(([0.0], recall, [1.0]))
    mpre = np.concatenate(([0.0], precision, [0.0]))
    mpre = np.maximum.accumulate(mpre[::-1])[::-1]
    change = np.flatnonzero(mrec[1:] != mrec[:-1])
    return float(np.sum((mrec[change + 1] - mrec[change]) * mpre[change + 1]))


@dataclass
class DetectionEvaluation:
    """Result of :func:`evaluate_detections`.

    Attributes
    ----------
    ap : float
        Average precision (11-point or area, as requested).
    precision, recall : ndarray of float64
        After each counted detection in ranked order (detections matched to difficult boxes are not
        counted).
    true_positive : ndarray of bool
        Whether each counted detection is a true positive.
    n_positives : int
        Number of non-difficult ground-truth boxes.
    """

    ap: float
    precision: np.ndarray
    recall: np.ndarray
    true_positive: np.ndarray
    n_positives: int


def _check_inputs(detections, gt_boxes, gt_difficult):
    n_images = len(gt_boxes)
    if len(detections) != n_images or len(gt_difficult) != n_images:
        raise ValueError(
            f"detections, gt_boxes and gt_difficult must have one entry per image, got "
            f"{len(detections)}, {n_images} and {len(gt_difficult)}"
        )
    det_boxes, det_scores, gts, hards = [], [], [], []
    for i in range(n_images):
        try:
            boxes, scores = detections[i]
        except (TypeError, ValueError):
            raise ValueError(f"detections[{i}] must be a pair (boxes, scores)") from None
        boxes = as_boxes(boxes, f"detections[{i}] boxes")
        scores = np.asarray(scores, dtype=np.float64).reshape(-1)
        if scores.shape != (boxes.shape[0],):
            raise ValueError(f"detections[{i}]: {boxes.shape[0]} boxes but {scores.size} scores")
        if not np.isfinite(scores).all():
            raise ValueError(f"detections[{i}]: scores contain non-finite values")
        gt = as_boxes(gt_boxes[i], f"gt_boxes[{i}]")
        hard = np.asarray(gt_difficult[i], dtype=bool).reshape(-1)
        if hard.shape != (gt.shape[0],):
            raise ValueError(f"gt_difficult[{i}] has {hard.size} flags for {gt.shape[0]} boxes")
        det_boxes.append(boxes)
        det_scores.append(scores)
        gts.append(gt)
        hards.append(hard)
    return det_boxes, det_scores, gts, hards


def evaluate_detections(detections, gt_boxes, gt_difficult, iou_threshold=0.5, use_07_metric=False):
    """VOC detection AP of one class over a set of images.

    All detections of all images are ranked by score (equal scores: image order, then order within
    the image). Going down the list, a detection is matched to the ground-truth box of its image it
    overlaps most; if that IoU ≥ ``iou_threshold``: a difficult box makes the detection ignored
    (neither true nor false positive), an unclaimed box makes it a true positive and claims the box,
    an already claimed box makes it a false positive (duplicate). Otherwise it is a false positive.

    Parameters
    ----------
    detections : sequence of (boxes, scores), one per image
        ``boxes`` of shape (k_i, 4) as ``(x1, y1, x2, y2)`` in VOC pixel coordinates, ``scores`` (k_i,).
    gt_boxes : sequence of array-like, shape (g_i, 4)
        Ground-truth boxes of the class per image (possibly empty).
    gt_difficult : sequence of array-like of bool, shape (g_i,)
    iou_threshold : float, default=0.5
    use_07_metric : bool, default=False
        VOC 2007 11-point AP instead of the area under the precision envelope (see :func:`voc_ap`).

    Returns
    -------
    DetectionEvaluation

    Raises
    ------
    ValueError
        On inconsistent inputs, or when there is no non-difficult ground-truth box (AP undefined).
    """
    if not 0.0 < iou_threshold <= 1.0:
        raise ValueError(f"iou_threshold must be in (0, 1], got {iou_threshold}")
    det_boxes, det_scores, gts, hards = _check_inputs(detections, gt_boxes, gt_difficult)
    n_positives = int(sum((~hard).sum() for hard in hards))
    if n_positives == 0:
        raise ValueError("there is no non-difficult ground-truth box: AP is undefined")
    image_of = np.concatenate(
        [np.full(s.size, i, dtype=np.int64) for i, s in enumerate(det_scores)] + [np.zeros(0, np.int64)]
    )
    index_in_image = np.concatenate(
        [np.arange(s.size) for s in det_scores] + [np.zeros(0, np.int64)]
    ).astype(np.int64)
    scores = np.concatenate(det_scores + [np.zeros(0)])
    order = np.argsort(-scores, kind="stable")
    claimed = [np.zeros(g.shape[0], dtype=bool) for g in gts]
    outcome = []  # True: TP, False: FP; ignored detections are left out
    for d in order:
        i, k = image_of[d], index_in_image[d]
        gt = gts[i]
        if gt.shape[0] == 0:
            outcome.append(False)
            continue
        overlaps = _iou_unchecked(det_boxes[i][k : k + 1], gt)[0]
        j = int(np.argmax(overlaps))
        if overlaps[j] < iou_threshold:
            outcome.append(False)
        elif hards[i][j]:
            continue
        elif claimed[i][j]:
            outcome.append(False)
        else:
            claimed[i][j] = True
            outcome.append(True)
    true_positive = np.asarray(outcome, dtype=bool)
    tp = np.cumsum(true_positive)
    fp = np.cumsum(~true_positive)
    recall = tp / n_positives
    precision = tp / np.maximum(tp + fp, 1)
    return DetectionEvaluation(
        ap=voc_ap(recall, precision, use_07_metric),
        precision=precision,
        recall=recall,
        true_positive=true_positive,
        n_positives=n_positives,
    )
