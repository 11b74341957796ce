"""Selective search's recall of the ground-truth boxes (IoU >= 0.5) at 150 / 500 / 2,000 windows per image.

Recall is the ceiling on what any detector choosing among the windows can localise: a ground-truth
box that no window overlaps by IoU >= 0.5 can never be detected, and an image none of whose boxes
is covered caps training CorLoc. For every split (train, test), selective-search setting
(``mode@working_size``; ``scripts/train_latent_detection.py`` uses fast@256 with minimum size 8),
cap on the windows per image (the first ``cap`` of selective search's ranking, row 0 the whole
image) and minimum window area (0, and the 5% prior of the training script), the script reports:

* ``win/img``  windows per image actually returned (selective search may return fewer than the cap);
* per class and mean over classes: the share of non-difficult ground-truth boxes with a window at
  IoU >= 0.5;
* ``ceiling``  mean over classes of the share of images holding the class in which at least one box
  is covered (the CorLoc a perfect window scorer would reach);
* ``s/img``    median seconds of selective search per image on one core (uncapped: the cap does
  not change the cost).

Selective search runs once per image and setting, uncapped and without minimum area; every cap and
minimum area is a filter and prefix of that list, checked against a direct capped call on one image.
The recommended default is chosen on the *train* split: the fewest windows per image whose mean
recall (no minimum area) is within 0.02 of the best measured.
"""

from __future__ import annotations

import logging
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import emit, format_table, make_parser, pyplot, setup  # noqa: E402
from _windows import (  # noqa: E402
    add_data_arguments,
    capped,
    check_capped,
    load_detection_splits,
    search_all,
)

logger = logging.getLogger("scripts")

CURVE_CAPS = (1, 2, 5, 10, 20, 50, 100, 150, 200, 300, 500, 1000, 2000, 3000, 5000)


def parse_args(argv=None):
    """Command line (shared options from ``_common.make_parser``)."""
    parser = make_parser(__doc__)
    add_data_arguments(parser)
    parser.add_argument("--settings", help="comma-separated mode@working_size "
                        "(default fast@256,fast@512,quality@256,quality@512; --quick fast@128)")
    parser.add_argument("--caps", help="windows per image (default 150,500,2000; --quick 20,50)")
    parser.add_argument("--min-area", type=float, default=0.05,
                        help="the minimum-area prior compared with none (default 0.05)")
    parser.add_argument("--n-jobs", type=int, default=2, help="joblib workers (default 2)")
    parser.add_argument("--out", metavar="DIR", help="cache of the selective-search windows")
    args = setup(parser, argv)
    if args.plot:
        pyplot()  # fail now, not after the run, if matplotlib is missing
    if args.quick:
        args.max_images = args.max_images or 4
    try:
        args.settings = [(mode, int(size)) for mode, size in
                         (s.split("@") for s in (args.settings or ("fast@128" if args.quick else
                          "fast@256,fast@512,quality@256,quality@512")).split(","))]
        args.caps = [int(c) for c in (args.caps or ("20,50" if args.quick else "150,500,2000")).split(",")]
    except ValueError:
        parser.error("--settings must look like fast@256,quality@512 and --caps like 150,500")
    if not 0.0 < args.min_area < 1.0:
        parser.error(f"--min-area must lie in (0, 1), got {args.min_area}")
    return args


def coverage(windows, gt_boxes, gt_difficult):
    """Per image: best IoU of each non-difficult ground-truth box over the windows."""
    from ssvm.detection import iou

    best = []
    for boxes, gts, hard in zip(windows, gt_boxes, gt_difficult):
        gts = gts[~hard]
        best.append(iou(boxes, gts).max(axis=0) if len(gts) else np.zeros(0))
    return best


def recall_of(best, threshold=0.5):
    """(box recall, image ceiling) from per-image best IoUs (images without boxes skipped)."""
    found = [b >= threshold for b in best if b.size]
    if not found:
        return float("nan"), float("nan")
    return float(np.mean(np.concatenate(found))), float(np.mean([f.any() for f in found]))


def measure(dataset, searched, caps, min_areas):
    """Rows of recall per class for one split and setting."""
    rows = []
    for min_area in min_areas:
        for cap in caps:
            windows = [capped(boxes, shape, cap, min_area) for boxes, _, shape in searched]
            row = {"min area": min_area, "cap": cap, "win/img": float(np.mean([len(w) for w in windows]))}
            ceilings = []
            for name in dataset.classes:
                gt, hard = dataset.class_boxes(name)
                row[name], ceiling = recall_of(coverage(windows, gt, hard))
                ceilings.append(ceiling)
            row["mean"] = float(np.nanmean([row[name] for name in dataset.classes]))
            row["ceiling"] = float(np.nanmean(ceilings))
            rows.append(row)
    return rows


