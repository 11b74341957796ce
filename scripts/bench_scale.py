"""Scale: the cutting plane on N = 1e6 rows and up, in memory, on dask and out of core, float32/64.

Data: N rows of d = 100 Gaussian features in consecutive queries of ``--query-size`` rows, a
fraction ``--relevant`` of them relevant (shifted along a fixed direction, so the classes overlap);
generated in chunks (``--block-rows`` rows, whole queries) from ``--seed``, so every set-up
trains on the same numbers and no set-up holds two copies of X:

* ``in memory``: X a numpy array, ``StructuredHinge`` (the fused round: the kernels' OpenMP threads);
* ``dask threads``: the same array as a dask array, ``DaskStructuredHinge`` under dask's threaded
  scheduler;
* ``LocalCluster``: a ``dask.distributed.LocalCluster`` of 2 workers x 1 thread that generates its
  chunks itself and holds them (persisted); only w goes out and d + 2 numbers per block come back;
* ``zarr on disk`` (not by default): X written to an uncompressed zarr store, read back block by
  block every round (threaded scheduler, not persisted).

On the cluster (persisted) the dask problems re-cut the generated chunks into blocks of equal rows,
one per worker thread (a multiple past 1 GiB of X each), spread over the workers; under the
threaded scheduler (not persisted) they join them up to dask's ``array.chunk-size``;
``tasks/round`` shows how many.

Each set-up runs the cutting plane (OCAS, the default) to the relative gap ``--tol`` and reports
the rounds to tolerance, the median seconds per round over the solver's rounds and
``--extra-rounds`` more planes at its solution, the bytes each round moves and how far its final
w is from the in-memory one; ``one pass s`` times one pass over the in-memory X for ``X @ w``
(median of ``--repeats``; the faster of numpy's BLAS and ssvm's product, at the kernels' thread count;
``pass by`` says which): the floor of a round that reads X once.

``giant`` (with the cluster): one query of all N rows (no qid; AP and P@10; 1 in 50 of the relevant rows
kept relevant, a detector's few positives), a plane at the fitted w, in memory, on the
LocalCluster without per-row data on the client (``DaskGiantHinge``) and with the scores gathered
(``DaskGatheredHinge``, 16 bytes a row a round): seconds and bytes a round; and the ranking losses'
``intercept_`` at the fitted w, found on the blocks against the scores gathered to the client.

Targets, at the largest N: in-memory round <= 1.5x one pass over X; LocalCluster round <= 1.5x in
memory; the giant query's bytes a round <= 1% of the gathered path's.
"""

from __future__ import annotations

import logging
import os
import pickle
import shutil
import tempfile
import time
import warnings
from pathlib import Path

import _common
import _floor
import numpy as np
from _common import format_table, logger

ROOT = str(Path(__file__).resolve().parents[1])


def block_labels(seed, k, first, rows, query_size, relevant):
    """Relevance and query ids of block ``k``, rows ``first:first + rows`` (whole queries)."""
    y = np.random.default_rng([seed, 2, k]).random(rows) < relevant
    return y, (first + np.arange(rows)) // query_size


def block_features(seed, k, rows, d, dtype, relevant):
    """Features of block ``k``: Gaussian, the relevant rows shifted along a fixed direction."""
    direction = np.random.default_rng([seed, 0]).standard_normal(d)
    direction *= 1.0 / np.linalg.norm(direction)
    X = np.random.default_rng([seed, 1, k]).standard_normal((rows, d), dtype=np.dtype(dtype).type)
    X[block_labels(seed, k, 0, rows, 1, relevant)[0]] += direction.astype(X.dtype)
    return X


def block_sizes(n, block_rows):
    return [min(block_rows, n - a) for a in range(0, n, block_rows)]


def _blocks(args, n):
    return enumerate(block_sizes(n, args.block_rows))


def in_memory(args, n, dtype):
    """The whole data set in one numpy array, filled block by block."""
    X = np.empty((n, args.d), dtype=dtype)
    for k, rows in _blocks(args, n):
        a = k * args.block_rows
        X[a:a + rows] = block_features(args.seed, k, rows, args.d, dtype, args.relevant)
    return (X, *labels(args, n))


