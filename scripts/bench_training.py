"""Training speed: time to tolerance per solver x loss, the split of a cutting-plane iteration, LinearSVC.

Data: synthetic binary ranking data (one query; Gaussian classes that overlap, 10% positives,
d = 100 dense features) with N = 10^4, 10^5, 10^6 samples, and the LETOR sample (rank.train, 201
queries, 300 sparse features, relevance > 0 relevant). For every size, loss and solver,
``RankSVM(loss, solver=..., C, tol)`` is fitted and timed end to end (median of ``--repeats``
fits); the history of the cutting-plane fit splits its time into matrix-vector products (scores
X w and subgradients X^T c), oracle calls and the dual QP. scikit-learn's
``LinearSVC(loss="hinge", C=C/N)`` -- the same objective as the 0-1 SVM (DESIGN.md section 1) --
is timed on the same data.

Targets checked at the end: AP-SVM with the cutting plane within 2x LinearSVC's time at
N = 10^5, and oracle + QP <= 25% of a cutting-plane iteration at N = 10^6.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

import _common
from _common import format_table, logger

SOLVERS = ("cutting_plane", "frank_wolfe", "pegasos")
LOSSES = ("ap", "ndcg", "zero_one", "precision_at_k")


def fit_rank_svm(X, y, qid, loss, solver, C, tol, max_iter, seed):
    """Fit once; return (seconds, fitted model, converged)."""
    from sklearn.exceptions import ConvergenceWarning

    from ssvm import RankSVM

    model = RankSVM(loss=loss, solver=solver, C=C, tol=tol, max_iter=max_iter, random_state=seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        start = time.perf_counter()
        if qid is None:
            model.fit(X, y)
        else:
            model.fit(X, y, qid=qid)
        seconds = time.perf_counter() - start
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return seconds, model, converged


def fit_linear_svc(X, y, C):
    """Fit LinearSVC(loss="hinge", C=C/N) once; return (seconds, converged)."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC

    model = LinearSVC(loss="hinge", C=C / X.shape[0], dual=True, max_iter=10000)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        start = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - start
    return seconds, not any(issubclass(w.category, ConvergenceWarning) for w in caught)


def iteration_split(history, n_iter):
    """Mean seconds per cutting-plane iteration and its matvec / oracle / QP / other parts.

    ``history`` is one fit's list of records (cumulative ``seconds``, ``matvec_seconds``,
    ``oracle_seconds`` and, when the solver reports it, ``qp_seconds``); ``n_iter`` its iterations.
    """
    last = history[-1]
    n = max(int(n_iter), 1)
    total = last["seconds"]
    parts = {key: last.get(f"{key}_seconds") for key in ("matvec", "oracle", "qp")}
    known = sum(v for v in parts.values() if v is not None)
    split = {"iteration ms": 1e3 * total / n}
    for key, value in parts.items():
        split[f"{key} %"] = None if value is None else 100.0 * value / total
    split["other %"] = 100.0 * (total - known) / total
    split["oracle+QP %"] = (None if parts["qp"] is None
                            else 100.0 * (parts["oracle"] + parts["qp"]) / total)
    return split


def bench_data(name, X, y, qid, args, losses, solvers, repeats):
    """Rows of the time table and of the split table for one data set."""
    time_rows, split_rows = [], []
    n = X.shape[0]
    labels = (np.asarray(y) > 0) if qid is not None else y
    svc_runs = [fit_linear_svc(X, labels, args.C) for _ in range(repeats)]
    svc_seconds = float(np.median([s for s, _ in svc_runs]))
    time_rows.append({"data": name, "loss": "hinge (liblinear)", "solver": "LinearSVC",
                      "seconds": svc_seconds, "iters": None, "converged": svc_runs[0][1],
                      "x LinearSVC": 1.0})
    for loss in losses:
        for solver in solvers:
            runs = [fit_rank_svm(X, y, qid, loss, solver, args.C, args.tol,
                                 args.max_iter[solver], args.seed) for _ in range(repeats)]
            seconds = float(np.median([s for s, _, _ in runs]))
            _, model, converged = runs[-1]
            time_rows.append({"data": name, "loss": loss, "solver": solver, "seconds": seconds,
                              "iters": int(np.ravel(model.n_iter_)[0]), "converged": converged,
                              "x LinearSVC": seconds / svc_seconds})
            logger.info("%s %s %s: %.3f s", name, loss, solver, seconds)
            if solver == "cutting_plane":
                split_rows.append({"data": name, "loss": loss,
                                   **iteration_split(model.history_, np.ravel(model.n_iter_)[0])})
    logger.info("%s done (N=%d)", name, n)
    return time_rows, split_rows


