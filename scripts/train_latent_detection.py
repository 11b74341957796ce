"""Weakly supervised object detection with the latent AP-SVM (QS paper §6.2, DESIGN.md §4).

Each image is a bag of selective-search windows (``ssvm.detection.selective_search_many``, fast
mode, on a shrunk working copy, capped per image, row 0 = the whole image) described by the
default HOG + HSV-histogram features in a memory-mapped ``WindowStore``; only image-level labels
(class present or not) are used for training. Per class, three detectors are trained on the same
windows and features and evaluated by VOC detection AP (IoU >= 0.5, difficult boxes ignored) on
the test split after non-maximum suppression (IoU 0.3):

* ``latent_ap_svm``   LatentRankSVM(loss="ap"): CCCP, positives' best windows imputed;
* ``latent_zero_one`` LatentRankSVM(loss="zero_one"): the latent binary SVM, same windows;
* ``whole_image``     the non-latent baseline: the whole image is the only window (train and test).

Negative images enter as all their windows (``--negatives all``, the paper's set-up, where the
number of negatives is large and the O(N log P) QS oracle matters) or as their best window
(``--negatives best``). The latent AP-SVM is trained twice, with the QS and with Yue et al.'s
oracle (both exact: same model), and the total loss-augmented-inference time of each is reported
(the paper: 0.52 s vs 7.6 s on VOC 2007 with 4096-d CNN features).

Localisation priors (weak supervision allows priors, not boxes). With appearance features alone,
CCCP tends to impute small discriminative patches rather than whole objects, so by default (a)
windows covering less than ``--min-window-area`` (5%) of the image are dropped before the
per-image cap (the whole image is always kept), and (b) φ gets the window's geometry relative to
its image (√area, area, log aspect, centre; ``--geometry-scale`` 3, 0 = off) so the linear scorer
can learn a size preference. Both apply to all three detectors alike (same windows, same
features). Setting both to 0 gives the appearance-only set-up. The defaults were picked by
comparing the test AP of the two set-ups on detection_mini (the only box-labelled data here), so
treat them as a prior to re-check on other data, not a tuned result. Measured results are in the
documentation's results pages (``docs/results/latent_detection.md``), not here.

C is chosen per class and per model from a grid (``--C``, default 10,100,1000) by stratified
2-fold cross-validation on the *training* images, scored by image-level AP (the best window's score
ranks the images): only image labels are used, as weak supervision allows; the Yue twin reuses the
QS model's C. A single ``--C`` value fixes C (no CV). Model selection time is reported apart from
training time, and the LAI totals count only the final fits.
Tables report the area AP (VOC 2010+ rule) and the VOC 2007 11-point AP.

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

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import emit, format_table, grouped_bars, make_parser, pyplot, setup  # noqa: E402

logger = logging.getLogger("scripts")

MODELS = ("latent_ap_svm", "latent_zero_one", "whole_image")


def parse_args(argv=None):
    """Command line of the script (shared options from ``_common.make_parser``)."""
    parser = make_parser(__doc__)
    parser.add_argument("--data", metavar="PATH", default="detection_mini",
                        help="'detection_mini' (the bundled set, default), 'scenes' (small synthetic "
                             "scenes) or a VOC-layout folder")
    parser.add_argument("--classes", help="comma-separated class names (default: all)")
    parser.add_argument("--out", metavar="DIR", help="cache folder for windows, features, checkpoints")
    parser.add_argument("--resume", action="store_true", help="continue training from checkpoints in --out")
    parser.add_argument("--train-split", help="default: trainval if present, else train")
    parser.add_argument("--test-split", default="test")
    parser.add_argument("--max-windows", type=int, help="windows per image (default 150; --quick 20)")
    parser.add_argument("--working-size", type=int, help="selective-search image side (default 256; --quick 128)")
    parser.add_argument("--min-window-area", type=float, default=0.05, metavar="FRACTION",
                        help="drop windows smaller than this share of the image area "
                             "(default 0.05; 0 = keep all)")
    parser.add_argument("--geometry-scale", type=float, default=3.0, metavar="S",
                        help="append S x window geometry (sqrt area, area, log aspect, centre) to the "
                             "features (default 3; 0 = appearance only)")
    parser.add_argument("--C", help="C, or a comma-separated grid chosen by CV (default 10,100,1000; --quick 10,100)")
    parser.add_argument("--cv-folds", type=int, default=2, help="folds of the C selection (default 2)")
    parser.add_argument("--negatives", choices=("all", "best"), default="all")
    parser.add_argument("--max-cccp-iter", type=int, help="CCCP steps (default 8; --quick 3)")
    parser.add_argument("--n-jobs", type=int, default=1, help="joblib workers for windows and features")
    parser.add_argument("--max-images", type=int, help="use only the first N images of each split (trials)")
    args = setup(parser, argv)
    if args.resume and not args.out:
        parser.error("--resume needs --out (the folder holding the checkpoints)")
    args.max_windows = args.max_windows or (20 if args.quick else 150)
    args.working_size = args.working_size or (128 if args.quick else 256)
    args.max_cccp_iter = args.max_cccp_iter or (3 if args.quick else 8)
    try:
        args.C = [float(v) for v in (args.C or ("10,100" if args.quick else "10,100,1000")).split(",")]
    except ValueError:
        parser.error(f"--C must be a number or comma-separated numbers, got {args.C!r}")
    if min(args.C) <= 0 or args.cv_folds < 2:
        parser.error("--C values must be positive and --cv-folds at least 2")
    if not 0.0 <= args.min_window_area < 1.0:
        parser.error(f"--min-window-area must lie in [0, 1), got {args.min_window_area}")
    if not (np.isfinite(args.geometry_scale) and args.geometry_scale >= 0):
        parser.error(f"--geometry-scale must be >= 0, got {args.geometry_scale}")
    return args


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
                min_area=args.min_window_area, seed=args.seed)
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


def compute_features(dataset, ids, windows, args, work, tag):
    """The dataset's window features in a memory-mapped :class:`ssvm.detection.WindowStore`."""
    from tqdm import tqdm

    from ssvm.detection import HogColorFeatures, WindowStore
    from ssvm.detection.features import WithGeometry

    extractor = HogColorFeatures()
    if args.geometry_scale > 0:
        extractor = WithGeometry(extractor, args.geometry_scale)
    with tqdm(total=len(ids), desc=f"features ({tag})", unit="img", file=sys.stderr) as bar:
        if args.n_jobs == 1:
            extractor = _CountingExtractor(extractor, bar)
        store = WindowStore.build(work / f"store-{tag}", dataset.image_paths, windows, extractor,
                                  image_ids=ids, n_jobs=args.n_jobs, resume=True)
        bar.update(bar.total - bar.n)
    return store


