"""Ranking quality: AP-SVM vs NDCG-SVM vs the 0-1 SVM (and scikit-learn's LinearSVC).

Data sets:
* the LETOR sample (``ssvm.datasets.load_letor_sample``, bundled): trained on rank.train with its query ids,
  C by 3-fold cross-validation keeping queries whole, scored on rank.test by query (mean AP and
  mean NDCG over the test queries that have a relevant and an irrelevant document; relevance > 0 is
  relevant for AP, NDCG uses the grades with gains 2^y - 1 as the NDCG-SVM does by default), with
  each of two feature transforms fitted on the training documents (``--letor-transforms``):
  ``StandardScaler`` and the recommended
  ``QuantileTransformer(output_distribution="normal", n_quantiles=200)`` -- the README's pipeline:
  LETOR features (counts, BM25 scores, lengths) are heavy-tailed and want a monotone transform
  before a linear model. Both transforms ignore the labels, so fitting them on all training
  documents before the cross-validation leaks nothing the pipeline would not see;
* the ranking tasks bundled with scikit-learn (``ssvm.datasets.load_ranking_task``): one-vs-rest
  retrieval, a stratified 70/30 split (seed ``--seed``), standardised features, C by 3-fold
  stratified cross-validation, mean AP / NDCG over the classes on the test part;
* ``letor-graded``: the LETOR sample's grades (0-4) judged by graded NDCG -- the graded NDCG-SVM
  (docs/design.md §9) against the binary NDCG-SVM, AP-SVM, LightGBM's lambdarank and XGBoost's
  ``rank:ndcg`` over query folds, with paired differences (protocol in ``scripts/_graded_linear.py``);
* ``letor-losses`` (issue #35): the pairwise SVM (SVM^rank's objective) vs AP-SVM vs graded NDCG-SVM vs
  NDCG@10-SVM vs LightGBM / XGBoost over 5 query folds of the pooled sample, in NDCG@10, NDCG, MAP, MRR
  and pair accuracy, each model's hyper-parameters chosen by the measure it optimises, with the paired
  differences of the issue's targets (protocol in ``scripts/_loss_quality.py``).

Each model's C is chosen from the grid by its validation mean AP (NDCG-SVM: mean NDCG).
LinearSVC is ``LinearSVC(loss="hinge", C=C/n)``: on the bundled tasks the very function the 0-1
SVM minimises (its row checks the 0-1 SVM against liblinear); on LETOR it differs, since the 0-1
SVM with ``qid`` averages the hinge within each query (queries weigh equally, queries without a
relevant or an irrelevant document are dropped) while LinearSVC averages over all documents.
"""

from __future__ import annotations

import sys
import time
import warnings

import _common
import numpy as np
from _common import format_table, logger
from _graded_linear import graded_comparison
from _loss_quality import loss_comparison
from _models import DEMO_MODELS, ModelSpec, evaluate_model, fit_model, select_C

from ssvm.datasets import load_letor_sample
from ssvm.exceptions import DegenerateQueriesWarning

MODELS = DEMO_MODELS + (ModelSpec("LinearSVC", None, "AP"),)
BUNDLED = ("digits", "breast_cancer", "wine", "iris")
GRADED_FOLDS = 5
GRID = (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)


LETOR_TRANSFORMS = ("standard", "quantile")


def make_transform(name):
    """The feature transform called ``name`` (``standard`` or ``quantile``), unfitted."""
    from sklearn.preprocessing import QuantileTransformer, StandardScaler

    if name == "standard":
        return StandardScaler()
    return QuantileTransformer(output_distribution="normal", n_quantiles=200)


def letor_task(quick):
    """(X_train, y_train, qid_train, X_test, y_test, qid_test) of the LETOR sample, dense."""
    X_train, y_train, q_train = load_letor_sample("train")
    X_test, y_test, q_test = load_letor_sample("test")
    if quick:  # the first 40 training queries, the first 15 test queries
        keep = q_train < np.unique(q_train)[40]
        X_train, y_train, q_train = X_train[keep], y_train[keep], q_train[keep]
        keep = q_test < np.unique(q_test)[15]
        X_test, y_test, q_test = X_test[keep], y_test[keep], q_test[keep]
    for part, y, q in (("train", y_train, q_train), ("test", y_test, q_test)):
        n_pos = np.bincount(np.unique(q, return_inverse=True)[1], weights=y > 0)
        sizes = np.unique(q, return_counts=True)[1]
        degenerate = int(np.sum((n_pos == 0) | (n_pos == sizes)))
        logger.info("LETOR %s: %d queries, %d without a relevant or without an irrelevant "
                    "document (skipped in training and scoring)", part, sizes.size, degenerate)
    # 3,005 x 300: small enough to be dense (StandardScaler centres)
    return X_train.toarray(), y_train, q_train, X_test.toarray(), y_test, q_test


def transformed(data, transform):
    """``data`` with its features transformed by ``transform`` fitted on the training part."""
    X_train, y_train, q_train, X_test, y_test, q_test = data
    scaler = make_transform(transform).fit(X_train)
    return scaler.transform(X_train), y_train, q_train, scaler.transform(X_test), y_test, q_test


