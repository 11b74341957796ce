"""Training speed: time to tolerance per solver x loss, the split of a cutting-plane iteration, LinearSVC.

Data: synthetic binary ranking data (one query; Gaussian classes that overlap, 10% positives,
d = 100 dense features) with N = 10^4, 10^5, 10^6 samples, and the bundled LETOR sample
(rank.train, 201 queries of which those with a relevant and an irrelevant document are used, 300
sparse features, relevance > 0 relevant).

* Time to tolerance: for every data set, loss and solver, the problem (``StructuredHinge`` with the
  loss's "auto" oracle) is built and solved to the relative gap ``--tol``; a run that exceeds
  ``--budget`` seconds is stopped by the solver callback and marked not converged.
* The history of the cutting-plane run splits its time into matrix-vector products (scores X w and
  subgradients X^T c), oracle calls and the dual QP.
* End to end: ``RankSVM(loss="ap").fit`` (validation, one-query set-up, solver, threshold) against
  scikit-learn's ``LinearSVC(loss="hinge", C=C/N)`` -- the 0-1 SVM's objective (docs/design.md §1)
  -- on the same data, N <= 10^5.
From N = 10^6 on (``--large``) only the cutting plane runs (``--large-solvers``), with a longer
budget (``--large-budget``): on 2 cores the other solvers, as costly per iteration and needing more
iterations, would only hit the budget. Times are medians of ``--repeats`` runs (one run at N >= 10^6,
or when a run took longer than ``--repeat-below`` seconds; the "runs" column says how many).

Targets checked at the end: AP-SVM with the cutting plane within 2x LinearSVC's time at
N = 10^5, and oracle + QP <= 25% of a cutting-plane iteration at N = 10^6.

The floor of a round (docs/design.md §11, ``--round-sizes``): one round (``StructuredHinge.plane``,
AP, queries of 1,000 rows, 5% relevant) fused and two-pass against ONE ``X @ w`` in the same run,
float64 and float32, on 1 and 2 threads (target: round <= 1.5x one pass at 2 threads), with the
round's compute floor (the CPU ns per row of a round over the first 4 MB of X, which stay in the
cache, times N over the threads: what no overlap of memory and work can beat), and the oracles' ns
per row on 10^4 queries of 100-1000 rows against one query of 10^6 rows (target <= 1.5x).
With the fused round the products and oracles run together; the oracles are timed inside it (the
split's "oracle %"), and "fused %" is the rest of the fused round: its products and loop.
``--rounds-only`` prints only these two tables.

With ``--baseline-python PATH`` every cell is timed again by that interpreter in a child process
(the old, numba-compiled ssvm's venv, say; ``scripts/_baseline.py``) and tables of new, old and
new / old per cell (target <= 1.10) follow, with the CPU facts of both runs.
"""

from __future__ import annotations

import sys
import time
import warnings

import _baseline
import _common
import _floor
import numpy as np
from _common import format_table, logger

from ssvm.datasets import load_letor_sample

SOLVERS = ("cutting_plane", "frank_wolfe", "pegasos")
LOSSES = ("ap", "ndcg", "zero_one", "precision_at_k")


def queries_of(qid, relevant):
    """Index arrays of the queries that have both a relevant and an irrelevant row."""
    if qid is None:
        return [np.arange(len(relevant))]
    out = []
    for q in np.unique(qid):
        idx = np.flatnonzero(qid == q)
        if relevant[idx].any() and not relevant[idx].all():
            out.append(idx)
    return out


