"""Detections of many images: window scores and boxes to the boxes kept by NMS, per image."""

import numpy as np

from .boxes import nms

__all__ = ["nms_per_image"]


def nms_per_image(scores, boxes, offsets, iou_threshold=0.3, max_per_image=None):
    """Scored boxes of every image after non-maximum suppression, by decreasing score.

    Parameters
    ----------
    scores : ndarray of shape (n_windows,)
        Score of every window; image i owns windows ``offsets[i]:offsets[i+1]``.
    boxes : list of array-like of shape (m_i, 4), or array-like of shape (n_windows, 4)
        The windows' boxes (x1, y1, x2, y2), per image or stacked like ``scores``.
    offsets : ndarray of int of shape (n_images + 1,)
    iou_threshold : float, default=0.3
        A window is suppressed when its IoU with a higher-scoring kept window exceeds this.
    max_per_image : int or None, default=None
        Keep at most this many detections per image.

    Returns
    -------
    detections : list of (ndarray of shape (k_i, 4), ndarray of shape (k_i,))
        Per image, the kept boxes and their scores, by decreasing score (ties: window order).

    Raises
    ------
    ValueError
        On a threshold outside [0, 1], ``max_per_image < 1``, or boxes that do not match the
        windows.
    """
    if not 0.0 <= iou_threshold <= 1.0:
        raise ValueError(f"iou_threshold must lie in [0, 1], got {iou_threshold}")
    if max_per_image is not None and max_per_image < 1:
        raise ValueError(f"max_per_image must be >= 1 or None, got {max_per_image}")
    n_images, n_windows = len(offsets) - 1, int(offsets[-1])
    if isinstance(boxes, np.ndarray) and boxes.ndim == 2:
        all_boxes = boxes
    else:
        if len(boxes) != n_images:
            raise ValueError(f"boxes holds {len(boxes)} images, the windows {n_images}")
        all_boxes = np.concatenate([np.asarray(b, dtype=np.float64).reshape(-1, 4) for b in boxes])
    all_boxes = np.asarray(all_boxes, dtype=np.float64)
    if all_boxes.shape != (n_windows, 4):
        raise ValueError(f"boxes must have shape ({n_windows}, 4) to match the windows, got "
                         f"{all_boxes.shape}")
    detections = []
    for lo, hi in zip(offsets[:-1], offsets[1:]):
        keep = np.asarray(nms(all_boxes[lo:hi], scores[lo:hi], iou_threshold), dtype=np.int64)
        keep = keep[:max_per_image]
        detections.append((all_boxes[lo:hi][keep], scores[lo:hi][keep]))
    return detections
