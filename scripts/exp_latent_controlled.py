"""A controlled latent set: the latent AP-SVM against the latent 0-1 SVM as the negatives grow (issue 23).

Every model here uses ``hinge_scale=1`` and the starts named below — the estimator as it was for
issue 23, so that the results page's tables stay reproducible; ``exp_latent_bags.py`` measures the
defaults that replaced it (issue 38).

Why the latent 0-1 SVM beats the latent AP-SVM on ``detection_mini`` is, per the diagnosis in
``docs/results/latent_detection.md``, the number of negatives per positive image: with every window
of the negative images a negative (``negatives="all"``), N/P is in the thousands and the AP hinge
sits on a floor. This script varies that one quantity on a set where the right window is known.

Data: scikit-learn's bundled digits (8×8 images, 64 features), split 70/30 stratified, features
standardised on the training digits and scaled to unit norm (as the detection's window features).
For a target digit t, an *image* is a bag of K digits (its *windows*): a positive image holds one
digit t among K − 1 digits of other classes, a negative image K digits of other classes; with
``--parts`` every digit also enters as its four halves (top, bottom, left, right; the rest of the
image blank), windows on a part of an object as in detection, and only the whole target digit is a
true window. Training:
``--positives`` positive and ``--negative-images`` negative images; test: every test digit t in its
own positive image, and ``--negative-images`` negative images of test digits. Every model is a
:class:`ssvm.LatentRankSVM` with the same negatives (``all``: every window of a negative image;
``best``: a negative image through its best window, Behl et al.'s formulation, where N counts
images): the latent 0-1 SVM and the latent AP-SVM from the mean-window start, and the AP-SVM that
keeps, per C, the lower final CCCP objective J of the mean-window start and of the 0-1 SVM's weights
(``--ap-init lowest_j`` of ``train_latent_detection.py``). C is chosen per digit and model by 2-fold
validation window AP on the training images (the windows' digit labels of the validation fold play
the boxes' part) along a warm path over C. Reported per K and negatives: test window AP (all
windows of the test images ranked, the target digits the positives — detection AP without boxes),
training CorLoc (the share of positive training images whose imputed window is the target digit),
means over the digits and the seeds; each AP-SVM's paired difference with the 0-1 SVM (mean,
standard error, pairs where it is ahead); how often the lower J came from the 0-1 start. As a
control without the latent part, both losses also train on the true windows (each positive
image's target digit; the negatives as above), C chosen the same way.
"""

from __future__ import annotations

import sys
import time
import warnings

import _common
import numpy as np
from _common import format_table, logger

MODELS = ("zero_one", "ap", "ap_lowest_j")
SUPERVISED = ("zero_one_true", "ap_true")  # the same losses on the target digits: no latent part
NAMES = {"zero_one": "0-1 SVM", "ap": "AP-SVM", "ap_lowest_j": "AP-SVM lowest J",
         "zero_one_true": "true windows: 0-1 SVM", "ap_true": "true windows: AP-SVM"}
GRIDS = {"ap": (1.0, 10.0, 100.0, 1e3, 1e4, 1e5), "zero_one": (0.1, 1.0, 10.0, 100.0, 1e3)}


def halves():
    """Masks of the four halves (top, bottom, left, right) of an 8×8 digit, as 64 pixels."""
    rows, cols = np.indices((8, 8))
    return [mask.ravel() for mask in (rows < 4, rows >= 4, cols < 4, cols >= 4)]