def labels(args, n):
    parts = [block_labels(args.seed, k, k * args.block_rows, rows, args.query_size, args.relevant)
             for k, rows in _blocks(args, n)]
    return np.concatenate([y for y, _ in parts]), np.concatenate([q for _, q in parts])


def on_workers(args, n, dtype):
    """Dask arrays whose blocks are generated where they are computed (nothing from the client)."""
    import dask
    import dask.array as da

    X, y, qid = [], [], []
    for k, rows in _blocks(args, n):
        X.append(da.from_delayed(
            dask.delayed(block_features, pure=True)(args.seed, k, rows, args.d, dtype,
                                                    args.relevant), (rows, args.d), dtype))
        labels_k = dask.delayed(block_labels, pure=True, nout=2)(
            args.seed, k, k * args.block_rows, rows, args.query_size, args.relevant)
        y.append(da.from_delayed(labels_k[0], (rows,), bool))
        qid.append(da.from_delayed(labels_k[1], (rows,), np.int64))
    return da.concatenate(X), da.concatenate(y), da.concatenate(qid)


def to_zarr(args, n, dtype, path):
    """Write the data set's X to an uncompressed zarr store block by block; y and qid in memory."""
    import zarr

    z = zarr.create_array(store=str(path), shape=(n, args.d), chunks=(args.block_rows, args.d),
                          dtype=dtype, compressors=None, overwrite=True)
    for k, rows in _blocks(args, n):
        a = k * args.block_rows
        z[a:a + rows] = block_features(args.seed, k, rows, args.d, dtype, args.relevant)
    return labels(args, n)


def queries_of(qid):
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    return [np.arange(a, b) for a, b in zip(starts, np.r_[starts[1:], qid.shape[0]])]


def informative(queries, y):
    return [q for q in queries if 0 < np.count_nonzero(y[q]) < q.size]


def one_pass(X, repeats, rng):
    """Seconds of one pass over ``X`` for ``X @ w`` at the kernels' thread count, the faster of
    numpy's BLAS and ssvm's product (``_floor.one_pass_seconds``): the floor of a round that reads X
    once. Returns ``(seconds, which)``."""
    from ssvm._threads import effective_n_threads

    one = _floor.one_pass_seconds(X, rng.standard_normal(X.shape[1]), repeats, effective_n_threads())
    return one["floor"], one["by"]


def solve(problem, args):
    """The cutting plane to tolerance, then ``--extra-rounds`` more planes at its solution; the
    result and the median round (and parts of a round) over all of them."""
    from ssvm.solvers import SOLVERS

    result = SOLVERS["cutting_plane"](problem, args.C, tol=args.tol, max_iter=args.max_rounds)
    keys = ("seconds", "matvec_seconds", "oracle_seconds")
    rounds = np.diff([[0.0, 0.0, 0.0]] + [[r[k] for k in keys] for r in result.history], axis=0)
    extra = []
    for _ in range(args.extra_rounds):
        before = time.perf_counter(), problem.matvec_seconds, problem.oracle_seconds
        problem.plane(result.w)
        after = time.perf_counter(), problem.matvec_seconds, problem.oracle_seconds
        extra.append(np.subtract(after, before))
    seconds = np.median(np.vstack([rounds, *extra]), axis=0)[0]
    return result, {"rounds": result.n_iter, "converged": result.converged, "round s": seconds}


