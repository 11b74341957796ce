"""Figures: precision-recall curves and solver convergence (matplotlib imported only inside)."""

from __future__ import annotations

import math

import numpy as np

from ssvm.demo import matplotlib_missing  # the check ssvm demo makes, before any work

__all__ = ["history_curve", "matplotlib_missing", "plot_convergence", "plot_precision_recall", "pyplot"]


def pyplot():
    """matplotlib's pyplot with the non-interactive Agg backend (imported on first use)."""
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
    plt = pyplot()
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

    plt = pyplot()
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
