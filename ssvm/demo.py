"""The main job (``ssvm demo``): one-vs-rest digits retrieval, quality and oracle-time tables.

The demo is one-vs-rest retrieval on scikit-learn's digits (bundled, no download): for every digit,
rank the test images so that those of that digit come first. It trains AP-SVM, NDCG-SVM and the
0-1 SVM (the binary SVM baseline), each with C picked by cross-validation on a small grid, and
reports

* test mean AP and mean NDCG per model (mean over the ten one-vs-rest queries), and
* the time of each loss-augmented-inference oracle per call, measured on the very score vectors met
  during the training runs (so every oracle of a loss is timed on the same inputs), in the spirit of
  the QS paper's Tables 2-3 (0-1 vs Yue / SEARCH / DP / QS for AP, Chakrabarti / QS for NDCG).

With ``plot_dir`` it also saves precision-recall curves and convergence curves (primal and dual
objective against time for every solver). matplotlib (the ``plot`` extra) is imported only there.

The helpers it shares with the experiment scripts (tables, ranking metrics, model selection, oracle
timing, plots) live in :mod:`ssvm._experiments`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from ssvm._experiments.model_selection import DEMO_MODELS, evaluate_model, fit_model, select_C
from ssvm._experiments.oracle_timing import (
    oracle_time_rows,
    record_training_scores,
    time_oracles,
    timed_oracles,
)
from ssvm._experiments.plots import plot_convergence, plot_precision_recall
from ssvm._experiments.tables import format_table

logger = logging.getLogger(__name__)

__all__ = ["run_demo"]


#: C grid and folds of the full demo and of ``--quick``
DEMO_GRID = (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)
QUICK_GRID = (1.0,)
SOLVER_NAMES = ("cutting_plane", "pegasos", "frank_wolfe")


def _load_digits(quick, random_state):
    from sklearn.preprocessing import StandardScaler

    from ssvm.datasets import load_ranking_task, split_ranking_task

    task = load_ranking_task("digits")
    X_train, X_test, y_train, y_test = split_ranking_task(task, test_size=0.3,
                                                          random_state=random_state)
    if quick:  # a stratified quarter of the data, enough for the smoke test
        keep_train = _stratified_subset(y_train, 0.25, random_state)
        keep_test = _stratified_subset(y_test, 0.25, random_state)
        X_train, y_train = X_train[keep_train], y_train[keep_train]
        X_test, y_test = X_test[keep_test], y_test[keep_test]
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


def _stratified_subset(y, fraction, random_state):
    from sklearn.model_selection import train_test_split

    keep, _ = train_test_split(np.arange(len(y)), train_size=fraction, stratify=y,
                               random_state=random_state)
    return np.sort(keep)


def run_demo(*, quick=False, plot_dir=None, random_state=0, progress=True, n_jobs=None):
    """Run the demo: train, evaluate and time the oracles on one-vs-rest digits retrieval.

    Parameters
    ----------
    quick : bool, default=False
        A quarter of the data, a single C and 2 folds (the smoke test; a few seconds).
    plot_dir : str or Path, optional
        Directory for ``precision_recall.png`` and ``convergence_<loss>.png`` (created if missing).
    random_state : int, default=0
        Seed of the train/test split, the CV folds and the solvers.
    progress : bool, default=True
        Show a tqdm progress bar on stderr while training.
    n_jobs : int, optional
        Passed to ``RankSVM``: its one-vs-rest classes are fitted in parallel by joblib.

    Returns
    -------
    dict
        ``quality`` and ``oracle_times`` (lists of table rows), ``tables`` (the two rendered
        tables), ``chosen_C`` (model -> C) and ``plots`` (paths written).
    """
    from tqdm.auto import tqdm
    from tqdm.contrib.logging import logging_redirect_tqdm

    from ssvm.losses import loss_entry, warm_up

    # numba compiles the oracles' kernels on a machine's first run: here, with a log line, not under
    # a progress bar frozen at 0% (the demo's queries have many positives: no score grid needed)
    warm_up(tuple(spec.loss for spec in DEMO_MODELS), few_positives=False, log=logger)
    X_train, X_test, y_train, y_test = _load_digits(quick, random_state)
    classes = np.unique(y_train)
    grid = QUICK_GRID if quick else DEMO_GRID
    n_folds = 2 if quick else 5
    logger.info("digits one-vs-rest: %d train / %d test images, %d classes, C grid %s",
                len(y_train), len(y_test), len(classes), grid)

    start = time.perf_counter()
    specs = [replace(spec, params={**spec.params, "n_jobs": n_jobs}) for spec in DEMO_MODELS]
    n_fits = len(specs) * (len(grid) * n_folds + 1)
    n_runs = len(specs) * len(classes)  # recorded single-class runs for the oracle timing
    chosen, models = {}, {}
    # log records go through tqdm.write while the bar is shown, so they never land inside it
    with logging_redirect_tqdm(), tqdm(total=n_fits + n_runs, desc="training", unit="fit",
                                       disable=not progress) as bar:
        for spec in specs:
            bar.set_postfix_str(spec.name)
            chosen[spec.name], _ = select_C(spec, X_train, y_train, grid, n_folds=n_folds,
                                            random_state=random_state, progress=bar)
            models[spec.name] = fit_model(spec, chosen[spec.name], X_train, y_train,
                                          random_state=random_state)
            bar.update(1)
        logger.info("trained %d models in %.1f s", n_fits, time.perf_counter() - start)

        quality = []
        for spec in DEMO_MODELS:
            metrics = evaluate_model(models[spec.name], X_test, y_test)
            quality.append({"model": spec.name, "C": chosen[spec.name],
                            "test mean AP": metrics["AP"], "test mean NDCG": metrics["NDCG"]})

        start = time.perf_counter()
        oracle_rows = []
        for spec in DEMO_MODELS:
            bar.set_postfix_str(f"oracle timing, {spec.name}")
            calls, _ = record_training_scores(X_train, y_train, classes, spec.loss,
                                              chosen[spec.name], random_state=random_state,
                                              progress=bar)
            oracle_rows.extend(oracle_time_rows(loss_entry(spec.loss).label, calls,
                                                time_oracles(calls, timed_oracles(spec.loss))))
    logger.info("recorded and timed the oracle calls of %d training runs in %.1f s",
                n_runs, time.perf_counter() - start)
    tables = [
        format_table(quality, floatfmt={"C": "g", "test mean AP": ".4f", "test mean NDCG": ".4f"},
                     title=f"Test ranking quality (digits, one-vs-rest over {len(classes)} classes, "
                           f"C by {n_folds}-fold CV)"),
        format_table(oracle_rows, floatfmt={"median ms/call": ".4f", "total s": ".4f",
                                            "x QS": ".2f"},
                     title="Loss-augmented inference time per call, on the scores met while "
                           "training (cutting plane, all classes)"),
    ]

    plots = []
    if plot_dir is not None:
        plots = _demo_plots(Path(plot_dir), models, X_train, y_train, X_test, y_test, classes,
                            chosen, quick, random_state)
    return {"quality": quality, "oracle_times": oracle_rows, "tables": tables,
            "chosen_C": chosen, "plots": plots}


def _demo_plots(plot_dir, models, X_train, y_train, X_test, y_test, classes, chosen, quick,
                random_state):
    from ssvm.losses import get_oracle
    from ssvm.problem import StructuredHinge
    from ssvm.solvers import SOLVERS

    plot_dir.mkdir(parents=True, exist_ok=True)
    paths = [plot_dir / "precision_recall.png"]
    plot_precision_recall(models, X_test, y_test, paths[0])
    relevant = y_train == classes[-1]  # one query: the last class against the rest
    for spec in DEMO_MODELS[:2]:
        histories = {}
        for solver in SOLVER_NAMES:
            problem = StructuredHinge(X_train, relevant, [np.arange(len(relevant))],
                                      get_oracle(spec.loss, "auto"))
            kwargs = {"max_iter": 50} if quick else {}
            result = SOLVERS[solver](problem, chosen[spec.name], tol=1e-3,
                                     random_state=random_state, **kwargs)
            histories[solver] = result.history
        path = plot_dir / f"convergence_{spec.loss}.png"
        plot_convergence(histories, path,
                         f"{spec.name}, class {classes[-1]} vs rest, C={chosen[spec.name]:g}")
        paths.append(path)
    for path in paths:
        logger.info("wrote %s", path)
    return [str(p) for p in paths]
