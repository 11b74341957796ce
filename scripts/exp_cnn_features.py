"""Which CNN window feature to use: EfficientNet-Lite0 stage, RoIAlign grid and input size, measured.

Every candidate is scored by how well a *fully supervised* linear window classifier trained on it
detects the objects — the quantity the features bound for any detector built on them — using the
training images only (the test split is not read), by ``--folds``-fold cross-validation over the
images of the train split (fold k validates on the images i with i mod folds = k and fits on the
others). For each class and fold, a linear SVM (``LinearSVC``, the best C of a small grid on the
fold) is trained on the fitting images' ground-truth boxes (positives) against their windows
overlapping no box of the class by IoU >= 0.3 (``--negatives`` random ones per image), then scores
every selective-search window of the validation images; after non-maximum suppression (IoU 0.3),
VOC detection AP (area rule, IoU 0.5) is averaged over the folds, per class and as the mean.
Windows: selective search fast@256 without minimum area, the first ``--windows`` per image. The
HOG + colour features of ``HogColorFeatures`` are the reference row. Also reported: feature
length, the network's forward time and the RoIAlign time per image.

The candidate with the best mean validation AP is recommended; among candidates within 0.01 of it,
the one with the shortest vector (the store on disk scales with it).
"""

from __future__ import annotations

import logging
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import emit, format_table, make_parser, setup  # noqa: E402
from _windows import add_data_arguments, capped, load_detection_splits, search_all  # noqa: E402

logger = logging.getLogger("scripts")


def parse_args(argv=None):
    """Command line (shared options from ``_common.make_parser``)."""
    parser = make_parser(__doc__)
    add_data_arguments(parser)
    parser.add_argument("--sizes", help="network input sides (default 320,448,640; --quick 64)")
    parser.add_argument("--candidates", help="stage:grid,... (default stage5:1,stage5:2,stage7:1,"
                        "stage7:2,head:1; --quick stage5:1,head:1)")
    parser.add_argument("--windows", type=int, help="windows per image (default 300; --quick 30)")
    parser.add_argument("--negatives", type=int, default=50, help="random negatives per image (default 50)")
    parser.add_argument("--folds", type=int,
                        help="validation folds: images i with i %% folds == k validate fold k "
                             "(default 4; --quick 2)")
    parser.add_argument("--C", help="LinearSVC C grid (default 0.1,1,10; --quick 1)")
    parser.add_argument("--n-jobs", type=int, default=2, help="joblib workers of selective search")
    parser.add_argument("--out", metavar="DIR", help="cache of the selective-search windows")
    args = setup(parser, argv)
    if args.plot:
        parser.error("this script draws no figure")
    args.sizes = [int(s) for s in (args.sizes or ("64" if args.quick else "320,448,640")).split(",")]
    args.candidates = [(stage, int(grid)) for stage, grid in (c.split(":") for c in (
        args.candidates or ("stage5:1,head:1" if args.quick else
                            "stage5:1,stage5:2,stage7:1,stage7:2,head:1")).split(","))]
    args.windows = args.windows or (30 if args.quick else 300)
    args.folds = args.folds or (2 if args.quick else 4)
    if args.folds < 2:
        parser.error("--folds must be at least 2")
    args.C = [float(c) for c in (args.C or ("1" if args.quick else "0.1,1,10")).split(",")]
    if args.quick:
        args.max_images = args.max_images or 8
    return args


def stage_maps(net, x, stages):
    """Feature maps of several stages of an ``efficientnet_lite0("head")`` module in one pass."""
    import torch

    from ssvm.detection.backbones import STAGES

    wanted = {STAGES[s][0]: s for s in stages if s != "head"}
    maps = {}
    with torch.inference_mode():
        y = net.stem(x)
        for k, block in enumerate(net.blocks, start=1):
            y = block(y)
            if k in wanted:
                maps[wanted[k]] = y
        if "head" in stages:
            maps["head"] = net.head(y)
    return maps


def cnn_features(images, windows, size, candidates):
    """Per candidate: list of per-image (m_i, d) arrays; plus forward and pooling seconds per image."""
    from ssvm.detection import CnnFeatures, efficientnet_lite0, read_image

    net = efficientnet_lite0("head")
    stages = sorted({stage for stage, _ in candidates})
    extractors = {(stage, grid): CnnFeatures(efficientnet_lite0(stage), max_side=size, output_size=grid,
                                             verbose=0) for stage, grid in candidates}
    prep = extractors[candidates[0]]
    out = {c: [] for c in candidates}
    forward, pooling = [], {c: [] for c in candidates}
    for path, boxes in zip(images, windows):
        image = read_image(path)
        x = prep.preprocess(image)
        start = time.perf_counter()
        maps = stage_maps(net, x[None], stages)
        forward.append(time.perf_counter() - start)
        for c, extractor in extractors.items():
            start = time.perf_counter()
            out[c].append(extractor.pool(maps[c[0]][0], boxes, image.shape[:2], tuple(x.shape[1:])))
            pooling[c].append(time.perf_counter() - start)
    return out, float(np.median(forward)), {c: float(np.median(v)) for c, v in pooling.items()}


def hog_features(images, windows):
    from ssvm.detection import HogColorFeatures, read_image

    extractor = HogColorFeatures()
    feats, seconds = [], []
    for path, boxes in zip(images, windows):
        image = read_image(path)
        start = time.perf_counter()
        feats.append(extractor(image, boxes))
        seconds.append(time.perf_counter() - start)
    return feats, float(np.median(seconds))


