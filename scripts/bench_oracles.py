"""Benchmark the loss-augmented inference oracles of ``ssvm.losses``.

Rows (loss, oracle); columns N (negatives) for each P (positives) and score regime:

* "interleaved": positives ~ N(1, 1), negatives ~ N(0, 1) (start of training);
* "trained":     positives ~ N(2, 1), negatives ~ N(−2, 1) (late in training).

Each cell is the median time of one call in milliseconds and, in parentheses, its ratio to
``np.sort`` of the negative scores.  Times are the CPU time of the calling thread
(``time.thread_time``), which keeps the numbers meaningful on a shared machine; every oracle runs
in that thread.  An oracle whose single call is predicted (from the previous, smaller N) to exceed
``--budget`` seconds is skipped and shown as "—".  At the end the issue's targets are checked at
P = 1000, N = 10⁶ and the paper's Table-2-sized query (P = 300, N = 3000) is printed next to the
paper's per-call numbers.  A "large P" section follows: n = 10⁵ and 10⁶ samples with 10 % positives
(P ≈ n/10, scores N(0, 1) + 1 for positives), where QS must stay O(N log P + P log P); the O(PN)
baselines run only where one call is predicted to take < ``LARGE_P_BUDGET`` seconds.  Last, the
batched oracles (``Oracle.batch``: many stacked queries in one call, the training path) on layouts
like LETOR's (many small queries) and one-vs-rest retrieval (one query), against a Python loop of
per-query calls; the graded NDCG oracle (grades 1-4 on the relevant rows, exponential gains) runs
on the same scores as the binary one. Then the public entry (``loss_augmented_inference``, which checks its input) at
P = 1000, N = 10⁶ with integer 0/1 labels: QS (AP) against ``np.sort`` of the negatives (target
≤ 1×) and QS (NDCG) against Chakrabarti et al. (target ≥ 100×), in thread CPU time, with the SIMD sort
numpy runs on this CPU (``np.show_runtime()``'s SIMD extensions).

With ``--baseline-python PATH`` every cell is timed again by that interpreter in a child process
(the old, numba-compiled ssvm's venv, say; ``scripts/_baseline.py``) and a last section prints, per
cell, new, old and new / old (target ≤ 1.10), with the CPU facts of both runs.

Usage: ``python scripts/bench_oracles.py [--quick] [--json PATH] [--plot DIR] [--budget S] [--seed K]
[--baseline-python PATH]``; ``--plot DIR`` draws the per-call times against N (``oracle_times.png``).
"""

import json
import logging
import sys
import time

import _baseline
import _common
import _floor
import numpy as np

from ssvm.losses import get_oracle

try:
    from ssvm.losses._core.sorting import sort_choice
except ImportError:  # the numba-compiled ssvm a --baseline-python run may time (its home of the sorts)
    from ssvm.losses._key_sort import sort_choice

logger = logging.getLogger("bench_oracles")

ROWS = [("ap", "qs"), ("ap", "yue"), ("ap", "search"), ("ap", "dp"), ("ndcg", "qs"), ("ndcg", "chakrabarti"),
        ("zero_one", "auto"), ("precision_at_k", "auto")]
REGIMES = {"interleaved": (1.0, 0.0), "trained": (2.0, -2.0)}
PAPER_TABLE2 = {("ap", "qs"): 1.48, ("ap", "yue"): 16.29, ("ndcg", "qs"): 0.55, ("ndcg", "chakrabarti"): 71.07}
SORT = ("np.sort", "neg")


def make_query(n_pos, n_neg, regime, rng):
    """Scores and labels of one synthetic query, shuffled."""
    mu_pos, mu_neg = REGIMES[regime]
    scores = np.concatenate([rng.normal(mu_pos, 1.0, n_pos), rng.normal(mu_neg, 1.0, n_neg)])
    y = np.zeros(n_pos + n_neg, dtype=bool)
    y[:n_pos] = True
    perm = rng.permutation(n_pos + n_neg)
    return scores[perm], y[perm]


def time_call(fn, args, repeat, budget):
    """Median thread CPU time (ms) of ``fn(*args)`` after one warm-up; fewer repeats if slow."""
    t0 = time.thread_time()
    fn(*args)
    first = time.thread_time() - t0
    times = [first]
    n = repeat if first * repeat <= 4 * budget else 1
    for _ in range(n):
        t0 = time.thread_time()
        fn(*args)
        times.append(time.thread_time() - t0)
    return 1e3 * float(np.median(times[1:] if len(times) > 1 else times))


