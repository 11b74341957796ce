"""Latent AP-SVM vs latent 0-1 SVM on independently built bags of digits (issue 38).

Construction (the issue's): scikit-learn's digits split in two stratified halves (training and test
images draw their windows from disjoint digits); pixels standardised on the training half (and
projected on its first ``d`` principal components when ``d`` < 64), each window a digit plus
Gaussian noise of standard deviation ``noise``, scaled to unit norm, so that no two windows are
equal. An *image* is a bag of K windows; a positive image holds exactly one window of the target
digit, a negative image none. ``--positives`` positive and ``--negative-images`` negative images for
training, as many for testing. A *construction* is (K, d, noise, negatives, positives, negative
images); each runs for several (target digit, seed) pairs.

Models (each a :class:`ssvm.LatentRankSVM` with the construction's ``negatives``; C of each chosen
from ``--Cs`` by 2-fold validation window AP over the training images — the held-out fold's target
windows play the boxes' part):

* ``zero_one``: the latent 0-1 SVM (its defaults: the mean-window start);
* ``ap``: the latent AP-SVM with its defaults (``hinge_scale="margin"``, ``init="auto"``);
* ``ap_lowest_j``: the rule the issue reports on (before issue 38): ``hinge_scale=1``, CCCP from the
  mean window and from the 0-1 SVM's weights (at its validated C), the lower final J;
* ``ap_scale_only`` and ``ap_starts_only`` (``--ablations``): one half of the remedy each (the margin
  scale with the mean start; the starts of ``"auto"`` with ``hinge_scale=1``).

Reported: test window AP (every window of the test images ranked, the target windows the
positives) per run, and each AP-SVM's paired difference with the 0-1 SVM. The diagnosis table
(at C = ``--diagnosis-C``, nothing chosen) fits each loss — the 0-1 SVM, the AP-SVM with
``hinge_scale=1`` and with the margin scale — from single starts: the mean window, the 0-1 SVM's
weights, and the true windows (the same model trained with each positive image's target window,
then CCCP on the bags; a diagnostic, not a method), and reports the final J, test window AP,
training CorLoc (imputed windows that are the target's), the median number of negative windows
above an imputed positive, and how often the true windows' run ends at the lowest J, over all runs
and per construction. ``--from-json PATH`` prints the tables of an earlier run from its ``--json``
file without fitting anything.
"""

from __future__ import annotations

import sys
import time
import warnings

import _common
import numpy as np
from _common import format_table, logger

MODELS = ("zero_one", "ap", "ap_lowest_j")
ABLATIONS = ("ap_scale_only", "ap_starts_only")
PARAMS = {"zero_one": {"loss": "zero_one"}, "ap": {"loss": "ap"},
          "ap_scale_only": {"loss": "ap", "init": "mean"}, "ap_starts_only": {"loss": "ap", "hinge_scale": 1.0}}
DIAGNOSED = {"0-1 SVM": {"loss": "zero_one"}, "AP-SVM, hinge_scale=1": {"loss": "ap", "hinge_scale": 1.0},
             "AP-SVM, margin scale": {"loss": "ap"}}
# K, d, noise, negatives, positives, negative images; seed; targets
PLAN = [(120, 64, 0.1, "all", 36, 72, 10, (0, 2, 4, 6, 7, 9)),
        (200, 64, 0.1, "all", 36, 72, 11, (1, 3, 5, 8, 0, 2)),
        (50, 32, 0.2, "all", 24, 96, 12, (4, 6, 7, 9, 1, 3)),
        (120, 16, 0.1, "all", 36, 72, 13, (5, 8, 0, 2, 4, 6)),
        (120, 64, 0.3, "all", 36, 72, 14, (7, 9, 1, 3, 5, 8)),
        (120, 64, 0.1, "best", 36, 72, 15, (0, 2, 4, 6, 7, 9))]
QUICK_PLAN = [(10, 16, 0.1, "all", 8, 16, 0, (3,))]


