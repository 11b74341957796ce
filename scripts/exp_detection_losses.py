"""Song et al.'s detection set-up (ICML 2016, section 4.3 / Table 2) on our CNN window features.

R-CNN style supervised detection: every selective-search window of a training image (and every
ground-truth box) is labelled positive for a class when it overlaps a box of that class by
IoU >= 0.5, negative otherwise (windows overlapping only a "difficult" box are left out). On top
of the *frozen* window features of ``train_latent_detection.py`` (the same windows and
memory-mapped stores, ``--out`` to share them), a small head — by default a one-hidden-layer MLP
(features -> ``--hidden`` ReLU units -> 1 score; ``--hidden 0``: a linear layer) — is trained per
class with SGD on mini-batches of ``--batch`` windows (Song et al.: 512) by

* ``x-ent``    binary cross-entropy of the score as a logit;
* ``hinge-AP`` the structured hinge of the batch's AP (:class:`ssvm.nn.RankHingeLoss`, QS oracle);
* ``pos-AP``   direct loss minimisation of the batch's AP in the positive direction
  (:class:`ssvm.nn.DirectRankLoss`, ε = ``--epsilon``, Song et al.'s 0.1),

with 0% and 20% (``--noise``) of the training windows' labels flipped (``flip_labels`` of
``exp_label_noise.py``: exactly that share of the rows, at random). Batches are stratified (every
batch gets its share of the positive rows, at least one). The learning rate is chosen per class,
loss and noise level from ``--lrs`` by the validation detection AP on a quarter of the training
images (every 4th image; the head is trained on the other three quarters, whose labels are the
noisy ones); the chosen head's test detection AP (VOC area rule, IoU 0.5, after NMS at 0.3) is
reported per class and as the mean, next to Song et al.'s Table 2 means (VOC 2012, AlexNet
fine-tuned). Measured results are in the documentation's results pages, not here.
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
from _detection import evaluate_scores, max_iou

logger = logging.getLogger("scripts")

METHODS = ("x-ent", "hinge-AP", "pos-AP")
#: Song et al. Table 2 (VOC 2012 detection, mean AP % over 20 classes) per noise level (x-ent: not
#: reported under noise)
SONG_TABLE2 = {0.0: {"x-ent": 45.6, "hinge-AP": 47.6, "pos-AP": 48.5},
               0.2: {"x-ent": None, "hinge-AP": 0.0, "pos-AP": 40.3}}


def parse_args(argv=None):
    """Command line (shared options from ``_common.make_parser`` and the detection script)."""
    from _detection_data import add_window_options, check_window_options, parse_grid

    parser = make_parser(__doc__)
    add_window_options(parser)
    parser.add_argument("--noise", default="0,0.2", help="shares of flipped window labels (default 0,0.2)")
    parser.add_argument("--hidden", type=int, default=256, help="hidden units of the head (0: linear; default 256)")
    parser.add_argument("--batch", type=int, default=512, help="windows per mini-batch (default 512)")
    parser.add_argument("--epochs", type=int, help="passes over the training windows (default 8; --quick 2)")
    parser.add_argument("--lrs", help="SGD learning rates chosen on validation (default 0.01,0.1,1; --quick 0.1)")
    parser.add_argument("--epsilon", type=float, default=0.1, help="epsilon of pos-AP (default 0.1)")
    args = setup(parser, argv)
    if args.plot:
        parser.error("this script draws no figure")
    check_window_options(parser, args)
    if args.features != "cnn" and not args.quick:
        logger.info("features: %s (Song et al. fine-tune a CNN; the cnn extra gives its features)", args.features)
    args.noise = parse_grid(parser, "--noise", args.noise)
    args.lrs = parse_grid(parser, "--lrs", args.lrs or ("0.1" if args.quick else "0.01,0.1,1"))
    args.epochs = args.epochs or (2 if args.quick else 8)
    if not all(0.0 <= r < 1.0 for r in args.noise):
        parser.error(f"--noise values must lie in [0, 1), got {args.noise}")
    if min(args.lrs) <= 0 or args.hidden < 0 or args.batch < 2 or args.epochs < 1 or args.epsilon <= 0:
        parser.error("--lrs, --epsilon must be positive, --hidden >= 0, --batch >= 2, --epochs >= 1")
    return args


def window_set(split, name, images):
    """Rows and labels of the training windows of ``images`` for class ``name``: the windows
    (positive at IoU >= 0.5 with a box of the class; windows whose best overlap is with a difficult
    box only are dropped) and the non-difficult ground-truth boxes of the class (positive).

    Returns
    -------
    features : ndarray of float32, shape (n, d)
    labels : ndarray of int, shape (n,)
    """
    overlap = max_iou(split.store, split.dataset, name)
    easy = max_iou(split.store, split.dataset, name, include_difficult=False)
    offsets = split.store.offsets
    rows = np.concatenate([np.arange(offsets[i], offsets[i + 1]) for i in images])
    rows = rows[(overlap[rows] < 0.5) | (easy[rows] >= 0.5)]
    gt_store, gt_images, _ = split.gt
    ds, chosen = split.dataset, set(images.tolist())
    gt_rows = [gt_store.offsets[bag] + k for bag, i in enumerate(gt_images) if i in chosen
               for k, (c, hard) in enumerate(zip(ds.box_classes[i], ds.difficult[i])) if c == name and not hard]
    features = np.vstack([np.asarray(split.store.features[rows]), np.asarray(gt_store.features[gt_rows])])
    labels = np.r_[(easy[rows] >= 0.5).astype(int), np.ones(len(gt_rows), dtype=int)]
    return features.astype(np.float32), labels


def batches(labels, size, rng):
    """Stratified mini-batches: index arrays covering every row once, each with its share of the
    positive rows (at least one when there is one)."""
    positive, negative = rng.permutation(np.flatnonzero(labels)), rng.permutation(np.flatnonzero(labels == 0))
    n_batches = max(1, min(int(np.ceil(labels.size / size)), positive.size or 1))
    return [rng.permutation(np.r_[p, n]) for p, n in
            zip(np.array_split(positive, n_batches), np.array_split(negative, n_batches))]


def train_head(X, labels, method, lr, args, seed):
    """SGD on mini-batches of one loss; returns the head (``None`` when the loss diverged)."""
    import torch
    from _deep import make_loss, mlp

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    d = X.shape[1]
    head = mlp([d, args.hidden, 1] if args.hidden else [d, 1])
    loss = make_loss(method, args.epsilon)
    optimiser = torch.optim.SGD(head.parameters(), lr=lr, momentum=0.9, weight_decay=1e-7)
    X, target = torch.from_numpy(X), torch.from_numpy(labels)
    for _ in range(args.epochs):
        for batch in batches(labels, args.batch, rng):
            optimiser.zero_grad(set_to_none=True)
            scores = head(X[batch])[:, 0]
            if not torch.isfinite(scores).all():
                return None
            loss(scores, target[batch]).backward()
            optimiser.step()
    return head


def head_detections(head, split, images):
    """Detections (NMS at IoU 0.3) of the head's window scores in ``images`` of a split."""
    import torch

    from ssvm.detection import nms_per_image

    offsets = split.store.offsets
    rows = np.concatenate([np.arange(offsets[i], offsets[i + 1]) for i in images])
    scores = np.empty(rows.size)
    with torch.no_grad():
        for start in range(0, rows.size, 65536):
            part = torch.from_numpy(np.asarray(split.store.features[rows[start:start + 65536]], dtype=np.float32))
            scores[start:start + part.shape[0]] = head(part)[:, 0].double().numpy()
    if not np.isfinite(scores).all():
        return None
    sizes = np.diff(offsets)[images]
    return nms_per_image(scores, split.store.boxes[rows], np.r_[0, np.cumsum(sizes)], iou_threshold=0.3)