def warm_up():
    """One untimed round of each kind (the oracles' work arrays, the imports), before any timing."""
    from ssvm.losses import get_oracle
    from ssvm.problem import StructuredHinge

    rng = np.random.default_rng(0)
    for dtype in (np.float64, np.float32):
        X = rng.standard_normal((2000, 10)).astype(dtype)
        y = rng.random(2000) < 0.1
        StructuredHinge(X, y, queries_of(np.arange(2000) // 500), get_oracle("ap", "auto")).plane(
            np.ones(10))
        StructuredHinge(X, y, [np.arange(2000)], get_oracle("ap", "auto")).plane(np.ones(10))
    return True


def run_setup(name, make_problem, args, reference_w, x_bytes):
    """One row of the results table."""
    t0 = time.perf_counter()
    problem = make_problem()
    setup = time.perf_counter() - t0
    result, row = solve(problem, args)
    dask_problem = hasattr(problem, "result_bytes")
    row = {"set-up": name, **row, "prepare s": setup, "X MB": x_bytes / 1e6,
           "client<->tasks kB/round": (problem.result_bytes / problem.n_rounds
                                       + 8 * problem.n_features * 2) / 1e3 if dask_problem else 0.0,
           "tasks/round": problem.n_blocks if dask_problem else 0}
    if reference_w is not None:
        row["w vs in memory"] = float(np.max(np.abs(result.w - reference_w))
                                      / np.max(np.abs(reference_w)))
    logger.info("%s: %d rounds, %.3f s per round", name, row["rounds"], row["round s"])
    return result.w, row


def bench_size(args, n, dtype, client, workdir, extra):
    """All set-ups at one size and dtype; the rows of the results table (and, into
    ``extra["giant"]`` and ``extra["intercept"]``, those of the one-query and intercept tables)."""
    import dask
    import dask.array as da
    from threadpoolctl import threadpool_limits

    from ssvm.losses import get_oracle
    from ssvm.problem import StructuredHinge
    from ssvm.problem.dask_space import DaskStructuredHinge

    oracle = get_oracle("ap", "auto")
    rows, label = [], {"N": n, "dtype": dtype}
    with threadpool_limits(args.blas_threads):
        X, y, qid = in_memory(args, n, dtype)
        x_bytes = X.nbytes
        floor, floor_by = one_pass(X, args.repeats, np.random.default_rng(args.seed))
        queries = informative(queries_of(qid), y)
        w_ref, row = run_setup("in memory", lambda: StructuredHinge(X, y, queries, oracle),
                               args, None, x_bytes)
        rows.append({**label, **row, "one pass s": floor, "pass by": floor_by})
        if "threads" in args.setups:
            Xd = da.from_array(X, chunks=(args.block_rows, args.d))
            with dask.config.set(scheduler="threads"):
                _, row = run_setup("dask threads", lambda: DaskStructuredHinge(Xd, y, qid, oracle),
                                   args, w_ref, x_bytes)
            rows.append({**label, **row})
        X = Xd = queries = None  # freed before the cluster holds its own copy
    if client is not None:
        Xd, yd, qd = on_workers(args, n, dtype)
        with client.as_current():
            _, row = run_setup("LocalCluster", lambda: DaskStructuredHinge(Xd, yd, qd, oracle),
                               args, w_ref, x_bytes)
        rows.append({**label, **row})
        if "giant" in args.setups:
            extra["giant"].extend(bench_giant(args, n, dtype, client, (Xd, yd), w_ref))
            extra["intercept"].extend(bench_intercept(n, dtype, client, Xd, yd, w_ref))
        Xd = yd = qd = None
        client.run(_collect)
    if "zarr" in args.setups:
        path = Path(workdir) / f"X_{n}_{dtype}.zarr"
        y, qid = to_zarr(args, n, dtype, path)
        with threadpool_limits(args.blas_threads), dask.config.set(scheduler="threads"):
            _, row = run_setup("zarr on disk",
                               lambda: DaskStructuredHinge(da.from_zarr(str(path)), y, qid, oracle),
                               args, w_ref, x_bytes)
        rows.append({**label, **row})
        shutil.rmtree(path)
    return rows


def bench_giant(args, n, dtype, client, data, w):
    """One query of all N rows (no qid) at ``w``, for AP and precision@10: the in-memory plane, the
    LocalCluster's giant query (DaskGiantHinge) and its gathered path (DaskGatheredHinge); median of
    ``--repeats``."""
    from ssvm.losses import get_oracle

    Xd, yd = data
    sparse = np.arange(n) % 50 == 0  # a detector's few positives: 1 in 50 of the relevant rows
    y = yd.compute() & sparse
    X, y_mem, _ = in_memory(args, n, dtype)
    rows = []
    for loss, oracle in (("AP", get_oracle("ap", "auto")), ("P@10", get_oracle("precision_at_k", k=10))):
        rows += _giant_planes(args, n, dtype, client, Xd, y, (X, y_mem & sparse), loss, oracle, w)
    return rows


def _giant_planes(args, n, dtype, client, Xd, y, in_mem, loss, oracle, w):
    """The rows of :func:`bench_giant` for one loss."""
    from ssvm.problem import StructuredHinge
    from ssvm.problem.dask_gathered import DaskGatheredHinge
    from ssvm.problem.dask_giant import DaskGiantHinge

    # as a user would build them on a cluster (persist=None: X held there, the rounds submitted),
    # one at a time: each holds its own blocks of X on the workers (the giant query re-cuts them)
    makers = {"giant": lambda: DaskGiantHinge(Xd, y, oracle), "gathered": lambda: DaskGatheredHinge(Xd, y, oracle)}
    rows, planes = [], {}
    for name, make in makers.items():
        with client.as_current():
            problem = make()
            problem.plane(w)  # warm: the workers' kernels
            times = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                planes[name] = problem.plane(w)
                times.append(time.perf_counter() - t0)
        moved = (problem.result_bytes / problem.n_rounds if name == "giant"
                 else 16 * n)  # gathered: 8 bytes a row back (scores), 8 out (coefficients)
        rows.append({"N": n, "dtype": dtype, "loss": loss, "one query": f"LocalCluster, {name}",
                     "plane s": float(np.median(times)),
                     "client<->tasks kB/round": moved / 1e3,
                     "passes/round": problem.n_passes / problem.n_rounds
                     if name == "giant" else 2.0})
        problem = None  # its blocks leave the workers
        _collect()
        client.run(_collect)
    mem = StructuredHinge(in_mem[0], in_mem[1], [np.arange(n)], oracle)
    mem.plane(w)
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        want = mem.plane(w)
        times.append(time.perf_counter() - t0)
    reference = {"N": n, "dtype": dtype, "loss": loss, "one query": "in memory",
                 "plane s": float(np.median(times)), "client<->tasks kB/round": 0.0,
                 "passes/round": 0.0}
    for row, name in zip(rows, makers):
        row["g vs in memory"] = float(np.max(np.abs(planes[name][2] - want[2]))
                                      / np.max(np.abs(want[2])))
        row["vs in memory"] = row["plane s"] / reference["plane s"]
    return [reference, *rows]


def bench_intercept(n, dtype, client, Xd, yd, w):
    """The ranking losses' ``intercept_`` at ``w`` on the LocalCluster: found on the blocks
    (``ssvm._dask_threshold``) against the scores gathered to the client for
    ``accuracy_threshold``: seconds, bytes brought to the client, passes over the blocks."""
    from ssvm import _dask_threshold
    from ssvm.metrics import accuracy_threshold
    from ssvm.problem import matvec

    moved = []
    real = _dask_threshold.block_pass

    def counted(c, task, per_block, shared=(), keep=False):  # what each pass brings back
        out = real(c, task, per_block, shared, keep)
        moved.append(0 if keep else len(pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)))
        return out

    y = yd.compute() > 0
    rows = []
    with client.as_current():
        gathered = accuracy_threshold(matvec(Xd, w), y)  # warm
        t0 = time.perf_counter()
        gathered = accuracy_threshold(matvec(Xd, w), y)
        rows.append({"N": n, "dtype": dtype, "intercept_": "scores gathered", "s": time.perf_counter() - t0,
                     "kB to the client": 8 * n / 1e3, "passes": 1, "same threshold": True})
        _dask_threshold.block_pass = counted
        try:
            t0 = time.perf_counter()
            on_blocks = _dask_threshold.dask_accuracy_threshold(Xd, w, y)
            seconds = time.perf_counter() - t0
        finally:
            _dask_threshold.block_pass = real
        rows.append({"N": n, "dtype": dtype, "intercept_": "on the blocks", "s": seconds,
                     "kB to the client": sum(moved) / 1e3, "passes": len(moved),
                     "same threshold": bool(on_blocks == gathered)})
    return rows


