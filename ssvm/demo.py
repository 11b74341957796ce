"""The main job (``ssvm demo``) and the evaluation helpers the experiment scripts share.

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

The helpers (:func:`format_table`, :func:`ranking_metrics`, :func:`evaluate_model`,
:func:`select_C`, :class:`RecordingOracle`, :func:`time_oracles`, ...) live here rather than under
``scripts/`` because the installed ``ssvm demo`` needs them and cannot import ``scripts/``.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)

__all__ = [
    "DEMO_MODELS",
    "ModelSpec",
    "RecordingOracle",
    "evaluate_model",
    "format_table",
    "ranking_metrics",
    "record_training_scores",
    "run_demo",
    "select_C",
    "time_oracles",
]

#: metric name -> ssvm loss whose ``1 - ranking_loss`` it is
METRICS = {"AP": "ap", "NDCG": "ndcg"}


# --------------------------------------------------------------------------------------------
# tables
# --------------------------------------------------------------------------------------------
def _cell(value, floatfmt):
    if value is None:
        return "-"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value):
            return str(float(value))
        return format(float(value), floatfmt)
    return str(value)


def format_table(rows, columns=None, *, title=None, floatfmt=".4f"):
    """Render rows as a plain-text table (text columns left-aligned, numbers right-aligned).

    Parameters
    ----------
    rows : list of dict
        One dict per row, column name -> value (str, int, float or None, shown as ``-``).
    columns : list of str, optional
        Columns in order; by default the keys of the first row, then any new keys of later rows.
    title : str, optional
        A line printed above the table.
    floatfmt : str, default=".4f"
        Format spec for floats; a dict column -> spec sets it per column.

    Returns
    -------
    str
        The table, lines joined by newlines (no trailing newline).

    Raises
    ------
    ValueError
        If ``rows`` is empty.

    Examples
    --------
    >>> print(format_table([{"model": "AP-SVM", "AP": 0.91234}], floatfmt=".3f"))
    model     AP
    ------  -----
    AP-SVM  0.912
    """
    if not rows:
        raise ValueError("format_table needs at least one row")
    if columns is None:
        columns = []
        for row in rows:
            columns.extend(key for key in row if key not in columns)
    fmts = floatfmt if isinstance(floatfmt, dict) else {}
    default_fmt = ".4f" if isinstance(floatfmt, dict) else floatfmt
    cells = [[_cell(row.get(col), fmts.get(col, default_fmt)) for col in columns] for row in rows]
    numeric = [
        all(
            row.get(col) is None or isinstance(row.get(col), (int, float, np.integer, np.floating))
            for row in rows
        )
        for col in columns
    ]
    widths = [max(len(str(col)), *(len(r[j]) for r in cells)) for j, col in enumerate(columns)]

    def line(values):
        parts = [
            v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)
        ]
        return "  ".join(parts).rstrip()

    out = [] if title is None else [title]
    out.append(line([str(c) for c in columns]))
    out.append("  ".join("-" * w for w in widths))
    out.extend(line(r) for r in cells)
    return "\n".join(out)


# --------------------------------------------------------------------------------------------
# ranking quality
# --------------------------------------------------------------------------------------------
def ranking_metrics(scores, relevant, qid=None):
    """Mean AP and mean NDCG of the rankings given by ``scores``, one query per ``qid`` value.

    Each query's samples are ranked by decreasing score (ties by index, as everywhere in ssvm) and
    scored with ``1 - ssvm.losses.ranking_loss``. Queries without a relevant or without an
    irrelevant sample have no defined AP and are skipped.

    Parameters
    ----------
    scores : array-like of float, shape (n_samples,)
    relevant : array-like of bool, shape (n_samples,)
    qid : array-like, shape (n_samples,), optional
        Query id per sample; by default all samples form one query.

    Returns
    -------
    dict
        ``{"AP": mean AP, "NDCG": mean NDCG, "queries": number of queries scored}``.

    Raises
    ------
    ValueError
        If the lengths differ or no query has both a relevant and an irrelevant sample.
    """
    from ssvm.losses import ranking_loss

    scores = np.asarray(scores, dtype=np.float64)
    relevant = np.asarray(relevant, dtype=bool)
    if scores.ndim != 1 or scores.shape != relevant.shape:
        raise ValueError(
            f"scores and relevant must be 1-D of equal length, got {scores.shape} and {relevant.shape}"
        )
    if qid is None:
        groups = [np.arange(scores.size)]
    else:
        qid = np.asarray(qid)
        if qid.shape != scores.shape:
            raise ValueError(f"qid has shape {qid.shape}, expected {scores.shape}")
        _, inverse = np.unique(qid, return_inverse=True)
        order = np.argsort(inverse, kind="stable")
        groups = np.split(order, np.flatnonzero(np.diff(inverse[order])) + 1)
    values = {name: [] for name in METRICS}
    for idx in groups:
        y = relevant[idx]
        if y.all() or not y.any():
            continue
        for name, loss in METRICS.items():
            values[name].append(1.0 - ranking_loss(scores[idx], y, loss=loss))
    if not values["AP"]:
        raise ValueError("no query has both a relevant and an irrelevant sample")
    result = {name: float(np.mean(v)) for name, v in values.items()}
    result["queries"] = len(values["AP"])
    return result


def _one_vs_rest_metrics(scores, y, classes):
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim == 1:  # binary: one query, the second class is the relevant one
        return ranking_metrics(scores, y == classes[1])
    per_class = [ranking_metrics(scores[:, k], y == c) for k, c in enumerate(classes)]
    out = {name: float(np.mean([m[name] for m in per_class])) for name in METRICS}
    out["queries"] = len(per_class)
    return out


@dataclass(frozen=True)
class ModelSpec:
    """A model of the comparison: a ``RankSVM`` loss, or scikit-learn's ``LinearSVC``.

    Parameters
    ----------
    name : str
        Row label in the tables.
    loss : str or None
        ``RankSVM`` loss; None means ``LinearSVC(loss="hinge", C=C/n)``, the same function as the
        0-1 SVM (DESIGN.md section 1) solved by liblinear.
    select_by : {"AP", "NDCG"}
        Validation metric that picks C.
    params : dict
        Extra ``RankSVM`` parameters (solver, tol, ...).
    """

    name: str
    loss: str | None
    select_by: str = "AP"
    params: dict = field(default_factory=dict)

    def make(self, C, n_samples, random_state=0):
        """Build the unfitted estimator for regularisation ``C`` (``n_samples`` rows to fit)."""
        if self.loss is None:
            from sklearn.svm import LinearSVC

            return LinearSVC(loss="hinge", C=C / n_samples, max_iter=20000, random_state=random_state)
        from ssvm import RankSVM

        return RankSVM(loss=self.loss, C=C, random_state=random_state, **self.params)


#: the three models of the demo and of the QS paper's comparison
DEMO_MODELS = (
    ModelSpec("AP-SVM", "ap", "AP"),
    ModelSpec("NDCG-SVM", "ndcg", "NDCG"),
    ModelSpec("0-1 SVM", "zero_one", "AP"),
)


def fit_model(spec, C, X, y, qid=None, random_state=0):
    """Fit ``spec``'s estimator: with ``qid`` on graded relevance, otherwise on class labels.

    Parameters
    ----------
    spec : ModelSpec
    C : float
    X : array-like or sparse matrix, shape (n_samples, n_features)
    y : ndarray, shape (n_samples,)
        Class labels (``qid`` None) or relevance grades (``y > 0`` is relevant).
    qid : ndarray, optional
    random_state : int, default=0

    Returns
    -------
    estimator
        The fitted estimator.
    """
    model = spec.make(C, X.shape[0], random_state=random_state)
    if qid is None:
        return model.fit(X, y)
    if spec.loss is None:
        return model.fit(X, np.asarray(y) > 0)
    return model.fit(X, y, qid=qid)


def evaluate_model(model, X, y, qid=None):
    """Mean AP and mean NDCG of a fitted model's rankings.

    Parameters
    ----------
    model : fitted estimator with ``decision_function`` and ``classes_``
    X : array-like or sparse matrix
    y : ndarray
        Class labels (one-vs-rest retrieval, one query per class) when ``qid`` is None, else
        relevance grades (``y > 0`` relevant) with one query per ``qid`` value.
    qid : ndarray, optional

    Returns
    -------
    dict
        See :func:`ranking_metrics`.
    """
    scores = model.decision_function(X)
    y = np.asarray(y)
    if qid is None:
        return _one_vs_rest_metrics(scores, y, model.classes_)
    return ranking_metrics(scores, y > 0, qid)


def _cv_splits(X, y, qid, n_folds, random_state):
    from sklearn.model_selection import GroupKFold, StratifiedKFold

    if qid is None:
        cv = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=random_state)
        return list(cv.split(X, y))
    return list(GroupKFold(n_splits=n_folds).split(X, y, groups=qid))


def select_C(spec, X, y, grid, *, qid=None, n_folds=3, random_state=0, progress=None):
    """Pick C from ``grid`` by k-fold cross-validation of ``spec.select_by``.

    Folds are stratified by class without ``qid`` and keep queries whole with it.

    Parameters
    ----------
    spec : ModelSpec
    X, y, qid
        As for :func:`fit_model`.
    grid : sequence of float
        Candidate values of C (> 0).
    n_folds : int, default=3
    random_state : int, default=0
    progress : tqdm-like, optional
        ``update(1)`` is called after every fit.

    Returns
    -------
    best_C : float
    scores : dict
        C -> mean validation score.

    Raises
    ------
    ValueError
        For an empty grid or a non-positive C.
    """
    grid = [float(c) for c in grid]
    if not grid or min(grid) <= 0:
        raise ValueError(f"the C grid must be non-empty and positive, got {grid}")
    y = np.asarray(y)
    splits = _cv_splits(X, y, qid, n_folds, random_state)
    cv_scores = {}
    for C in grid:
        fold_scores = []
        for train, val in splits:
            model = fit_model(
                spec, C, X[train], y[train], None if qid is None else qid[train], random_state
            )
            metrics = evaluate_model(model, X[val], y[val], None if qid is None else qid[val])
            fold_scores.append(metrics[spec.select_by])
            if progress is not None:
                progress.update(1)
        cv_scores[C] = float(np.mean(fold_scores))
    best = max(grid, key=lambda c: (cv_scores[c], -c))  # ties: the smaller C
    logger.info("%s: C=%g chosen by %d-fold CV (%s %s)", spec.name, best, n_folds,
                spec.select_by, {c: round(s, 4) for c, s in cv_scores.items()})
    return best, cv_scores


# --------------------------------------------------------------------------------------------
# oracle timing on the scores met during training
# --------------------------------------------------------------------------------------------
class RecordingOracle:
    """Wraps an oracle and keeps a copy of every (scores, y) it is called with.

    Parameters
    ----------
    oracle : callable
        ``oracle(scores, y) -> (c, delta)``, e.g. from ``ssvm.losses.get_oracle``.

    Attributes
    ----------
    calls : list of (ndarray, ndarray)
        The inputs of every call, in order. (Recording works in-process only: use ``n_jobs=None``.)
    """

    def __init__(self, oracle):
        self.oracle = oracle
        self.calls = []

    def __call__(self, scores, y):
        self.calls.append((np.array(scores, dtype=np.float64), np.array(y, dtype=bool)))
        return self.oracle(scores, y)


def _binary_queries(y, classes):
    """One-vs-rest binary relevance vectors, one per class (a single one for two classes)."""
    if len(classes) == 2:
        return [np.asarray(y) == classes[1]]
    return [np.asarray(y) == c for c in classes]


def record_training_scores(X, y, classes, loss, C, *, solver="cutting_plane", tol=1e-3,
                           max_iter=None, random_state=0, progress=None):
    """Train one query per class with ``solver`` and record the oracle inputs met on the way.

    Builds ``ssvm.problem.StructuredHinge`` with a :class:`RecordingOracle` around the "auto"
    oracle of ``loss`` for every one-vs-rest query and runs the solver to tolerance.

    Parameters
    ----------
    X : ndarray, shape (n_samples, n_features)
    y : ndarray of class labels
    classes : ndarray
    loss : str
    C : float
    solver : str, default="cutting_plane"
    tol : float, default=1e-3
    max_iter : int, optional
        Passed to the solver when given.
    random_state : int, default=0
    progress : tqdm-like, optional
        ``update(1)`` is called after every class's run.

    Returns
    -------
    calls : list of (scores, y_bool)
        Every oracle input of every class's training run.
    results : list
        The solver results (with their histories), one per class.
    """
    from ssvm.losses import get_oracle
    from ssvm.problem import StructuredHinge
    from ssvm.solvers import SOLVERS

    calls, results = [], []
    kwargs = {} if max_iter is None else {"max_iter": max_iter}
    for relevant in _binary_queries(y, classes):
        oracle = RecordingOracle(get_oracle(loss, "auto"))
        problem = StructuredHinge(X, relevant, [np.arange(X.shape[0])], oracle,
                                  fit_intercept=(loss == "zero_one"))
        results.append(SOLVERS[solver](problem, C, tol=tol, random_state=random_state, **kwargs))
        calls.extend(oracle.calls)
        if progress is not None:
            progress.update(1)
    return calls, results


def timed_oracles(loss, names=None):
    """The oracles to time for ``loss``: every supported one except "auto" and "brute".

    A loss with a single oracle (the 0-1 loss) is timed through "auto".

    Parameters
    ----------
    loss : str
    names : sequence of str, optional
        Restrict to these oracle names.

    Returns
    -------
    dict
        oracle name -> callable ``(scores, y_bool) -> (c, delta)``.
    """
    from ssvm.losses import get_oracle, supported_oracles

    available = [o for o in supported_oracles(loss) if o not in ("auto", "brute")] or ["auto"]
    if names is not None:
        unknown = set(names) - set(available)
        if unknown:
            raise ValueError(f"oracles {sorted(unknown)} do not support loss {loss!r}")
        available = [o for o in available if o in names]
    return {name: get_oracle(loss, name) for name in available}


def time_oracles(calls, oracles, *, check=True):
    """Time every oracle on every recorded call (oracles interleaved call by call).

    Each oracle is first called once untimed (numba compilation). With ``check``, the oracles'
    hinge values ``delta + scores @ c`` are compared on every call: exact oracles must agree.

    Parameters
    ----------
    calls : list of (scores, y_bool)
    oracles : dict
        name -> callable.
    check : bool, default=True

    Returns
    -------
    dict
        name -> ndarray of seconds per call.

    Raises
    ------
    ValueError
        If ``calls`` is empty, or with ``check`` when two oracles disagree on a call.
    """
    if not calls:
        raise ValueError("no oracle calls to time")
    for oracle in oracles.values():
        oracle(*calls[0])
    times = {name: np.empty(len(calls)) for name in oracles}
    for i, (scores, y) in enumerate(calls):
        hinges = {}
        for name, oracle in oracles.items():
            start = time.perf_counter()
            c, delta = oracle(scores, y)
            times[name][i] = time.perf_counter() - start
            hinges[name] = delta + float(scores @ c)
        if check and hinges:
            values = np.array(list(hinges.values()))
            scale = 1.0 + np.abs(values).max()
            if values.max() - values.min() > 1e-8 * scale:
                raise ValueError(f"oracles disagree on call {i}: {hinges}")
    return times


def oracle_time_rows(loss_label, calls, times):
    """Table rows for :func:`time_oracles` output.

    Parameters
    ----------
    loss_label : str
    calls : list
        The recorded calls (their number is reported).
    times : dict
        oracle name -> seconds per call.

    Returns
    -------
    list of dict
        Per oracle: median ms per call, total seconds over the run, and the median time relative to
        the "qs" oracle of the same loss (None when the loss has no QS oracle).
    """
    qs = float(np.median(times["qs"])) if "qs" in times else None
    rows = []
    for name, t in times.items():
        median = float(np.median(t))
        rows.append({
            "loss": loss_label,
            "oracle": name,
            "calls": len(calls),
            "median ms/call": 1e3 * median,
            "total s": float(np.sum(t)),
            "x QS": None if qs is None else median / qs,
        })
    return rows


# --------------------------------------------------------------------------------------------
# plots (matplotlib imported only here)
# --------------------------------------------------------------------------------------------
def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _record_field(record, name):
    if isinstance(record, dict):
        return record.get(name)
    return getattr(record, name, None)


def history_curve(history):
    """(seconds, primal, dual) arrays from a solver history (dual NaN where undefined).

    Parameters
    ----------
    history : list of records
        Records with ``seconds``, ``primal`` and ``dual`` (or ``gap``) fields.

    Returns
    -------
    seconds, primal, dual : ndarray
    """
    seconds, primal, dual = [], [], []
    for rec in history:
        p = _record_field(rec, "primal")
        d = _record_field(rec, "dual")
        if d is None and _record_field(rec, "gap") is not None and p is not None:
            d = p - _record_field(rec, "gap")
        seconds.append(_record_field(rec, "seconds"))
        primal.append(np.nan if p is None else p)
        dual.append(np.nan if d is None else d)
    return (np.asarray(seconds, dtype=float), np.asarray(primal, dtype=float),
            np.asarray(dual, dtype=float))


def plot_convergence(histories, path, title):
    """Save primal (solid) and dual (dashed) objective against time for each solver.

    The right panel shows the primal suboptimality against the best certified dual bound of all
    solvers (or the best primal value if no solver reports a dual), on a log scale.

    Parameters
    ----------
    histories : dict
        solver name -> history (see :func:`history_curve`).
    path : str or Path
        PNG file to write.
    title : str
    """
    plt = _pyplot()
    fig, (ax, ax_gap) = plt.subplots(1, 2, figsize=(11, 4))
    curves = {name: history_curve(h) for name, h in histories.items()}
    # the reference optimum: the best certified lower bound (dual) of any solver, else the best J
    duals = [d[np.isfinite(d)] for _, _, d in curves.values()]
    duals = np.concatenate(duals) if duals else np.array([])
    best = duals.max() if duals.size else np.nanmin([np.nanmin(p) for _, p, _ in curves.values()])
    for (name, (t, p, d)), color in zip(curves.items(), plt.rcParams["axes.prop_cycle"].by_key()["color"]):
        ax.plot(t, p, "-", color=color, label=f"{name} primal")
        if np.isfinite(d).any():
            ax.plot(t, d, "--", color=color, label=f"{name} dual")
        ax_gap.semilogy(t, np.maximum(p - best, 1e-12), "-", color=color, label=name)
    ax.set_xlabel("seconds")
    ax.set_ylabel("J(w)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax_gap.set_xlabel("seconds")
    ax_gap.set_ylabel("J(w) - best dual bound" if duals.size else "J(w) - best J seen")
    ax_gap.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_precision_recall(models, X, y, path):
    """Save one precision-recall panel per class (one-vs-rest) with a curve per model.

    Parameters
    ----------
    models : dict
        name -> fitted estimator with ``decision_function`` and ``classes_``.
    X, y
        Test data (class labels).
    path : str or Path
    """
    from sklearn.metrics import precision_recall_curve

    plt = _pyplot()
    classes = next(iter(models.values())).classes_
    n = 1 if len(classes) == 2 else len(classes)
    ncols = min(n, 5)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3 * ncols, 3 * nrows), squeeze=False)
    scores = {name: np.asarray(m.decision_function(X)) for name, m in models.items()}
    for k in range(n):
        ax = axes.flat[k]
        cls = classes[1] if n == 1 else classes[k]
        for name, s in scores.items():
            col = s if s.ndim == 1 else s[:, k]
            precision, recall, _ = precision_recall_curve(y == cls, col)
            ax.plot(recall, precision, label=name)
        ax.set_title(f"class {cls}")
        ax.set_xlabel("recall")
        ax.set_ylabel("precision")
        ax.set_ylim(0, 1.02)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# --------------------------------------------------------------------------------------------
# the demo job
# --------------------------------------------------------------------------------------------
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
    with tqdm(total=n_fits + n_runs, desc="training", unit="fit", disable=not progress) as bar:
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
            label = {"ap": "AP", "ndcg": "NDCG", "zero_one": "0-1"}[spec.loss]
            oracle_rows.extend(oracle_time_rows(label, calls,
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
