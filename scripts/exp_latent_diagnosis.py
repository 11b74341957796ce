"""Why the latent AP-SVM and the latent 0-1 SVM differ on weakly supervised detection (issue 23).

Per class, each *variant* of a latent detector is trained on image labels only and reported by its
mean 2-fold validation detection AP on the training images (the figure a choice may use), its test
detection AP (VOC area rule, NMS at 0.3), its training CorLoc, the median area of the windows it
imputes, and its CCCP run (steps, J at w₀ and at the end). A variant is written
``LOSS:NEGATIVES[:key=value...]`` with keys ``C``, ``init`` (``auto``: the estimator's default, CCCP
from the mean window and from the latent 0-1 SVM at C, C/10 and C/100, the lowest final J; ``mean``:
each image's mean window; ``whole``: the whole-image model; ``centre``: the centre prior, the model
of each positive image's window closest to the middle half of the image (largest IoU with it) against all windows of the
negative images; ``zero_one``: the weights of the latent 0-1 SVM with all windows of the negative
images as negatives and the C of ``--C-zero-one``), ``scale`` (``hinge_scale``: ``margin``, the
default, or a number; ``scale=1`` is the behaviour before issue 38), ``steps`` (CCCP steps),
``tol`` (CCCP's relative tolerance), ``area`` (minimum window area) and ``windows`` (K > 1: each
positive image enters with its K best windows, re-imputed by CCCP from the 1-window model's
weights; ``ap:all`` only); ``C`` and ``area`` take
``/``-separated grids, chosen per class by the validation detection AP. Every variant uses the
same windows (``--min-window-area`` unless a variant sets ``area``; geometry features off), so the
table isolates the formulation and training choices. ``--figure PNG`` draws, for a few training
positives per class (first those where the first two variants differ), the ground-truth boxes and
the window each of the first three variants imputes.

Uses the window and feature cache of ``train_latent_detection.py`` (``--out``).
"""

from __future__ import annotations

import logging
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import emit, format_table, make_parser, setup
from _detection import evaluate_scores, view
from _detection_data import add_window_options, bags, check_window_options, prepare, trainable_classes, window_rows
from _detection_models import Setting, _folds, _warnings_as_log, window_detections

logger = logging.getLogger("scripts")

DEFAULT_VARIANTS = "ap:all,zero_one:all,ap:best,zero_one:best"
INITS = ("mean", "auto", "whole", "centre", "zero_one")


def parse_variant(text, args):
    """``LOSS:NEGATIVES[:key=value...]`` as a dict (C defaults to the loss's ``--C`` value)."""
    parts = text.split(":")
    if len(parts) < 2 or parts[0] not in ("ap", "zero_one") or parts[1] not in ("all", "best"):
        raise SystemExit(f"bad variant {text!r}: LOSS:NEGATIVES[:key=value...] with LOSS ap or zero_one, "
                         "NEGATIVES all or best")
    spec = {"name": text, "loss": parts[0], "negatives": parts[1], "init": "mean",
            "C": args.C_zero_one if parts[0] == "zero_one" else args.C, "steps": args.max_cccp_iter,
            "tol": 1e-3, "area": args.min_window_area, "windows": 1, "scale": "margin"}
    for item in parts[2:]:
        key, _, value = item.partition("=")
        if key not in ("C", "init", "steps", "tol", "area", "windows", "scale"):
            raise SystemExit(f"bad variant {text!r}: unknown key {key!r}")
        spec[key] = value if key == "init" or (key, value) == ("scale", "margin") else \
            float(value) if key in ("tol", "scale") else \
            [float(v) for v in value.split("/")] if key in ("C", "area") else int(value)
    spec["C"], spec["area"] = np.atleast_1d(spec["C"]).tolist(), np.atleast_1d(spec["area"]).tolist()
    if spec["windows"] < 1 or (spec["windows"] > 1 and parts[:2] != ["ap", "all"]):
        raise SystemExit(f"bad variant {text!r}: windows=K takes K >= 1, and K > 1 only with ap:all")
    if spec["init"] not in INITS:
        raise SystemExit(f"bad variant {text!r}: init must be one of {', '.join(INITS)}")
    return spec


