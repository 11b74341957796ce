"""Oracle time over a whole training run vs data size (the QS paper's Figures 1-2, in spirit).

Three sweeps, as in the paper's section 6.1 (which used the 'phoning' class: 1:10 ratio, P = 227
fixed, N = 200 fixed):
* ``total``: total samples varied at a 1:10 positive:negative ratio;
* ``negatives``: N varied with P fixed;
* ``positives``: P varied with N fixed.
At every point the same synthetic data (Gaussian, overlapping classes, d features) is trained to
tolerance with the 1-slack cutting plane once per (loss, oracle) -- the 0-1 SVM, AP-SVM with
Yue / SEARCH / DP / QS, NDCG-SVM with Chakrabarti / QS -- and the total time spent in loss-augmented
inference over the run is read from the problem (``StructuredHinge.oracle_seconds``). Exact oracles of
a loss give the same training run, so their iteration counts agree; the median over ``--repeats``
runs is reported (a single run where the oracles took over 2 s).
"""

from __future__ import annotations

import sys

import _common
import numpy as np
from _common import format_table, logger

LOSS_LABEL = {"zero_one": "0-1", "ap": "AP", "ndcg": "NDCG"}


def sweeps(quick):
    """sweep name -> list of (P, N) points."""
    if quick:
        return {"total": [(20, 200), (40, 400)], "negatives": [(20, 100), (20, 300)],
                "positives": [(10, 100), (40, 100)]}
    totals = (550, 1100, 2200, 4400, 8800, 17600)
    return {
        "total": [(t // 11, t - t // 11) for t in totals],
        "negatives": [(227, n) for n in (250, 500, 1000, 2000, 4000, 8000, 16000)],
        "positives": [(p, 200) for p in (25, 50, 100, 200, 400, 800, 1600)],
    }


def oracle_list():
    """(loss, oracle) pairs timed: every exact oracle of 0-1, AP and NDCG (not brute force).

    The 0-1 loss has a single oracle, reached as "auto".
    """
    from _oracle_timing import timed_oracles

    return [(loss, oracle) for loss in ("zero_one", "ap", "ndcg") for oracle in timed_oracles(loss)]


def train_run(X, y, loss, oracle, C, tol, max_iter):
    """One cutting-plane training run; returns (total oracle seconds, iterations)."""
    from ssvm.losses import get_oracle, loss_entry
    from ssvm.problem import StructuredHinge
    from ssvm.solvers import SOLVERS

    # fused=False: the fused round times its compiled oracles inside its loop (QS for AP and binary
    # NDCG, the 0-1 loss), without the per-call cost of the oracle entry that the oracles without a
    # compiled form (Yue, SEARCH, DP, Chakrabarti, graded NDCG) still pay on the two-pass round:
    # every oracle of this table is timed the same way, on the two-pass round
    problem = StructuredHinge(X, y, [np.arange(len(y))], get_oracle(loss, oracle),
                              fit_intercept=loss_entry(loss).intercept, fused=False)
    result = SOLVERS["cutting_plane"](problem, C, tol=tol, max_iter=max_iter)
    return problem.oracle_seconds, result.n_iter


def main(argv=None):
    parser = _common.make_parser(__doc__)
    parser.add_argument("--d", type=int, default=50, help="features (default 50)")
    parser.add_argument("--C", type=float, default=10.0, help="regularisation C (default 10)")
    parser.add_argument("--tol", type=float, default=1e-3, help="solver tolerance (default 1e-3)")
    parser.add_argument("--max-iter", type=int, default=1000, help="cutting-plane iteration cap")
    parser.add_argument("--repeats", type=int, default=3, help="runs per point, median (default 3)")
    args = _common.setup(parser, argv)
    repeats = 1 if args.quick else args.repeats
    pairs = oracle_list()
    rng = np.random.default_rng(args.seed)

    # one untimed run of every oracle (a first call's set-up) before timing anything
    X0, y0 = _common.synthetic_ranking(60, args.d, 10, rng)
    for loss, oracle in pairs:
        train_run(X0, y0, loss, oracle, args.C, args.tol, 5)

    records, tables = [], []
    for sweep, points in sweeps(args.quick).items():
        rows = []
        for P, N in points:
            X, y = _common.synthetic_ranking(P + N, args.d, P, rng)
            row = {"P": P, "N": N}
            for loss, oracle in pairs:
                runs = []
                for _ in range(repeats):  # runs longer than 2 s are not repeated
                    runs.append(train_run(X, y, loss, oracle, args.C, args.tol, args.max_iter))
                    if runs[-1][0] > 2.0:
                        break
                seconds = float(np.median([s for s, _ in runs]))
                n_iter = runs[0][1]
                row[f"{LOSS_LABEL[loss]} {oracle}"] = seconds
                records.append({"sweep": sweep, "P": P, "N": N, "loss": loss, "oracle": oracle,
                                "oracle_seconds": seconds, "n_iter": n_iter, "runs": len(runs)})
            iters = {LOSS_LABEL[name]: next(r["n_iter"] for r in records[::-1]
                                            if r["loss"] == name and r["P"] == P and r["N"] == N
                                            and r["sweep"] == sweep)
                     for name in LOSS_LABEL}
            row["iters 0-1/AP/NDCG"] = "/".join(str(iters[k]) for k in ("0-1", "AP", "NDCG"))
            logger.info("%s P=%d N=%d done", sweep, P, N)
            rows.append(row)
        tables.append(format_table(
            rows, floatfmt=".4f",
            title=f"Total loss-augmented inference time (s) over a training run, sweep '{sweep}' "
                  f"(d={args.d}, C={args.C:g}, tol={args.tol:g}, median of {repeats})"))

    if args.plot:
        plot(records, pairs, args.plot)
    _common.emit(args, tables, {"experiment": "timing", "d": args.d, "C": args.C, "tol": args.tol,
                                "repeats": repeats, "records": records})
    return 0


def plot(records, pairs, plot_dir):
    """Figures like the paper's: one per ranking loss (with 0-1), a panel per sweep, log-log."""
    plt = _common.pyplot()
    axis = {"total": ("P + N", lambda r: r["P"] + r["N"]),
            "negatives": ("N (P fixed)", lambda r: r["N"]),
            "positives": ("P (N fixed)", lambda r: r["P"])}
    for loss in ("ap", "ndcg"):
        fig, axes = plt.subplots(1, 3, figsize=(13, 4))
        for ax, (sweep, (xlabel, xof)) in zip(axes, axis.items()):
            for name, oracle in pairs:
                if name not in (loss, "zero_one"):
                    continue
                pts = [r for r in records if r["sweep"] == sweep and r["loss"] == name
                       and r["oracle"] == oracle]
                ax.loglog([xof(r) for r in pts], [max(r["oracle_seconds"], 1e-6) for r in pts],
                          "o-", label=f"{LOSS_LABEL[name]} {oracle}")
            first = next(r for r in records if r["sweep"] == sweep)
            title = {"total": "P:N = 1:10", "negatives": f"P = {first['P']} fixed",
                     "positives": f"N = {first['N']} fixed"}[sweep]
            ax.set_xlabel(xlabel)
            ax.set_ylabel("oracle seconds per training run")
            ax.set_title(f"{LOSS_LABEL[loss]}: {title}")
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(f"{plot_dir}/timing_{loss}.png", dpi=100)
        plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