def run_class(name, keep, train, test, args):
    """Test detection AP and chosen learning rate per (noise, method) for one class."""
    from _common import flip_labels

    images = np.flatnonzero(keep)
    fit, val = images[np.arange(images.size) % 4 != 0], images[np.arange(images.size) % 4 == 0]
    X, clean = window_set(train, name, fit)
    out = {}
    for rate in args.noise:
        labels = flip_labels(clean, rate, np.random.default_rng(args.seed)) if rate else clean
        for method in METHODS:
            best = None
            for lr in args.lrs:
                tic = time.perf_counter()
                head = train_head(X, labels, method, lr, args, args.seed)
                dets = None if head is None else head_detections(head, train, val)
                val_ap = -1.0 if dets is None else evaluate_scores(dets, train.dataset, name, val)[0]
                logger.info("%s noise %.0f%% %s lr %g: validation AP %.3f (%.1fs)", name, 100 * rate, method,
                            lr, val_ap, time.perf_counter() - tic)
                if best is None or val_ap > best[0]:
                    best = (val_ap, lr, head)
            val_ap, lr, head = best
            dets = None if head is None else head_detections(head, test, np.arange(test.store.n_images))
            test_ap = float("nan") if dets is None else evaluate_scores(dets, test.dataset, name)[0]
            out[(rate, method)] = {"test_ap": test_ap, "val_ap": val_ap, "lr": lr,
                                   "positives": int(labels.sum()), "rows": int(labels.size)}
    return out