def fit_variant(spec, split, setting, images, y, args):
    """One latent model of ``spec`` with ``setting`` (its C and minimum window area) on ``images``."""
    from ssvm import LatentRankSVM

    X, offsets = bags(split, setting, images)
    if (spec["loss"], spec["init"], spec["tol"], spec["scale"]) == ("zero_one", "mean", 1e-3, "margin") and \
            (setting.C, spec["steps"]) == (args.C_zero_one, args.max_cccp_iter):
        return _zero_one(X, offsets, y, spec["negatives"], images, setting, args)  # shared with init
    init = spec["init"] if spec["init"] in ("mean", "auto") else None
    if spec["init"] == "whole":
        init = _fit_whole(spec, split, setting, images, y, args).coef_
    elif spec["init"] == "centre":
        init = _fit_centre(spec, split, setting, images, y, args).coef_
    elif spec["init"] == "zero_one":
        init = _zero_one(X, offsets, y, "all", images, setting, args).coef_
    model = LatentRankSVM(loss=spec["loss"], C=setting.C, negatives=spec["negatives"], init=init,
                          hinge_scale=spec["scale"], max_cccp_iter=spec["steps"], cccp_tol=spec["tol"],
                          random_state=args.seed)
    with _warnings_as_log():
        model.fit(X, y, offsets=offsets)
    return model if spec["windows"] == 1 else _several_windows(spec, split, setting, images, y, X, offsets, model)


def _several_windows(spec, split, setting, images, y, X, offsets, start):
    """CCCP with the K = ``spec["windows"]`` best windows of each positive image as positives (all
    windows of the negative images as negatives: one AP-SVM over rows per step), from the weights of
    the 1-window model ``start``; stops when the imputed windows repeat. Returns a record with the
    attributes of a fitted LatentRankSVM that :func:`run_class` reads (``history_``: the objective
    after each step)."""
    from types import SimpleNamespace

    from ssvm import RankSVM
    from ssvm.detection.store import chunked_scores

    rows, _ = window_rows(split, images, setting.min_area)
    negative_rows = np.concatenate([np.arange(offsets[b], offsets[b + 1]) for b in np.flatnonzero(~y)])
    coef, intercept, chosen, history, steps = start.coef_, start.intercept_, None, [], []
    for _ in range(spec["steps"]):
        scores = chunked_scores(X, coef, intercept, chunk_rows=65536)
        picked = np.concatenate([offsets[b] + np.argsort(-scores[offsets[b]:offsets[b + 1]], kind="stable")
                                 [:spec["windows"]] for b in np.flatnonzero(y)])
        if chosen is not None and np.array_equal(np.sort(picked), np.sort(chosen)):
            break
        steps.append({"n_changed": int(picked.size if chosen is None else np.setdiff1d(picked, chosen).size)})
        chosen = picked
        keep = np.r_[picked, negative_rows]
        features = view(split.store.features, split.geometry, setting.scale, rows[keep])[:]
        with _warnings_as_log():
            model = RankSVM(loss="ap", C=setting.C).fit(features, np.arange(keep.size) < picked.size)
        coef, intercept = model.coef_[0], float(model.intercept_[0])
        history.append(model.objective_)
    return SimpleNamespace(coef_=coef, intercept_=intercept, n_iter_=len(steps), steps_=steps,
                           history_=[start.history_[-1], *history])


_ZERO_ONE = {}


def _zero_one(X, offsets, y, negatives, images, setting, args):
    """The latent 0-1 SVM (``--C-zero-one``) of these images, fitted once and remembered."""
    from ssvm import LatentRankSVM

    key = (tuple(images.tolist()), np.asarray(y, dtype=bool).tobytes(), setting.min_area, negatives)
    if key not in _ZERO_ONE:
        model = LatentRankSVM(loss="zero_one", C=args.C_zero_one, negatives=negatives,
                              max_cccp_iter=args.max_cccp_iter, random_state=args.seed)
        with _warnings_as_log():
            _ZERO_ONE[key] = model.fit(X, y, offsets=offsets)
    return _ZERO_ONE[key]


def _fit_whole(spec, split, setting, images, y, args):
    from ssvm import LatentRankSVM

    X, offsets = bags(split, setting, images, whole=True)
    with _warnings_as_log():
        return LatentRankSVM(loss=spec["loss"], C=setting.C, init="mean", hinge_scale=spec["scale"],
                             random_state=args.seed).fit(X, y, offsets=offsets)


