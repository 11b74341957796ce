"""Weakly supervised object detection with the latent AP-SVM (QS paper §6.2, docs/design.md §4).

Each image is a bag of selective-search windows (``ssvm.detection.selective_search_many``, fast
mode, on a shrunk working copy, capped per image, row 0 = the whole image) described by window
features in a memory-mapped ``WindowStore``: ``--features cnn`` (the default when the ``cnn`` extra
imports: EfficientNet-Lite0 stage 5 RoIAligned into 4 x 4 cells, ``ssvm.detection.CnnFeatures``)
or ``--features hog`` (HOG + HSV histograms). Only image-level labels (class present or not) train
the weakly supervised detectors. Per class, the detectors below use the same windows and features
and are evaluated by VOC detection AP (IoU >= 0.5, difficult boxes ignored) on the test split
after non-maximum suppression (IoU 0.3):

* ``latent_ap_svm``       LatentRankSVM(loss="ap"): CCCP, positives' best windows imputed; by default
                          (``--ap-init auto``) from the estimator's starts (each image's mean window,
                          the latent 0-1 SVM at C, C/10, C/100) and the latent 0-1 SVM's weights at
                          its validated C, keeping the run of the lowest final objective J; or the
                          start chosen per class on the validation folds like C (``select``: the mean
                          window or the 0-1 SVM's weights), or the lower J of those two
                          (``lowest_j``); ``zero_one`` or ``mean`` fixes it;
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

Every hyper-parameter — C, geometry scale, minimum area, the AP-SVM's start — is chosen per class and per model from
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

import logging
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import emit, format_table, grouped_bars, make_parser, pyplot, setup
from _detection import evaluate_scores, proposal_recall
from _detection_data import add_window_options, check_window_options, parse_grid, prepare, trainable_classes
from _detection_models import MODELS, class_detections, train_class

logger = logging.getLogger("scripts")


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
    parser.add_argument("--C", help="C of the AP-SVMs (in the units of hinge_scale='margin'), or a comma-separated "
                                    "grid chosen by CV (default 1,100 with cnn, 1,10,100 with hog; --quick 10,100)")
    parser.add_argument("--C-zero-one", help="C grid of the 0-1 SVMs, whose hinge is a mean over the windows "
                                             "(RankSVM(loss='zero_one', C) is LinearSVC(C / n)): default "
                                             "10000,100000 with cnn, 1000,10000,100000 with hog; --quick 100,1000")
    parser.add_argument("--cv-folds", type=int, default=2, help="folds of the C selection (default 2)")
    parser.add_argument("--cold-selection", action="store_true",
                        help="select the latent models' C by a cold CCCP fit per C (default: one warm path over C, "
                             "ssvm.latent.latent_C_path)")
    parser.add_argument("--negatives", choices=("all", "best"), default="all")
    parser.add_argument("--ap-init", choices=("auto", "select", "lowest_j", "zero_one", "mean"), default="auto",
                        help="CCCP start of the latent AP-SVM: 'auto' (default): the estimator's starts "
                             "(init='auto') and the latent 0-1 SVM's weights at its validated C, the lowest "
                             "final objective J; 'zero_one' (the latent 0-1 SVM's weights, same images and "
                             "windows), 'mean' (each image's mean window), 'select': the one of these two with "
                             "the better validation score, chosen with C, or 'lowest_j': every fit runs CCCP "
                             "from both and keeps the lower final objective J")
    parser.add_argument("--max-cccp-iter", type=int, help="CCCP steps (default 8; --quick 3)")
    parser.add_argument("--no-yue-twin", action="store_true",
                        help="skip the latent AP-SVM's twin with Yue et al.'s oracle (the same model, fitted "
                             "again only to time the oracles): halves the latent AP-SVM's training time; the "
                             "LAI table then has the QS oracle only")
    args = setup(parser, argv)
    if args.resume and not args.out:
        parser.error("--resume needs --out (the folder holding the checkpoints)")
    check_window_options(parser, args)
    args.max_cccp_iter = args.max_cccp_iter or (3 if args.quick else 8)
    args.C = parse_grid(parser, "--C", args.C or ("10,100" if args.quick else "1,100" if args.features == "cnn"
                                             else "1,10,100"))
    args.C_zero_one = parse_grid(parser, "--C-zero-one", args.C_zero_one or (
        "100,1000" if args.quick else "10000,100000" if args.features == "cnn" else "1000,10000,100000"))
    args.geometry_scale = parse_grid(parser, "--geometry-scale", args.geometry_scale)
    args.min_window_area = parse_grid(parser, "--min-window-area", "0,0.1" if args.quick and
                                 args.min_window_area == "0,0.1,0.2" else args.min_window_area)
    if not all(0.0 <= a < 1.0 for a in args.min_window_area):
        parser.error(f"--min-window-area values must lie in [0, 1), got {args.min_window_area}")
    if min(args.C + args.C_zero_one) <= 0 or args.cv_folds < 2:
        parser.error("--C and --C-zero-one values must be positive and --cv-folds at least 2")
    if not all(np.isfinite(g) and g >= 0 for g in args.geometry_scale):
        parser.error(f"--geometry-scale values must be >= 0, got {args.geometry_scale}")
    return args


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
    """Call the QS and Yue oracles once so that a first call's set-up is not counted as LAI time."""
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
                if key in latent:
                    lai[oracle] += latent[key].lai_seconds_
                    lai_calls[oracle] += latent[key].lai_calls_
            models.pop("latent_ap_svm_yue", None)
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
                                              f"{chosen[name][key]['min_area']:g}"
                                              + (f" / {chosen[name][key]['start']}" if key == "latent_ap_svm" else "")
                                         for key in MODELS}}
                      for name in chosen], ["class", *MODELS],
                     title=(f"C / geometry scale / min window area (latent AP-SVM: / CCCP start of the final "
                            f"fit) chosen by {args.cv_folds}-fold CV on the "
                            f"training images over {ranges} (latent and whole-image: validation "
                            f"{'detection AP' if args.select == 'detection' else 'image-level AP'}; "
                            "supervised: detection AP, min area 0)")),
        format_table([{"oracle": oracle, "total LAI seconds": seconds, "calls": lai_calls[oracle],
                       "ms per call": 1e3 * seconds / max(lai_calls[oracle], 1)} for oracle, seconds in lai.items()
                       if oracle == "qs" or not args.no_yue_twin],
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
                            "max_cccp_iter": args.max_cccp_iter, "ap_init": args.ap_init,
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
