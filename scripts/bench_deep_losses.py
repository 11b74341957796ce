"""Speed of the network losses (forward + backward) against torch.sort of the same scores.

For batches of 10^3 .. 10^6 scores (10% positives, at random), as one query and as queries of 100
rows: the median time of ``loss(scores, target, qid).backward()`` for every loss of :mod:`ssvm.nn`
(and binary cross-entropy for reference), next to the median time of ``torch.sort`` of the same
scores, timed alternately in the same run. Then an MLP step (136 -> 256 -> 256 -> 1, Adam) on a
batch of 65,536 with each loss, and the loss's share of it. Then graded relevance (grades 0-4, LETOR-like
frequencies 50/30/12/6/2%): the graded NDCG hinge (``RankHingeLoss("ndcg", gain="exponential")``, one
sort per query and one walk per grade level) against the binary NDCG hinge on the same scores
(``gain="binary"``, relevance grade > 0), timed alternately. Targets: ``RankHingeLoss("ap")`` at most
2x torch.sort at 10^6 scores, ``DirectRankLoss`` positive at most 3x, the loss at most 10% of the
MLP step, the graded hinge at most 3x the binary one at 10^6 scores. Last, where the time of the
10^6-score losses goes (cProfile, one query).

``DirectRankLoss`` negative runs the O(PN) dynamic program: it is timed only where P·N per query is
at most 10^8. PyTorch and numpy's BLAS run single-threaded (``--threads``), as the oracles do; on a shared machine
their spinning worker threads stall when other jobs hold the cores.
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time
from pathlib import Path

import _common
import numpy as np
import torch
from _common import format_table, logger
from _deep import limit_threads, make_loss, mlp

from ssvm.nn import RankHingeLoss

LOSSES = ("hinge-AP", "hinge-NDCG", "hinge-01", "pos-AP", "neg-AP", "pos-NDCG", "pos-01", "x-ent")
QUERY_SIZE = 100  # rows per query in the "many queries" layout
MAX_DP_CELLS = 10 ** 8
TARGETS = (("hinge-AP", 2.0), ("pos-AP", 3.0))
GRADE_FREQUENCIES = (0.5, 0.3, 0.12, 0.06, 0.02)  # grades 0..4, as in LETOR sets
GRADED_TARGET = 3.0  # graded hinge / binary hinge at the largest size


def batch(n, layout, rng):
    """(scores, target, qid) of a batch: 10% positives, one query or queries of QUERY_SIZE rows."""
    scores = torch.from_numpy(rng.standard_normal(n).astype(np.float32))
    target = torch.from_numpy(rng.random(n) < 0.1)
    qid = None if layout == "one query" else torch.arange(n) // QUERY_SIZE
    return scores, target, qid


def dp_cells(n, layout):
    """P·N of the largest query (10% positives)."""
    m = n if layout == "one query" else min(n, QUERY_SIZE)
    return 0.1 * m * 0.9 * m


def time_pair(fn, scores, repeats):
    """Medians (seconds) of ``fn()`` and of torch.sort of ``scores``, timed alternately."""
    fn()
    torch.sort(scores, descending=True)
    own, ref = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        torch.sort(scores, descending=True)
        t2 = time.perf_counter()
        own.append(t1 - t0)
        ref.append(t2 - t1)
    return float(np.median(own)), float(np.median(ref))


def loss_call(loss, scores, target, qid):
    """One forward + backward of ``loss`` on a fresh leaf copy of ``scores``."""
    def run():
        x = scores.detach().requires_grad_(True)
        loss(x, target, qid).backward()
    return run


def size_layouts(sizes):
    """(n, layout) of every timed batch: one query, and queries of QUERY_SIZE rows when n is larger."""
    return [(n, layout) for n in sizes for layout in ("one query", f"queries of {QUERY_SIZE}")
            if layout == "one query" or n > QUERY_SIZE]


def sweep(sizes, rng, repeats):
    rows = []
    for n, layout in size_layouts(sizes):
        scores, target, qid = batch(n, layout, rng)
        reps = repeats if n >= 10 ** 5 else 4 * repeats
        for name in LOSSES:
            if name != "neg-AP" or dp_cells(n, layout) <= MAX_DP_CELLS:
                own, ref = time_pair(loss_call(make_loss(name, 0.1), scores, target, qid), scores, reps)
                rows.append({"n": n, "layout": layout, "loss": name, "ms": 1e3 * own, "torch.sort ms": 1e3 * ref,
                             "x sort": own / ref})
                logger.info("n=%d %s %s: %.2f ms (sort %.2f ms)", n, layout, name, 1e3 * own, 1e3 * ref)
    return rows


def graded_sweep(sizes, rng, repeats):
    """Median forward + backward of the graded NDCG hinge and of the binary one on the same scores."""
    rows = []
    for n, layout in size_layouts(sizes):
        scores, _, qid = batch(n, layout, rng)
        grades = torch.from_numpy(rng.choice(len(GRADE_FREQUENCIES), n, p=GRADE_FREQUENCIES))
        graded = loss_call(RankHingeLoss("ndcg", gain="exponential"), scores, grades, qid)
        binary = loss_call(RankHingeLoss("ndcg", gain="binary"), scores, grades, qid)
        reps = repeats if n >= 10 ** 5 else 4 * repeats
        own, ref = time_pair(graded, scores, reps)
        own_b, _ = time_pair(binary, scores, reps)
        rows.append({"n": n, "layout": layout, "graded ms": 1e3 * own, "binary ms": 1e3 * own_b,
                     "graded / binary": own / own_b, "torch.sort ms": 1e3 * ref})
        logger.info("n=%d %s graded %.2f ms, binary %.2f ms", n, layout, 1e3 * own, 1e3 * own_b)
    return rows


MLP_SHAPES = ((136, 256, 256, 1), (10, 32, 32, 32, 1))  # a LETOR-width ranker; Song et al.'s tiny network


def mlp_step(n, rng, repeats, names=("x-ent", "hinge-AP", "pos-AP", "hinge-NDCG")):
    """Median time of an MLP training step on a batch of n and of the loss's forward + backward in it."""
    rows = []
    for shape in MLP_SHAPES:
        X = torch.from_numpy(rng.standard_normal((n, shape[0])).astype(np.float32))
        for layout in ("one query", f"queries of {QUERY_SIZE}"):
            _, target, qid = batch(n, layout, rng)
            for name in names:
                torch.manual_seed(0)
                net = mlp(shape)
                optimiser = torch.optim.Adam(net.parameters(), lr=1e-4)
                loss = make_loss(name, 0.1)
                steps, losses = [], []
                for _ in range(repeats + 1):
                    t0 = time.perf_counter()
                    optimiser.zero_grad(set_to_none=True)
                    scores = net(X)[:, 0]
                    leaf = scores.detach().requires_grad_(True)  # the loss's forward and backward, timed apart
                    t1 = time.perf_counter()
                    loss(leaf, target, qid).backward()
                    t2 = time.perf_counter()
                    scores.backward(leaf.grad)
                    optimiser.step()
                    t3 = time.perf_counter()
                    steps.append(t3 - t0)
                    losses.append(t2 - t1)
                step, own = float(np.median(steps[1:])), float(np.median(losses[1:]))
                rows.append({"MLP": "-".join(map(str, shape)), "batch": n, "layout": layout, "loss": name,
                             "step ms": 1e3 * step, "loss ms": 1e3 * own, "loss % of step": 100 * own / step})
    return rows