def run(n_pos_list, n_neg_list, repeat, budget, seed, extra_cols=()):
    """All measurements as a list of records."""
    rng = np.random.default_rng(seed)
    records = []
    for regime in REGIMES:
        for n_pos in n_pos_list:
            last_ms = {}
            cols = sorted(set(n_neg_list) | {n for (p, n) in extra_cols if p == n_pos})
            for n_neg in cols:
                scores, y = make_query(n_pos, n_neg, regime, rng)
                neg = scores[~y]
                sort_ms = time_call(np.sort, (neg,), repeat, budget)
                records.append(dict(regime=regime, P=n_pos, N=n_neg, loss=SORT[0], oracle=SORT[1], ms=sort_ms,
                                    ratio=1.0, skipped=None))
                for loss, oracle in ROWS:
                    key = (loss, oracle)
                    rec = dict(regime=regime, P=n_pos, N=n_neg, loss=loss, oracle=oracle, ms=None, ratio=None,
                               skipped=None)
                    if key in last_ms:
                        prev_n, prev_ms = last_ms[key]
                        predicted = prev_ms * n_neg / prev_n / 1e3
                        if predicted > budget:
                            rec["skipped"] = f"predicted {predicted:.1f} s > budget {budget} s"
                    if rec["skipped"] is None:
                        fn = get_oracle(loss, oracle)
                        ms = time_call(fn, (scores, y), repeat, budget)
                        rec.update(ms=ms, ratio=ms / sort_ms if sort_ms > 0 else None)
                        last_ms[key] = (n_neg, ms)
                        logger.info("%s P=%d N=%d %s/%s %.3f ms", regime, n_pos, n_neg, loss, oracle, ms)
                    records.append(rec)
    return records


def _cell(rec):
    if rec is None:
        return ""
    if rec["skipped"]:
        return "—"
    if rec["loss"] == SORT[0]:
        return f"{rec['ms']:.3g}"
    return f"{rec['ms']:.3g} ({rec['ratio']:.2g}×)"


def print_tables(records):
    """One table per (regime, P)."""
    groups = sorted({(r["regime"], r["P"]) for r in records}, key=lambda g: (list(REGIMES).index(g[0]), g[1]))
    for regime, n_pos in groups:
        recs = [r for r in records if r["regime"] == regime and r["P"] == n_pos]
        cols = sorted({r["N"] for r in recs})
        print(f"\n[{regime}]  P = {n_pos}   (median ms per call; × = ratio to np.sort of the negatives)")
        header = f"{'loss / oracle':<26}" + "".join(f"{'N=' + format(n, '.0e').replace('e+0', 'e'):>18}" for n in cols)
        print(header)
        print("-" * len(header))
        for loss, oracle in [SORT] + ROWS:
            cells = []
            for n in cols:
                rec = next((r for r in recs if r["N"] == n and r["loss"] == loss and r["oracle"] == oracle), None)
                cells.append(_cell(rec))
            print(f"{loss + ' / ' + oracle:<26}" + "".join(f"{c:>18}" for c in cells))
    skipped = [r for r in records if r["skipped"]]
    if skipped:
        print(f"\n— = skipped: {skipped[0]['skipped'].split(' > ')[1]} per call predicted to be exceeded "
              f"({len(skipped)} cells).")


def _ms(records, regime, n_pos, n_neg, loss, oracle):
    for r in records:
        if (r["regime"], r["P"], r["N"], r["loss"], r["oracle"]) == (regime, n_pos, n_neg, loss, oracle):
            return r["ms"]
    return None


