"""Choosing C: ``RankSVMCV`` (one warm path over C per fold) against a routed ``GridSearchCV``.

Both search the same values of C (``--Cs``, default 6 values 10^-2..10^3) on the same folds
(``GroupKFold(--folds)`` on the queries, default 3), score every C by the trained measure per query
(mean AP of the test fold's queries); the refit on all data, the same for both, is left out
(``refit=False``). ``GridSearchCV`` trains
``RankSVM(C=C)`` from scratch for every fold and C, with metadata routing on (``qid`` to fit and
score, ``groups=qid`` to the splitter); ``RankSVMCV`` solves each fold's values of C in increasing
order, carrying the cutting planes and ``w`` from C to C. Both run with ``n_jobs=1``.

Data: the bundled LETOR sample (rank.train, relevance > 0 relevant, 300 sparse features) and
synthetic queries (``--n-queries`` queries of ``--query-size`` rows, 10% relevant, Gaussian
classes that overlap, ``--n-features`` dense features; default 1,000 x 1,000 = 10^6 rows).
The table gives the wall and CPU seconds of each selection (medians of ``--repeats`` runs on the
LETOR sample, alternating the two; one run on the synthetic data) and their ratios, the chosen C,
its mean validation score and RankSVMCV's solver rounds. On a shared machine the CPU time of the
process is the steadier of the two.

Usage: ``python scripts/bench_cv.py [--quick] [--json PATH] [--seed K] [--n-queries Q]``.
"""

from __future__ import annotations

import time
import warnings

import _common
import numpy as np
from _common import format_table, logger

from ssvm.datasets import load_letor_sample


def synthetic_queries(n_queries, query_size, n_features, rng):
    """``n_queries`` queries of ``query_size`` rows from :func:`_common.synthetic_ranking`."""
    X, y = _common.synthetic_ranking(n_queries * query_size, n_features,
                                     n_queries * query_size // 10, rng)
    return X, y.astype(np.float64), np.repeat(np.arange(n_queries), query_size)


def warm_up(X, y, qid):
    """Import everything and run one small fit (work arrays, caches) before any timing."""
    from ssvm import RankSVMCV

    keep = np.isin(qid, np.unique(qid)[:10])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        RankSVMCV(Cs=[1.0], cv=2).fit(X[keep], y[keep], qid=qid[keep])


def run_pair(name, X, y, qid, Cs, folds, tol, repeats):
    """Time RankSVMCV and the routed GridSearchCV on one data set (alternating, ``repeats`` runs
    each, medians); one row each."""
    import sklearn
    from sklearn.model_selection import GridSearchCV, GroupKFold

    from ssvm import RankSVM, RankSVMCV

    runs = {"cv": [], "grid": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # skipped degenerate queries, a capped solve
        for _ in range(repeats):
            search = RankSVMCV(Cs=Cs, cv=folds, tol=tol, refit=False)
            runs["cv"].append(_timed(search.fit, X, y, qid=qid))
            with sklearn.config_context(enable_metadata_routing=True):
                grid = GridSearchCV(RankSVM(tol=tol), {"C": list(Cs)}, cv=GroupKFold(folds), refit=False)
                runs["grid"].append(_timed(grid.fit, X, y, qid=qid, groups=qid))
            logger.info("%s: RankSVMCV %.1fs (C=%g), GridSearchCV %.1fs (C=%g)", name,
                        runs["cv"][-1][0], search.C_, runs["grid"][-1][0], grid.best_params_["C"])
    wall, cpu = {}, {}
    for key, value in runs.items():
        wall[key], cpu[key] = np.median(np.array(value), axis=0)
    rows = [{"data": name, "method": "RankSVMCV (warm path)", "runs": repeats, "seconds": wall["cv"],
             "cpu_seconds": cpu["cv"], "C": search.C_, "score": search.best_score_,
             "rounds": int(search.n_iter_.sum()), "scores": search.cv_results_["mean_test_score"]},
            {"data": name, "method": "GridSearchCV (routed)", "runs": repeats, "seconds": wall["grid"],
             "cpu_seconds": cpu["grid"], "C": grid.best_params_["C"], "score": grid.best_score_,
             "rounds": None, "scores": grid.cv_results_["mean_test_score"]}]
    rows[0]["speedup"] = wall["grid"] / wall["cv"]
    rows[0]["cpu_speedup"] = cpu["grid"] / cpu["cv"]
    rows[0]["same_choice"] = bool(rows[0]["C"] == rows[1]["C"])
    return rows


def _timed(run, *args, **kwargs):
    """Wall and CPU seconds (this process, all its threads) of ``run(*args, **kwargs)``."""
    wall, cpu = time.perf_counter(), time.process_time()
    run(*args, **kwargs)
    return time.perf_counter() - wall, time.process_time() - cpu


def main(argv=None):
    parser = _common.make_parser(__doc__)
    parser.add_argument("--Cs", type=float, nargs="+", default=list(np.logspace(-2, 3, 6)))
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--tol", type=float, default=1e-3)
    parser.add_argument("--n-queries", type=int, default=1000)
    parser.add_argument("--query-size", type=int, default=1000)
    parser.add_argument("--n-features", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3, help="runs of each search on the LETOR "
                        "sample (medians; default 3); one on the synthetic data")
    args = _common.setup(parser, argv)
    rng = np.random.default_rng(args.seed)
    Cs = np.array([0.1, 1.0, 10.0]) if args.quick else np.array(args.Cs)
    X, y, qid = load_letor_sample()
    warm_up(X, y, qid)
    if args.quick:
        keep = np.isin(qid, np.unique(qid)[:40])
        X, y, qid = X[keep], y[keep], qid[keep]
    rows = run_pair("LETOR sample", X, y, qid, Cs, args.folds, args.tol, 1 if args.quick else args.repeats)
    n_queries, size = (30, 100) if args.quick else (args.n_queries, args.query_size)
    X, y, qid = synthetic_queries(n_queries, size, args.n_features, rng)
    rows += run_pair(f"synthetic N={X.shape[0]:,}", X, y, qid, Cs, args.folds, args.tol, 1)
    columns = ["data", "method", "runs", "wall s", "CPU s", "speed-up (wall, CPU)", "C chosen", "mean AP",
               "rounds"]
    table = format_table(
        [dict(zip(columns, [
            r["data"], r["method"], r["runs"], f"{r['seconds']:.1f}", f"{r['cpu_seconds']:.1f}",
            f"{r['speedup']:.2f}x, {r['cpu_speedup']:.2f}x" if "speedup" in r else "",
            f"{r['C']:g}" + ("" if r.get("same_choice", True) else " (differs)"),
            f"{r['score']:.4f}", r["rounds"]])) for r in rows],
        columns,
        title=f"Choosing C among {len(Cs)} values with {args.folds} folds (n_jobs=1, tol={args.tol})",
    )
    _common.emit(args, [table], {"Cs": Cs, "folds": args.folds, "tol": args.tol, "rows": rows})


if __name__ == "__main__":
    main()
