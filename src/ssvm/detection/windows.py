"""Candidate windows by selective search (OpenCV contrib), with a per-image disk cache.

Windows are ``(x1, y1, x2, y2)`` boxes in the VOC pixel convention of the *original* image
(1-based, inclusive; the whole W×H image is ``(1, 1, W, H)``). Row 0 is always the whole image:
the non-latent baseline uses it, and it guarantees that every image has at least one window.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

from .images import image_id_of, import_cv2, limit_cv2_threads, read_image

__all__ = ["relative_areas", "selective_search", "selective_search_many", "whole_image_box"]

logger = logging.getLogger(__name__)

_MODES = ("fast", "quality", "single")
_CACHE_VERSION = 1


def whole_image_box(height, width):
    """The window covering a whole ``height × width`` image, ``(1, 1, width, height)``.

    Parameters
    ----------
    height, width : int

    Returns
    -------
    ndarray of float64, shape (1, 4)
    """
    return np.array([[1.0, 1.0, float(width), float(height)]])


def relative_areas(boxes, height, width):
    """Areas of boxes as fractions of a ``height × width`` image's area (VOC inclusive pixels).

    Parameters
    ----------
    boxes : ndarray, shape (m, 4)
        ``(x1, y1, x2, y2)`` in VOC pixel coordinates.
    height, width : int or float

    Returns
    -------
    ndarray of float64, shape (m,)
    """
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    areas = (boxes[:, 2] - boxes[:, 0] + 1.0) * (boxes[:, 3] - boxes[:, 1] + 1.0)
    return areas / (float(height) * float(width))


def _seed_c_rand(seed):
    """Seed C's ``rand()``, which OpenCV's selective search uses to rank its regions.

    Without this the order of the returned regions (hence which are kept under a cap) changes from
    call to call. Returns False where the C library cannot be reached (the result is then valid
    but not reproducible).
    """
    try:
        libc = ctypes.CDLL(None)
        libc.srand(ctypes.c_uint(seed))
    except (OSError, AttributeError, TypeError):  # pragma: no cover - platform dependent
        logger.warning("cannot seed C rand(): selective search window order is not reproducible")
        return False
    return True


def _check_params(mode, working_size, max_windows, min_size, min_area=0.0):
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {_MODES}, got {mode!r}")
    if isinstance(min_area, bool) or not isinstance(min_area, (int, float, np.integer, np.floating)) \
            or not 0.0 <= min_area < 1.0:
        raise ValueError(f"min_area must be a fraction of the image area in [0, 1), got {min_area!r}")
    for name, value, low in (("working_size", working_size, 16), ("max_windows", max_windows, 1),
                             ("min_size", min_size, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")


def selective_search(image, *, mode="fast", working_size=256, max_windows=400, min_size=8, min_area=0.0,
                     seed=0):
    """Candidate windows of one image by OpenCV's selective search.

    The image is first shrunk so that its longer side is ``working_size`` pixels (never enlarged),
    which bounds the cost; the boxes are mapped back to the original image's coordinates.
    Measured on one core for a typical photo at 256 px: "single" 0.03 s (about 60 windows),
    "fast" 0.16–0.23 s (about 300), "quality" 0.5 s (about 1,000).

    Parameters
    ----------
    image : str, path-like or ndarray
        A file path or an RGB / greyscale array.
    mode : {"fast", "quality", "single"}, default="fast"
        OpenCV's ``switchToSelectiveSearchFast`` / ``...Quality`` / ``switchToSingleStrategy``.
    working_size : int, default=256
        Longer side of the image on which the segmentation runs.
    max_windows : int, default=400
        Cap on the number of windows returned, including the whole-image window. Selective search
        returns regions in its own (randomised hierarchical) ranking; the first ones are kept.
    min_size : int, default=8
        Regions narrower or shorter than this (in working-size pixels) are dropped.
    min_area : float, default=0.0
        Windows covering less than this fraction of the image area (VOC pixel areas) are dropped
        *before* the ``max_windows`` cap; the whole-image window is always kept. A minimum size is
        the usual prior of weakly supervised detection: without it, latent training tends to pick
        small discriminative parts (a texture patch) instead of the object.
    seed : int, default=0
        Seed of the C ``rand()`` that OpenCV uses for that ranking, for reproducible results.

    Returns
    -------
    boxes : ndarray of float64, shape (m, 4), 1 <= m <= max_windows
        ``(x1, y1, x2, y2)`` in VOC pixel coordinates of the original image; row 0 is the whole image,
        the other rows are distinct and differ from it.

    Raises
    ------
    ImportError
        If OpenCV contrib is missing (``pip install "ssvm[detection]"``).
    ValueError
        On bad parameters or an unreadable image.
    """
    _check_params(mode, working_size, max_windows, min_size, min_area)
    cv2 = import_cv2()
    rgb = read_image(image)
    height, width = rgb.shape[:2]
    scale = min(1.0, working_size / max(height, width))
    if scale < 1.0:
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        small = cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)
    else:
        small = rgb
    sx = width / small.shape[1]
    sy = height / small.shape[0]
    segmenter = cv2.ximgproc.segmentation.createSelectiveSearchSegmentation()
    segmenter.setBaseImage(np.ascontiguousarray(small[:, :, ::-1]))
    if mode == "fast":
        segmenter.switchToSelectiveSearchFast()
    elif mode == "quality":
        segmenter.switchToSelectiveSearchQuality()
    else:
        segmenter.switchToSingleStrategy()
    _seed_c_rand(seed)
    rects = np.asarray(segmenter.process(), dtype=np.float64).reshape(-1, 4)  # x, y, w, h
    rects = rects[(rects[:, 2] >= min_size) & (rects[:, 3] >= min_size)]
    # working pixels [x, x + w) are continuous [x, x + w]; scaled, they cover original pixels
    # x*sx + 1 .. (x + w)*sx in VOC 1-based inclusive coordinates
    boxes = np.column_stack([
        rects[:, 0] * sx + 1.0,
        rects[:, 1] * sy + 1.0,
        (rects[:, 0] + rects[:, 2]) * sx,
        (rects[:, 1] + rects[:, 3]) * sy,
    ])
    boxes = np.clip(boxes, 1.0, [width, height, width, height])
    whole = whole_image_box(height, width)
    boxes = boxes[~np.all(boxes == whole, axis=1)]
    boxes = boxes[relative_areas(boxes, height, width) >= min_area]
    _, first = np.unique(boxes, axis=0, return_index=True)
    boxes = boxes[np.sort(first)]
    return np.concatenate([whole, boxes[: max_windows - 1]])


def _params_key(params):
    text = json.dumps({**params, "version": _CACHE_VERSION}, sort_keys=True)
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def save_atomic(path, array):
    """Write ``array`` to ``path`` (.npy) atomically: a temporary file, then a rename."""
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp.npy")
    os.close(handle)
    try:
        np.save(tmp, array)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _windows_job(image, cache_path, params, single_thread):
    if cache_path is not None and cache_path.exists():
        return np.load(cache_path)
    if single_thread:
        limit_cv2_threads()
    boxes = selective_search(image, **params)
    if cache_path is not None:
        save_atomic(cache_path, boxes)
    return boxes


def selective_search_many(images, *, image_ids=None, cache_dir=None, n_jobs=None, mode="fast",
                          working_size=256, max_windows=400, min_size=8, min_area=0.0, seed=0, verbose=0):
    """Selective-search windows for many images, in parallel, cached on disk per image.

    Parameters
    ----------
    images : sequence of str, path-like or ndarray
    image_ids : sequence of str, optional
        Names for the cache files; default: file stems (``image-<i>`` for arrays). Must be unique.
    cache_dir : str or path-like, optional
        Windows are stored as ``<cache_dir>/<image_id>-<params hash>.npy`` and reused when present;
        changing any parameter changes the hash. Writes are atomic, so an interrupted run resumes.
    n_jobs : int, optional
        joblib worker count (None: 1, -1: all cores).
    mode, working_size, max_windows, min_size, min_area, seed
        As in :func:`selective_search`.
    verbose : int, default=0
        joblib verbosity.

    Returns
    -------
    list of ndarray of float64, shape (m_i, 4)
        Windows of each image; row 0 of each is the whole image.

    Raises
    ------
    ValueError
        On bad parameters, repeated or mismatched image ids, or an unreadable image.
    """
    params = dict(mode=mode, working_size=working_size, max_windows=max_windows,
                  min_size=min_size, seed=seed)
    _check_params(mode, working_size, max_windows, min_size, min_area)
    if min_area:  # absent when 0, so that caches written before this option stay valid
        params["min_area"] = float(min_area)
    images = list(images)
    if image_ids is None:
        image_ids = [image_id_of(image, i) for i, image in enumerate(images)]
    image_ids = [str(i) for i in image_ids]
    if len(image_ids) != len(images):
        raise ValueError(f"{len(image_ids)} image_ids for {len(images)} images")
    if len(set(image_ids)) != len(image_ids):
        raise ValueError("image_ids must be unique (they name the cache files)")
    cache_paths = [None] * len(images)
    if cache_dir is not None:
        cache_dir = Path(cache_dir)
        cache_dir.mkdir(parents=True, exist_ok=True)
        key = _params_key(params)
        cache_paths = [cache_dir / f"{image_id}-{key}.npy" for image_id in image_ids]
    single_thread = n_jobs not in (None, 1)
    jobs = (delayed(_windows_job)(image, path, params, single_thread)
            for image, path in zip(images, cache_paths))
    result = Parallel(n_jobs=n_jobs, verbose=verbose)(jobs)
    logger.info("selective search: %d images, %d windows", len(result), sum(len(b) for b in result))
    return result