def print_targets(records, repeat, seed, n_pos=1000, n_neg=1_000_000, fallback_n=200_000):
    """The issue's speed targets, checked on the measured numbers."""
    lines = []
    for regime in REGIMES:
        qs_ap = _ms(records, regime, n_pos, n_neg, "ap", "qs")
        sort = _ms(records, regime, n_pos, n_neg, *SORT)
        yue = _ms(records, regime, n_pos, n_neg, "ap", "yue")
        if qs_ap is None:
            continue
        if yue:
            lines.append(f"{regime:<12} yue / qs(AP)              = {yue / qs_ap:8.1f}   (target ≥ 30)  "
                         f"{'ok' if yue / qs_ap >= 30 else 'MISSED'}")
        limit = 1.0 if regime == "trained" else 3.0
        lines.append(f"{regime:<12} qs(AP) / np.sort(neg)     = {qs_ap / sort:8.2f}   (target ≤ {limit:g})  "
                     f"{'ok' if qs_ap / sort <= limit else 'MISSED'}")
        scores, y = make_query(n_pos, n_neg, regime, np.random.default_rng(seed))  # drawn as the table's were
        avx2 = _floor.sort_without_avx512_seconds(scores[~y], repeat)
        if avx2:  # numpy sorted with AVX-512 above: its AVX2 sort is the bar where that is faster (Zen 4)
            ratio = qs_ap / (1e3 * min(avx2, 1e-3 * sort))
            lines.append(f"{regime:<12} qs(AP) / faster np.sort   = {ratio:8.2f}   (target ≤ {limit:g}; numpy's "
                         f"sort with AVX-512 off: {1e3 * avx2:.3g} ms)  {'ok' if ratio <= limit else 'MISSED'}")
        for nn in (n_neg, fallback_n):
            ch = _ms(records, regime, n_pos, nn, "ndcg", "chakrabarti")
            qn = _ms(records, regime, n_pos, nn, "ndcg", "qs")
            if ch and qn:
                lines.append(f"{regime:<12} chakrabarti / qs(NDCG)    = {ch / qn:8.1f}   (target ≥ 100, N={nn:.0e})  "
                             f"{'ok' if ch / qn >= 100 else 'MISSED'}")
                break
    if lines:
        print(f"\nTargets at P = {n_pos}, N = {n_neg:.0e}:")
        print("\n".join(lines))


def paper_table2(repeat, seed):
    """Per-call times at the paper's Table-2 size next to the paper's numbers."""
    rng = np.random.default_rng(seed)
    scores, y = make_query(300, 3000, "interleaved", rng)
    out = []
    print("\nPaper Table-2 size (P = 300, N = 3000, interleaved), ms per call:")
    print(f"{'loss / oracle':<26}{'this machine':>14}{'paper':>10}")
    for (loss, oracle), paper in PAPER_TABLE2.items():
        ms = time_call(get_oracle(loss, oracle), (scores, y), repeat, 10.0)
        out.append(dict(loss=loss, oracle=oracle, ms=ms, paper_ms=paper))
        print(f"{loss + ' / ' + oracle:<26}{ms:>14.3f}{paper:>10.2f}")
    return out


LARGE_P_ROWS = [("ap", "qs"), ("ndcg", "qs"), ("ap", "search"), ("ap", "yue"), ("ndcg", "chakrabarti")]
LARGE_P_BUDGET = 5.0


def large_p(n_list, repeat, seed, frac_pos=0.1, budget=LARGE_P_BUDGET):
    """The large-P section: ms per call and ratio to np.sort of the negatives."""
    rng = np.random.default_rng(seed)
    records, last = [], {}
    print(f"\nLarge P ({frac_pos:.0%} positives, positives shifted by +1), median ms per call "
          f"(× = ratio to np.sort of the negatives):")
    header = f"{'loss / oracle':<26}" + "".join(f"{'n=' + format(n, '.0e').replace('e+0', 'e'):>22}" for n in n_list)
    print(header)
    print("-" * len(header))
    cells = {key: [] for key in [SORT] + LARGE_P_ROWS}
    for n in n_list:
        y = rng.random(n) < frac_pos
        scores = rng.normal(size=n) + 1.0 * y
        n_pos = int(y.sum())
        n_neg = n - n_pos
        sort_ms = time_call(np.sort, (scores[~y],), repeat, budget)
        cells[SORT].append(f"{sort_ms:.3g} (P={n_pos})")
        records.append(dict(P=n_pos, N=n_neg, loss=SORT[0], oracle=SORT[1], ms=sort_ms, ratio=1.0, skipped=None))
        for loss, oracle in LARGE_P_ROWS:
            rec = dict(P=n_pos, N=n_neg, loss=loss, oracle=oracle, ms=None, ratio=None, skipped=None)
            if (loss, oracle) in last:
                p0, n0, ms0 = last[(loss, oracle)]
                grow = (n_pos * n_neg) / (p0 * (n0 - p0))  # cost predicted as ~ P·N: safe for every oracle
                if ms0 * grow / 1e3 > budget:
                    rec["skipped"] = f"predicted {ms0 * grow / 1e3:.0f} s > {budget:g} s"
            if rec["skipped"] is None:
                ms = time_call(get_oracle(loss, oracle), (scores, y), repeat, budget)
                rec.update(ms=ms, ratio=ms / sort_ms)
                last[(loss, oracle)] = (n_pos, n, ms)
            records.append(rec)
            cells[(loss, oracle)].append("—" if rec["skipped"] else f"{rec['ms']:.3g} ({rec['ratio']:.2g}×)")
    for (loss, oracle), row in cells.items():
        print(f"{loss + ' / ' + oracle:<26}" + "".join(f"{c:>22}" for c in row))
    for rec in records:
        if rec["skipped"]:
            print(f"— {rec['loss']} / {rec['oracle']} at P={rec['P']}: skipped, {rec['skipped']}")
    choice = sort_choice() or "numpy (no query here reached the radix sort's size)"
    print(f"QS sorts a large query's keys by: {choice} (ssvm.losses._core.sorting: the faster on this CPU, "
          f"timed at its first large sort)")
    return records