def recommend(rows, tolerance=0.02):
    """Fewest windows per image (no minimum area) within ``tolerance`` of the best mean recall."""
    free = [r for r in rows if r["min area"] == 0.0]
    best = max(r["mean"] for r in free)
    good = [r for r in free if r["mean"] >= best - tolerance]
    return min(good, key=lambda r: (r["win/img"], r["s/img"])), best


def run(args):
    work = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="recall-"))
    root, data = load_detection_splits(args, work)
    min_areas = (0.0, args.min_area)
    rows, curves, tables = [], [], []
    for mode, size in args.settings:
        first = data["train"].image_paths[0]
        check_capped(first, mode, size, min(args.caps), args.min_area, seed=args.seed)
        for split, dataset in data.items():
            start = time.perf_counter()
            searched = search_all(dataset.image_paths, mode, size, seed=args.seed, n_jobs=args.n_jobs,
                                  cache_dir=work / "windows")
            logger.info("%s %s@%d: %d images in %.1f s", split, mode, size, len(searched),
                        time.perf_counter() - start)
            seconds = float(np.median([s for _, s, _ in searched]))
            for row in measure(dataset, searched, args.caps, min_areas):
                rows.append({"split": split, "setting": f"{mode}@{size}", **row, "s/img": seconds})
            for row in measure(dataset, searched, CURVE_CAPS, min_areas):
                curves.append({"split": split, "setting": f"{mode}@{size}", "min area": row["min area"],
                               "cap": row["cap"], "win/img": row["win/img"], "mean": row["mean"]})
    classes = data["train"].classes
    columns = ["setting", "min area", "cap", "win/img", *classes, "mean", "ceiling", "s/img"]
    fmt = {"min area": ".2f", "win/img": ".0f", "s/img": ".2f", **{c: ".3f" for c in classes},
           "mean": ".3f", "ceiling": ".3f"}
    for split in data:
        tables.append(format_table([r for r in rows if r["split"] == split], columns, floatfmt=fmt,
                                   title=f"Recall of ground-truth boxes at IoU >= 0.5, {split} split "
                                         f"({len(data[split])} images, {root.name})"))
    cost = []
    for r in rows:
        if r["min area"] == 0.0:
            prior = next(p for p in rows if p["min area"] == args.min_area and
                         (p["split"], p["setting"], p["cap"]) == (r["split"], r["setting"], r["cap"]))
            cost.append({"split": r["split"], "setting": r["setting"], "cap": r["cap"],
                         "recall without": r["mean"], "recall with": prior["mean"],
                         "cost": r["mean"] - prior["mean"],
                         "ceiling cost": r["ceiling"] - prior["ceiling"]})
    tables.append(format_table(cost, floatfmt=".3f",
                               title=f"What the {args.min_area:g} minimum-area prior costs (mean recall)"))
    choice, best = recommend([r for r in rows if r["split"] == "train"])
    test_row = next(r for r in rows if (r["split"], r["setting"], r["cap"], r["min area"]) ==
                    ("test", choice["setting"], choice["cap"], 0.0))
    advice = (f"Recommended default (train split, no minimum area): {choice['setting']} capped at "
              f"{choice['cap']} windows ({choice['win/img']:.0f} per image): mean recall "
              f"{choice['mean']:.3f} (best measured {best:.3f}); test split {test_row['mean']:.3f}; "
              f"selective search {choice['s/img']:.2f} s per image")
    tables.append(advice)
    if args.plot:
        plot(args, curves)
    emit(args, tables, {"data": str(root), "rows": rows, "curves": curves, "min_area_cost": cost,
                        "recommendation": {**choice, "best_train_mean": best}})


def plot(args, curves):
    """Mean recall against windows per image, per setting; dashed with the minimum-area prior."""
    plt = pyplot()
    splits = sorted({c["split"] for c in curves}, reverse=True)
    fig, axes = plt.subplots(1, len(splits), figsize=(5 * len(splits), 4), squeeze=False)
    for ax, split in zip(axes[0], splits):
        for setting in dict.fromkeys(c["setting"] for c in curves):
            for min_area, style in ((0.0, "-"), (args.min_area, "--")):
                pts = [c for c in curves if (c["split"], c["setting"], c["min area"]) ==
                       (split, setting, min_area)]
                ax.plot([c["win/img"] for c in pts], [c["mean"] for c in pts], style, marker=".",
                        label=f"{setting}" + (f", min area {min_area:g}" if min_area else ""))
        ax.set_xscale("log")
        ax.set_xlabel("windows per image")
        ax.set_ylabel("mean recall at IoU 0.5")
        ax.set_title(split)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(Path(args.plot) / "proposal_recall.png", dpi=100)


def main(argv=None):
    run(parse_args(argv))


if __name__ == "__main__":
    main()