def digit_halves(seed, d):
    """(pixels, digits) of the training and the test half: standardised on the training half and,
    for d < 64, projected on its first d principal components."""
    from sklearn.datasets import load_digits
    from sklearn.decomposition import PCA
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X, y = load_digits(return_X_y=True)
    X_a, X_b, y_a, y_b = train_test_split(X, y, test_size=0.5, stratify=y, random_state=seed)
    scaler = StandardScaler().fit(X_a)
    X_a, X_b = scaler.transform(X_a), scaler.transform(X_b)
    if d < X.shape[1]:
        pca = PCA(d, random_state=seed).fit(X_a)
        X_a, X_b = pca.transform(X_a), pca.transform(X_b)
    return (X_a, y_a), (X_b, y_b)


def make_images(X, digits, target, n_pos, n_neg, K, noise, rng):
    """Bags of K noisy unit-norm windows: ``n_pos`` images with one ``target`` digit, then ``n_neg``
    without. Returns the bags, each bag's mask of its target window and the image labels."""
    targets, others = np.flatnonzero(digits == target), np.flatnonzero(digits != target)
    bags, truth = [], []
    for i in range(n_pos + n_neg):
        rows, mask = rng.choice(others, K), np.zeros(K, dtype=bool)
        if i < n_pos:
            j = rng.integers(K)
            rows[j], mask[j] = rng.choice(targets), True
        bag = X[rows] + noise * rng.normal(size=(K, X.shape[1]))
        bags.append(bag / np.linalg.norm(bag, axis=1, keepdims=True))
        truth.append(mask)
    return bags, truth, np.arange(n_pos + n_neg) < n_pos


def window_ap(coef, bags, truth):
    """AP of all windows of ``bags`` ranked by ``coef``, the target windows the positives."""
    from ssvm.metrics import mean_average_precision

    return mean_average_precision(np.concatenate(truth), np.concatenate([bag @ coef for bag in bags]))


def fit(bags, y, negatives, C, seed, **params):
    from ssvm import LatentRankSVM

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a CCCP step's budget: the validation decides
        return LatentRankSVM(negatives=negatives, C=C, random_state=seed, **params).fit(bags, y)


def fit_model(name, bags, y, negatives, C, seed, C_zero_one=None):
    """One model of :data:`MODELS` / :data:`ABLATIONS` at C (``ap_lowest_j``: the 0-1 start at
    ``C_zero_one``)."""
    if name != "ap_lowest_j":
        return fit(bags, y, negatives, C, seed, **PARAMS[name])
    start = fit(bags, y, negatives, C_zero_one, seed, loss="zero_one").coef_
    runs = [fit(bags, y, negatives, C, seed, loss="ap", hinge_scale=1.0, init=init)
            for init in ("mean", start) if isinstance(init, str) or np.any(init)]
    return min(runs, key=lambda m: m.history_[-1])


def choose_C(names, grid, bags, truth, y, negatives, seed, C_zero_one=None):
    """Per model, the C of ``grid`` with the best mean 2-fold validation window AP (ties: smaller C)."""
    from sklearn.model_selection import StratifiedKFold

    scores = {name: np.zeros(len(grid)) for name in names}
    for part, held in StratifiedKFold(2, shuffle=True, random_state=seed).split(np.zeros(y.size), y):
        fold = [bags[i] for i in part]
        for name in names:
            for k, C in enumerate(grid):
                model = fit_model(name, fold, y[part], negatives, C, seed, C_zero_one)
                scores[name][k] += window_ap(model.coef_, [bags[i] for i in held], [truth[i] for i in held])
    return {name: grid[int(np.argmax(values))] for name, values in scores.items()}


def describe(model, bags, truth, y, test):
    """J, the hinge H = (J − ½‖w‖²)/(C·hinge_scale_) (the AP hinge's floor is 1), test window AP,
    CorLoc, the median number of negative windows above an imputed positive and the distance
    between the mean imputed positive window and the mean negative window."""
    positives = np.flatnonzero(y)
    negatives = np.vstack([bags[i] for i in np.flatnonzero(~y)])
    imputed = np.vstack([bags[i][model.latent_windows_[i]] for i in positives])
    negative_scores, imputed_scores = negatives @ model.coef_, imputed @ model.coef_
    bias = model.intercept_ if model.loss == "zero_one" else 0.0  # learnt and regularised
    regulariser = 0.5 * (model.coef_ @ model.coef_ + bias * bias)
    return {"J": model.history_[-1], "H": (model.history_[-1] - regulariser) / (model.C * model.hinge_scale_),
            "test AP": window_ap(model.coef_, *test),
            "CorLoc": float(np.mean([truth[i][model.latent_windows_[i]] for i in positives])),
            "negatives above": float(np.median([(negative_scores > s).sum() for s in imputed_scores])),
            "centroid gap": float(np.linalg.norm(imputed.mean(0) - negatives.mean(0)))}