def centre_rows(split, rows, offsets):
    """Per bag (``rows`` of the store, bags by ``offsets``), the position in ``rows`` of the window
    with the largest IoU with the middle half of its image (row 0 of a bag is the whole image)."""
    from ssvm.detection import iou

    picked = np.empty(offsets.size - 1, dtype=np.int64)
    for b in range(picked.size):
        boxes = split.store.boxes[rows[offsets[b]:offsets[b + 1]]]
        x0, y0, x1, y1 = boxes[0]
        w, h = x1 - x0, y1 - y0
        middle = np.array([[x0 + w / 4, y0 + h / 4, x1 - w / 4, y1 - h / 4]])
        picked[b] = offsets[b] + int(np.argmax(iou(middle, boxes)[0]))
    return picked


def _fit_centre(spec, split, setting, images, y, args):
    """The centre-prior start: each positive image as its centre window (:func:`centre_rows`), the
    negative images with all their windows, one CCCP step (nothing to impute)."""

    from ssvm import LatentRankSVM

    rows, offsets = window_rows(split, images, setting.min_area)
    centre = centre_rows(split, rows, offsets)
    keep = np.concatenate([[centre[b]] if y[b] else np.arange(offsets[b], offsets[b + 1])
                           for b in range(images.size)])
    sizes = np.where(y, 1, np.diff(offsets))
    X = view(split.store.features, split.geometry, setting.scale, rows[keep])
    with _warnings_as_log():
        return LatentRankSVM(loss=spec["loss"], C=setting.C, negatives=spec["negatives"], max_cccp_iter=1,
                             init="mean", hinge_scale=spec["scale"],
                             random_state=args.seed).fit(X, y, offsets=np.r_[0, np.cumsum(sizes)])


def corloc(name, model, split, setting, images, y):
    """Training CorLoc of a fitted model (its best window per positive image hits a box) and the
    median relative area of those windows; also the best window per image (store rows)."""
    from ssvm.detection import iou

    dets = window_detections(model.coef_, model.intercept_, split, setting, images)
    gt_boxes, gt_difficult = split.dataset.class_boxes(name)
    hits, areas, best = [], [], {}
    for j, i in enumerate(images):
        box = dets[j][0][:1]
        best[int(i)] = box[0]
        gt = gt_boxes[i][~gt_difficult[i]]
        if y[j] and len(gt):
            hits.append(iou(box, gt).max() >= 0.5)
            w, h = split.store.boxes[split.store.offsets[i], [2, 3]]
            areas.append((box[0, 2] - box[0, 0] + 1) * (box[0, 3] - box[0, 1] + 1) / ((w + 1) * (h + 1)))
    return float(np.mean(hits)), float(np.median(areas)), best


def run_class(name, keep, train, test, variants, args):
    """Every variant of one class: validation AP, test AP, CorLoc, CCCP record."""
    images = np.flatnonzero(keep)
    y = train.dataset.image_labels(name)[images]
    rows, boxes = [], {}
    for spec in variants:
        tic = time.perf_counter()
        points = [Setting(C, 0.0, a, spec["init"]) for a in spec["area"] for C in spec["C"]]
        scores = {}
        for point in points if args.cv_folds > 1 else []:
            val = []
            for fit_part, val_part in _folds(y, args):
                model = fit_variant(spec, train, point, images[fit_part], y[fit_part], args)
                dets = window_detections(model.coef_, model.intercept_, train, point, images[val_part])
                val.append(evaluate_scores(dets, train.dataset, name, images[val_part])[0])
            scores[point] = float(np.mean(val))
            logger.info("%s %s %s: validation AP %.3f", name, spec["name"], point.label(), scores[point])
        setting = max(scores, key=scores.get) if scores else points[0]
        model = fit_variant(spec, train, setting, images, y, args)
        test_ap = evaluate_scores(window_detections(model.coef_, model.intercept_, test, setting),
                                  test.dataset, name)[0]
        hit, area, boxes[spec["name"]] = corloc(name, model, train, setting, images, y)
        rows.append({"class": name, "variant": spec["name"], "C": setting.C, "area": setting.min_area,
                     "val AP": scores.get(setting, float("nan")), "test AP": test_ap,
                     "CorLoc": hit, "window": area, "steps": model.n_iter_, "J0": model.history_[0],
                     "J": model.history_[-1], "J path": [round(j, 4) for j in model.history_],
                     "changed": [s["n_changed"] for s in model.steps_],
                     "seconds": time.perf_counter() - tic})
        logger.info("%s %s %s: val %.3f test %.3f CorLoc %.3f, %d steps, J %s, changed %s, %.0fs", name,
                    spec["name"], setting.label(), rows[-1]["val AP"], test_ap, hit, model.n_iter_,
                    rows[-1]["J path"], rows[-1]["changed"], rows[-1]["seconds"])
    return rows, boxes