def _collect():
    import gc

    gc.collect()


def targets(rows):
    """The issue's three targets at the largest N, as table rows."""
    n = max(r["N"] for r in rows)
    at = {(r["set-up"], r["dtype"]): r for r in rows if r["N"] == n}

    def target(text, ratio, limit):
        return {"target": f"{text} (N={n:.0e})", "measured": f"{ratio:.2f}x",
                "met": bool(ratio <= limit)}

    out = []
    for dtype in ("float64", "float32"):
        if ("in memory", dtype) in at:
            r = at[("in memory", dtype)]
            out.append(target(f"in-memory round <= 1.5x one pass over X ({dtype})",
                              r["round s"] / r["one pass s"], 1.5))
    for dtype in ("float64", "float32"):
        if ("LocalCluster", dtype) in at and ("in memory", dtype) in at:
            out.append(target(f"LocalCluster round <= 1.5x in memory ({dtype})",
                              at[("LocalCluster", dtype)]["round s"]
                              / at[("in memory", dtype)]["round s"], 1.5))
    return out


def giant_targets(rows):
    """A giant query's bytes a round against the gathered path's 16 bytes a row, at the largest N."""
    n = max(r["N"] for r in rows)
    out = []
    for r in rows:
        if r["N"] == n and r["one query"] == "LocalCluster, giant":
            ratio = r["client<->tasks kB/round"] / (16 * n / 1e3)
            out.append({"target": f"giant query: bytes a round <= 1% of the scores' ({r['loss']}, {r['dtype']}, "
                                  f"N={n:.0e})", "measured": f"{ratio:.2%}",
                        "met": bool(ratio <= 0.01)})
    return out