class _Budget:
    """Solver callback that stops a run after ``seconds`` of wall time."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.hit = False

    def __call__(self, record):
        self.hit = record["seconds"] > self.seconds
        return self.hit


def solve(X, relevant, queries, loss, solver, args, budget_seconds):
    """Build the problem and solve it; return (seconds, SolverResult, stopped by the budget)."""
    from ssvm.losses import get_oracle
    from ssvm.problem import StructuredHinge
    from ssvm.solvers import SOLVERS as REGISTRY

    budget = _Budget(budget_seconds)
    start = time.perf_counter()
    problem = StructuredHinge(X, relevant, queries, get_oracle(loss, "auto"),
                              fit_intercept=(loss == "zero_one"))
    result = REGISTRY[solver](problem, args.C, tol=args.tol, max_iter=args.max_iter[solver],
                              callback=budget, random_state=args.seed)
    return time.perf_counter() - start, result, budget.hit


def fit_rank_svm(X, y, C, tol):
    """``RankSVM(loss="ap").fit`` end to end, once; return seconds."""
    from ssvm import RankSVM

    start = time.perf_counter()
    RankSVM(loss="ap", C=C, tol=tol, max_iter=1000).fit(X, y)
    return time.perf_counter() - start


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
    """Mean seconds per cutting-plane iteration and its matvec / oracle / fused / QP / other parts.

    ``history`` is one fit's list of records (cumulative ``seconds``, ``matvec_seconds``,
    ``oracle_seconds``, ``fused_seconds``, ``fused_oracle_seconds`` and, when the solver reports
    it, ``qp_seconds``); ``n_iter`` its iterations. The oracles are timed inside the fused rounds
    too (``oracle_seconds`` counts them), so "fused" is a fused round's time less its oracles':
    the products and the loop around them.
    """
    last = history[-1]
    n = max(int(n_iter), 1)
    total = last["seconds"]
    parts = {key: last.get(f"{key}_seconds") for key in ("matvec", "oracle", "fused", "qp")}
    if parts["fused"] is not None:
        parts["fused"] -= last.get("fused_oracle_seconds", 0.0)
    known = sum(v for v in parts.values() if v is not None)
    split = {"iteration ms": 1e3 * total / n}
    for key, value in parts.items():
        split[f"{key} %"] = None if value is None else 100.0 * value / total
    split["other %"] = 100.0 * (total - known) / total
    split["oracle+QP %"] = (None if parts["qp"] is None
                            else 100.0 * (parts["oracle"] + parts["qp"]) / total)
    return split


def repeat(run, repeats, stop):
    """Call ``run()`` up to ``repeats`` times, fewer if ``stop(result)`` says a run was too long."""
    results = []
    for _ in range(repeats):
        results.append(run())
        if stop(results[-1]):
            break
    return results


def bench_data(name, X, y, qid, args, repeats, solvers, budget):
    """Rows of the time table, the split table and the end-to-end table for one data set."""
    time_rows, split_rows, e2e_rows = [], [], []
    relevant = np.asarray(y) > 0 if qid is not None else np.asarray(y, dtype=bool)
    queries = queries_of(qid, relevant)
    svc_runs = [fit_linear_svc(X, relevant, args.C) for _ in range(repeats)]
    svc_seconds = float(np.median([s for s, _ in svc_runs]))
    for loss in args.losses:
        for solver in solvers:
            runs = repeat(lambda: solve(X, relevant, queries, loss, solver, args, budget), repeats,  # noqa: B023
                          stop=lambda run: run[2] or run[0] > args.repeat_below)
            seconds = float(np.median([s for s, _, _ in runs]))
            _, result, stopped = runs[-1]
            time_rows.append({"data": name, "loss": loss, "solver": solver, "seconds": seconds,
                              "runs": len(runs), "iters": result.n_iter,
                              "converged": result.converged, "budget hit": stopped,
                              "objective": result.objective})
            logger.info("%s %s %s: %.3f s, %d iterations", name, loss, solver, seconds,
                        result.n_iter)
            if solver == "cutting_plane":
                split_rows.append({"data": name, "loss": loss,
                                   **iteration_split(result.history, result.n_iter)})
    e2e = {"data": name, "LinearSVC s": svc_seconds, "LinearSVC converged": svc_runs[0][1]}
    if qid is None and X.shape[0] <= args.e2e_max:
        fits = repeat(lambda: fit_rank_svm(X, relevant, args.C, args.tol), repeats,
                      stop=lambda seconds: seconds > args.repeat_below)
        e2e["RankSVM(ap).fit s"] = float(np.median(fits))
        e2e["ratio"] = e2e["RankSVM(ap).fit s"] / svc_seconds
    e2e_rows.append(e2e)
    logger.info("%s done (N=%d)", name, X.shape[0])
    return time_rows, split_rows, e2e_rows


def targets(e2e_rows, split_rows):
    """The two targets of the issue, as table rows (only for the sizes that were run)."""
    out = []
    row = next((r for r in e2e_rows if r["data"] == "synthetic N=100000" and "ratio" in r), None)
    if row is not None:
        out.append({"target": "AP-SVM (cutting plane) fit <= 2x LinearSVC at N=1e5",
                    "measured": f"{row['ratio']:.2f}x", "met": bool(row["ratio"] <= 2.0)})
    row = next((r for r in split_rows if r["data"] == "synthetic N=1000000" and r["loss"] == "ap"),
               None)
    if row is not None and row["oracle+QP %"] is not None:
        out.append({"target": "oracle + QP <= 25% of a cutting-plane iteration at N=1e6 (AP)",
                    "measured": f"{row['oracle+QP %']:.1f}%",
                    "met": bool(row["oracle+QP %"] <= 25.0)})
    return out


def main(argv=None):
    parser = _common.make_parser(__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--d", type=int, default=100, help="features (default 100)")
    parser.add_argument("--C", type=float, default=10.0, help="regularisation C (default 10)")
    parser.add_argument("--tol", type=float, default=1e-3, help="relative gap tolerance")
    parser.add_argument("--budget", type=float, default=45.0,
                        help="seconds after which a solver run is stopped, and not repeated "
                        "(default 45)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="runs per cell, median (default 3; 1 for N >= 10^6)")
    parser.add_argument("--repeat-below", type=float, default=10.0,
                        help="runs longer than this many seconds are not repeated (default 10)")
    parser.add_argument("--losses", nargs="+", default=list(LOSSES), choices=LOSSES)
    parser.add_argument("--solvers", nargs="+", default=list(SOLVERS), choices=SOLVERS)
    parser.add_argument("--large", type=int, default=1_000_000,
                        help="sizes from this N on run only --large-solvers, with --large-budget")
    parser.add_argument("--large-solvers", nargs="+", default=["cutting_plane"], choices=SOLVERS)
    parser.add_argument("--large-budget", type=float, default=120.0,
                        help="budget per run at N >= --large (default 120 s)")
    parser.add_argument("--e2e-max", type=int, default=100_000,
                        help="largest N for the end-to-end RankSVM.fit timing (default 1e5)")
    parser.add_argument("--no-letor", action="store_true", help="skip the LETOR sample")
    parser.add_argument("--round-sizes", type=int, nargs="*", default=[1_000_000, 3_000_000],
                        help="N of the round-vs-one-pass table (d = --round-d; none: skip it)")
    parser.add_argument("--round-d", type=int, default=100, help="features of the round table (default 100)")
    parser.add_argument("--round-repeats", type=int, default=7, help="timed calls per cell, median (default 7)")
    parser.add_argument("--oracle-queries", type=int, default=10_000,
                        help="small queries of the oracle ns-per-row table (default 10^4)")
    parser.add_argument("--rounds-only", action="store_true", help="only the round and oracle-cost tables")
    _baseline.add_option(parser)
    args = _common.setup(parser, argv)
    sizes = args.sizes
    args.max_iter = {"cutting_plane": 1000, "frank_wolfe": 1000, "pegasos": 10000}
    if args.quick:
        sizes, args.losses, args.budget = [2000], ["ap", "zero_one"], 5.0
        args.max_iter = {"cutting_plane": 200, "frank_wolfe": 50, "pegasos": 50}
        args.round_sizes, args.round_repeats, args.oracle_queries = [20_000], 2, 100
    rng = np.random.default_rng(args.seed)
    floor_tables, floor_payload = floor_of_a_round(args, rng)
    if args.rounds_only:
        finish(args, argv, floor_tables, {"experiment": "bench_training", **floor_payload})
        return 0

    # every oracle and solver path once, untimed (a first call's set-up, and the JIT of an old,
    # numba-compiled ssvm run as --baseline-python): a small query, which the oracles batch, and
    # one above the batch size, which they run alone
    X0, y0 = _common.synthetic_ranking(300, args.d, 30, rng)
    for loss in args.losses:
        for solver in args.solvers:
            solve(X0, y0, queries_of(None, y0), loss, solver, args, args.budget)
    X0, y0 = _common.synthetic_ranking(5000, args.d, 500, rng)
    for loss in args.losses:
        solve(X0, y0, queries_of(None, y0), loss, "cutting_plane", args, args.budget)
    fit_rank_svm(X0, y0, args.C, args.tol)

    time_rows, split_rows, e2e_rows = [], [], []
    for n in sizes:
        X, y = _common.synthetic_ranking(n, args.d, n // 10, rng)
        large = n >= args.large
        repeats = 1 if (args.quick or large) else args.repeats
        solvers = args.large_solvers if large else args.solvers
        budget = args.large_budget if large else args.budget
        for acc, rows in zip((time_rows, split_rows, e2e_rows),
                             bench_data(f"synthetic N={n}", X, y, None, args, repeats, solvers,
                                        budget)):
            acc += rows
        del X, y
    if not args.no_letor:
        X, rel, qid = load_letor_sample("train")
        if args.quick:
            keep = qid < np.unique(qid)[40]
            X, rel, qid = X[keep], rel[keep], qid[keep]
        for acc, rows in zip((time_rows, split_rows, e2e_rows),
                             bench_data("LETOR sample", X, rel, qid, args,
                                        1 if args.quick else args.repeats, args.solvers,
                                        args.budget)):
            acc += rows

    repeats_note = "1 run" if args.quick else f"median of {args.repeats} runs, 1 at N >= 1e6"
    tables = [
        format_table(time_rows, floatfmt={"seconds": ".3f", "objective": ".6g"},
                     title=f"Time to tolerance (problem set-up + solver; C={args.C:g}, "
                           f"tol={args.tol:g} relative gap, budget {args.budget:g} s, "
                           f"{args.large_budget:g} s at N >= {args.large:g}; {repeats_note})"),
        format_table(split_rows, floatfmt=".1f",
                     title="One cutting-plane iteration: mean time and its parts"),
        format_table(e2e_rows, floatfmt={"LinearSVC s": ".3f", "RankSVM(ap).fit s": ".3f",
                                         "ratio": ".2f"},
                     title="End to end: RankSVM(loss='ap').fit vs LinearSVC(loss='hinge', "
                           "C=C/N).fit"),
    ]
    target_rows = targets(e2e_rows, split_rows)
    if target_rows:
        tables.append(format_table(target_rows, title="Targets"))
    tables += floor_tables
    if args.plot:
        plot(split_rows, args.plot)
    finish(args, argv, tables, {"experiment": "bench_training", "C": args.C, "tol": args.tol,
                                "d": args.d, "budget": args.budget, "times": time_rows,
                                "iteration_split": split_rows, "end_to_end": e2e_rows,
                                "targets": target_rows, **floor_payload})
    return 0


BASELINE_TABLES = [  # (payload key, title, the fields naming a cell, the timed fields)
    ("times", "Time to tolerance, s", ["data", "loss", "solver"], ["seconds", "iters"]),
    ("iteration_split", "One cutting-plane iteration, ms", ["data", "loss"], ["iteration ms"]),
    ("end_to_end", "End to end, s", ["data"], ["RankSVM(ap).fit s", "LinearSVC s"]),
    ("rounds", "One round against one pass over X, ms (numpy's X@w: the machine's noise)",
     ["N", "X", "w", "threads"], ["numpy X@w ms", "ssvm X@w ms", "fused round ms", "two-pass round ms",
                                  "in-cache ns/row"]),
    ("oracle_ns_per_row", "Oracle.batch, ns per row", ["loss"],
     ["small queries ns/row", "1 query ns/row", "1 query, same rows ns/row"]),
]


def finish(args, argv, tables, payload):
    """Print the tables and write the JSON; first, with ``--baseline-python``, the same cells run by
    that interpreter (:mod:`_baseline`) and the new / old tables."""
    payload["cpu"] = _baseline.cpu_facts()
    if args.baseline_python:
        old = _baseline.run_baseline(args.baseline_python, __file__, sys.argv[1:] if argv is None else argv)
        comparison = {}
        for key, title, keys, values in BASELINE_TABLES:
            rows = _baseline.comparison_table(payload.get(key, []), old.get(key, []), keys, values)
            if rows:
                comparison[key] = rows
                tables = tables + [format_table(rows, floatfmt=".3g", title=f"Old vs new: {title}")]
        ratios = [v for rows in comparison.values() for r in rows for k, v in r.items()
                  if k.endswith("new/old") and not k.startswith(("numpy", "LinearSVC", "iters"))]
        summary = (f"Old vs new: every cell again with {args.baseline_python}; new: {payload['cpu']}; "
                   f"old: {old['cpu']}")
        if ratios:
            summary += (f"\nssvm's cells: largest new/old {max(ratios):.2f}, median {np.median(ratios):.2f}, "
                        f"{sum(r > _baseline.RATIO_TARGET for r in ratios)} of {len(ratios)} above "
                        f"{_baseline.RATIO_TARGET:g}")
        tables = tables + [summary]
        payload["baseline"] = {"python": args.baseline_python, "cpu": old["cpu"], "comparison": comparison}
    _common.emit(args, tables, payload)


def floor_of_a_round(args, rng):
    """The round-vs-one-pass and oracle ns-per-row tables (docs/design.md §11), and their rows."""
    import os

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    rounds = _floor.round_rows(args.round_sizes, args.round_d, args.round_repeats, rng)
    big_n = 10_000 if args.quick else 1_000_000
    oracles = _floor.oracle_row_rows(args.oracle_queries, big_n, args.round_repeats, rng)
    tables = [] if not rounds else [
        format_table(rounds, floatfmt={"numpy X@w ms": ".1f", "ssvm X@w ms": ".1f", "one pass ms": ".1f",
                                       "fused round ms": ".1f", "fused / pass": ".2f",
                                       "two-pass round ms": ".1f", "two-pass / pass": ".2f",
                                       "in-cache ns/row": ".1f", "compute floor / pass": ".2f"},
                     title=f"One cutting-plane round (AP, queries of 1000 rows, 5% relevant) against ONE pass over X "
                           f"(the faster X @ w at that thread count: numpy's BLAS or ssvm's product), "
                           f"median of {args.round_repeats}; load average {load}; {_floor.simd_sort()}")]
    tables += [
        format_table(oracles, floatfmt=".2f",
                     title=f"Oracle.batch, ns per row (thread CPU time, median): {args.oracle_queries} queries of "
                           f"100-1000 rows against one query of {big_n:.0e} rows (the target) and one query of as "
                           f"many rows as the small ones, 5% relevant"),
    ]
    return tables, {"rounds": rounds, "oracle_ns_per_row": oracles, "load_average": load}


def plot(split_rows, plot_dir):
    """Stacked bars of the cutting-plane iteration split, one bar per data set x loss."""
    plt = _common.pyplot()
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(split_rows)), 4))
    labels = [f"{r['data']}\n{r['loss']}" for r in split_rows]
    bottom = np.zeros(len(split_rows))
    for part in ("matvec %", "oracle %", "fused %", "qp %", "other %"):
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