def diagnose(bags, truth, y, test, negatives, C, seed):
    """Each loss of :data:`DIAGNOSED` from single starts (mean window, 0-1 SVM, true windows)."""
    true_bags = [bag[mask] if label else bag for bag, mask, label in zip(bags, truth, y)]
    zero_one = fit(bags, y, negatives, C, seed, loss="zero_one", init="mean")
    out = {}
    for name, params in DIAGNOSED.items():
        on_truth = fit(true_bags, y, negatives, C, seed, init="mean", max_cccp_iter=1, **params)
        starts = {"mean": "mean", "true windows": on_truth.coef_}
        if params["loss"] != "zero_one":
            starts["0-1 SVM"] = zero_one.coef_
        for start, init in starts.items():
            if isinstance(init, str) or np.any(init):
                out[(name, start)] = describe(fit(bags, y, negatives, C, seed, init=init, **params),
                                              bags, truth, y, test)
    return out


def run_one(construction, target, seed, args):
    """Test window AP of every model on one (construction, target, seed), and the diagnosis."""
    K, d, noise, negatives, n_pos, n_neg = construction
    rng = np.random.default_rng([seed, target])
    (X_train, d_train), (X_test, d_test) = digit_halves(seed, d)
    bags, truth, y = make_images(X_train, d_train, target, n_pos, n_neg, K, noise, rng)
    test_bags, test_truth, _ = make_images(X_test, d_test, target, n_pos, n_neg, K, noise, rng)
    names = MODELS + (ABLATIONS if args.ablations else ())
    C = choose_C(("zero_one",), args.Cs, bags, truth, y, negatives, seed)
    C.update(choose_C([n for n in names if n != "zero_one"], args.Cs, bags, truth, y, negatives, seed,
                      C["zero_one"]))
    models = {name: fit_model(name, bags, y, negatives, C[name], seed, C["zero_one"]) for name in names}
    run = {"K": K, "d": d, "noise": noise, "negatives": negatives, "positives": n_pos,
           "negative_images": n_neg, "target": target, "seed": seed,
           **{f"{name}_test_ap": window_ap(m.coef_, test_bags, test_truth) for name, m in models.items()},
           **{f"{name}_C": C[name] for name in names}, "ap_start": models["ap"].start_}
    diagnosis = diagnose(bags, truth, y, (test_bags, test_truth), negatives, args.diagnosis_C, seed) \
        if args.diagnosis_C else {}
    return run, diagnosis


def paired(diff):
    """Mean ± standard error, the smallest, and the runs where the AP-SVM is ahead."""
    se = diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else float("nan")
    return {"mean ± s.e.": f"{diff.mean():+.3f} ± {se:.3f}", "min": f"{diff.min():+.3f}",
            "ahead": f"{int((diff > 0).sum())}/{diff.size}"}


def summary_rows(runs, names):
    """Per construction and over all runs: mean test AP and each AP-SVM's paired difference."""
    groups = {}
    for run in runs:
        key = (run["K"], run["d"], run["noise"], run["negatives"], run["positives"], run["negative_images"])
        groups.setdefault(key, []).append(run)
    rows = []
    for key, group in [*groups.items(), (("all",) * 6, runs)]:
        row = dict(zip(("K", "d", "noise", "negatives", "P", "neg. images"), key), runs=len(group))
        row.update({f"{n} AP": np.mean([r[f"{n}_test_ap"] for r in group]) for n in names})
        for name in names[1:]:
            diff = np.array([r[f"{name}_test_ap"] - r["zero_one_test_ap"] for r in group])
            row.update({f"{name} - 0-1 {k}": v for k, v in paired(diff).items()})
        rows.append(row)
    return rows