def run(args):
    """Prepare the windows and features, train every head; returns the tables and the JSON payload."""
    from _deep import limit_threads
    from _detection_data import prepare, trainable_classes

    limit_threads(args.threads)
    stage = {"windows": 0.0, "features": 0.0}
    with tempfile.TemporaryDirectory(prefix="detection-losses-") as scratch:
        work = Path(args.out) if args.out else Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        train, test = prepare(args, work, stage)
        classes = trainable_classes(args, train.dataset, test.dataset)
        tic = time.perf_counter()
        results = {name: run_class(name, keep, train, test, args) for name, keep in classes.items()}
        stage["training"] = time.perf_counter() - tic
    rows = []
    for rate in args.noise:
        for method in METHODS:
            row = {"noise": f"{100 * rate:.0f}%", "loss": method}
            row.update({name: results[name][(rate, method)]["test_ap"] for name in results})
            row["mean"] = float(np.mean([row[name] for name in results]))
            paper = SONG_TABLE2.get(rate, {}).get(method)
            row["Song et al. mean"] = "-" if paper is None else f"{paper:.1f}"
            rows.append(row)
    head = f"MLP {train.store.n_features}-{args.hidden}-1" if args.hidden else f"linear {train.store.n_features}-1"
    title = (f"Test detection AP (VOC area rule, IoU>=0.5) of a {head} head on frozen {args.features} window "
             f"features, SGD on stratified mini-batches of {args.batch} windows, {args.epochs} epochs, lr by "
             f"validation AP over {args.lrs}; 'Song et al.' = their Table 2 mean AP % (VOC 2012, AlexNet "
             "fine-tuned)")
    lr_rows = [{"noise": f"{100 * rate:.0f}%", "loss": method,
                **{name: f"{results[name][(rate, method)]['lr']:g}" for name in results}}
               for rate in args.noise for method in METHODS]
    tables = [format_table(rows, title=title, floatfmt=".3f"),
              format_table(lr_rows, title="Learning rate chosen on validation"),
              format_table([{"stage": k, "seconds": v} for k, v in stage.items()], title="Time per stage",
                           floatfmt=".1f")]
    payload = {"rows": rows, "runs": [{"class": name, "noise": rate, "method": method, **v}
                                      for name, runs in results.items() for (rate, method), v in runs.items()],
               "stage_seconds": stage,
               "settings": {"features": args.features, "hidden": args.hidden, "batch": args.batch,
                            "epochs": args.epochs, "lrs": args.lrs, "epsilon": args.epsilon,
                            "noise": args.noise, "max_windows": args.max_windows}}
    return tables, payload


def main(argv=None):
    """Entry point: parse, run, print the tables and write the JSON."""
    args = parse_args(argv)
    emit(args, *run(args))


if __name__ == "__main__":
    main()
