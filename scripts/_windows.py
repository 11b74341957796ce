"""Shared helpers of the window scripts: the detection data, timed selective search, window caps.

Selective search is run once per image and setting *without* a cap or a minimum area; the windows
of any cap and minimum area are then a filter and a prefix of that list (:func:`capped`), exactly
what ``ssvm.detection.selective_search(..., max_windows=cap, min_area=a)`` returns (the filter
keeps the order, and row 0 is the whole image), which :func:`check_capped` verifies on an image.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import numpy as np

logger = logging.getLogger("scripts")

UNCAPPED = 1_000_000


def add_data_arguments(parser):
    """``--data`` and ``--max-images`` (shared by the window scripts)."""
    parser.add_argument("--data", help="'detection_mini' (the bundled set; default), 'scenes' (small "
                        "synthetic scenes; default with --quick) or a VOC-layout folder")
    parser.add_argument("--max-images", type=int, metavar="N",
                        help="use only the first N images of each split")


def load_detection_splits(args, work, splits=("train", "test")):
    """The requested splits of ``--data`` as :class:`ssvm.datasets.VOCDataset`."""
    from _detection_data import first_images, voc_root

    from ssvm.datasets import load_voc

    root = voc_root(args.data or ("scenes" if args.quick else "detection_mini"), Path(work), args.seed, 12, 6)
    splits = {split: load_voc(root, split) for split in splits}
    if args.max_images:
        splits = {split: first_images(d, args.max_images) for split, d in splits.items()}
    return root, splits


def _search_job(path, mode, working_size, seed):
    from ssvm.detection import read_image, selective_search
    from ssvm.detection.images import limit_cv2_threads

    limit_cv2_threads()
    image = read_image(path)
    start = time.perf_counter()
    boxes = selective_search(image, mode=mode, working_size=working_size, max_windows=UNCAPPED,
                             seed=seed)
    return boxes, time.perf_counter() - start, image.shape[:2]


def search_all(paths, mode, working_size, *, seed=0, n_jobs=1, cache_dir=None):
    """Uncapped selective-search windows of every image, with the seconds each took (one core).

    Returns
    -------
    list of (boxes, seconds, (height, width))
    """
    from joblib import Parallel, delayed

    results = [None] * len(paths)
    todo = []
    cache = None
    if cache_dir is not None:
        cache = Path(cache_dir) / f"{mode}-{working_size}-seed{seed}"
        cache.mkdir(parents=True, exist_ok=True)
    for i, path in enumerate(paths):
        file = cache / f"{Path(path).stem}.npz" if cache is not None else None
        if file is not None and file.exists():
            saved = np.load(file)
            results[i] = (saved["boxes"], float(saved["seconds"]), tuple(saved["shape"]))
        else:
            todo.append(i)
    done = Parallel(n_jobs=n_jobs)(delayed(_search_job)(paths[i], mode, working_size, seed) for i in todo)
    for i, result in zip(todo, done):
        results[i] = result
        if cache is not None:  # atomically: a temporary file, then a rename
            tmp = cache / f".{Path(paths[i]).stem}.{os.getpid()}.npz"
            np.savez(tmp, boxes=result[0], seconds=result[1], shape=np.asarray(result[2]))
            os.replace(tmp, cache / f"{Path(paths[i]).stem}.npz")
    return results


def capped(boxes, shape, cap, min_area=0.0):
    """Windows ``selective_search(..., max_windows=cap, min_area=min_area)`` returns, from uncapped ones."""
    from ssvm.detection import relative_areas

    keep = relative_areas(boxes, *shape) >= min_area
    keep[0] = True  # the whole image
    return boxes[keep][:cap]


def check_capped(path, mode, working_size, cap, min_area, seed=0):
    """Assert that :func:`capped` reproduces a direct capped call on one image."""
    from ssvm.detection import read_image, selective_search

    boxes, _, shape = _search_job(path, mode, working_size, seed)
    direct = selective_search(read_image(path), mode=mode, working_size=working_size,
                              max_windows=cap, min_area=min_area, seed=seed)
    if not np.array_equal(capped(boxes, shape, cap, min_area), direct):
        raise AssertionError(f"{path}: capped windows differ from selective_search(max_windows={cap}, "
                             f"min_area={min_area})")
