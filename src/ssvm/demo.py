"""The main job (``ssvm demo``): one-vs-rest digits retrieval, quality and oracle-time tables.

The demo is one-vs-rest retrieval on scikit-learn's digits (bundled, no download): for every digit,
rank the test images so that those of that digit come first. It trains AP-SVM, NDCG-SVM and the
0-1 SVM (the binary SVM baseline), each with C chosen by scikit-learn's ``GridSearchCV`` (stratified
folds; the ranking models by their own measure, the 0-1 SVM by mean AP), and reports

* test mean AP and mean NDCG per model (mean over the ten one-vs-rest queries), and
* the time of each loss-augmented-inference oracle per call, measured on the very score vectors met
  while training each digit-vs-rest model with the cutting plane (so every oracle of a loss is
  timed on the same inputs), in the spirit of the QS paper's Tables 2-3.

With ``plot_dir`` it also saves precision-recall curves and convergence curves (the objective
against time for every solver; matplotlib, the ``plot`` extra, imported only then). It uses public
API only; the experiment scripts under ``scripts/`` go further.
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from functools import partial
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)

__all__ = ["run_demo", "matplotlib_missing"]

#: C grid and folds of the full demo and of ``--quick``
DEMO_GRID = (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)
QUICK_GRID = (1.0,)
#: (name, loss, the loss whose measure picks C)
MODELS = (("AP-SVM", "ap", "ap"), ("NDCG-SVM", "ndcg", "ndcg"), ("0-1 SVM", "zero_one", "ap"))


def _load_digits(quick, random_state):
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from ssvm.datasets import load_ranking_task, split_ranking_task

    task = load_ranking_task("digits")
    X_train, X_test, y_train, y_test = split_ranking_task(task, test_size=0.3,
                                                          random_state=random_state)
    if quick:  # a stratified quarter of the data, enough for the smoke test
        def quarter(y):
            keep, _ = train_test_split(np.arange(len(y)), train_size=0.25, stratify=y,
                                       random_state=random_state)
            return np.sort(keep)

        keep_train, keep_test = quarter(y_train), quarter(y_test)
        X_train, y_train = X_train[keep_train], y_train[keep_train]
        X_test, y_test = X_test[keep_test], y_test[keep_test]
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


def _one_vs_rest_score(model, X, y, *, loss):
    """Mean over the classes of ``loss``'s measure of the ranking by the model's scores."""
    from ssvm.metrics import one_vs_rest_score

    return one_vs_rest_score(y, model.decision_function(X), model.classes_, loss=loss)


def _choose_C(loss, select_by, X, y, grid, n_folds, random_state, n_jobs):
    """``GridSearchCV`` over C (ties: the smaller C, the first of the ascending grid)."""
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    from ssvm import RankSVM

    search = GridSearchCV(RankSVM(loss=loss, random_state=random_state, n_jobs=n_jobs),
                          {"C": sorted(grid)}, scoring=partial(_one_vs_rest_score, loss=select_by),
                          cv=StratifiedKFold(n_folds, shuffle=True, random_state=random_state))
    return search.fit(X, y)


def _recorded_calls(X, y, loss, C, random_state):
    """The oracle inputs ``(scores, y)`` the cutting plane meets training each class vs the rest."""
    from ssvm.losses import get_oracle, loss_entry
    from ssvm.problem import StructuredHinge
    from ssvm.solvers import SOLVERS

    calls = []
    oracle = get_oracle(loss)

    def recording(scores, relevant):
        calls.append((np.array(scores, dtype=np.float64), np.array(relevant, dtype=bool)))
        return oracle(scores, relevant)

    for c in np.unique(y):
        problem = StructuredHinge(X, y == c, [np.arange(len(y))], recording,
                                  fit_intercept=loss_entry(loss).intercept)
        SOLVERS["cutting_plane"](problem, C, random_state=random_state)
    return calls


def _oracle_rows(loss, calls):
    """Median and total time per call of every exact oracle of ``loss`` on ``calls``, interleaved
    call by call (each called once untimed first: the first call of a process pays for imports and
    work arrays); the oracles must agree."""
    from ssvm.losses import get_oracle, loss_entry, supported_oracles

    names = [o for o in supported_oracles(loss) if o not in ("auto", "brute")] or ["auto"]
    oracles = {name: get_oracle(loss, name) for name in names}
    times = {name: np.empty(len(calls)) for name in names}
    for oracle in oracles.values():
        oracle(*calls[0])
    for i, (scores, relevant) in enumerate(calls):
        hinges = []
        for name, oracle in oracles.items():
            start = time.perf_counter()
            c, delta = oracle(scores, relevant)
            times[name][i] = time.perf_counter() - start
            hinges.append(delta + float(scores @ c))
        if max(hinges) - min(hinges) > 1e-8 * (1.0 + max(map(abs, hinges))):
            raise RuntimeError(f"the {loss} oracles disagree on call {i}: {dict(zip(names, hinges))}")
    qs = float(np.median(times["qs"])) if "qs" in times else None
    return [{"loss": loss_entry(loss).label, "oracle": name, "calls": len(calls),
             "median ms/call": 1e3 * float(np.median(t)), "total s": float(np.sum(t)),
             "x QS": None if qs is None else float(np.median(t)) / qs} for name, t in times.items()]


def _table(title, rows, formats):
    """Plain-text table: text columns left-aligned, numbers right-aligned, None as ``-``."""
    columns = list(rows[0])
    cells = [["-" if row[c] is None else format(row[c], formats.get(c, "")) for c in columns]
             for row in rows]
    numeric = [not isinstance(rows[0][c], str) for c in columns]
    widths = [max(len(c), *(len(r[j]) for r in cells)) for j, c in enumerate(columns)]

    def line(values):
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(values, widths, numeric)).rstrip()

    return "\n".join([title, line(columns), "  ".join("-" * w for w in widths),
                      *(line(r) for r in cells)])


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

    X_train, X_test, y_train, y_test = _load_digits(quick, random_state)
    classes = np.unique(y_train)
    grid = QUICK_GRID if quick else DEMO_GRID
    n_folds = 2 if quick else 5
    logger.info("digits one-vs-rest: %d train / %d test images, %d classes, C grid %s",
                len(y_train), len(y_test), len(classes), grid)
    start = time.perf_counter()
    chosen, models, quality, oracle_rows = {}, {}, [], []
    # log records go through tqdm.write while the bar is shown, so they never land inside it
    with logging_redirect_tqdm(), tqdm(total=2 * len(MODELS), desc="training", unit="step",
                                       disable=not progress) as bar:
        for name, loss, select_by in MODELS:
            bar.set_postfix_str(name)
            search = _choose_C(loss, select_by, X_train, y_train, grid, n_folds, random_state, n_jobs)
            chosen[name], models[name] = float(search.best_params_["C"]), search.best_estimator_
            logger.info("%s: C=%g chosen by %d-fold CV", name, chosen[name], n_folds)
            quality.append({"model": name, "C": chosen[name],
                            "test mean AP": _one_vs_rest_score(models[name], X_test, y_test, loss="ap"),
                            "test mean NDCG": _one_vs_rest_score(models[name], X_test, y_test,
                                                                 loss="ndcg")})
            bar.update(1)
            bar.set_postfix_str(f"oracle timing, {name}")
            oracle_rows.extend(_oracle_rows(loss, _recorded_calls(X_train, y_train, loss, chosen[name],
                                                                  random_state)))
            bar.update(1)
    logger.info("trained, recorded and timed in %.1f s", time.perf_counter() - start)
    tables = [
        _table(f"Test ranking quality (digits, one-vs-rest over {len(classes)} classes, "
               f"C by {n_folds}-fold CV)", quality,
               {"C": "g", "test mean AP": ".4f", "test mean NDCG": ".4f"}),
        _table("Loss-augmented inference time per call, on the scores met while training "
               "(cutting plane, all classes)", oracle_rows,
               {"median ms/call": ".4f", "total s": ".4f", "x QS": ".2f"}),
    ]
    plots = [] if plot_dir is None else _plots(models, chosen, X_train, y_train, X_test, y_test,
                                                Path(plot_dir), quick, random_state)
    return {"quality": quality, "oracle_times": oracle_rows, "tables": tables,
            "chosen_C": chosen, "plots": plots}


def matplotlib_missing():
    """Why ``--plot`` cannot work here, or None when matplotlib imports (checked before any work).

    Returns
    -------
    message : str or None
    """
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        return (f"--plot needs matplotlib, which cannot be imported ({exc}); install it with "
                "pip install \"ssvm[plot]\" (or pip install matplotlib), or run without --plot")
    return None


def _plots(models, chosen, X_train, y_train, X_test, y_test, plot_dir, quick, random_state):
    """Precision-recall curves of the models and the convergence of every solver (the AP-SVM and
    NDCG-SVM on the last class against the rest); the PNG paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.exceptions import ConvergenceWarning

    from ssvm import RankSVM
    from ssvm.solvers import SOLVERS

    plot_dir.mkdir(parents=True, exist_ok=True)
    paths = [_plot_precision_recall(plt, models, X_test, y_test, plot_dir / "precision_recall.png")]
    relevant = y_train == np.unique(y_train)[-1]
    for name, loss, _ in MODELS[:2]:
        fig, ax = plt.subplots(figsize=(6, 4))
        for solver in SOLVERS:
            with warnings.catch_warnings():  # --quick caps the iterations on purpose
                warnings.simplefilter("ignore", ConvergenceWarning)
                history = RankSVM(loss=loss, C=chosen[name], solver=solver, random_state=random_state,
                                  max_iter=50 if quick else None).fit(X_train, relevant).history_
            ax.plot([r["seconds"] for r in history], [r["primal"] for r in history], label=solver)
        ax.set(xlabel="seconds", ylabel="J(w)", yscale="log", title=f"{name}, C={chosen[name]:g}")
        ax.legend(fontsize=8)
        paths.append(_save(plt, fig, plot_dir / f"convergence_{loss}.png"))
    return paths


def _save(plt, fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    logger.info("wrote %s", path)
    return str(path)


def _plot_precision_recall(plt, models, X, y, path):
    """One precision-recall panel per class with a curve per model."""
    from sklearn.metrics import precision_recall_curve

    classes = next(iter(models.values())).classes_
    ncols = min(len(classes), 5)
    fig, axes = plt.subplots(math.ceil(len(classes) / ncols), ncols, squeeze=False,
                             figsize=(3 * ncols, 3 * math.ceil(len(classes) / ncols)))
    for name, model in models.items():
        scores = model.decision_function(X)
        for k, cls in enumerate(classes):
            precision, recall, _ = precision_recall_curve(y == cls, scores[:, k])
            axes.flat[k].plot(recall, precision, label=name)
            axes.flat[k].set(title=f"class {cls}", xlabel="recall", ylabel="precision", ylim=(0, 1.02))
    for ax in list(axes.flat)[len(classes):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    return _save(plt, fig, path)