def figure(path, train, classes, boxes, names, per_class=3):
    """A grid of training positives with their boxes (green) and the windows the first three
    variants impute (red, blue, orange): first the images where the first two variants differ."""
    from _common import pyplot
    from PIL import Image

    plt = pyplot()
    fig, axes = plt.subplots(len(classes), per_class, figsize=(2.2 * per_class, 1.8 * len(classes)))
    axes = np.atleast_2d(axes)
    for r, name in enumerate(classes):
        gt_boxes, _ = train.dataset.class_boxes(name)
        positives = [i for i in sorted(boxes[name][names[0]]) if len(gt_boxes[i])]
        differ = [i for i in positives if len(names) > 1 and  # where the first two variants differ first
                  not np.array_equal(boxes[name][names[0]][i], boxes[name][names[1]][i])]
        positives = (differ + [i for i in positives if i not in differ])[:per_class]
        for c in range(per_class):
            ax = axes[r, c]
            ax.axis("off")
            if c >= len(positives):
                continue
            i = positives[c]
            image = Image.open(train.dataset.image_paths[i]).convert("RGB")
            scale = 160 / max(image.size)
            ax.imshow(image.resize((max(1, int(image.width * scale)), max(1, int(image.height * scale)))))
            for box, colour in [(b, "lime") for b in gt_boxes[i]] + [
                    (boxes[name][n][i], colour) for n, colour in zip(names, ("red", "blue", "orange"))]:
                x1, y1, x2, y2 = np.asarray(box, dtype=float) * scale
                ax.add_patch(plt.Rectangle((x1, y1), x2 - x1, y2 - y1, fill=False, color=colour, lw=1.2))
            if c == 0:
                ax.set_title(name, fontsize=7, loc="left")
    fig.suptitle("green: box; " + "; ".join(f"{c}: {n}" for c, n in zip(("red", "blue", "orange"), names)),
                 fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=72)
    plt.close(fig)


def main(argv=None):
    parser = make_parser(__doc__)
    add_window_options(parser)
    parser.add_argument("--variants", default=DEFAULT_VARIANTS, help=f"comma-separated (default {DEFAULT_VARIANTS})")
    parser.add_argument("--C", type=float, default=1000.0, help="default C of the ap variants (1000)")
    parser.add_argument("--C-zero-one", type=float, default=10000.0, help="default C of the zero_one variants (1e4)")
    parser.add_argument("--min-window-area", type=float, default=0.0, help="one value (default 0)")
    parser.add_argument("--cv-folds", type=int, default=2, help="validation folds (0: no validation AP)")
    parser.add_argument("--max-cccp-iter", type=int, default=8)
    parser.add_argument("--figure", metavar="PNG", help="imputed windows of the first three variants")
    args = setup(parser, argv)
    check_window_options(parser, args)
    if args.quick:
        args.max_cccp_iter = min(args.max_cccp_iter, 3)
    variants = [parse_variant(v, args) for v in args.variants.split(",")]
    with tempfile.TemporaryDirectory(prefix="latent-diagnosis-") as scratch:
        work = Path(args.out) if args.out else Path(scratch)
        train, test = prepare(args, work, {})
        classes = trainable_classes(args, train.dataset, test.dataset)
        rows, boxes = [], {}
        for name, keep in classes.items():
            class_rows, boxes[name] = run_class(name, keep, train, test, variants, args)
            rows += class_rows
        if args.figure:
            figure(args.figure, train, list(classes), boxes, [v["name"] for v in variants])
    means = []
    for spec in variants:
        sub = [r for r in rows if r["variant"] == spec["name"]]
        means.append({"class": "mean", "variant": spec["name"],
                      **{k: float(np.mean([r[k] for r in sub])) for k in ("val AP", "test AP", "CorLoc", "window",
                                                                         "steps", "seconds")}})
    columns = ["class", "variant", "C", "area", "val AP", "test AP", "CorLoc", "window", "steps", "J0", "J",
               "seconds"]
    tables = [format_table(rows + means, columns, floatfmt=".3f",
                           title=f"Latent detectors on {args.data} ({args.features}, min window area "
                                 f"{args.min_window_area:g}): {args.cv_folds}-fold validation detection AP "
                                 "on the training images, test detection AP, training CorLoc, median "
                                 "imputed area, CCCP steps and J")]
    emit(args, tables, {"rows": rows, "means": means, "variants": variants})


if __name__ == "__main__":
    main()