BATCH_ROWS = [("ap", "qs"), ("ndcg", "qs"), ("ndcg graded", "qs"), ("zero_one", "auto")]
GRADED_LEVELS = (0.5, 0.3, 0.15, 0.05)  # a relevant row's grade 1..4 (LETOR-like)


def _stacked(rng, sizes, frac_pos):
    """Stacked queries of the given sizes, each with a positive and a negative (positives + 1)."""
    ends = np.cumsum(sizes)
    starts = ends - sizes
    y = rng.random(int(ends[-1])) < frac_pos
    y[starts], y[ends - 1] = True, False
    return rng.normal(size=y.size) + y, y, starts.astype(np.int64), ends.astype(np.int64)


def batch_layouts(quick, rng):
    """name -> (scores, y, starts, ends) of the batched section."""
    n = 50 if quick else 200
    return {
        f"{n} queries, n 20-300, 25% pos": _stacked(rng, rng.integers(20, 300, n), 0.25),
        f"{10 * n} queries, n = 10, 30% pos": _stacked(rng, np.full(10 * n, 10), 0.3),
        f"{n // 4} queries, n = 2000, 0.5% pos": _stacked(rng, np.full(n // 4, 2000), 0.005),
        "1 query, n = 1257, 10% pos": _stacked(rng, np.array([1257]), 0.1),
    }


def batched(repeat, seed, quick):
    """The batched section: ms per ``batch`` call, and the ratio of a loop of per-query calls."""
    rng = np.random.default_rng(seed)
    layouts = batch_layouts(quick, rng)
    print("\nBatched: many stacked queries in one call (Oracle.batch, the training path), median ms per call "
          "(× = a Python loop of per-query calls / batch):")
    header = f"{'loss / oracle':<20}" + "".join(f"{name:>34}" for name in layouts)
    print(header)
    print("-" * len(header))
    records = []
    for loss, oracle in BATCH_ROWS:
        graded = loss == "ndcg graded"  # grades 1-4 on the relevant rows: a walk per grade level
        f = get_oracle("ndcg", oracle, gain="exponential") if graded else get_oracle(loss, oracle)
        cells = []
        for name, (scores, y, starts, ends) in layouts.items():
            if graded:
                y = np.where(y, 1 + rng.choice(len(GRADED_LEVELS), y.size, p=GRADED_LEVELS), 0)
            ms = time_call(f.batch, (scores, y, starts, ends), repeat, 10.0)
            loop = time_call(lambda: [f(scores[a:b], y[a:b]) for a, b in zip(starts, ends)], (),  # noqa: B023 (timed now)
                             repeat, 10.0)
            records.append(dict(layout=name, loss=loss, oracle=oracle, queries=int(starts.size), ms=ms, loop_ms=loop))
            cells.append(f"{ms:.3g} ({loop / ms:.2g}×)")
        print(f"{loss + ' / ' + oracle:<20}" + "".join(f"{c:>34}" for c in cells))
    return records


def public_entry(quick, repeat, seed):
    """The public entry at P = 1000, N = 10^6 (quick: P = 100, N = 10^4), integer labels."""
    n_pos, n_neg = (100, 10_000) if quick else (1000, 1_000_000)
    rows = _floor.public_entry_rows(n_pos, n_neg, max(repeat, 7), np.random.default_rng(seed))
    print(f"\nPublic entry loss_augmented_inference(scores, y_int64, ...) at P = {n_pos}, N = {n_neg:.0e}, "
          f"median thread CPU ms; {_floor.simd_sort()}")
    print(_common.format_table(rows, floatfmt=".2f"))
    return rows


def plot(records, plot_dir):
    """Median ms per call against N, one panel per (regime, P), log-log; np.sort dashed."""
    plt = _common.pyplot()
    regimes = [regime for regime in REGIMES if any(r["regime"] == regime for r in records)]
    n_pos_list = sorted({r["P"] for r in records})
    fig, axes = plt.subplots(len(regimes), len(n_pos_list), figsize=(4.2 * len(n_pos_list), 3.6 * len(regimes)),
                             squeeze=False, sharey=True)
    for i, regime in enumerate(regimes):
        for j, n_pos in enumerate(n_pos_list):
            ax = axes[i, j]
            for loss, oracle in [SORT] + ROWS:
                cells = sorted((r["N"], r["ms"]) for r in records if (r["regime"], r["P"], r["loss"], r["oracle"])
                               == (regime, n_pos, loss, oracle) and r["ms"] is not None)
                if cells:
                    ax.loglog(*zip(*cells), "k--" if loss == SORT[0] else "o-", label=f"{loss} / {oracle}")
            ax.set_title(f"{regime}, P = {n_pos}")
            ax.set_xlabel("N (negatives)")
        axes[i, 0].set_ylabel("ms per call (median)")
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(f"{plot_dir}/oracle_times.png", dpi=100)
    plt.close(fig)


def print_baseline(python, new, old):
    """The old-vs-new section: per cell, new ms, old ms and new / old, table by table."""
    print(f"\nOld vs new: every cell again with {python} (median ms per call; target new/old <= "
          f"{_baseline.RATIO_TARGET:g})")
    print(f"new: {new['cpu']}\nold: {old['cpu']}")
    layouts = [("records", "Per call, by regime, P and N", ["regime", "P", "N", "loss", "oracle"], ["ms"]),
               ("paper_table2", "Paper Table-2 size", ["loss", "oracle"], ["ms"]),
               ("large_p", "Large P", ["P", "N", "loss", "oracle"], ["ms"]),
               ("batched", "Batched", ["layout", "loss", "oracle"], ["ms", "loop_ms"]),
               ("public_entry", "Public entry", ["regime"],
                ["np.sort(neg) ms", "QS AP ms", "QS NDCG ms", "Chakrabarti ms"])]
    comparison = {}
    for name, title, keys, values in layouts:
        rows = _baseline.comparison_table(new[name], old.get(name, []), keys, values)
        if rows:
            print("\n" + _common.format_table(rows, floatfmt=".3g", title=title))
            comparison[name] = rows
    ratios = [v for rows in comparison.values() for r in rows if r.get("loss") != SORT[0]
              for k, v in r.items() if k.endswith("new/old") and not k.startswith("np.sort")]
    if ratios:
        above = sum(v > _baseline.RATIO_TARGET for v in ratios)
        print(f"\noracle cells: largest new/old {max(ratios):.2f}, median {np.median(ratios):.2f}, "
              f"{above} of {len(ratios)} above {_baseline.RATIO_TARGET:g} (np.sort's rows: the machine's noise)")
    return comparison


def main(argv=None):
    """Command-line entry point."""
    parser = _common.make_parser(__doc__)
    _baseline.add_option(parser)
    parser.add_argument("--budget", type=float, default=None, help="skip calls predicted to take longer (s)")
    parser.add_argument("--repeat", type=int, default=None, help="timed calls per cell (median)")
    parser.add_argument("--entry-only", action="store_true", help="only the public-entry section")
    args = _common.setup(parser, argv)
    if args.verbose:
        logger.setLevel(logging.INFO)
    if args.quick:
        n_pos_list, n_neg_list, extra = [10, 100], [1_000, 10_000], ()
        repeat, budget = args.repeat or 3, args.budget or 0.2
    else:
        n_pos_list, n_neg_list, extra = [10, 100, 1000], [1_000, 10_000, 100_000, 1_000_000], ((1000, 200_000),)
        repeat, budget = args.repeat or 5, args.budget or 6.0
    if args.entry_only:
        public_entry(args.quick, repeat, args.seed)
        return 0
    records = run(n_pos_list, n_neg_list, repeat, budget, args.seed, extra)
    print_tables(records)
    if not args.quick:
        print_targets(records, repeat, args.seed)
    table2 = paper_table2(repeat, args.seed)
    big = large_p([10_000, 30_000] if args.quick else [100_000, 1_000_000], min(repeat, 3), args.seed)
    batch = batched(repeat if args.quick else max(repeat, 20), args.seed, args.quick)
    entry = public_entry(args.quick, repeat, args.seed)
    if args.plot:
        plot(records, args.plot)
    result = {"timer": "thread_time", "budget_s": budget, "cpu": _baseline.cpu_facts(), "records": records,
              "paper_table2": table2, "large_p": big, "batched": batch, "public_entry": entry}
    if args.baseline_python:
        old = _baseline.run_baseline(args.baseline_python, __file__, sys.argv[1:] if argv is None else argv)
        result["baseline"] = {"python": args.baseline_python, "cpu": old["cpu"],
                              "comparison": print_baseline(args.baseline_python, result, old)}
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