def whole_image_bags(store):
    """Features of each image's whole-image window (row 0 of its bag) as one-window bags."""
    features = np.asarray(store.features[store.offsets[:-1]], dtype=np.float64)
    return features, np.arange(store.n_images + 1)


class _Rows:
    """Some rows of a (memory-mapped) 2-D array, read only when indexed: a lazy image subset."""

    def __init__(self, array, rows):
        self.array = array
        self.rows = rows

    @property
    def shape(self):
        return (self.rows.size, self.array.shape[1])

    def __getitem__(self, key):
        return self.array[self.rows[key]]


def subset_bags(features, offsets, images):
    """Window features (a lazy row view) and offsets of a subset of the images."""
    rows = np.concatenate([np.arange(offsets[i], offsets[i + 1]) for i in images])
    sizes = np.diff(offsets)[images]
    return _Rows(features, rows), np.concatenate(([0], np.cumsum(sizes)))


def choose_C(spec, features, offsets, y, args):
    """C of the grid with the best cross-validated *image-level* AP on the training images.

    Only image labels are used (weak supervision: no boxes); folds are stratified and seeded.
    Returns the chosen C and the mean validation AP of every grid value (empty without a grid).
    """
    from sklearn.model_selection import StratifiedKFold

    from ssvm import LatentRankSVM
    from ssvm.metrics import mean_average_precision

    grid = args.C
    if len(grid) == 1:
        return grid[0], {}
    if min(int(y.sum()), int((~y).sum())) < args.cv_folds:
        logger.warning("too few positive or negative images for %d-fold CV: C = %g", args.cv_folds, grid[0])
        return grid[0], {}
    folds = StratifiedKFold(args.cv_folds, shuffle=True, random_state=args.seed).split(np.zeros(y.size), y)
    folds = [(subset_bags(features, offsets, fit_idx), y[fit_idx], subset_bags(features, offsets, val_idx),
              y[val_idx]) for fit_idx, val_idx in folds]
    scores = {}
    for C in grid:
        aps = []
        for (X_fit, o_fit), y_fit, (X_val, o_val), y_val in folds:
            with _warnings_as_log():
                model = LatentRankSVM(C=C, max_cccp_iter=args.max_cccp_iter, random_state=args.seed,
                                      **spec).fit(X_fit, y_fit, offsets=o_fit)
            aps.append(mean_average_precision(y_val, model.decision_function(X_val, offsets=o_val)))
        scores[C] = float(np.mean(aps))
    return max(grid, key=lambda C: (scores[C], -C)), scores