def targets(time_rows, split_rows):
    """The two targets of the issue, as table rows (None where the size was not run)."""
    out = []
    row = next((r for r in time_rows if r["data"] == "synthetic N=100000" and r["loss"] == "ap"
                and r["solver"] == "cutting_plane"), None)
    if row is not None:
        out.append({"target": "AP-SVM cutting plane <= 2x LinearSVC at N=1e5",
                    "measured": f"{row['x LinearSVC']:.2f}x",
                    "met": bool(row["x LinearSVC"] <= 2.0)})
    row = next((r for r in split_rows if r["data"] == "synthetic N=1000000" and r["loss"] == "ap"),
               None)
    if row is not None and row["oracle+QP %"] is not None:
        out.append({"target": "oracle + QP <= 25% of an iteration at N=1e6 (AP)",
                    "measured": f"{row['oracle+QP %']:.1f}%",
                    "met": bool(row["oracle+QP %"] <= 25.0)})
    return out


def main(argv=None):
    parser = _common.make_parser(__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--d", type=int, default=100, help="features (default 100)")
    parser.add_argument("--C", type=float, default=10.0, help="regularisation C (default 10)")
    parser.add_argument("--tol", type=float, default=1e-3, help="relative gap tolerance")
    parser.add_argument("--repeats", type=int, default=3,
                        help="fits per cell, median (default 3; 1 for N >= 10^6)")
    parser.add_argument("--losses", nargs="+", default=list(LOSSES), choices=LOSSES)
    parser.add_argument("--solvers", nargs="+", default=list(SOLVERS), choices=SOLVERS)
    parser.add_argument("--no-letor", action="store_true", help="skip the LETOR sample")
    args = _common.setup(parser, argv)
    sizes = [2000] if args.quick else args.sizes
    losses = ["ap", "zero_one"] if args.quick else args.losses
    args.max_iter = {"cutting_plane": 500, "frank_wolfe": 300, "pegasos": 300}
    if args.quick:
        args.max_iter = {"cutting_plane": 200, "frank_wolfe": 50, "pegasos": 50}
    rng = np.random.default_rng(args.seed)

    # compile every oracle and solver path once, untimed
    X0, y0 = _common.synthetic_ranking(300, args.d, 30, rng)
    for loss in losses:
        for solver in args.solvers:
            fit_rank_svm(X0, y0, None, loss, solver, args.C, args.tol, 5, args.seed)

    time_rows, split_rows = [], []
    for n in sizes:
        X, y = _common.synthetic_ranking(n, args.d, n // 10, rng)
        repeats = 1 if (args.quick or n >= 1_000_000) else args.repeats
        t, s = bench_data(f"synthetic N={n}", X, y, None, args, losses, args.solvers,
                          repeats)
        time_rows += t
        split_rows += s
        del X, y
    if not args.no_letor:
        X, rel, qid = _common.load_letor_split("train")
        if args.quick:
            keep = qid < np.unique(qid)[40]
            X, rel, qid = X[keep], rel[keep], qid[keep]
        t, s = bench_data("LETOR sample", X, rel, qid, args, losses, args.solvers,
                          1 if args.quick else args.repeats)
        time_rows += t
        split_rows += s

    tables = [
        format_table(time_rows, floatfmt={"seconds": ".3f", "x LinearSVC": ".2f"},
                     title=f"Time to tolerance (RankSVM.fit end to end, C={args.C:g}, "
                           f"tol={args.tol:g} relative gap; median of {args.repeats} fits, "
                           f"1 at N >= 1e6)"),
        format_table(split_rows, floatfmt=".1f",
                     title="One cutting-plane iteration: mean time and its parts"),
    ]
    target_rows = targets(time_rows, split_rows)
    if target_rows:
        tables.append(format_table(target_rows, title="Targets"))
    if args.plot:
        plot(time_rows, split_rows, args.plot)
    _common.emit(args, tables, {"experiment": "bench_training", "C": args.C, "tol": args.tol,
                                "d": args.d, "times": time_rows, "iteration_split": split_rows,
                                "targets": target_rows})
    return 0


def plot(time_rows, split_rows, plot_dir):
    """Stacked bars of the cutting-plane iteration split, one bar per data set x loss."""
    plt = _common.pyplot()
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(split_rows)), 4))
    labels = [f"{r['data']}\n{r['loss']}" for r in split_rows]
    bottom = np.zeros(len(split_rows))
    for part in ("matvec %", "oracle %", "qp %", "other %"):
        values = np.array([r[part] or 0.0 for r in split_rows])
        ax.bar(labels, values, bottom=bottom, label=part.replace(" %", ""))
        bottom += values
    ax.set_ylabel("% of a cutting-plane iteration")
    ax.tick_params(axis="x", labelsize=7, rotation=45)
    ax.legend()
    fig.tight_layout()
    fig.savefig(f"{plot_dir}/iteration_split.png", dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