def bundled_task(name, seed, quick):
    """Standardised stratified 70/30 split of a bundled task (``quick``: a third of it)."""
    from ssvm.datasets import load_ranking_task, split_ranking_task

    task = load_ranking_task(name)
    X_train, X_test, y_train, y_test = split_ranking_task(task, test_size=0.3, random_state=seed)
    if quick:
        X_train, y_train = X_train[::3], y_train[::3]
    return transformed((X_train, y_train, None, X_test, y_test, None), "standard")


def compare(data_name, features, data, grid, n_folds, seed):
    """Rows (one per model) of test mean AP / NDCG with the chosen C and the final fit's time."""
    X_train, y_train, q_train, X_test, y_test, q_test = data
    rows = []
    for spec in MODELS:
        C, cv = select_C(spec, X_train, y_train, grid, qid=q_train, n_folds=n_folds,
                         random_state=seed)
        start = time.perf_counter()
        model = fit_model(spec, C, X_train, y_train, q_train, random_state=seed)
        seconds = time.perf_counter() - start
        metrics = evaluate_model(model, X_test, y_test, q_test)
        rows.append({"data": data_name, "features": features, "model": spec.name, "C": C,
                     "test mean AP": metrics["AP"], "test mean NDCG": metrics["NDCG"],
                     "queries": metrics["queries"], "fit s": seconds, "cv": cv})
        logger.info("%s (%s) %s: AP %.4f NDCG %.4f (C=%g)", data_name, features, spec.name,
                    metrics["AP"], metrics["NDCG"], C)
    return rows


def main(argv=None):
    parser = _common.make_parser(__doc__)
    parser.add_argument("--datasets", nargs="+", default=["letor", "letor-graded", "letor-losses", *BUNDLED],
                        help="letor, letor-graded, letor-losses and/or bundled task names (default: all)")
    parser.add_argument("--letor-transforms", nargs="+", choices=LETOR_TRANSFORMS,
                        default=list(LETOR_TRANSFORMS),
                        help="feature transforms compared on LETOR (default: both)")
    args = _common.setup(parser, argv)
    # degenerate LETOR queries are counted once in letor_task, not warned about in every fit
    warnings.filterwarnings("ignore", category=DegenerateQueriesWarning)
    grid, n_folds = GRID, 3
    datasets = args.datasets
    if args.quick:
        grid, n_folds = (1.0, 10.0), 2
        datasets = [d for d in datasets if d in ("letor", "letor-graded", "letor-losses", "iris")]
    rows, tables, graded, losses = [], [], None, None
    for name in datasets:
        logger.info("data set %s", name)
        if name == "letor-graded":
            n_graded = 2 if args.quick else GRADED_FOLDS
            graded_rows, graded = graded_comparison(args.quick, args.seed, n_graded, logger)
            tables.append(format_table(graded_rows, title=(
                f"LETOR sample, graded relevance: test exponential-gain NDCG, NDCG@10 and AP (%), mean ± s.e. "
                f"over {n_graded} query folds ({graded['n_queries']} queries), and the paired difference to "
                "the graded NDCG-SVM; hyper-parameters by NDCG on a validation quarter of each training part")))
        elif name == "letor-losses":
            n_losses = 2 if args.quick else GRADED_FOLDS
            loss_rows, targets, losses = loss_comparison(args.quick, args.seed, n_losses, logger)
            tables.append(format_table(loss_rows, floatfmt={"fit s": ".2f"}, title=(
                f"LETOR sample, issue #35's losses: test NDCG@10, NDCG (gains 2^r-1), MAP, MRR (r > 0 relevant) and "
                f"pair accuracy (%), mean ± s.e. over {n_losses} query folds ({losses['n_queries']} queries), and "
                "the paired difference to the pairwise SVM over the folds; hyper-parameters by each model's own "
                "measure on a validation quarter of each training part")))
            tables.append(format_table(targets, title=(
                "Issue #35's targets: paired difference (model - reference), mean ± s.e. over the folds and over "
                "the test queries")))
        elif name == "letor":
            data = letor_task(args.quick)
            for transform in args.letor_transforms:
                rows.extend(compare("LETOR sample", transform, transformed(data, transform), grid,
                                    n_folds, args.seed))
        else:
            rows.extend(compare(name, "standard", bundled_task(name, args.seed, args.quick), grid,
                                n_folds, args.seed))
    columns = ["data", "features", "model", "C", "test mean AP", "test mean NDCG", "queries", "fit s"]
    if rows:
        tables.insert(0, format_table(rows, columns, floatfmt={"C": "g", "fit s": ".2f"},
                                      title=f"Test ranking quality, C by {n_folds}-fold CV over {list(grid)}"))
    if args.plot and rows:
        plt = _common.pyplot()
        names = list(dict.fromkeys((r["data"], r["features"]) for r in rows))
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        for ax, metric in zip(axes, ("test mean AP", "test mean NDCG")):
            _common.grouped_bars(ax, [f"{d}\n{f}" for d, f in names], {
                spec.name: [next(r[metric] for r in rows
                                 if (r["data"], r["features"]) == key and r["model"] == spec.name)
                            for key in names] for spec in MODELS})
            ax.set_ylabel(metric)
            ax.set_ylim(0, 1)
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(f"{args.plot}/ranking_quality.png", dpi=100)
        plt.close(fig)
    _common.emit(args, tables,
                 {"experiment": "ranking_quality", "grid": grid, "n_folds": n_folds, "rows": rows, "graded": graded,
                  "losses": losses})
    return 0


if __name__ == "__main__":
    sys.exit(main())