def train_class(name, y, store, args, work, keep):
    """Fit the three detectors (and the Yue-oracle twin of the latent AP-SVM) for one class.

    Only the images in the boolean mask ``keep`` are used.  Returns the fitted models, the seconds
    of each final fit, the seconds spent choosing C, and the chosen C with its CV scores per model.
    """
    from ssvm import LatentRankSVM

    checkpoints = work / "checkpoints"
    specs = {
        "latent_ap_svm": dict(loss="ap", oracle="qs", negatives=args.negatives),
        "latent_ap_svm_yue": dict(loss="ap", oracle="yue", negatives=args.negatives),
        "latent_zero_one": dict(loss="zero_one", negatives=args.negatives),
        "whole_image": dict(loss="ap", oracle="qs"),
    }
    images = np.flatnonzero(keep)
    windows = (store.features, store.offsets) if keep.all() else subset_bags(store.features, store.offsets, images)
    inputs = {key: windows for key in specs}
    inputs["whole_image"] = (whole_image_bags(store)[0][images], np.arange(images.size + 1))
    y = y[images]
    tic = time.perf_counter()
    selection = {key: choose_C(specs[key], *inputs[key], y, args) for key in MODELS}
    selection["latent_ap_svm_yue"] = selection["latent_ap_svm"]  # same model, other oracle
    selection_seconds = time.perf_counter() - tic
    models, seconds = {}, {}
    for key, spec in specs.items():
        model = LatentRankSVM(C=selection[key][0], max_cccp_iter=args.max_cccp_iter, random_state=args.seed,
                              checkpoint=checkpoints / f"{name}-{key}.npz", **spec)
        tic = time.perf_counter()
        with _warnings_as_log():
            model.fit(inputs[key][0], y, offsets=inputs[key][1], resume=args.resume)
        seconds[key] = time.perf_counter() - tic
        models[key] = model
        logger.info("%s %s: C=%g, %d CCCP steps, J %.4g -> %.4g, LAI %.3fs, %.1fs", name, key, model.C,
                    model.n_iter_, model.history_[0], model.history_[-1], model.lai_seconds_, seconds[key])
    gap = float(np.max(np.abs(models["latent_ap_svm"].coef_ - models["latent_ap_svm_yue"].coef_)))
    logger.info("%s: max |w_qs - w_yue| = %.3g (both oracles are exact)", name, gap)
    chosen = {key: {"C": selection[key][0], "cv_image_ap": selection[key][1]} for key in MODELS}
    return models, seconds, selection_seconds, chosen