def validation_ap(features, windows, dataset, fit, val, name, args, rng):
    """Best (over C) validation detection AP of a supervised window SVM for one class."""
    from sklearn.svm import LinearSVC

    from ssvm.detection import evaluate_detections, iou, nms

    gt, hard = dataset.class_boxes(name)
    X, y = [], []
    for i in fit:
        # image i's rows: all its ground-truth boxes (any class) first, then its windows
        positives = _gt_rows(dataset, i, name)
        X.append(features[i][positives])
        y.append(np.ones(len(positives)))
        overlap = iou(windows[i], gt[i]).max(axis=1) if len(gt[i]) else np.zeros(len(windows[i]))
        negative = np.flatnonzero(overlap < 0.3)
        pick = rng.choice(negative, size=min(args.negatives, negative.size), replace=False)
        X.append(_windows_of(features, dataset, i)[pick])
        y.append(np.zeros(pick.size))
    X, y = np.vstack(X), np.concatenate(y)
    best = -1.0
    for C in args.C:
        svm = LinearSVC(C=C, max_iter=5000).fit(X, y)
        dets = []
        for i in val:
            scores = svm.decision_function(_windows_of(features, dataset, i))
            keep = nms(windows[i], scores, 0.3)
            dets.append((windows[i][keep], scores[keep]))
        ap = evaluate_detections(dets, [gt[i] for i in val], [hard[i] for i in val], 0.5).ap
        best = max(best, ap)
    return best


def _windows_of(features, dataset, i):
    """Image i's window rows (after its ground-truth boxes)."""
    return features[i][len(dataset.boxes[i]):]


def _gt_rows(dataset, i, name):
    """Rows, among image i's ground-truth boxes, of the non-difficult boxes of class ``name``."""
    return [k for k, (c, h) in enumerate(zip(dataset.box_classes[i], dataset.difficult[i]))
            if c == name and not h]


def run(args):
    import torch

    work = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="cnnfeat-"))
    root, data = load_detection_splits(args, work, splits=("train",))
    train = data["train"]
    searched = search_all(train.image_paths, "fast", 256, seed=args.seed, n_jobs=args.n_jobs,
                          cache_dir=work / "windows")
    windows = [capped(b, shape, args.windows) for b, _, shape in searched]
    # features are computed for [ground-truth boxes; windows] of every image
    boxes = [np.vstack([gt.reshape(-1, 4), w]) for gt, w in zip(train.boxes, windows)]
    index = np.arange(len(train))
    folds = [(index[index % args.folds != k], index[index % args.folds == k]) for k in range(args.folds)]
    classes = [c for c in train.classes if all(train.image_labels(c)[val].any()
                                               and train.image_labels(c)[fit].any() for fit, val in folds)]
    if not classes:
        raise SystemExit("no class has images in every fold's fitting and validation parts: "
                         "use fewer --folds or more images")
    rows = []

    def score(label, feats, extra):
        rng = np.random.default_rng(args.seed)
        row = {"features": label, **extra}
        for name in classes:
            row[name] = float(np.mean([validation_ap(feats, windows, train, fit, val, name, args, rng)
                                       for fit, val in folds]))
        row["mean AP"] = float(np.mean([row[c] for c in classes]))
        rows.append(row)
        logger.info("%s: mean validation AP %.3f", label, row["mean AP"])

    hog, hog_seconds = hog_features(train.image_paths, boxes)
    score("HOG + colour", hog, {"side": "-", "dims": hog[0].shape[1], "forward ms": 0.0,
                                "pool ms": 1000 * hog_seconds})
    for size in args.sizes:
        feats, forward, pooling = cnn_features(train.image_paths, boxes, size, args.candidates)
        for (stage, grid), f in feats.items():
            score(f"{stage} {grid}x{grid}", f, {"side": size, "dims": f[0].shape[1],
                                                 "forward ms": 1000 * forward,
                                                 "pool ms": 1000 * pooling[(stage, grid)]})
        del feats
    columns = ["features", "side", "dims", *classes, "mean AP", "forward ms", "pool ms"]
    fmt = {"forward ms": ".0f", "pool ms": ".0f", **{c: ".3f" for c in classes}, "mean AP": ".3f"}
    n_windows = float(np.mean([len(w) for w in windows]))
    table = format_table(rows, columns, floatfmt=fmt, title=(
        f"Validation detection AP of a supervised linear SVM per window feature ({root.name} train "
        f"split, {args.folds}-fold: every {args.folds}th image validates, the others fit; mean over the "
        f"folds; {n_windows:.0f} windows per image; "
        f"times per image at {n_windows:.0f} windows, torch on {torch.get_num_threads()} thread(s))"))
    cnn_rows = [r for r in rows if r["features"] != "HOG + colour"]
    best = max(r["mean AP"] for r in cnn_rows)
    choice = min((r for r in cnn_rows if r["mean AP"] >= best - 0.01),
                 key=lambda r: (r["dims"], r["forward ms"]))
    advice = (f"Recommended: {choice['features']} at input side {choice['side']} ({choice['dims']} "
              f"dimensions): mean validation AP {choice['mean AP']:.3f} (best {best:.3f}; "
              f"HOG + colour {rows[0]['mean AP']:.3f})")
    emit(args, [table, advice], {"data": str(root), "classes": classes, "rows": rows,
                                 "recommendation": choice, "windows_per_image": n_windows})


def main(argv=None):
    run(parse_args(argv))


if __name__ == "__main__":
    main()
