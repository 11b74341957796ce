"""First-run cost: numba's compilation of the oracles' kernels, cold (empty cache) and warm (cached).

Each measurement runs in a fresh Python process whose numba cache is a new empty directory
(``NUMBA_CACHE_DIR``), so "cold" is what a fresh install pays once and "warm" what every later run
pays to load the cached kernels.  Rows:

* ``warm_up(demo losses)``: :func:`ssvm.losses.warm_up` for the demo's losses (AP, NDCG, 0-1) and
  the sort-and-walk path only (what ``ssvm demo`` compiles);
* ``warm_up(all)``: every loss and path of the oracles;
* ``ssvm warmup``: the oracles and the training round (the fused loop, the products), what the
  command compiles;
* ``ssvm demo --quick``: the whole quick demo, compilation included.

Columns: wall time and CPU time (user + system) of the process.  On a shared machine the wall time
grows with the load while the CPU time stays put: the CPU time is what an idle machine's wall time
would be (the compiler uses one core).  ``--quick`` measures the first row only.

Usage: ``python scripts/bench_compile.py [--quick] [--json PATH] [--plot DIR] [--seed K]``.
"""

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common
from _common import format_table, logger

ROOT = Path(__file__).resolve().parents[1]
DEMO = "from ssvm.losses import warm_up; warm_up(('ap', 'ndcg', 'zero_one'), few_positives=False)"
ALL = "from ssvm.losses import warm_up; warm_up()"


def run(argv, cache_dir):
    """Wall and CPU seconds of ``python argv`` with the given numba cache directory."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, *argv], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise RuntimeError(f"{argv} failed:\n{proc.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(name, argv):
    """One row: cold, then warm, in a fresh cache directory."""
    with tempfile.TemporaryDirectory(prefix="ssvm-numba-cache-") as cache:
        cold = run(argv, cache)
        warm = run(argv, cache)
    logger.info("%s: cold %.1f s (CPU %.1f s), warm %.1f s (CPU %.1f s)", name, *cold, *warm)
    return {"what": name, "cold wall s": cold[0], "cold CPU s": cold[1], "warm wall s": warm[0],
            "warm CPU s": warm[1]}


def plot(rows, plot_dir):
    """Bars: cold and warm CPU seconds per row."""
    plt = _common.pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.5))
    x = range(len(rows))
    ax.bar([i - 0.2 for i in x], [r["cold CPU s"] for r in rows], width=0.4, label="cold (compile)")
    ax.bar([i + 0.2 for i in x], [r["warm CPU s"] for r in rows], width=0.4, label="warm (cached)")
    ax.set_xticks(list(x), [r["what"] for r in rows], fontsize=8)
    ax.set_ylabel("CPU seconds")
    ax.legend()
    fig.tight_layout()
    fig.savefig(f"{plot_dir}/compile_time.png", dpi=100)
    plt.close(fig)


def main(argv=None):
    """Command-line entry point."""
    args = _common.setup(_common.make_parser(__doc__), argv)
    if args.plot:
        try:
            _common.pyplot()  # fail now, not after the runs
        except ImportError:
            parser_error = "--plot needs matplotlib: pip install 'ssvm[plot]'"
            raise SystemExit(parser_error) from None
    rows = [measure("warm_up(demo losses)", ["-c", DEMO])]
    if not args.quick:
        rows.append(measure("warm_up(all)", ["-c", ALL]))
        rows.append(measure("ssvm warmup", ["-m", "ssvm", "warmup"]))
        rows.append(measure("ssvm demo --quick", ["-m", "ssvm", "demo", "--quick", "--no-progress", "-q"]))
    fmt = {key: ".1f" for key in rows[0] if key != "what"}
    table = format_table(rows, floatfmt=fmt, title="numba compilation: a fresh process, empty cache (cold) "
                                                   "then the same cache (warm)")
    if args.plot:
        plot(rows, args.plot)
    _common.emit(args, [table], {"rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