def digit_split(seed, parts=False):
    """Training and test digits as windows: shape (n_digits, 1, 64), or (n_digits, 5, 64) with
    ``parts`` (the digit, then its four halves: the rest of the 8×8 image blank, as a window on a
    part of an object); pixels standardised on the training digits, each window scaled to unit norm.
    Returns ((windows, classes) of the training digits, the same of the test digits)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y, random_state=seed)
    scaler = StandardScaler().fit(X_train)
    masks = [np.ones(64, dtype=bool)] + (halves() if parts else [])
    out = []
    for X_part, y_part in ((X_train, y_train), (X_test, y_test)):
        windows = scaler.transform(np.concatenate([X_part * mask for mask in masks])).reshape(
            len(masks), len(X_part), -1).transpose(1, 0, 2)
        out.append((windows / np.linalg.norm(windows, axis=2, keepdims=True), y_part))
    return tuple(out)


def make_images(X, digits, target, n_positive, n_negative, K, rng):
    """Bags of the windows of K digits (``X``: shape (n_digits, windows per digit, features)):
    ``n_positive`` images with one ``target`` digit (all of them when None), then ``n_negative``
    without. Returns the bags, each bag's mask of its true window (the whole target digit, not a
    part of it) and the image labels."""
    targets = rng.permutation(np.flatnonzero(digits == target))
    targets = targets if n_positive is None else targets[:n_positive]
    others = np.flatnonzero(digits != target)
    whole = np.arange(X.shape[1]) == 0
    bags, windows = [], []
    for i in range(targets.size + n_negative):
        rows = rng.choice(others, K - (i < targets.size), replace=False)
        rows = rng.permutation(np.append(rows, targets[i]) if i < targets.size else rows)
        bags.append(X[rows].reshape(-1, X.shape[2]))
        windows.append(np.outer(digits[rows] == target, whole).ravel())
    return bags, windows, np.arange(len(bags)) < targets.size


def window_ap(coef, bags, windows):
    """AP of all windows of ``bags`` ranked by ``coef``, the target digits the positives."""
    from ssvm.metrics import mean_average_precision

    return mean_average_precision(np.concatenate(windows), np.concatenate([bag @ coef for bag in bags]))


def fit_path(loss, negatives, grid, bags, y, seed, init="mean"):
    """One latent model per C of ``grid`` on CCCP's warm path over C, from ``init``."""
    from ssvm import LatentRankSVM
    from ssvm.latent import latent_C_path

    model = LatentRankSVM(loss=loss, negatives=negatives, init=init, hinge_scale=1.0, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a CCCP step's solver budget: the validation decides
        return latent_C_path(model, list(grid), bags, y)


def ap_paths(negatives, grid, bags, y, seed, C_zero_one):
    """The AP-SVM's paths over ``grid``: from the mean-window start (``ap``), and per C the lower
    final J of that and of the start at the latent 0-1 SVM's weights (``ap_lowest_j``; the 0-1 SVM
    at ``C_zero_one`` on the same images)."""
    mean = fit_path("ap", negatives, grid, bags, y, seed)
    start = fit_path("zero_one", negatives, (C_zero_one,), bags, y, seed)[0].coef_
    from_zero_one = fit_path("ap", negatives, grid, bags, y, seed, init=start)
    return {"ap": mean, "ap_lowest_j": [min(pair, key=lambda m: m.history_[-1])
                                        for pair in zip(mean, from_zero_one)]}


def choose_C(fit, grid, fit_bags, bags, windows, y, seed):
    """Per model, the C of ``grid`` with the best mean 2-fold validation window AP: each fold's
    models come from ``fit(fit_bags of its part, labels, grid) -> {model: [fitted model per C]}``
    and are scored on the validation part of ``bags``."""
    from sklearn.model_selection import StratifiedKFold

    scores = {}
    for part, val in StratifiedKFold(2, shuffle=True, random_state=seed).split(np.zeros(y.size), y):
        for name, models in fit([fit_bags[i] for i in part], y[part], grid).items():
            scores[name] = scores.get(name, 0.0) + np.array(
                [window_ap(m.coef_, [bags[i] for i in val], [windows[i] for i in val]) for m in models])
    return {name: grid[int(np.argmax(values))] for name, values in scores.items()}  # ties: the smaller C


def run_one(split, target, K, negatives, args, grids, rng, seed):
    """Test window AP, training CorLoc, the chosen C and the start of every model on one digit."""
    (X_train, d_train), (X_test, d_test) = split
    bags, windows, y = make_images(X_train, d_train, target, args.positives, args.negative_images, K, rng)
    test_bags, test_windows, _ = make_images(X_test, d_test, target, None, args.negative_images, K, rng)
    true_bags = [bag[mask] if label else bag for bag, mask, label in zip(bags, windows, y)]

    def single(name, loss):
        return lambda b, t, grid: {name: fit_path(loss, negatives, grid, b, t, seed)}

    fits = {"zero_one_true": (single("zero_one_true", "zero_one"), "zero_one", true_bags),
            "ap_true": (single("ap_true", "ap"), "ap", true_bags),
            "zero_one": (single("zero_one", "zero_one"), "zero_one", bags),
            "ap": (lambda b, t, grid: ap_paths(negatives, grid, b, t, seed, C["zero_one"]), "ap", bags)}
    C, out = {}, {}
    for fit, loss, fit_bags in fits.values():  # the 0-1 SVM's C before the AP-SVMs' (their start)
        C.update(choose_C(fit, grids[loss], fit_bags, bags, windows, y, seed))
    final = {**fits, "ap": (single("ap", "ap"), "ap", bags), "ap_lowest_j": fits["ap"]}  # "ap": its path only
    for name in (*SUPERVISED, *MODELS):
        fit, _, fit_bags = final[name]
        model = fit(fit_bags, y, (C[name],))[name][0]
        if name in SUPERVISED:  # trained on the target digits: CorLoc 1 by construction
            corloc, start = 1.0, "true windows"
        else:
            corloc = np.mean([windows[i][model.latent_windows_[i]] for i in np.flatnonzero(y)])
            start = "mean" if isinstance(model.init, str) else "zero_one"
        out[name] = (window_ap(model.coef_, test_bags, test_windows), float(corloc), C[name], start)
    return out


def paired(diff):
    """A paired difference as "mean ± standard error (ahead/pairs)"."""
    se = diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else float("nan")
    return f"{diff.mean():+.3f} ± {se:.3f} ({int((diff > 0).sum())}/{diff.size})"


def summary_row(K, negatives, args, runs):
    """One table row: the means over (digit, seed), and each AP-SVM's paired difference of test
    window AP with the 0-1 SVM."""
    ap = {name: np.array([run[name][0] for run in runs]) for name in MODELS}
    corloc = {name: np.array([run[name][1] for run in runs]) for name in MODELS}
    per_image = K * (5 if args.parts else 1)
    n_neg = args.negative_images * (per_image if negatives == "all" else 1)
    row = {"K": K, "windows": per_image, "negatives": negatives, "N/P": round(n_neg / args.positives)}
    row.update({f"{NAMES[name]} AP": ap[name].mean() for name in MODELS})
    row.update({f"{NAMES[name]} - 0-1 (ahead)": paired(ap[name] - ap["zero_one"]) for name in MODELS[1:]})
    row.update({f"{NAMES[name]} CorLoc": corloc[name].mean() for name in MODELS})
    true = {name: np.array([run[name][0] for run in runs]) for name in SUPERVISED}
    row.update({f"{NAMES[name]} AP": true[name].mean() for name in SUPERVISED})
    row["true windows: AP-SVM - 0-1 (ahead)"] = paired(true["ap_true"] - true["zero_one_true"])
    row["lowest J: 0-1 start"] = f"{sum(run['ap_lowest_j'][3] == 'zero_one' for run in runs)}/{len(runs)}"
    return row


def main(argv=None):
    parser = _common.make_parser(__doc__)
    parser.add_argument("--windows", default="2,5,20,100",
                        help="comma-separated windows per image K (default 2,5,20,100)")
    parser.add_argument("--negatives", default="all,best", help="comma-separated: all, best (default both)")
    parser.add_argument("--seeds", type=int, default=3, help="number of seeds (default 3)")
    parser.add_argument("--positives", type=int, default=40, help="positive training images (default 40)")
    parser.add_argument("--negative-images", type=int, default=80,
                        help="negative training images, and negative test images (default 80)")
    parser.add_argument("--digits", default="0,1,2,3,4,5,6,7,8,9", help="comma-separated target digits")
    parser.add_argument("--parts", action="store_true",
                        help="each digit also enters as its four halves (windows on parts of an object)")
    args = _common.setup(parser, argv)
    Ks = [int(k) for k in args.windows.split(",")]
    kinds = args.negatives.split(",")
    if any(k < 2 for k in Ks) or any(kind not in ("all", "best") for kind in kinds):
        parser.error("--windows takes integers >= 2 and --negatives the words all and best")
    targets = [int(t) for t in args.digits.split(",")]
    grids, n_seeds = GRIDS, args.seeds
    if args.quick:
        grids, n_seeds, Ks, kinds, targets = {"ap": (100.0, 1e4), "zero_one": (10.0,)}, 1, [3], kinds[:1], targets[:2]
    seeds = [args.seed + s for s in range(n_seeds)]
    rows, payload = [], []
    for K in Ks:
        for negatives in kinds:
            tic = time.perf_counter()
            runs = []
            for seed in seeds:
                split, rng = digit_split(seed, args.parts), np.random.default_rng(seed)
                for target in targets:
                    run = run_one(split, target, K, negatives, args, grids, rng, seed)
                    runs.append(run)
                    payload.append({"K": K, "parts": args.parts, "negatives": negatives, "seed": seed, "digit": target,
                                    **{f"{name}_{key}": value for name in (*MODELS, *SUPERVISED)
                                       for key, value in zip(("test_ap", "corloc", "C", "start"), run[name])}})
            rows.append(summary_row(K, negatives, args, runs))
            logger.info("K=%d negatives=%s: %.1fs", K, negatives, time.perf_counter() - tic)
    title = (f"Latent AP-SVM vs latent 0-1 SVM on bags of digits: {args.positives} positive and "
             f"{args.negative_images} negative training images of K digits"
             f"{' (5 windows each: the digit and its four halves)' if args.parts else ''}; test window AP and training "
             f"CorLoc, means over {len(targets)} digit(s) x {n_seeds} seed(s); X - 0-1: paired difference "
             f"of test window AP, mean ± s.e. (pairs where X is ahead); C by 2-fold validation over "
             f"{list(grids['ap'])} (AP-SVM) and {list(grids['zero_one'])} (0-1 SVM)")
    _common.emit(args, [format_table(rows, title=title)],
                 {"experiment": "latent_controlled", "seeds": seeds, "positives": args.positives,
                  "negative_images": args.negative_images, "grids": grids, "runs": payload})
    return 0


if __name__ == "__main__":
    sys.exit(main())
