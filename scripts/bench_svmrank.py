"""SVM^rank's objective in ssvm: ``RankSVM(loss="pairwise")`` with svm_rank's C, against ``svm_rank_learn``.

Trains ``loss="pairwise"`` (SVM^rank's swapped-pairs hinge, its ``-l 1``) with ``C = c · Q / n``
(:func:`ssvm.losses.svm_rank_C`: svm_rank divides its c by all n queries of the file, ssvm its C by the Q
queries with a pair), on the bundled LETOR sample (300 sparse features, grades 0-2) and on synthetic
graded queries (``--n-queries`` x ``--query-size`` rows, default 1,000 x 100 = 10^5 rows), and prints
SVM^rank's objective J(w) = ½‖w‖² + (c/n) Σ_q Σ_{y_i > y_j} max(0, 1 − (s_i − s_j)) (recomputed from w, the same
number as ssvm's J at C), the certified duality gap of the cutting-plane solver and the seconds of the fit.
Where ``svm_rank_learn`` is on PATH it is run on the same file with the same c (``-e`` = ``--svmrank-eps``)
and its J(w) (from its model file) and time are printed beside; without it those cells stay empty.

Usage: ``python scripts/bench_svmrank.py [--quick] [--json PATH] [-c C] [--tol TOL]``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import _common
import numpy as np
from _common import format_table
from sklearn.datasets import dump_svmlight_file

from ssvm import RankSVM
from ssvm.datasets import load_letor_sample
from ssvm.losses import rank_hinge, svm_rank_C


def synthetic_graded(n_queries, size, n_features, rng):
    """Graded queries (grades 0-3 from a noisy linear score, so some pairs stay swapped)."""
    X = rng.normal(size=(n_queries * size, n_features))
    w = rng.normal(size=n_features)
    latent = X @ w + rng.normal(scale=2.0, size=X.shape[0])
    y = np.digitize(latent, np.quantile(latent, [0.6, 0.85, 0.95])).astype(np.int64)
    return X, y, np.repeat(np.arange(n_queries), size)


def svm_rank_objective(w, X, y, qid, c):
    """½‖w‖² + (c/n) Σ_q H_q over all n queries (svm_rank's J)."""
    n_all = np.unique(qid).size
    value, _ = rank_hinge(np.asarray(X @ w).ravel(), y, qid=qid, loss="pairwise")  # mean over the Q with a pair
    n_pair = n_pair_queries(y, qid)
    return 0.5 * float(w @ w) + c * value * n_pair / n_all


def n_pair_queries(y, qid):
    return sum(int(np.unique(y[qid == q]).size > 1) for q in np.unique(qid))


def read_svmlight_model(path, n_features):
    """The weight vector of an SVM^light-format linear model file (svm_rank_learn's output)."""
    last = Path(path).read_text().strip().splitlines()[-1]
    w = np.zeros(n_features)
    for index, value in re.findall(r"(\d+):(\S+)", last.split("#")[0]):
        if int(index) <= n_features:
            w[int(index) - 1] = float(value)
    return w


def run_ssvm(X, y, qid, c, tol):
    n_all, n_pair = np.unique(qid).size, n_pair_queries(y, qid)
    C = svm_rank_C(c, n_all, n_pair)
    tic = time.perf_counter()
    model = RankSVM(loss="pairwise", C=C, tol=tol, max_iter=10000).fit(X, y, qid=qid)
    seconds = time.perf_counter() - tic
    w = model.coef_[0]
    return {"C": C, "pair_queries": n_pair, "J": svm_rank_objective(w, X, y, qid, c),
            "gap": model.history_[-1].get("gap"), "seconds": seconds, "iterations": model.n_iter_, "w": w}


def run_svm_rank(X, y, qid, c, eps, workdir):
    exe = shutil.which("svm_rank_learn")
    if exe is None:
        return None
    train, model = Path(workdir) / "train.dat", Path(workdir) / "model.dat"
    order = np.argsort(qid, kind="stable")  # svm_rank wants increasing qids
    dump_svmlight_file(X[order], y[order], train, query_id=qid[order] + 1, zero_based=False)
    tic = time.perf_counter()
    subprocess.run([exe, "-c", repr(c), "-e", repr(eps), str(train), str(model)], check=True, capture_output=True)
    seconds = time.perf_counter() - tic
    w = read_svmlight_model(model, X.shape[1])
    return {"J": svm_rank_objective(w, X, y, qid, c), "seconds": seconds}


def main(argv=None):
    parser = _common.make_parser(__doc__)
    parser.add_argument("-c", type=float, default=1.0, help="svm_rank_learn's -c (default 1)")
    parser.add_argument("--tol", type=float, default=1e-4, help="ssvm's tolerance (relative certified gap)")
    parser.add_argument("--svmrank-eps", type=float, default=0.001, help="svm_rank_learn's -e (default 0.001)")
    parser.add_argument("--n-queries", type=int, default=1000)
    parser.add_argument("--query-size", type=int, default=100)
    parser.add_argument("--n-features", type=int, default=20)
    args = _common.setup(parser, argv)
    rng = np.random.default_rng(args.seed)
    X, y, qid = load_letor_sample()
    y = np.asarray(y, dtype=np.int64)
    if args.quick:
        keep = np.isin(qid, np.unique(qid)[:20])
        X, y, qid = X[keep], y[keep], qid[keep]
    sizes = (30, 50) if args.quick else (args.n_queries, args.query_size)
    data = [("LETOR sample", X, y, qid), (f"synthetic {sizes[0] * sizes[1]:,} rows",
                                          *synthetic_graded(*sizes, args.n_features, rng))]
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for name, X, y, qid in data:
            ours = run_ssvm(X, y, qid, args.c, args.tol)
            theirs = run_svm_rank(X, y, qid, args.c, args.svmrank_eps, workdir)
            rows.append({"data": name, "rows": X.shape[0], "queries": int(np.unique(qid).size), "c": args.c,
                         "pair_queries": ours["pair_queries"],
                         "C": ours["C"], "J_ssvm": ours["J"], "gap": ours["gap"], "seconds_ssvm": ours["seconds"],
                         "iterations": ours["iterations"],
                         "J_svm_rank": None if theirs is None else theirs["J"],
                         "seconds_svm_rank": None if theirs is None else theirs["seconds"]})
    columns = ["data", "rows", "queries", "c (svm_rank)", "C (ssvm)", "J ssvm", "gap", "s ssvm", "J svm_rank",
               "s svm_rank"]
    table = format_table(
        [dict(zip(columns, [r["data"], r["rows"], r["queries"], f"{r['c']:g}", f"{r['C']:.4g}", f"{r['J_ssvm']:.6f}",
                            "" if r["gap"] is None else f"{r['gap']:.2e}", f"{r['seconds_ssvm']:.2f}",
                            "" if r["J_svm_rank"] is None else f"{r['J_svm_rank']:.6f}",
                            "" if r["seconds_svm_rank"] is None else f"{r['seconds_svm_rank']:.2f}"]))
         for r in rows],
        columns,
        title="SVM^rank's objective J(w) = ½‖w‖² + (c/n) Σ_q Σ_pairs max(0, 1 − (s_i − s_j)): ssvm "
              f"(loss='pairwise', C = c·Q/n, tol={args.tol}) and svm_rank_learn "
              f"({'on PATH' if shutil.which('svm_rank_learn') else 'not on PATH: its cells are empty'})",
    )
    _common.emit(args, [table], {"rows": rows})


if __name__ == "__main__":
    main()