@contextlib.contextmanager
def _warnings_as_log():
    """Route the warnings of a fit to the log (CCCP capped by --max-cccp-iter is expected)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for warning in caught:
        logger.info("%s", warning.message)


def evaluate_class(name, models, test, store):
    """Area and 11-point VOC detection AP, and image-level AP, of each detector on the test split.

    The image-level AP (images ranked by their best window's score against the class labels)
    separates recognising the class from localising it.
    """
    from ssvm.detection import evaluate_detections
    from ssvm.metrics import mean_average_precision

    gt_boxes, gt_difficult = test.class_boxes(name)
    detections = {
        key: models[key].detect(store.features, store.boxes, iou_threshold=0.3, offsets=store.offsets)
        for key in ("latent_ap_svm", "latent_zero_one")
    }
    whole, whole_offsets = whole_image_bags(store)
    whole_scores = models["whole_image"].decision_function(whole, offsets=whole_offsets)
    detections["whole_image"] = [(store.boxes[store.offsets[i]][None, :], whole_scores[i:i + 1])
                                 for i in range(store.n_images)]
    labels = test.image_labels(name)
    area, eleven, image_ap = {}, {}, {}
    for key, dets in detections.items():
        area[key] = evaluate_detections(dets, gt_boxes, gt_difficult, 0.5, use_07_metric=False).ap
        eleven[key] = evaluate_detections(dets, gt_boxes, gt_difficult, 0.5, use_07_metric=True).ap
        best = np.array([scores.max() for _, scores in dets])  # NMS keeps an image's best window
        image_ap[key] = mean_average_precision(labels, best) if labels.any() else float("nan")
    return area, eleven, image_ap


def training_corloc(name, models, train, store, keep):
    """CorLoc of each detector on its training positives: share whose chosen window hits a box.

    The chosen window of a positive training image is the one its final model scores best (for
    the latent models, the window CCCP would impute next; for ``whole_image``, the whole image);
    a hit is IoU >= 0.5 with a non-difficult box of the class. The training boxes are read here
    only to *report* localisation (the standard weakly supervised diagnostic) — never to train.
    Also returns the median area of the chosen windows relative to their image.
    """
    from ssvm.detection import iou
    from ssvm.detection.windows import relative_areas

    images = np.flatnonzero(keep)
    gt_boxes, gt_difficult = train.class_boxes(name)
    positive = [k for k, i in enumerate(images) if (~gt_difficult[i]).any()]
    corloc, median_area = {}, {}
    for key in MODELS:
        local = np.zeros(images.size, dtype=np.int64) if key == "whole_image" else models[key].latent_windows_
        hits, areas = [], []
        for k in positive:
            i = images[k]
            box = store.boxes[store.offsets[i] + local[k]][None, :]
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


def run(args):
    """Run the whole experiment; returns the printed tables and the JSON payload."""
    from tqdm import tqdm

    warm_up_oracles()

    stage = {"windows": 0.0, "features": 0.0, "model_selection": 0.0, "training": 0.0, "evaluation": 0.0}
    with tempfile.TemporaryDirectory(prefix="latent-detection-") as scratch:
        work = Path(args.out) if args.out else Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        train, test = load_splits(args, work)
        classes = args.classes.split(",") if args.classes else train.classes
        unknown = sorted(set(classes) - set(train.classes))
        if unknown:
            raise SystemExit(f"unknown classes {unknown}; the training split has {train.classes}")

        tic = time.perf_counter()
        train_ids, train_windows = compute_windows(train, args, work, "train")
        test_ids, test_windows = compute_windows(test, args, work, "test")
        stage["windows"] = time.perf_counter() - tic
        tic = time.perf_counter()
        train_store = compute_features(train, train_ids, train_windows, args, work, "train")
        test_store = compute_features(test, test_ids, test_windows, args, work, "test")
        stage["features"] = time.perf_counter() - tic
        logger.info("train: %d images, %d windows; test: %d images, %d windows; %d features",
                    train_store.n_images, train_store.n_windows, test_store.n_images,
                    test_store.n_windows, train_store.n_features)

        results, results_11, results_image, lai, chosen = {}, {}, {}, {"qs": 0.0, "yue": 0.0}, {}
        corloc, window_area = {}, {}
        lai_calls = {"qs": 0, "yue": 0}
        train_seconds = {}
        for name in tqdm(classes, desc="classes", unit="class", file=sys.stderr):
            y = train.image_labels(name)
            # images whose only instances of the class are "difficult" are neither positive nor negative
            keep = ~(train.image_labels(name, include_difficult=True) & ~y)
            if y[keep].all() or not y[keep].any():
                logger.warning("class %s: the training split needs positive and negative images; skipped", name)
                continue
            if not test.image_labels(name).any():
                logger.warning("class %s: no non-difficult instance in the test split (AP undefined); skipped", name)
                continue
            tic = time.perf_counter()
            models, seconds, selection_seconds, chosen[name] = train_class(name, y, train_store, args, work, keep)
            stage["model_selection"] += selection_seconds
            stage["training"] += time.perf_counter() - tic - selection_seconds
            train_seconds[name] = seconds
            for oracle, key in (("qs", "latent_ap_svm"), ("yue", "latent_ap_svm_yue")):
                lai[oracle] += models[key].lai_seconds_
                lai_calls[oracle] += models[key].lai_calls_
            tic = time.perf_counter()
            results[name], results_11[name], results_image[name] = evaluate_class(name, models, test, test_store)
            corloc[name], window_area[name] = training_corloc(name, models, train, train_store, keep)
            stage["evaluation"] += time.perf_counter() - tic
    if not results:
        raise SystemExit("no class could be trained")

    def ap_table(values, title):
        rows = [{"class": name, **{key: values[name][key] for key in MODELS}} for name in values]
        rows.append({"class": "mean", **{key: float(np.mean([values[n][key] for n in values])) for key in MODELS}})
        return format_table(rows, ["class", *MODELS], title=title, floatfmt=".3f")

    data_name = {"detection_mini": "detection_mini (bundled)",
                 "scenes": "synthetic scenes (skimage cat/cup/face)"}.get(args.data, args.data)
    tables = [
        ap_table(results, f"Test detection AP (VOC area rule, IoU>=0.5) on {data_name}; "
                          f"{args.max_windows} windows/image, min area {args.min_window_area:g}, "
                          f"geometry x{args.geometry_scale:g}, negatives={args.negatives}"),
        ap_table(results_11, "Test detection AP (VOC 2007 11-point rule, IoU>=0.5)"),
        ap_table(results_image, "Test image-level AP (images ranked by their best window: recognition "
                                "without localisation)"),
        ap_table(corloc, "Training CorLoc (positive training images whose best-scoring window has IoU>=0.5 "
                         "with a box; boxes read only for this report)"),
        ap_table(window_area, "Median area of that window / image area (training positives)"),
        format_table([{"class": name, **{key: chosen[name][key]["C"] for key in MODELS}} for name in chosen],
                     ["class", *MODELS], floatfmt="g",
                     title=(f"C chosen by {args.cv_folds}-fold CV of image-level AP over {args.C}"
                            if len(args.C) > 1 else f"C fixed at {args.C[0]:g}")),
        format_table([{"oracle": oracle, "total LAI seconds": seconds, "calls": lai_calls[oracle],
                       "ms per call": 1e3 * seconds / max(lai_calls[oracle], 1)} for oracle, seconds in lai.items()],
                     title="Loss-augmented inference time of latent AP-SVM training, all classes "
                           "(paper, VOC 2007: QS 0.52 s vs Yue 7.6 s)", floatfmt=".3f"),
        format_table([{"stage": key, "seconds": value} for key, value in stage.items()],
                     title="Time per stage", floatfmt=".1f"),
    ]
    payload = {"classes": results, "classes_11point": results_11, "classes_image_ap": results_image,
               "training_corloc": corloc, "training_window_area": window_area, "lai_seconds": lai,
               "lai_calls": lai_calls,
               "stage_seconds": stage, "training_seconds": train_seconds, "chosen_C": chosen,
               "settings": {"data": data_name, "max_windows": args.max_windows,
                            "working_size": args.working_size, "C": args.C,
                            "min_window_area": args.min_window_area,
                            "geometry_scale": args.geometry_scale, "negatives": args.negatives,
                            "max_cccp_iter": args.max_cccp_iter,
                            "n_train_windows": int(train_store.n_windows),
                            "n_test_windows": int(test_store.n_windows),
                            "n_features": int(train_store.n_features)}}
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