def profile_rows(n, rng):
    """cProfile of one forward + backward per loss at n scores (one query): the functions with the most
    time of their own (not counting the functions they call)."""
    scores, target, _ = batch(n, "one query", rng)
    rows = []
    for name in ("hinge-AP", "pos-AP"):
        run = loss_call(make_loss(name, 0.1), scores, target, None)
        run()
        profiler = cProfile.Profile()
        profiler.enable()
        run()
        profiler.disable()
        stats = pstats.Stats(profiler).stats
        total = sum(v[2] for v in stats.values())
        top = sorted(stats.items(), key=lambda kv: -kv[1][2])[:6]  # (calls, primitive calls, own, cumulative, ...)
        for (path, line, func), v in top:
            rows.append({"loss": name, "function": f"{Path(path).name}:{line}({func})", "ms": 1e3 * v[2],
                         "% of call": 100 * v[2] / total})
    return rows


def main(argv=None):
    parser = _common.make_parser(__doc__)
    parser.add_argument("--repeats", type=int, default=7, help="timed repeats at the largest sizes (default 7)")
    parser.add_argument("--threads", type=int, default=1, help="threads of PyTorch and of numpy's BLAS (default 1)")
    args = _common.setup(parser, argv)
    limit_threads(args.threads)
    rng = np.random.default_rng(args.seed)
    sizes, mlp_batch, repeats = (10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6), 65_536, args.repeats
    if args.quick:
        sizes, mlp_batch, repeats = (10 ** 3, 10 ** 4), 4096, 2
    start = time.perf_counter()
    rows = sweep(sizes, rng, repeats)
    graded_rows = graded_sweep(sizes, rng, repeats)
    step_rows = mlp_step(mlp_batch, rng, repeats)
    prof = profile_rows(max(sizes), rng)
    n_max = max(sizes)
    target_rows = []
    for name, bound in TARGETS:
        for r in rows:
            if r["n"] == n_max and r["loss"] == name:
                target_rows.append({"target": f"{name} <= {bound:g}x torch.sort at n={n_max}", "layout": r["layout"],
                                    "measured": r["x sort"], "met": bool(r["x sort"] <= bound)})
    for r in graded_rows:
        if r["n"] == n_max:
            target_rows.append({"target": f"graded hinge-NDCG <= {GRADED_TARGET:g}x binary at n={n_max} (5 grades)",
                                "layout": r["layout"], "measured": r["graded / binary"],
                                "met": bool(r["graded / binary"] <= GRADED_TARGET)})
    for r in step_rows:
        if r["loss"] != "x-ent":
            target_rows.append({"target": f"{r['loss']} <= 10% of an MLP {r['MLP']} step (batch {r['batch']})",
                                "layout": r["layout"], "measured": r["loss % of step"] / 100,
                                "met": bool(r["loss % of step"] <= 10.0)})
    wall = time.perf_counter() - start
    tables = [
        format_table(rows, title=f"Forward + backward, median ms ({repeats} repeats at n >= 1e5, {4 * repeats} "
                                 f"below), against torch.sort of the same scores timed alternately; 10% "
                                 f"positives; threads {args.threads}", floatfmt=".3f"),
        format_table(graded_rows, title="Graded NDCG hinge (gain='exponential', grades 0-4) against the binary "
                                        "NDCG hinge (grade > 0) on the same scores: forward + backward, median ms, "
                                        "timed alternately", floatfmt=".3f"),
        format_table(step_rows, title=f"MLP step (Adam) on a batch of {mlp_batch}: median ms "
                                      f"of {repeats} steps, the loss's forward + backward within it",
                     floatfmt=".2f"),
        format_table(target_rows, title="Targets", floatfmt=".3f"),
        format_table(prof, title=f"Where the time goes: cProfile of one call at n={n_max} (one query), "
                                 "the functions with the most time of their own", floatfmt=".1f"),
    ]
    tables[-1] += f"\n({wall:.0f} s wall)"
    if args.plot:
        plt = _common.pyplot()
        fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
        for ax, layout in zip(axes, ("one query", f"queries of {QUERY_SIZE}")):
            part = [r for r in rows if r["layout"] == layout]
            for name in LOSSES:
                pts = [(r["n"], r["ms"]) for r in part if r["loss"] == name]
                if pts:
                    ax.plot(*zip(*pts), "o-", label=name, ms=3)
            ref = sorted({(r["n"], r["torch.sort ms"]) for r in part if r["loss"] == "hinge-AP"})
            ax.plot(*zip(*ref), "k--", label="torch.sort")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("scores in the batch")
            ax.set_title(layout)
        axes[0].set_ylabel("forward + backward (ms)")
        axes[1].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(Path(args.plot) / "deep_losses_speed.png", dpi=100)
        plt.close(fig)
    _common.emit(args, tables, {"benchmark": "deep_losses", "threads": args.threads, "rows": rows,
                                "graded": graded_rows, "mlp_step": step_rows, "targets": target_rows, "profile": prof,
                                "wall_seconds": wall})
    return 0


if __name__ == "__main__":
    sys.exit(main())