def main(argv=None):
    parser = _common.make_parser(__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 2_000_000, 4_000_000])
    parser.add_argument("--dtypes", nargs="+", default=["float64", "float32"],
                        choices=["float64", "float32"])
    parser.add_argument("--setups", nargs="+", default=["threads", "cluster", "giant"],
                        choices=["threads", "cluster", "giant", "zarr"],
                        help="set-ups besides 'in memory' (default: all but zarr); 'giant' (one "
                             "query of all rows) needs 'cluster'")
    parser.add_argument("--d", type=int, default=100, help="features (default 100)")
    parser.add_argument("--query-size", type=int, default=1000, help="rows per query (1000)")
    parser.add_argument("--relevant", type=float, default=0.05,
                        help="fraction of relevant rows (default 0.05)")
    parser.add_argument("--block-rows", type=int, default=100_000,
                        help="rows per generated dask chunk / zarr chunk, a multiple of "
                             "--query-size (the problems join small ones into larger blocks)")
    parser.add_argument("--C", type=float, default=10.0, help="regularisation C (default 10)")
    parser.add_argument("--tol", type=float, default=1e-3, help="relative gap tolerance")
    parser.add_argument("--max-rounds", type=int, default=200, help="cutting-plane rounds cap")
    parser.add_argument("--repeats", type=int, default=5, help="timings of X @ w and of the one-query planes")
    parser.add_argument("--extra-rounds", type=int, default=5,
                        help="planes timed at the solution, besides the solver's rounds (5)")
    parser.add_argument("--blas-threads", type=int, default=1, help="BLAS threads (default 1)")
    parser.add_argument("--workdir", default=None, help="where the zarr stores go (temp dir)")
    args = _common.setup(parser, argv)
    if args.quick:
        args.sizes, args.d, args.block_rows, args.query_size = [20_000], 20, 5_000, 500
        args.setups = sorted(set(args.setups) | {"zarr"})
        args.repeats, args.max_rounds, args.extra_rounds = 2, 50, 2
    if args.block_rows % args.query_size:
        parser.error("--block-rows must be a multiple of --query-size")
    warm_up()
    client = cluster = None
    if "cluster" in args.setups:
        from distributed import Client, LocalCluster

        path = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)
        logging.getLogger("distributed").setLevel(logging.WARNING)
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=None, env={"PYTHONPATH": path},
                               silence_logs=logging.WARNING)
        client = Client(cluster, set_as_default=False)
        client.run(warm_up)
    rows, extra = [], {"giant": [], "intercept": []}
    giant_rows = extra["giant"]
    try:
        with tempfile.TemporaryDirectory(dir=args.workdir) as workdir, warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # queries without a positive are skipped
            for dtype in args.dtypes:
                for n in sorted(args.sizes):
                    rows += bench_size(args, n, dtype, client, workdir, extra)
    finally:
        if client is not None:
            client.close()
            cluster.close()
    for r in rows:
        ref = next(m for m in rows if (m["N"], m["dtype"], m["set-up"]) == (r["N"], r["dtype"],
                                                                             "in memory"))
        r["vs in memory"] = r["round s"] / ref["round s"]
        r["round / pass"] = r["round s"] / ref["one pass s"]
    columns = ["N", "dtype", "set-up", "rounds", "converged", "round s", "one pass s", "pass by",
               "round / pass", "vs in memory", "prepare s", "X MB", "client<->tasks kB/round",
               "tasks/round", "w vs in memory"]
    from ssvm._threads import effective_n_threads

    tables = [format_table(rows, columns, floatfmt={
        "round s": ".3f", "one pass s": ".3f", "round / pass": ".2f", "vs in memory": ".2f",
        "prepare s": ".2f", "X MB": ".0f", "client<->tasks kB/round": ".1f",
        "w vs in memory": ".1e"},
        title=(f"Cutting plane to tol={args.tol:g} (AP, C={args.C:g}, d={args.d}, queries of "
               f"{args.query_size} rows, {args.relevant:.0%} relevant, generated in chunks of "
               f"{args.block_rows} rows; kernel threads {effective_n_threads()} in memory, 1 "
               f"per worker, BLAS threads {args.blas_threads}; {os.cpu_count()} CPUs)"))]
    if giant_rows:
        tables.append(format_table(giant_rows, ["N", "dtype", "loss", "one query", "plane s",
                                                "vs in memory", "client<->tasks kB/round",
                                                "passes/round", "g vs in memory"], floatfmt={
            "plane s": ".3f", "vs in memory": ".2f", "client<->tasks kB/round": ".1f",
            "passes/round": ".1f", "g vs in memory": ".1e"},
            title="One query of all N rows (no qid, AP and precision@10, P = N/1000 relevant): a plane at the "
                  "ranking fit's w"))
    if extra["intercept"]:
        tables.append(format_table(extra["intercept"], floatfmt={"s": ".3f", "kB to the client": ".1f"},
                                   title="The ranking losses' intercept_ (accuracy_threshold of the training "
                                         "scores, 5% relevant) at the ranking fit's w on the LocalCluster"))
    target_rows = targets(rows) + (giant_targets(giant_rows) if giant_rows else [])
    tables.append(format_table(target_rows, title="Targets"))
    if args.plot:
        plot(rows, args.plot)
    _common.emit(args, tables, {"experiment": "bench_scale", "C": args.C, "tol": args.tol,
                                "d": args.d, "query_size": args.query_size,
                                "relevant": args.relevant, "block_rows": args.block_rows,
                                "blas_threads": args.blas_threads, "rows": rows,
                                "giant_rows": giant_rows, "intercept_rows": extra["intercept"],
                                "targets": target_rows})
    return 0


def plot(rows, plot_dir):
    """Seconds per round of every set-up, one group of bars per (N, dtype)."""
    plt = _common.pyplot()
    groups = sorted({(r["N"], r["dtype"]) for r in rows})
    setups = list(dict.fromkeys(r["set-up"] for r in rows))
    fig, ax = plt.subplots(figsize=(max(6, 1.5 * len(groups)), 4))
    width = 0.8 / len(setups)
    for i, setup in enumerate(setups):
        values = [next((r["round s"] for r in rows if (r["N"], r["dtype"]) == g
                        and r["set-up"] == setup), 0.0) for g in groups]
        ax.bar(np.arange(len(groups)) + i * width, values, width, label=setup)
    ax.set_xticks(np.arange(len(groups)) + 0.4 - width / 2)
    ax.set_xticklabels([f"N={n:.0e}\n{dtype}" for n, dtype in groups])
    ax.set_ylabel("seconds per round (median)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(Path(plot_dir) / "scale_rounds.png", dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
