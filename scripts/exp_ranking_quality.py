"""Ranking quality: AP-SVM vs NDCG-SVM vs the 0-1 SVM (and scikit-learn's LinearSVC).

Data sets:
* the LETOR sample (``ssvm.datasets.load_letor_sample``, bundled): trained on rank.train with its query ids,
  C by 3-fold cross-validation keeping queries whole, scored on rank.test by query (mean AP and
  mean NDCG over the test queries that have a relevant and an irrelevant document; relevance > 0 is
  relevant, NDCG uses binary gains as the NDCG-SVM does);
* the ranking tasks bundled with scikit-learn (``ssvm.datasets.load_ranking_task``): one-vs-rest
  retrieval, a stratified 70/30 split (seed ``--seed``), standardised features, C by 3-fold
  stratified cross-validation, mean AP / NDCG over the classes on the test part.

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

from ssvm._experiments.model_selection import DEMO_MODELS, ModelSpec, evaluate_model, fit_model, select_C
from ssvm.datasets import load_letor_sample
from ssvm.exceptions import DegenerateQueriesWarning

MODELS = DEMO_MODELS + (ModelSpec("LinearSVC", None, "AP"),)
BUNDLED = ("digits", "breast_cancer", "wine", "iris")
GRID = (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)


def letor_task(quick):
    """(X_train, y_train, qid_train, X_test, y_test, qid_test) of the LETOR sample."""
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
    return X_train, y_train, q_train, X_test, y_test, q_test


def bundled_task(name, seed, quick):
    """Standardised stratified 70/30 split of a bundled task (``quick``: a third of it)."""
    from sklearn.preprocessing import StandardScaler

    from ssvm.datasets import load_ranking_task, split_ranking_task

    task = load_ranking_task(name)
    X_train, X_test, y_train, y_test = split_ranking_task(task, test_size=0.3, random_state=seed)
    if quick:
        X_train, y_train = X_train[::3], y_train[::3]
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), y_train, None, scaler.transform(X_test), y_test, None


def compare(data_name, data, grid, n_folds, seed):
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
        rows.append({"data": data_name, "model": spec.name, "C": C,
                     "test mean AP": metrics["AP"], "test mean NDCG": metrics["NDCG"],
                     "queries": metrics["queries"], "fit s": seconds, "cv": cv})
        logger.info("%s %s: AP %.4f NDCG %.4f (C=%g)", data_name, spec.name, metrics["AP"],
                    metrics["NDCG"], C)
    return rows


def main(argv=None):
    parser = _common.make_parser(__doc__)
    parser.add_argument("--datasets", nargs="+", default=["letor", *BUNDLED],
                        help="letor and/or bundled task names (default: all)")
    args = _common.setup(parser, argv)
    # degenerate LETOR queries are counted once in letor_task, not warned about in every fit
    warnings.filterwarnings("ignore", category=DegenerateQueriesWarning)
    grid, n_folds = GRID, 3
    datasets = args.datasets
    if args.quick:
        grid, n_folds = (1.0, 10.0), 2
        datasets = [d for d in datasets if d in ("letor", "iris")]
    rows = []
    for name in datasets:
        logger.info("data set %s", name)
        data = letor_task(args.quick) if name == "letor" else bundled_task(name, args.seed,
                                                                           args.quick)
        rows.extend(compare("LETOR sample" if name == "letor" else name, data, grid, n_folds,
                            args.seed))
    columns = ["data", "model", "C", "test mean AP", "test mean NDCG", "queries", "fit s"]
    table = format_table(rows, columns, floatfmt={"C": "g", "fit s": ".2f"},
                         title=f"Test ranking quality, C by {n_folds}-fold CV over {list(grid)}")
    if args.plot:
        plt = _common.pyplot()
        names = list(dict.fromkeys(r["data"] for r in rows))
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        for ax, metric in zip(axes, ("test mean AP", "test mean NDCG")):
            _common.grouped_bars(ax, names, {
                spec.name: [next(r[metric] for r in rows if r["data"] == d and r["model"] == spec.name)
                            for d in names] for spec in MODELS})
            ax.set_ylabel(metric)
            ax.set_ylim(0, 1)
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(f"{args.plot}/ranking_quality.png", dpi=100)
        plt.close(fig)
    _common.emit(args, [table], {"experiment": "ranking_quality", "grid": grid,
                                 "n_folds": n_folds, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