def diagnosis_rows(diagnoses):
    """Per loss and start: means over the runs, and the runs where that start's J is the lowest."""
    rows = []
    for name in DIAGNOSED:
        per_run = [{s: v for (n, s), v in diag.items() if n == name} for diag in diagnoses]
        lowest = [min(d, key=lambda s: d[s]["J"]) for d in per_run]
        for start in per_run[0]:
            values = [d[start] for d in per_run]
            rows.append({"loss": name, "start": start, "H": np.mean([v["H"] for v in values]),
                         "test AP": np.mean([v["test AP"] for v in values]),
                         "CorLoc": np.mean([v["CorLoc"] for v in values]),
                         "negatives above (median)": np.median([v["negatives above"] for v in values]),
                         "centroid gap": np.mean([v["centroid gap"] for v in values]),
                         "lowest J": f"{sum(s == start for s in lowest)}/{len(lowest)}",
                         "test AP where lowest J": np.mean([d[start]["test AP"] for d, s in zip(per_run, lowest)
                                                            if s == start] or [np.nan])})
    return rows


def construction_diagnosis_rows(runs, diagnoses):
    """Per construction, loss and start: means over its runs of test AP, CorLoc and the median of
    the negatives above an imputed positive, and the runs where that start's J is the loss's lowest."""
    groups = {}
    for run, diag in zip(runs, diagnoses):
        key = (run["K"], run["d"], run["noise"], run["negatives"])
        groups.setdefault(key, []).append(diag)
    rows = []
    for (K, d, noise, negatives), group in groups.items():
        for name in DIAGNOSED:
            per_run = [{s: v for (n, s), v in diag.items() if n == name} for diag in group]
            lowest = [min(r, key=lambda s: r[s]["J"]) for r in per_run]
            for start in per_run[0]:
                values = [r[start] for r in per_run]
                rows.append({"K": K, "d": d, "noise": noise, "negatives": negatives, "loss": name, "start": start,
                             "test AP": np.mean([v["test AP"] for v in values]),
                             "CorLoc": np.mean([v["CorLoc"] for v in values]),
                             "negatives above (median)": np.median([v["negatives above"] for v in values]),
                             "lowest J": f"{sum(s == start for s in lowest)}/{len(lowest)}"})
    return rows


def ordering_rows(diagnoses):
    """Per AP-SVM: does the lower final J of the mean and the 0-1 start mark the better detector?"""
    rows = []
    for name in [n for n, p in DIAGNOSED.items() if p["loss"] != "zero_one"]:
        pairs = [(diag[(name, "mean")], diag[(name, "0-1 SVM")]) for diag in diagnoses
                 if (name, "mean") in diag and (name, "0-1 SVM") in diag]
        kept = [min(pair, key=lambda v: v["J"]) for pair in pairs]
        decided = [pair for pair in pairs if abs(pair[0]["test AP"] - pair[1]["test AP"]) > 0.05]
        right = sum((a["J"] < b["J"]) == (a["test AP"] > b["test AP"]) for a, b in decided)
        rows.append({"loss": name, "runs": len(pairs), "test AP of the lower J": np.mean([v["test AP"] for v in kept]),
                     "test AP of the better start": np.mean([max(a["test AP"], b["test AP"]) for a, b in pairs]),
                     "lower J is the better detector (test AP apart by > 0.05)": f"{right}/{len(decided)}"})
    return rows


def main(argv=None):
    parser = _common.make_parser(__doc__)
    parser.add_argument("--Cs", default="0.1,1,10", help="C grid of every model (default 0.1,1,10)")
    parser.add_argument("--constructions", default="plan",
                        help="'plan' (the six constructions of the results page) or 'issue' (K=120, "
                             "d=64, noise 0.1, all, 36/72 images, targets 1,3,5,8, seeds 0-2)")
    parser.add_argument("--ablations", action="store_true", help="also the two halves of the remedy")
    parser.add_argument("--diagnosis-C", type=float, default=1.0, help="C of the diagnosis (0: none)")
    parser.add_argument("--from-json", metavar="PATH",
                        help="print the tables of an earlier run from its --json file (nothing is fitted)")
    args = _common.setup(parser, argv)
    if args.from_json:
        return print_tables(args, *load_run(args.from_json))
    args.Cs = tuple(float(c) for c in args.Cs.split(","))
    if args.constructions not in ("plan", "issue") or min(args.Cs) <= 0:
        parser.error("--constructions takes plan or issue, --Cs positive numbers")
    plan = QUICK_PLAN if args.quick else PLAN if args.constructions == "plan" else \
        [(120, 64, 0.1, "all", 36, 72, s, (1, 3, 5, 8)) for s in range(3)]
    if args.quick:
        args.Cs = (1.0,)
    names = MODELS + (ABLATIONS if args.ablations else ())
    runs, diagnoses = [], []
    for *construction, seed, targets in plan:
        for target in targets:
            tic = time.perf_counter()
            run, diagnosis = run_one(tuple(construction), target, args.seed + seed, args)
            runs.append(run)
            diagnoses.append(diagnosis)
            logger.info("%s target %d seed %d: %s (%.0fs)", construction, target, args.seed + seed,
                        " ".join(f"{n} {run[f'{n}_test_ap']:.3f}" for n in names), time.perf_counter() - tic)
    return print_tables(args, runs, diagnoses, args.Cs, names, args.diagnosis_C)


def load_run(path):
    """(runs, diagnoses, C grid, model names, diagnosis C) of a --json file of this script."""
    import json

    payload = json.loads(open(path).read())
    if payload.get("experiment") != "latent_bags":
        raise SystemExit(f"{path} is not the --json of exp_latent_bags.py")
    diagnoses = [{tuple(key.split(" | ")): value for key, value in d.items()} for d in payload["diagnosis"]]
    names = tuple(n for n in MODELS + ABLATIONS if f"{n}_test_ap" in payload["runs"][0])
    # files written before the key was stored ran the diagnosis at the option's default, C = 1
    return payload["runs"], diagnoses, tuple(payload["Cs"]), names, payload.get("diagnosis_C", 1.0)


def print_tables(args, runs, diagnoses, Cs, names, diagnosis_C):
    """Print (and with --json write) the tables of ``runs`` and their diagnoses."""
    diagnosed = any(diagnoses)
    per_run = [{k: run[k] for k in ("K", "d", "noise", "negatives", "target", "seed")}
               | {f"{n} C": run[f"{n}_C"] for n in names}
               | {f"{n} AP": run[f"{n}_test_ap"] for n in names} | {"ap start": run["ap_start"]}
               | {f"{n} - 0-1": run[f"{n}_test_ap"] - run["zero_one_test_ap"] for n in names[1:]}
               for run in runs]
    tables = [format_table(per_run, floatfmt=".3f",
                           title=f"Test window AP per run (C from {list(Cs)} by 2-fold validation window AP)"),
              format_table(summary_rows(runs, names), floatfmt=".3f",
                           title="Paired differences of test window AP with the latent 0-1 SVM, per construction "
                                 "and over all runs: mean ± standard error, smallest, runs where ahead")]
    if diagnosed:
        tables.append(format_table(diagnosis_rows(diagnoses), floatfmt=".3f",
                                   title=f"Diagnosis at C = {diagnosis_C:g}: each loss from single starts "
                                         f"(means over {len(runs)} runs; H: the hinge, (J - ½|w|²)/(C·scale); "
                                         "'lowest J': runs where this start's final J is the lowest of the loss's "
                                         "starts)"))
        tables.append(format_table(ordering_rows(diagnoses), floatfmt=".3f",
                                   title=f"Diagnosis at C = {diagnosis_C:g}: the lower final J of the mean "
                                         "and the 0-1 start (the rule lowest_j) against the better of the two"))
        tables.append(format_table(construction_diagnosis_rows(runs, diagnoses), floatfmt=".3f",
                                   title=f"Diagnosis at C = {diagnosis_C:g} per construction: each loss from single "
                                         "starts (means over the construction's runs)"))
    _common.emit(args, tables, {"experiment": "latent_bags", "Cs": Cs, "runs": runs, "diagnosis_C": diagnosis_C,
                                "diagnosis": [{f"{n} | {s}": v for (n, s), v in d.items()} for d in diagnoses]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
